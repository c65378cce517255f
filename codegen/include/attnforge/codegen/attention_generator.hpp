// The attnforge generator: lowers a DSL variant to Halide and schedules it. A class template over the
// list of variants it can generate (a hana::tuple of graphs); register one per generator executable:
//     ATTNFORGE_REGISTER_ATTENTION_GENERATOR(attnforge::dsl::builtin_variants)   (codegen/generators/)
//     ATTNFORGE_REGISTER_ATTENTION_GENERATOR(my_project::variants)               (a downstream project)
// It registers as the Halide generator `attnforge_attention`, the name attnforge_add_kernels calls.
//
// GeneratorParams
//   variant      the name of a graph in the generator's list of variants
//   result       "output" (the graph's output), "attention_weights" (its softmax labelled
//                "attention": (B, Hq, Lq, Lk)), "logsumexp" (that softmax's row log-sum-exp: (B, Hq, Lq),
//                −∞ for fully masked rows) or "block_ranges" (the pre-pass of a block-masked kernel:
//                (B, H or 1, ceil(Lq / query tile), 2) int32, each query tile's first and last live key block)
//   strategy     a name of the strategy table (catalogue/strategies.hpp): materialized | streaming | decode |
//                unscheduled
//   dtype        float32 | bf16 | fp16: the storage type of the graph's float32 tensors, inputs and output
//                (not masks or index inputs; a log-sum-exp stays float32). Arithmetic is float32: every
//                input is converted on load, the output rounded to nearest even on store.
//   input_types  inputs stored in a type of their own, "k:bf16,v:bf16" (default none): what a kernel line's
//                dtype.<input>=<type> words say
//   every knob of the knob table (codegen/include/attnforge/codegen/schedules/knobs.hpp), with its
//                default and its range (block_mask among them: streaming output kernels of graphs with
//                run-time masks take the pre-pass's block ranges as one more input, `block_ranges`)
//   estimate_batch, estimate_heads, estimate_length
//                the sizes an autoscheduler plans for (B = 1, H = 8, L = 1024 unless set)
//
// Built twice: into the generator executable (ahead of time, by CMake) and into attnforge-tune, which
// compiles candidate schedules just in time from the same registered generator.
//
// Inputs and output are declared in configure() from the variant's signature: one buffer per input,
// in the graph's input order, float32 for tensors, uint8 for masks and int32 for index inputs; dimensions reversed from
// the row-major shape (Halide's first dimension is the innermost).
#pragma once

#include <attnforge/codegen/cpu_features.hpp>
#include <attnforge/codegen/lower.hpp>
#include <attnforge/codegen/prefetch_lines.hpp>
#include <attnforge/codegen/schedules/schedule.hpp>

#include <Halide.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace attnforge::codegen::generator_detail {

using namespace Halide;
namespace dsl = attnforge::dsl;
namespace cg = attnforge::codegen;

// Calls f(graph) for the variant of `Variants` named `name`; throws if there is none.
template <const auto& Variants, class F>
void with_variant(const std::string& name, F f) {
    if (!dsl::with_graph_named(Variants, name, f))
        throw std::invalid_argument("attnforge generator: no variant named '" + name + "' in its list");
}

// Size estimates for the autoschedulers and the generated metadata (GeneratorParams estimate_batch,
// estimate_heads, estimate_length; by default B = 1, H = 8, every length 1024).
struct Estimates {
    int batch, heads, length;
};

inline Expr estimate_of(const dsl::dim_spec& dim, const Estimates& e) {
    switch (dim.role) {
        case dsl::dim_spec::axis::fixed:
            return static_cast<int>(dim.size);
        case dsl::dim_spec::axis::batch:
            return e.batch;
        case dsl::dim_spec::axis::heads:
        case dsl::dim_spec::axis::kv_heads:  // estimated as MHA's
            return e.heads;
        case dsl::dim_spec::axis::sequence_blocks:
            return (e.length + static_cast<int>(dim.size) - 1) / static_cast<int>(dim.size);
        default:
            return e.length;
    }
}

inline Region estimates_of(const dsl::tensor_spec& spec, const Estimates& e) {
    Region r;
    for (auto d = spec.dims.rbegin(); d != spec.dims.rend(); ++d) r.emplace_back(0, estimate_of(*d, e));
    return r;
}

