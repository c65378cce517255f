#include <attnforge/catalogue/kernel_list.hpp>
#include <attnforge/catalogue/schedule_point.hpp>
#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/catalogue/strategies.hpp>
#include <attnforge/element_types.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace attnforge::catalogue {

namespace {

// What a field may hold: it becomes part of C++ identifiers, string literals and CMake arguments.
const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
// dtype=float32,bf16, E=64,128: lists; E_multiple=32: the widths a line's variant can serve (below)
const std::regex knob_word("(E|E_multiple|[a-z_][a-z0-9_.]*)=[A-Za-z0-9_.,-]+");

// A storage type of the element-type table (float32, bf16, fp16).
bool is_storage_type(const std::string& s) {
    const dsl::element_type_spec* type = dsl::find_element_type(s);
    return type && type->storage;
}

// The words of a list knob `name=a,b,...` (dtype=, E=), taken out of the knobs; none if the line has no such knob.
// Refuses an empty list (`what`: what it lists); each caller checks its words.
template <class Fail>
std::optional<std::vector<std::string>> take_list(std::vector<std::string>& knobs, const std::string& name,
                                                  const std::string& what, const Fail& fail) {
    const std::string prefix = name + "=";
    std::optional<std::vector<std::string>> words;  // a knob given twice: the last
    for (auto it = knobs.begin(); it != knobs.end();) {
        if (!it->starts_with(prefix)) {
            ++it;
            continue;
        }
        words.emplace();
        std::istringstream list(it->substr(prefix.size()));
        for (std::string w; std::getline(list, w, ',');) words->push_back(w);
        if (words->empty()) fail(name + "= names no " + what);
        it = knobs.erase(it);
    }
    return words;
}

}  // namespace

bool KernelLine::has_knob(const std::string& word) const {
    return std::find(knobs.begin(), knobs.end(), word) != knobs.end();
}

std::map<std::string, int> KernelLine::knob_values() const {
    return parse_knob_values(knob_text());
}

std::string KernelLine::knob_text() const {
    std::string s;
    for (const auto& k : knobs) s += (s.empty() ? "" : " ") + k;
    return s;
}

