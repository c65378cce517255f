#include "heatmap.hpp"

#include <attnforge/errors.hpp>

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace attnforge::cli {

namespace {

constexpr int max_cells = 400;  // per panel side
constexpr int gap = 24;         // between panels
constexpr int title_height = 22;
constexpr int columns_per_row = 4;

using Surface = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using Context = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

double text_width(cairo_t* cr, const std::string& s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s.c_str(), &e);
    return e.x_advance;
}

void text_at(cairo_t* cr, double x, double y, const std::string& s) {
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s.c_str());
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace

std::array<std::uint8_t, 3> viridis(double t) {
    // matplotlib's viridis at 0, 1/8, ..., 1; linear in between.
    static constexpr std::array<std::array<double, 3>, 9> anchors = {{{68, 1, 84},
                                                                      {71, 44, 122},
                                                                      {59, 81, 139},
                                                                      {44, 113, 142},
                                                                      {33, 144, 141},
                                                                      {39, 173, 129},
                                                                      {92, 200, 99},
                                                                      {170, 220, 50},
                                                                      {253, 231, 37}}};
    t = std::isnan(t) ? 0.0 : std::clamp(t, 0.0, 1.0) * 8.0;
    const int i = std::min(static_cast<int>(t), 7);
    const double f = t - i;
    std::array<std::uint8_t, 3> rgb{};
    for (int c = 0; c < 3; ++c)
        rgb[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(
            std::lround(anchors[static_cast<std::size_t>(i)][static_cast<std::size_t>(c)] * (1 - f) +
                        anchors[static_cast<std::size_t>(i + 1)][static_cast<std::size_t>(c)] * f));
    return rgb;
}

HeatmapLayout write_heatmap_png(const std::string& path, const std::vector<HeatmapPanel>& panels,
                                const HeatmapStyle& style) {
    HeatmapLayout layout;
    if (panels.empty()) throw std::runtime_error("heatmap: no panels");
    const std::int64_t rows = panels.front().rows, cols = panels.front().cols;
    layout.row_bin = std::max<std::int64_t>(1, (rows + max_cells - 1) / max_cells);
    layout.col_bin = std::max<std::int64_t>(1, (cols + max_cells - 1) / max_cells);
    const std::int64_t shown_rows = (rows + layout.row_bin - 1) / layout.row_bin;
    const std::int64_t shown_cols = (cols + layout.col_bin - 1) / layout.col_bin;
    layout.cell = static_cast<int>(
        std::clamp<std::int64_t>(max_cells / std::max<std::int64_t>({shown_rows, shown_cols, 1}), 1, 32));
    for (const auto& p : panels)
        for (float v : p.values) layout.vmax = std::max(layout.vmax, std::isfinite(v) ? double(v) : 0.0);
    if (layout.vmax <= 0) layout.vmax = 1;

    // Labels only where a cell is tall enough to read them.
    const bool labels = layout.cell >= 10 && (!style.row_labels.empty() || !style.col_labels.empty());
    const double font = std::min(12.0, layout.cell * 0.8);
    double left = 8, top = title_height;
    {
        Surface probe(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1), cairo_surface_destroy);
        Context cr(cairo_create(probe.get()), cairo_destroy);
        cairo_select_font_face(cr.get(), "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_font_size(cr.get(), font);
        if (labels) {
            for (const auto& s : style.row_labels) left = std::max(left, text_width(cr.get(), s) + 12);
            double longest = 0;
            for (const auto& s : style.col_labels) longest = std::max(longest, text_width(cr.get(), s));
            top += longest + 8;
        }
    }
    const int panel_w = static_cast<int>(shown_cols) * layout.cell,
              panel_h = static_cast<int>(shown_rows) * layout.cell;
    const int n = static_cast<int>(panels.size()), grid_cols = std::min(n, columns_per_row);
    const int grid_rows = (n + grid_cols - 1) / grid_cols;
    const int slot_w = static_cast<int>(left) + panel_w + gap, slot_h = static_cast<int>(top) + panel_h + gap;
    layout.colorbar_width = 16;
    layout.colorbar_height = std::max(panel_h, 64);
    layout.colorbar = {grid_cols * slot_w + 8, static_cast<int>(top)};
    layout.width = layout.colorbar.x + layout.colorbar_width + 70;
    layout.height = std::max(grid_rows * slot_h, layout.colorbar.y + layout.colorbar_height + gap);

    Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, layout.width, layout.height), cairo_surface_destroy);
    if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error("heatmap: cannot create a " + std::to_string(layout.width) + " x " +
                                 std::to_string(layout.height) + " image");
    Context cr(cairo_create(surface.get()), cairo_destroy);
    cairo_set_source_rgb(cr.get(), 1, 1, 1);
    cairo_paint(cr.get());
    cairo_surface_flush(surface.get());

    // Cells: written straight into the pixels, one flat colour each (no antialiasing at the edges).
    unsigned char* pixels = cairo_image_surface_get_data(surface.get());
    const int stride = cairo_image_surface_get_stride(surface.get());
    auto fill = [&](int x0, int y0, int w, int h, std::array<std::uint8_t, 3> rgb) {
        for (int y = y0; y < y0 + h; ++y)
            for (int x = x0; x < x0 + w; ++x) {
                auto* px = reinterpret_cast<std::uint32_t*>(pixels + static_cast<std::ptrdiff_t>(y) * stride) + x;
                *px = (std::uint32_t{rgb[0]} << 16) | (std::uint32_t{rgb[1]} << 8) | rgb[2];
            }
    };
    for (int p = 0; p < n; ++p) {
        const HeatmapPanel& panel = panels[static_cast<std::size_t>(p)];
        const HeatmapLayout::Origin o{(p % grid_cols) * slot_w + static_cast<int>(left),
                                      (p / grid_cols) * slot_h + static_cast<int>(top)};
        layout.panels.push_back(o);
        for (std::int64_t r = 0; r < shown_rows; ++r)
            for (std::int64_t c = 0; c < shown_cols; ++c) {
                float v = 0;
                for (std::int64_t i = r * layout.row_bin; i < std::min(rows, (r + 1) * layout.row_bin); ++i)
                    for (std::int64_t j = c * layout.col_bin; j < std::min(cols, (c + 1) * layout.col_bin); ++j)
                        v = std::max(v, panel.values[static_cast<std::size_t>(i * cols + j)]);
                fill(o.x + static_cast<int>(c) * layout.cell, o.y + static_cast<int>(r) * layout.cell, layout.cell,
                     layout.cell, viridis(v / layout.vmax));
            }
    }
    for (int y = 0; y < layout.colorbar_height; ++y)
        fill(layout.colorbar.x, layout.colorbar.y + y, layout.colorbar_width, 1,
             viridis(1.0 - double(y) / std::max(1, layout.colorbar_height - 1)));
    cairo_surface_mark_dirty(surface.get());

    // Text: titles, token labels (keys rotated), the colour bar's scale.
    cairo_t* c = cr.get();
    cairo_set_source_rgb(c, 0, 0, 0);
    cairo_select_font_face(c, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    for (int p = 0; p < n; ++p) {
        const auto o = layout.panels[static_cast<std::size_t>(p)];
        cairo_set_font_size(c, 12);
        const std::string title =
            style.title + (style.title.empty() ? "" : " — ") + panels[static_cast<std::size_t>(p)].title;
        text_at(c, o.x, o.y - top + 16, title);  // on the panel's first line
        if (!labels) continue;
        cairo_set_font_size(c, font);
        for (std::size_t r = 0; r < style.row_labels.size() && static_cast<std::int64_t>(r) < shown_rows; ++r)
            text_at(c, o.x - text_width(c, style.row_labels[r]) - 6, o.y + (double(r) + 0.75) * layout.cell,
                    style.row_labels[r]);
        for (std::size_t k = 0; k < style.col_labels.size() && static_cast<std::int64_t>(k) < shown_cols; ++k) {
            cairo_save(c);
            cairo_move_to(c, o.x + (double(k) + 0.75) * layout.cell, o.y - 6);
            cairo_rotate(c, -M_PI / 2);
            cairo_show_text(c, style.col_labels[k].c_str());
            cairo_restore(c);
        }
    }
    cairo_set_font_size(c, 11);
    for (double t : {1.0, 0.5, 0.0})
        text_at(c, layout.colorbar.x + layout.colorbar_width + 6,
                layout.colorbar.y + (1 - t) * (layout.colorbar_height - 1) + 4, number(t * layout.vmax));

    cairo_surface_flush(surface.get());
    // An output that cannot be written is bad usage (exit 2), as `run`'s --output (docs/cli.md).
    if (const cairo_status_t status = cairo_surface_write_to_png(surface.get(), path.c_str());
        status != CAIRO_STATUS_SUCCESS)
        throw input_error(path + ": cannot write the PNG (" + cairo_status_to_string(status) + ")");
    return layout;
}

}  // namespace attnforge::cli