inline bool batched(const dsl::tensor_spec& spec) {
    return !spec.dims.empty() && spec.dims.front().role == dsl::dim_spec::axis::batch;
}
inline bool per_sequence(const dsl::tensor_spec& spec) {
    for (const auto& d : spec.dims)
        if (d.role == dsl::dim_spec::axis::sequence) return true;
    return false;
}

template <const auto& Variants>
class AttentionGenerator : public Generator<AttentionGenerator<Variants>> {
public:
    GeneratorParam<std::string> variant{"variant", ""};
    GeneratorParam<std::string> output_kind{"result", "output"};
    GeneratorParam<std::string> strategy{"strategy", std::string(catalogue::spec_of(cg::Strategy::materialized).name)};
    GeneratorParam<std::string> dtype{"dtype", "float32"};
    GeneratorParam<std::string> input_types{"input_types", ""};
    // One GeneratorParam per row of the knob table, with its range and knob_not_given as its default
    // (the target's default, see knobs()). (Members, so that Halide
    // finds them inside the generator object.) Halide 21 checks the range of the default only (its typed
    // setter assigns a value given on the command line without the check), so knobs() checks every value
    // against the table again.
    std::array<GeneratorParam<int>, cg::knob_table.size()> knob_params =
        make_knob_params(std::make_index_sequence<cg::knob_table.size()>{});
    // Sizes the autoschedulers plan for (attnforge tune sets the tuned sizes).
    GeneratorParam<int> estimate_batch{"estimate_batch", 1};
    GeneratorParam<int> estimate_heads{"estimate_heads", 8};
    GeneratorParam<int> estimate_length{"estimate_length", 1024};
    // The head width E of a variant whose E is run-time (a kernel line's E list: one kernel per width); 0 for a
    // variant that fixes its own.
    GeneratorParam<int> head_width{"head_width", 0, 0, 1024};