std::vector<KernelLine> parse_kernel_list(std::istream& in, const std::string& name) {
    std::vector<KernelLine> lines;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        const std::string where = name + ":" + std::to_string(number);
        auto fail = [&](const std::string& why) { throw std::runtime_error(where + ": " + why); };
        std::istringstream words(text.substr(0, text.find('#')));
        std::vector<std::string> fields;
        for (std::string w; words >> w;) fields.push_back(w);
        if (fields.empty()) continue;
        if (fields.size() < 4) fail("a kernel line needs variant, result, strategy and sizes; given '" + text + "'");
        KernelLine k{fields[0], fields[1], fields[2], fields[3], {fields.begin() + 4, fields.end()},
                     "",        where,     "float32", "",        0};
        if (!std::regex_match(k.variant, identifier)) fail("'" + k.variant + "' is not a variant name");
        if (k.result != "output" && k.result != "attention_weights" && k.result != "logsumexp")
            fail("result '" + k.result + "' is not output, attention_weights or logsumexp");
        const StrategySpec* strategy = find_strategy(k.strategy);
        if (!strategy && !is_autoscheduler(k.strategy))
            fail("strategy '" + k.strategy + "' is not " + strategy_names() + ", nor an autoscheduler (" +
                 autoscheduler_names() + ")");
        if (strategy && !gives(*strategy, k.result))
            fail("the " + k.strategy + " strategy makes no " + k.result + " kernels");
        if (!parse_size_class(k.sizes))
            fail("'" + k.sizes + "' is not a size class (any, Lk<=N, Lk>N, A<Lk<=B, Lq<=N, Lq>N, or one on Lq and one on Lk "
                 "joined by a comma: Lq<=N,Lk>M)");
        for (const auto& knob : k.knobs)
            if (!std::regex_match(knob, knob_word)) fail("'" + knob + "' is not a knob (name=value)");
        if (k.has_knob("block_mask=1") && !(strategy && strategy->block_mask))
            fail("block_mask=1 needs a strategy that takes live key blocks, not " + k.strategy);
        // The storage type is not a schedule knob: it names the kernel and picks its kernels at run time.
        // dtype=float32,bf16 lists several: one kernel each, in that order.
        std::vector<std::string> storages = {"float32"};
        if (const auto listed = take_list(k.knobs, "dtype", "storage type", fail)) {
            storages.clear();
            for (const std::string& t : *listed) {
                if (!is_storage_type(t)) fail("dtype '" + t + "' is not " + dsl::storage_type_names());
                if (std::find(storages.begin(), storages.end(), t) != storages.end())
                    fail("dtype lists '" + t + "' twice");
                storages.push_back(t);
            }
        }
        // dtype.<input>=<type>: an input of a type of its own.
        std::map<std::string, std::string> own_types;
        for (auto it = k.knobs.begin(); it != k.knobs.end();) {
            if (!it->starts_with("dtype.")) {
                ++it;
                continue;
            }
            const std::size_t eq = it->find('=');
            const std::string input = it->substr(6, eq - 6), type = it->substr(eq + 1);
            if (!std::regex_match(input, identifier)) fail("'" + *it + "' names no input (dtype.<input>=<type>)");
            if (!is_storage_type(type))
                fail("dtype of input '" + input + "': '" + type + "' is not " + dsl::storage_type_names());
            if (!own_types.emplace(input, type).second) fail("dtype of input '" + input + "' given twice");
            it = k.knobs.erase(it);
        }
        for (const auto& [input, type] : own_types)
            k.input_types += (k.input_types.empty() ? "" : " ") + input + "=" + type;
        // E=64,80,...: one kernel per head width (a variant whose E is run-time; the generator says if it is not).
        std::vector<int> widths = {0};
        if (const auto listed = take_list(k.knobs, "E", "head width", fail)) {
            widths.clear();
            for (const std::string& w : *listed) {
                int e = 0;
                const auto [end, error] = std::from_chars(w.data(), w.data() + w.size(), e);
                if (error != std::errc() || end != w.data() + w.size() || e < 1 || e > 1024)
                    fail("E lists '" + w + "', not a head width (1 to 1024)");
                if (std::find(widths.begin(), widths.end(), e) != widths.end()) fail("E lists " + w + " twice");
                widths.push_back(e);
            }
        }
        // E_multiple=N: the variant serves only widths that are multiples of N (scales per N channels); a build's
        // extra widths (cmake/AttnforgeKernelSelection.cmake) keep to them, and so must the line's.
        if (const auto multiple = take_list(k.knobs, "E_multiple", "multiple", fail)) {
            int n = 0;
            const std::string& w = multiple->front();
            const auto [end, error] = std::from_chars(w.data(), w.data() + w.size(), n);
            if (multiple->size() != 1 || error != std::errc() || end != w.data() + w.size() || n < 1)
                fail("E_multiple must be one positive number");
            if (widths == std::vector<int>{0}) fail("E_multiple=" + w + " needs an E= list");
            for (int e : widths)
                if (e % n) fail("E lists " + std::to_string(e) + ", not a multiple of E_multiple=" + w);
        }
        for (int width : widths)
            for (const std::string& storage : storages) {
                KernelLine one = k;
                one.storage = storage;
                one.head_width = width;
                lines.push_back(std::move(one));
            }
    }
    return lines;
}

std::vector<KernelLine> read_kernel_list(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read the kernel list '" + path + "'");
    return parse_kernel_list(in, path);
}

std::string kernel_name(const KernelLine& k) {
    std::string types;  // "k=bf16 v=bf16" -> "k_bf16_v_bf16__"
    for (char c : k.input_types) types += c == ' ' || c == '=' ? '_' : c;
    std::string name = k.variant + "__" + (k.head_width ? "E" + std::to_string(k.head_width) + "__" : "") +
                       (k.storage == "float32" ? "" : k.storage + "__") + (types.empty() ? "" : types + "__") +
                       (k.result == "output" ? k.strategy : k.result);
    if (k.sizes != "any") {
        // Every run of characters outside [A-Za-z0-9] becomes one '_': "1024<Lk<=2048" -> "1024_Lk_2048".
        name += "__";
        bool gap = false;
        for (char c : k.sizes) {
            const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum) {
                gap = true;
                continue;
            }
            if (gap && name.back() != '_') name += '_';
            gap = false;
            name += c;
        }
        if (gap) name += '_';
    }
    return name;
}

const KernelLine* rule_choice(const std::vector<KernelLine>& lines, const std::string& variant,
                              const std::string& result, std::int64_t lk, std::int64_t lq, const std::string& storage,
                              const std::string& input_types, int head_width) {
    for (const auto& k : lines)
        if (k.variant == variant && k.result == result && k.storage == storage && k.input_types == input_types &&
            (head_width == 0 || k.head_width == 0 || k.head_width == head_width) && size_class_holds(k.sizes, lk, lq))
            return &k;
    return nullptr;
}

}  // namespace attnforge::catalogue
