// Heatmap PNGs of attention weights (cairo): one panel per head, a shared colour scale (viridis, 0 to
// the largest weight shown) with a colour bar, optional token labels on both axes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attnforge::cli {

// One panel: rows × cols values, row-major (queries × keys).
struct HeatmapPanel {
    std::string title;
    std::int64_t rows = 0, cols = 0;
    std::vector<float> values;
};

struct HeatmapStyle {
    std::string title;                    // above every panel
    std::vector<std::string> row_labels;  // one per row (queries), or none
    std::vector<std::string> col_labels;  // one per column (keys), or none
};

// Where things landed, in pixels: what a reader of the PNG needs to find a weight's cell.
struct HeatmapLayout {
    int width = 0, height = 0;
    int cell = 0;                           // pixels per side of one cell
    std::int64_t row_bin = 1, col_bin = 1;  // rows/columns of weights per cell (their maximum is drawn)
    double vmax = 0;                        // the colour scale's top: the largest weight shown
    struct Origin {
        int x, y;
    };
    std::vector<Origin> panels;  // top-left pixel of each panel's cell (0, 0)
    Origin colorbar{};           // top-left of the colour bar, colorbar_size wide × tall
    int colorbar_width = 0, colorbar_height = 0;
};

// viridis at t ∈ [0, 1] (clamped), as 8-bit RGB.
std::array<std::uint8_t, 3> viridis(double t);

// Draws the panels and writes `path`. Panels wider or taller than 400 cells are binned (the largest
// weight of each bin is drawn, so that sharp attention stays visible). Throws std::runtime_error if
// the PNG cannot be written.
HeatmapLayout write_heatmap_png(const std::string& path, const std::vector<HeatmapPanel>& panels,
                                const HeatmapStyle& style);

}  // namespace attnforge::cli