    void configure() {
        with_variant<Variants>(variant, [&](const auto& g) {
            signature_ = dsl::signature(g);
            const std::string& result = output_kind.value();
            if ((result == "attention_weights" || result == "logsumexp") && !dsl::has_attention_weights(g))
                throw std::invalid_argument("attnforge generator: variant '" + variant.value() +
                                            "' has no softmax labelled 'attention' to expose");
            output_spec_ = result == "output"              ? signature_.output
                           : result == "attention_weights" ? dsl::attention_weights_spec(g)
                                                           : dsl::logsumexp_spec(g);
        });
        const bool runtime_width = fix_head_width(signature_.inputs);
        fix_head_width(output_spec_);
        if (head_width > 0 && !runtime_width)
            throw std::invalid_argument("attnforge generator: '" + variant.value() + "' fixes its head width; "
                                        "head_width (a kernel line's E=) is for variants whose E is run-time");
        knobs_ = knobs();
        const bool block_mask = knobs_.block_mask != 0;
        const catalogue::StrategySpec& table_row = catalogue::spec_of(knobs_.strategy);
        // The pre-pass (result block_ranges) is made for a kernel of a strategy that takes live key blocks.
        const bool prepass = output_kind.value() == "block_ranges";
        if (prepass ? !table_row.block_mask : !catalogue::gives(table_row, output_kind.value()))
            throw std::invalid_argument("attnforge generator: the " + std::string(table_row.name) + " strategy makes no " +
                                        output_kind.value() + " kernels");
        if (block_mask && (output_kind.value() != "output" || !table_row.block_mask))
            throw std::invalid_argument("attnforge generator: block_mask is for output kernels of a strategy that "
                                        "takes live key blocks, not " + std::string(table_row.name) + " " +
                                        output_kind.value() + " kernels");
        storage_ = type_named(dtype.value());
        const std::map<std::string, Type> own_types = own_input_types();
        for (const auto& spec : signature_.inputs) {
            const auto own = own_types.find(spec.name);
            if (own != own_types.end() && spec.dtype != dsl::element_type::float32)
                throw std::invalid_argument("attnforge generator: input_types: '" + spec.name + "' is not a float tensor");
            // A graph's float32 tensor in its own type or the storage type; any other (masks, index inputs) in
            // its type of the element-type table.
            // A number (rank 0: a scale, a cap) is float32 in every kernel: a parameter, exact whatever the storage
            // type.
            const dsl::element_type_spec& table_row = dsl::spec_of(spec.dtype);
            const Type t = spec.is_parameter() && spec.dtype == dsl::element_type::float32 ? Float(32)
                           : spec.dtype != dsl::element_type::float32
                               ? Type(static_cast<halide_type_code_t>(table_row.halide_code), table_row.halide_bits, 1)
                           : own != own_types.end() ? own->second
                                                    : storage_;
            inputs_.push_back(this->template add_input<Buffer<>>(spec.name, t, static_cast<int>(spec.dims.size())));
        }
        if (block_mask) block_ranges_ = this->template add_input<Buffer<int32_t, 4>>("block_ranges");
        if (output_kind.value() == "block_ranges")
            ranges_ = this->template add_output<Buffer<int32_t, 4>>("block_ranges");
        else {
            output_type_ = output_kind.value() == "logsumexp" ? Float(32) : storage_;
            output_ = this->template add_output<Buffer<>>(output_spec_.name, output_type_,
                                                          static_cast<int>(output_spec_.dims.size()));
        }
    }

protected:
    // Every pipeline with the pass that makes its prefetches whole lines (codegen/prefetch_lines.hpp).
    Pipeline build_pipeline() override {
        Pipeline pipeline = Generator<AttentionGenerator<Variants>>::build_pipeline();
        pipeline.add_custom_lowering_pass(new cg::PrefetchEveryLine);
        return pipeline;
    }

public:
    void generate() {
        cg::Knobs k = knobs_;
        // The pre-pass tiles queries and keys as the streaming kernel it serves.
        if (output_kind.value() == "block_ranges") k.strategy = cg::Strategy::streaming;
        cg::AlgorithmPlan plan = cg::plan_for(k, this->get_target());
        std::visit(
            [&](cg::Tiles& t) {
                // Decode keeps vdpbf16ps everywhere: its products are not what bounds it, and where they are (in
                // cache, Intel) the converted FMAs were slower (decode_gqa, Lk = 256: 57 against 48.5 ns a key row).
                t.bf16_products = storage_ == BFloat(16) && has_bf16_dot_product() &&
                                  (bf16_dot_product_pays() || std::holds_alternative<cg::DecodePlan>(plan));
                t.amx_products = t.bf16_products && has_amx_tiles();
                t.integer_products = has_bf16_dot_product();  // the same targets carry AVX512_VNNI
            },
            plan);
        cg::LoweringContext ctx(plan);
        ctx.head_width = head_width;
        ctx.softmax_result =
            output_kind.value() == "logsumexp" ? cg::SoftmaxResult::logsumexp : cg::SoftmaxResult::probabilities;
        cg::PipelineOutput output;
        bind_inputs(ctx);
        if (output_kind.value() == "block_ranges") return generate_block_ranges(ctx);
        if (k.block_mask) {
            GeneratorInput<Buffer<int32_t, 4>>* in = block_ranges_;
            ctx.block_ranges = [in](Expr i, Expr qt, Expr h, Expr b) { return (*in)(i, qt, h, b); };
        }
        with_variant<Variants>(variant, [&](const auto& g) {
            cg::Lowered result;
            if (output_kind.value() == "output") {
                result = cg::Lower::node(g.output, ctx);
            } else {
                auto found = dsl::find_softmax<"attention">(g);
                if constexpr (decltype(boost::hana::is_just(found))::value)
                    result = cg::Lower::node(found.value(), ctx);
            }
            define_output(result);
            output.result = result.func;
        });
        if (std::holds_alternative<cg::StreamingPlan>(ctx.plan) && !k.block_mask) note_unbounded_predicates(ctx);
        output.func = *output_;
        output.same_indices = static_cast<int>(output_spec_.dims.size()) == output.result.dimensions();
        cg::apply_schedule(ctx.roles, output, ctx.plan, k);
    }

private:
    // A predicate whose bounds skip no key block, in a kernel without the pre-pass, is evaluated on every pair of
    // every block: one line in the build's output says so (docs/dsl.md, "Which key blocks a kernel skips").
    void note_unbounded_predicates(const cg::LoweringContext& ctx) const {
        for (const auto& core : ctx.roles.cores)
            for (const auto& bounds : cg::common(core).run_time.block_truths)
                if (!bounds.skips)
                    std::cerr << "note: attnforge: variant '" << variant.value()
                              << "': a mask predicate's bounds skip no key block and this kernel "
                                 "has no pre-pass (block_mask=1): every block is visited\n";
    }

