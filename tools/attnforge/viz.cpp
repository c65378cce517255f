// attnforge viz VARIANT --input NAME=FILE.npy ... --png FILE.png [--batch B] [--head H]
//               [--tokens FILE | --query-tokens FILE --key-tokens FILE] [--top-k K] [--max-rows N]
//               [--engine kernel|interpreter] [--json]
// Computes the variant's attention weights (B, Hq, Lq, Lk), draws those of one batch entry as a heatmap
// PNG (heatmap.hpp: one panel per head, or only --head), and prints per query row its entropy and its
// top-k keys. Everything is read and computed before the PNG is written.
#include "commands.hpp"
#include "exit_status.hpp"
#include "heatmap.hpp"
#include "tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <ostream>

namespace attnforge::cli {

namespace {

std::vector<std::string> read_tokens(const std::string& path, std::int64_t expected, const std::string& axis) {
    std::ifstream in(path);
    if (!in) throw input_error("cannot read the token file '" + path + "'");
    std::vector<std::string> tokens;
    for (std::string line; std::getline(in, line);) tokens.push_back(line);
    if (static_cast<std::int64_t>(tokens.size()) != expected)
        throw input_error("the token file '" + path + "' must have one line per " + axis + " (" +
                          std::to_string(expected) + "), given " + std::to_string(tokens.size()));
    return tokens;
}

// Σ -p ln p over a row, in nats (0 · ln 0 = 0).
double entropy(const float* row, std::int64_t n) {
    double h = 0;
    for (std::int64_t j = 0; j < n; ++j)
        if (row[j] > 0) h -= double(row[j]) * std::log(double(row[j]));
    return h;
}

}  // namespace

int viz(const VizOptions& o, std::ostream& out, std::ostream& err) {
    return with_exit_status("viz", err, [&](std::ostream& warnings) {
        const runtime::Engine engine = runtime::parse_engine(o.engine);
        const dsl::graph_signature& sig = runtime::signature_of(o.variant);
        if (!runtime::attention_weights_of(o.variant))
            throw input_error(o.variant + " has no softmax labelled 'attention' whose weights could be drawn");
        if (!o.tokens.empty() && (!o.query_tokens.empty() || !o.key_tokens.empty()))
            throw input_error("give --tokens, or --query-tokens and --key-tokens, not both");
        const runtime::TensorMap inputs = load_inputs(o.variant, sig, o.inputs, warnings);

        // The weights (B, Hq, Lq, Lk), float32, from the chosen engine (runtime/engine.hpp).
        runtime::RunOptions ro;
        ro.result = "attention_weights";
        ro.threads = o.threads;
        runtime::Tensor computed = runtime::evaluate(o.variant, inputs, engine, ro);
        std::vector<std::int64_t> shape = computed.shape;
        std::vector<float> weights = std::move(computed.f32);
        const std::int64_t B = shape[0], H = shape[1], Lq = shape[2], Lk = shape[3];
        if (o.batch < 0 || o.batch >= B)
            throw input_error("--batch must be in [0, " + std::to_string(B) + "), given " + std::to_string(o.batch));
        if (o.head && (*o.head < 0 || *o.head >= H))
            throw input_error("--head must be in [0, " + std::to_string(H) + "), given " + std::to_string(*o.head));

        HeatmapStyle style;
        style.title = fmt::format("{} (batch {})", o.variant, o.batch);
        if (!o.tokens.empty()) {
            if (Lq != Lk)
                throw input_error("--tokens labels both axes, but Lq = " + std::to_string(Lq) +
                                  " and Lk = " + std::to_string(Lk) + " differ: give --query-tokens and --key-tokens");
            style.row_labels = style.col_labels = read_tokens(o.tokens, Lq, "query and key");
        }
        if (!o.query_tokens.empty()) style.row_labels = read_tokens(o.query_tokens, Lq, "query");
        if (!o.key_tokens.empty()) style.col_labels = read_tokens(o.key_tokens, Lk, "key");

        std::vector<std::int64_t> heads;
        if (o.head)
            heads.push_back(*o.head);
        else
            for (std::int64_t h = 0; h < H; ++h) heads.push_back(h);
        std::vector<HeatmapPanel> panels;
        for (std::int64_t h : heads) {
            const auto begin = weights.begin() + (o.batch * H + h) * Lq * Lk;
            panels.push_back({fmt::format("head {}", h), Lq, Lk, std::vector<float>(begin, begin + Lq * Lk)});
        }
        const HeatmapLayout layout = write_heatmap_png(o.png, panels, style);

        auto key_name = [&](std::int64_t j) {
            return style.col_labels.empty() ? std::to_string(j)
                                            : "'" + style.col_labels[static_cast<std::size_t>(j)] + "'";
        };
        auto query_name = [&](std::int64_t i) {
            return style.row_labels.empty() ? std::to_string(i)
                                            : "'" + style.row_labels[static_cast<std::size_t>(i)] + "'";
        };
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        if (!o.json)
            out << fmt::format(
                "attnforge viz: {} → {} ({} x {} px), weights of batch {} (B={}, Hq={}, Lq={}, Lk={}), colour scale 0 "
                "to {:.4g}\n",
                o.variant, o.png, layout.width, layout.height, o.batch, B, H, Lq, Lk, layout.vmax);
        const std::int64_t top_k = std::min<std::int64_t>(o.top_k, Lk);
        for (std::size_t p = 0; p < heads.size(); ++p) {
            const std::vector<float>& w = panels[p].values;
            for (std::int64_t i = 0; i < Lq; ++i) {
                const float* row = w.data() + i * Lk;
                const bool masked = std::all_of(row, row + Lk, [](float v) { return v == 0.0f; });
                std::vector<std::int64_t> order(static_cast<std::size_t>(Lk));
                std::iota(order.begin(), order.end(), 0);
                // A strict weak order even with NaN weights (a NaN input gives NaN rows): NaN ranks last.
                auto weight = [&](std::int64_t j) { return std::isnan(row[j]) ? -INFINITY : row[j]; };
                std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                                  [&](std::int64_t a, std::int64_t b) {
                                      return weight(a) > weight(b) || (weight(a) == weight(b) && a < b);
                                  });
                // Only keys that take part: a masked key (weight 0) is never "top".
                std::int64_t k = 0;
                while (k < top_k && row[order[static_cast<std::size_t>(k)]] > 0) ++k;
                if (o.json) {
                    nlohmann::ordered_json top = nlohmann::ordered_json::array();
                    for (std::int64_t t = 0; t < k && !masked; ++t)
                        top.push_back({{"key", order[static_cast<std::size_t>(t)]},
                                       {"weight", row[order[static_cast<std::size_t>(t)]]}});
                    rows.push_back({{"head", heads[p]},
                                    {"query", i},
                                    {"masked", masked},
                                    {"entropy", masked ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(entropy(row, Lk))},
                                    {"top", top}});
                    continue;
                }
                if (i == o.max_rows) {
                    out << fmt::format("  head {}: ... {} more rows (--max-rows)\n", heads[p], Lq - i);
                    break;
                }
                if (masked) {
                    out << fmt::format("  head {} query {}: every key masked (zero weights)\n", heads[p],
                                       query_name(i));
                    continue;
                }
                std::string top;
                for (std::int64_t t = 0; t < k; ++t)
                    top += fmt::format("{}{} {:.3f}", t ? ", " : "", key_name(order[static_cast<std::size_t>(t)]),
                                       row[order[static_cast<std::size_t>(t)]]);
                out << fmt::format("  head {} query {}: entropy {:.3f} nats; top {}: {}\n", heads[p], query_name(i),
                                   entropy(row, Lk), k, top);
            }
        }
        if (o.json) {
            nlohmann::ordered_json j;
            j["png"] = o.png;
            j["width"] = layout.width;
            j["height"] = layout.height;
            j["cell"] = layout.cell;
            j["row_bin"] = layout.row_bin;
            j["col_bin"] = layout.col_bin;
            j["vmax"] = layout.vmax;
            j["shape"] = shape;
            j["heads"] = heads;
            for (const auto& origin : layout.panels) j["panels"].push_back({{"x", origin.x}, {"y", origin.y}});
            j["colorbar"] = {{"x", layout.colorbar.x},
                             {"y", layout.colorbar.y},
                             {"width", layout.colorbar_width},
                             {"height", layout.colorbar_height}};
            for (int i = 0; i < 256; ++i) {
                const auto rgb = viridis(i / 255.0);
                j["colormap"].push_back({rgb[0], rgb[1], rgb[2]});
            }
            j["rows"] = rows;
            out << j.dump() << "\n";
        }
        return 0;
    });
}

}  // namespace attnforge::cli