    // The pre-pass: the graph lowered (nothing of it is computed but its run-time masks), then the
    // block ranges of the one attention core that has run-time masks.
    void generate_block_ranges(cg::LoweringContext& ctx) {
        with_variant<Variants>(variant, [&](const auto& g) { cg::Lower::node(g.output, ctx); });
        const cg::CoreCommon* masked = nullptr;
        for (const auto& core : ctx.roles.cores)
            if (!cg::common(core).run_time.keeps.empty()) {
                if (masked)
                    throw std::invalid_argument("attnforge generator: block_ranges: '" + variant.value() +
                                                "' has more than one attention with run-time masks");
                masked = &cg::common(core);
            }
        if (!masked)
            throw std::invalid_argument("attnforge generator: block_ranges: '" + variant.value() +
                                        "' has no run-time mask");
        const auto& plan = std::get<cg::StreamingPlan>(ctx.plan);
        const cg::LiveKeyBlocks live = cg::detail::live_key_blocks(*masked, plan);
        Var i("i"), qt("qt"), h("h"), b("b");
        Func out = *ranges_;
        out(i, qt, h, b) = live.ranges(i, qt, h, b);
        ranges_->dim(0).set_bounds(0, 2);
        ranges_->set_estimates({{0, 2}, {0, estimate_length / plan.query_tile}, {0, 1}, {0, estimate_batch}});
        cg::schedule_live_key_blocks(live, out, plan.lanes);
    }

    Estimates estimates() const { return {estimate_batch, estimate_heads, estimate_length}; }

    // A run-time head width becomes this kernel's (head_width): a static extent of its buffers, like any fixed
    // width. A variant with a run-time E needs one. Whether spec had a run-time width.
    bool fix_head_width(dsl::tensor_spec& spec) const {
        bool runtime_width = false;
        for (auto& d : spec.dims)
            if (d.role == dsl::dim_spec::axis::head_width) {
                if (head_width <= 0)
                    throw std::invalid_argument("attnforge generator: '" + variant.value() +
                                                "' has a run-time head width E: its kernel lines name the widths "
                                                "to generate (E=64,80,...), one kernel each");
                d = {dsl::dim_spec::axis::fixed, {}, head_width};
                runtime_width = true;
            } else if (d.role == dsl::dim_spec::axis::head_width_groups) {
                // Group scales (B, H, L, E/G): E/G groups at this kernel's E.
                if (head_width % d.size != 0)
                    throw std::invalid_argument("attnforge generator: '" + variant.value() + "' reads scales per " +
                                                std::to_string(d.size) + " channels: E=" + std::to_string(head_width) +
                                                " is not a multiple of it");
                d = {dsl::dim_spec::axis::fixed, {}, head_width / d.size};
            }
        return runtime_width;
    }
    bool fix_head_width(std::vector<dsl::tensor_spec>& specs) const {
        bool runtime_width = false;
        for (auto& spec : specs) runtime_width |= fix_head_width(spec);
        return runtime_width;
    }

    template <std::size_t... I>
    static std::array<GeneratorParam<int>, sizeof...(I)> make_knob_params(std::index_sequence<I...>) {
        return {GeneratorParam<int>(std::string(cg::knob_table[I].name), knob_not_given,
                                    std::min(knob_not_given, cg::knob_table[I].min), cg::knob_table[I].max)...};
    }

    // vdpbf16ps: Halide emits it for targets that include the Zen 4 features (Sapphire Rapids and Zen 5 do).
    bool has_bf16_dot_product() const {
        const Target t = this->get_target();
        return t.has_feature(Target::AVX512_Zen4) || t.has_feature(Target::AVX512_Zen5) ||
               t.has_feature(Target::AVX512_SapphireRapids);
    }

    // Whether a prefill's products over bf16 pairs beat float32 FMAs on the converted values. AMD's cores (Zen 4,
    // Zen 5) issue a vdpbf16ps as often as an FMA, twice its multiplies; Intel's (Halide's avx512_sapphirerapids
    // without Zen 4's features: Sapphire and Emerald Rapids) one every two cycles against two FMAs a cycle, half
    // the float32 rate (attnforge bench's probes, Emerald Rapids: 86 against 175 GFLOP/s a core). There, where
    // AMX tiles are not there to take the products, they are float32 FMAs: mha bf16 L = 2048, one thread, 164 ms
    // on vdpbf16ps against 103 ms for float32's kernel.
    bool bf16_dot_product_pays() const {
        const Target t = this->get_target();
        const bool intel = t.has_feature(Target::AVX512_SapphireRapids) && !t.has_feature(Target::AVX512_Zen4) &&
                           !t.has_feature(Target::AVX512_Zen5);
        return !intel || has_amx_tiles();
    }

    // AMX tile products: targets with Halide's avx512_sapphirerapids feature. Halide's host detection names that
    // feature from AVX-VNNI and AVX512_BF16 alone, without AMX's own CPUID bits, so a machine that has those but
    // no tiles (a virtual machine that hides them) would get kernels that stop with SIGILL: where the build
    // machine's host target has the feature, its tiles must be there too (cpu_features.hpp).
    bool has_amx_tiles() const {
        if (!this->get_target().has_feature(Target::AVX512_SapphireRapids)) return false;
        return !get_host_target().has_feature(Target::AVX512_SapphireRapids) || cg::cpu_has_amx_bf16_tiles();
    }

    // A storage type by its name in the element-type table.
    static Type type_named(const std::string& name) {
        const dsl::element_type_spec* s = dsl::find_element_type(name);
        if (!s || !s->storage)
            throw std::invalid_argument("attnforge generator: element type '" + name + "' is not " +
                                        dsl::storage_type_names());
        return Type(static_cast<halide_type_code_t>(s->halide_code), s->halide_bits, 1);
    }

    // input_types "k:bf16,v:bf16", each name an input of the variant.
    std::map<std::string, Type> own_input_types() const {
        std::map<std::string, Type> out;
        std::string text = input_types.value();
        for (std::size_t start = 0; start < text.size();) {
            const std::size_t end = std::min(text.find(',', start), text.size());
            const std::string word = text.substr(start, end - start);
            const std::size_t colon = word.find(':');
            const std::string name = word.substr(0, colon);
            if (colon == std::string::npos ||
                std::none_of(signature_.inputs.begin(), signature_.inputs.end(),
                             [&](const dsl::tensor_spec& s) { return s.name == name; }))
                throw std::invalid_argument("attnforge generator: input_types: '" + word + "' is not <input>:<type> "
                                            "with an input of '" + variant.value() + "'");
            out.emplace(name, type_named(word.substr(colon + 1)));
            start = end + 1;
        }
        return out;
    }

    // A knob not given takes the table's default for this target (knobs.hpp, default_for): each target
    // of a multi-target build gets register tiles that fit its own register file.
    static constexpr int knob_not_given = std::numeric_limits<int>::min();  // below every knob's range

    cg::Knobs knobs() const {
        cg::Knobs k = cg::default_knobs(cg::parse_strategy(strategy), this->get_target().template natural_vector_size<float>());
        for (std::size_t i = 0; i < cg::knob_table.size(); ++i) {
            if (knob_params[i].value() == knob_not_given) continue;
            try {
                cg::set_knob(k, cg::knob_table[i], knob_params[i].value());
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string("attnforge generator: ") + e.what());
            }
        }
        return k;
    }

    // Wraps every input buffer in a Func with the lowering's index order, adding a batch index to
    // unbatched activations; sets every estimate and static extent.
    void bind_inputs(cg::LoweringContext& ctx) {
        for (std::size_t n = 0; n < inputs_.size(); ++n) {
            const dsl::tensor_spec& spec = signature_.inputs[n];
            GeneratorInput<Buffer<>>& in = *inputs_[n];
            const int rank = static_cast<int>(spec.dims.size());
            std::vector<Expr> extents;
            for (int d = 0; d < rank; ++d) extents.push_back(in.dim(d).extent());  // innermost first
            in.set_estimates(estimates_of(spec, estimates()));
            constrain_static_extents(in, spec);
            Func f(spec.name + "_in");
            std::vector<Var> vars;
            for (int d = 0; d < rank; ++d) vars.emplace_back("d" + std::to_string(d));
            // The one accessor of an input: stored bf16/fp16 values become float32 where they are read (all
            // arithmetic is float32); a bf16 input is also read as stored, for products over bf16 pairs.
            const bool converted = in.type() != Float(32) && in.type().is_float();
            auto value = [converted](Expr e) { return converted ? cast<float>(e) : e; };
            std::function<Expr(const std::vector<Expr>&)> stored;
            GeneratorInput<Buffer<>>* buffer = inputs_[n];
            if (in.type() == BFloat(16)) stored = [buffer](const std::vector<Expr>& at) { return (*buffer)(at); };
            if (!batched(spec) && per_sequence(spec)) {
                Var b("b");
                std::vector<Var> with_batch = vars;
                with_batch.push_back(b);
                f(with_batch) = value(in(vars));
                extents.push_back(Expr(1));
            } else {
                f(vars) = value(in(vars));
            }
            ctx.inputs.emplace(spec.name,
                               cg::Lowered{f, extents, true,
                                           [buffer, value](const std::vector<Expr>& at) { return value((*buffer)(at)); },
                                           stored, ImageParam(*buffer).parameter()});
        }
    }

    // Static sizes (widths, static head counts) become constants of the pipeline: the buffers must
    // have them (checked by the generated code), and the schedule can unroll over them.
    template <class B>
    static void constrain_static_extents(B& buffer, const dsl::tensor_spec& spec) {
        const int rank = static_cast<int>(spec.dims.size());
        for (int d = 0; d < rank; ++d) {
            const auto& dim = spec.dims[static_cast<std::size_t>(d)];
            if (dim.role == dsl::dim_spec::axis::fixed)
                buffer.dim(rank - 1 - d).set_bounds(0, static_cast<int>(dim.size));
            // Every buffer starts at index 0 (the runtime API passes whole tensors): query tiles of the
            // schedule then line up with the query tiles of the algorithm (q = qt·query_tile + qi), so a
            // task computes exactly one tile.
            else
                buffer.dim(rank - 1 - d).set_min(0);
        }
    }

    // output(...) = result(...), dropping the batch index of an unbatched graph's output (its attention
    // weights keep a batch axis of 1).
    void define_output(const cg::Lowered& result) {
        const int rank = static_cast<int>(output_spec_.dims.size());
        std::vector<Var> vars;
        for (int d = 0; d < rank; ++d) vars.emplace_back("o" + std::to_string(d));
        std::vector<Expr> args(vars.begin(), vars.end());
        if (static_cast<int>(args.size()) < result.func.dimensions()) args.push_back(0);
        Func f = *output_;
        f(vars) = cast(output_type_, result.func(args));  // rounded to the storage type, if not float32
        output_->set_estimates(estimates_of(output_spec_, estimates()));
        constrain_static_extents(*output_, output_spec_);
    }

    cg::Knobs knobs_;  // every knob's value, read and checked once, in configure()
    dsl::graph_signature signature_;
    dsl::tensor_spec output_spec_;
    Type storage_ = Float(32), output_type_ = Float(32);
    std::vector<GeneratorInput<Buffer<>>*> inputs_;
    GeneratorInput<Buffer<int32_t, 4>>* block_ranges_ = nullptr;
    GeneratorOutput<Buffer<int32_t, 4>>* ranges_ = nullptr;
    GeneratorOutput<Buffer<>>* output_ = nullptr;
};

}  // namespace attnforge::codegen::generator_detail

// Registers the generator `attnforge_attention` for the graphs of VARIANTS (a constexpr hana::tuple
// with static storage), once per generator executable.
#define ATTNFORGE_REGISTER_ATTENTION_GENERATOR(VARIANTS)                                    \
    namespace attnforge_registered_generator {                                              \
    using Generator = ::attnforge::codegen::generator_detail::AttentionGenerator<VARIANTS>; \
    }                                                                                       \
    HALIDE_REGISTER_GENERATOR(attnforge_registered_generator::Generator, attnforge_attention)
