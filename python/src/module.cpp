// The extension module attnforge._native (re-exported by attnforge/__init__.py): the run API and the
// reference interpreter for Python callers. docs/python.md is the user's page.
#include "bound_kernel.hpp"
#include "calls.hpp"
#include "torch_attention.hpp"
#include "torch_tensors.hpp"
#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/quantized_cache.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <cstdint>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace nb::literals;

namespace attnforge::python {
namespace {

nb::object shape_symbols(const dsl::tensor_spec& spec) {
    nb::list dims;
    for (const auto& d : spec.dims) {
        if (d.role == dsl::dim_spec::axis::fixed)
            dims.append(d.size);
        else
            dims.append(d.role == dsl::dim_spec::axis::sequence          ? "L" + d.sequence
                        : d.role == dsl::dim_spec::axis::sequence_blocks ? "L" + d.sequence + "/" + std::to_string(d.size)
                                                                         : d.own_symbol());
    }
    return nb::tuple(dims);
}

nb::dict tensor_description(const dsl::tensor_spec& spec) {
    nb::dict d;
    d["shape"] = shape_symbols(spec);
    // The axes (by position) that may also be 1, read as if repeated (PyTorch's attn_mask over the batch, the heads).
    nb::list broadcast;
    for (std::size_t i = 0; i < spec.dims.size(); ++i)
        if (spec.dims[i].broadcast) broadcast.append(i);
    if (nb::len(broadcast)) d["broadcast"] = nb::tuple(broadcast);
    d["dtype"] = dsl::element_type_name(spec.dtype);
    if (spec.optional()) d["optional"] = true;  // a scale: 1/sqrt(E) where a call gives none
    return d;
}

nb::dict signature(const std::string& variant) {
    const dsl::graph_signature& sig = runtime::signature_of(variant);
    nb::dict inputs;
    for (const auto& spec : sig.inputs) inputs[spec.name.c_str()] = tensor_description(spec);
    nb::list results, dtypes;
    for (const char* r : {"output", "attention_weights", "logsumexp"})
        if (!runtime::kernels_for(variant, r).empty()) results.append(r);
    for (const char* t : {"float32", "bf16", "fp16"})
        if (!runtime::kernels_for(variant, "output", t).empty()) dtypes.append(t);
    nb::dict d;
    d["name"] = sig.name;
    d["inputs"] = inputs;
    d["output"] = tensor_description(sig.output);
    d["sizes"] = nb::tuple(nb::cast(size_names(sig)));
    d["results"] = nb::tuple(results);
    d["dtypes"] = nb::tuple(dtypes);
    return d;
}

nb::list kernels(const std::string& variant, const std::string& result, const std::string& dtype) {
    runtime::first_kernel(variant, result, dtype);  // unknown variant, result or type: the runtime's message
    nb::list out;
    for (const runtime::KernelEntry& k : runtime::registry()) {
        if (k.variant != variant || k.result != result || k.storage != dtype) continue;
        nb::dict d;
        d["name"] = std::string(k.name);
        d["strategy"] = std::string(k.strategy);
        d["size_class"] = std::string(k.size_class);
        d["knobs"] = std::string(k.knobs);
        d["schedule"] = std::string(k.schedule);
        d["input_types"] = std::string(k.input_types);
        out.append(d);
    }
    return out;
}

nb::object run(const std::string& variant, const std::optional<int>& threads, const std::string& result,
               const std::optional<std::string>& dtype, const std::string& engine_name, nb::handle out_given,
               const nb::kwargs& given) {
    const runtime::Engine engine = runtime::parse_engine(engine_name);
    const dsl::graph_signature& sig = runtime::signature_of(variant);
    const std::optional<dsl::element_type> asked = storage_asked(dtype);
    run_options(threads, result, asked.value_or(dsl::element_type::float32));  // threads checked before the inputs
    const Inputs inputs = borrow_inputs(variant, sig, given, asked, result);
    const runtime::RunOptions options = run_options(threads, result, inputs.storage);
    // Shapes checked once here: the kernel is picked by the sizes, and run_kernel_into checks the rest (dtypes,
    // values) on its way in.
    dsl::ShapeMap shapes;
    for (const auto& [name, view] : inputs.views) shapes.emplace(name, view.shape);
    const dsl::RuntimeSizes sizes = dsl::check_shapes(sig, shapes);
    if (engine == runtime::Engine::interpreter) {
        if (!out_given.is_none())
            throw input_error(variant + ": out= is for the kernel engine (the interpreter's result is float64)");
        // The spec, in float64, on the inputs as the kernel of that storage type would read them.
        const interp::Tensor r = runtime::interpret(variant, runtime::copies_of(inputs.views), result);
        return float64_array(r.shape, r.data, inputs.torch);
    }
    const runtime::KernelEntry& k = runtime::select_kernel(variant, sizes, result, options.dtype, inputs.input_types);
    if (!out_given.is_none()) {  // the caller's memory, e.g. (B, Lq, H, E) seen as (B, H, Lq, E)
        nb::ndarray<> keep;
        const runtime::OutputView view = borrow_output(out_given, sizes.shape_of(k.result_spec()),
                                                       runtime::result_dtype(k), std::string(k.name), keep);
        call_kernel(k, inputs, view, options);
        return nb::borrow(out_given);
    }
    ResultArray out(sizes.shape_of(k.result_spec()), runtime::result_dtype(k), inputs.torch);
    call_kernel(k, inputs, out.output(), options);
    return out.release();
}

// Where each input's view points and whether that is the caller's memory: how the tests check that
// C-contiguous inputs of the kernel's type are read in place (the same borrow_inputs as run()).
nb::dict borrowed_addresses(const std::string& variant, const std::optional<std::string>& dtype,
                            const nb::kwargs& given) {
    const dsl::graph_signature& sig = runtime::signature_of(variant);
    const Inputs inputs = borrow_inputs(variant, sig, given, storage_asked(dtype), "output");
    nb::dict d;
    for (const auto& [name, in] : inputs.held)
        d[name.c_str()] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(in.view.data), in.zero_copy);
    return d;
}

}  // namespace
}  // namespace attnforge::python

NB_MODULE(_native, m) {
    using namespace attnforge::python;
    namespace rt = attnforge::runtime;
    m.doc() = "attnforge: transformer attention kernels generated ahead of time, for NumPy and PyTorch callers.";

    m.def("variants", [] {
        std::vector<std::string> out;
        for (auto v : rt::variants()) out.emplace_back(v);
        return out;
    }, "The variants this module has kernels for (the built-in ones), in kernel-list order.");

    m.def("signature", &signature, "variant"_a,
          "What a variant takes and gives: a dict with 'inputs' ({name: {'shape': symbols, 'dtype': ...}}), "
          "'output', 'sizes' (the size names kernel() takes: B, H, L<sequence>), 'results' it has kernels for "
          "('output', 'attention_weights', 'logsumexp') and 'dtypes' (storage types: float32, bf16, fp16). A "
          "shape's symbols are B (batch), H (run-time heads), L<name> (a sequence's length) or a fixed size.");

    m.def("kernels", &kernels, "variant"_a, "result"_a = "output", "dtype"_a = "float32",
          "The generated kernels of (variant, result, dtype) in rule order: run() and kernel() take the first "
          "whose size class holds. Each a dict: name, strategy, size_class, knobs, schedule, input_types (inputs "
          "in types of their own, 'k=bf16 v=bf16': run() picks those kernels for inputs given in those types).");

    m.def("run", &run, "variant"_a, nb::kw_only(), "threads"_a = nb::none(), "result"_a = "output",
          "dtype"_a = nb::none(), "engine"_a = "kernel", "out"_a = nb::none(), "inputs"_a,
          nb::sig("def run(variant: str, *, threads: int | None = None, result: str = 'output', "
                  "dtype: str | None = None, engine: str = 'kernel', out: object | None = None, "
                  "**inputs: object) -> object"),
          R"(Runs a variant on keyword-argument inputs and returns its result.

inputs: one array per input of the variant (attnforge.signature(variant)['inputs']): NumPy arrays,
    torch tensors, or anything with __dlpack__ or the buffer protocol, in CPU memory. Inputs of the
    kernel's element type are read in place, without a copy, when C-contiguous or a strided view whose
    last axis is contiguous (a transposed (B, L, H, E) tensor as (B, H, L, E), an expanded mask); others
    are converted as the
    CLI converts .npy files (float64 -> float32 with a warning, uint8 masks, int64 or whole-number float
    index inputs, float32 -> bf16/fp16 rounded to nearest even).
threads: threads for this call (None: attnforge.set_default_threads, else one per core).
result: 'output', 'attention_weights' (B, Hq, Lq, Lk) or 'logsumexp' (float32 always).
dtype: the kernels' storage type, 'float32', 'bf16' or 'fp16'; None: bf16 for torch.bfloat16 inputs,
    fp16 for float16 ones, else float32.
engine: 'kernel' (the generated kernel the rule picks) or 'interpreter' (the float64 reference, the
    spec kernels are validated against; its result is float64).
out: where the kernel writes the result (then returned): an array of its shape and element type, C-contiguous
    or a view whose last axis is contiguous, e.g. torch.empty(B, Lq, H, E).transpose(1, 2) for a result in
    the (B, Lq, H, E) layout transformers wants.

Returns a NumPy array, or a torch tensor when any input is one (a bf16 result goes to NumPy as float32).
The GIL is released while the kernel runs. Bad inputs raise ValueError with the CLI's message.)");

    m.def("_borrowed_addresses", &borrowed_addresses, "variant"_a, nb::kw_only(), "dtype"_a = nb::none(), "inputs"_a,
          nb::sig("def _borrowed_addresses(variant: str, *, dtype: str | None = None, **inputs: object) -> "
                  "dict[str, tuple[int, bool]]"),
          "For tests: each input's address as run() would read it, and whether it is the caller's memory.");

    m.def("_last_call_addresses", [] {
              nb::dict d;
              for (const auto& [name, where] : rt::last_call_addresses())
                  d[name.c_str()] = reinterpret_cast<std::uintptr_t>(where);
              return d;
          },
          nb::sig("def _last_call_addresses() -> dict[str, int]"),
          "For tests: the addresses the last kernel call on this thread handed to the kernel, each input's by "
          "name and the result's under '' (run(), Kernel.__call__).");

    m.def("torch_attention", &torch_attention, "query"_a, "key"_a, "value"_a, "attn_mask"_a.none(), "is_causal"_a,
          "scale"_a.none(), "softcap"_a.none(), "enable_gqa"_a, "return_lse"_a, "heads_last"_a,
          nb::sig("def torch_attention(query: object, key: object, value: object, attn_mask: object | None, "
                  "is_causal: bool, scale: float | None, softcap: float | None, enable_gqa: bool, return_lse: bool, "
                  "heads_last: bool) -> tuple[object, object | None]"),
          "The body of attnforge.torch's operator on torch tensors (docs/pytorch.md): torch's checks, the variant "
          "for the arguments, one kernel call. Returns (output, lse or None).");

    m.def(
        "_torch_tensor_reader", [] { return std::string(torch_tensor_reader()); },
        nb::sig("def _torch_tensor_reader() -> str"),
        "How the front door reads torch tensors and makes its outputs (docs/pytorch.md): 'aten' through torch's "
        "C++ API (attnforge._torch_tensors, built for the torch imported), else 'attributes' (their Python "
        "attributes and torch.empty). Imports torch.");

    m.def(
        "_last_torch_call",
        [] {
            const TorchCall& c = last_torch_call();
            nb::dict shapes;
            for (const auto& [name, view] : c.inputs) shapes[name.c_str()] = nb::tuple(nb::cast(view.shape));
            nb::dict d;
            d["variant"] = std::string(c.variant);
            d["kernel"] = std::string(c.kernel);
            d["dtype"] = std::string(c.dtype);
            d["shapes"] = shapes;
            d["kernel_seconds"] = c.kernel_seconds;
            return d;
        },
        nb::sig("def _last_torch_call() -> dict[str, object]"),
        "For tests and bench/python_call_cost.py: what the last torch_attention call on this thread ran: its "
        "variant, kernel ('' when no key was left), storage type, each input's shape, and the seconds its kernel "
        "calls took (the C++ runtime's evaluate_into).");

    m.def(
        "quantize_into_cache",
        [](nb::handle values, nb::handle kv_length, nb::handle codes, nb::handle scale, nb::handle zero,
           nb::handle open_block) {
            using attnforge::dsl::element_type;
            nb::ndarray<nb::ro> keep_values, keep_lengths;
            nb::ndarray<> keep_codes, keep_scale, keep_zero, keep_block;
            const rt::TensorView x = array_view(
                values, "values", {element_type::float32, element_type::bfloat16, element_type::float16}, keep_values);
            const rt::TensorView lengths = array_view(kv_length, "kv_length", {element_type::int32}, keep_lengths);
            // A zero point: uint8 codes, by token or (with open_block) by channel of blocks of tokens; none:
            // symmetric int8 codes.
            const bool with_zero = !zero.is_none();
            if (!open_block.is_none() && !with_zero)
                throw attnforge::input_error(
                    "quantize_into_cache: open_block is for uint8 keys by channel, which take a zero point (zero=)");
            const rt::OutputView c =
                writable_array_view(codes, "codes", with_zero ? element_type::uint8 : element_type::int8, keep_codes);
            const rt::OutputView s = writable_array_view(scale, "scale", element_type::float32, keep_scale);
            if (!open_block.is_none()) {
                const rt::OutputView z = writable_array_view(zero, "zero", element_type::float32, keep_zero);
                const rt::OutputView o =
                    writable_array_view(open_block, "open_block", element_type::float32, keep_block);
                nb::gil_scoped_release unlocked;
                rt::quantize_into_cache(x, lengths, c, s, z, o);
            } else if (with_zero) {
                const rt::OutputView z = writable_array_view(zero, "zero", element_type::float32, keep_zero);
                nb::gil_scoped_release unlocked;
                rt::quantize_into_cache(x, lengths, c, s, z);
            } else {
                nb::gil_scoped_release unlocked;
                rt::quantize_into_cache(x, lengths, c, s);
            }
        },
        "values"_a, "kv_length"_a, "codes"_a, "scale"_a, "zero"_a = nb::none(), "open_block"_a = nb::none(),
        nb::sig("def quantize_into_cache(values: object, kv_length: object, codes: object, scale: object, "
                "zero: object = None, open_block: object = None) -> None"),
        "Writes new tokens' keys or values (B, Hkv, Lnew, E) into a quantized cache, in place: row l of entry b to "
        "slot kv_length[b] + l. With zero: codes (B, Hkv, Lmax, E) uint8, scale and zero (B, Hkv, Lmax) float32 "
        "(decode_u8's k, k_scale, k_zero): scale = (max - min) / 255, zero = -min / scale, code = round((x - min) / "
        "scale). With zero and open_block (B, Hkv, T, E) float32: keys by channel (decode_u8_kc128's k, T = 128), "
        "scale and zero (B, Hkv, ceil(Lmax/T), E), the same rule down each channel of a block of T tokens; the "
        "block being filled is quantized again from its tokens kept in open_block, which the call updates (keep it "
        "with the cache). Without zero: codes int8 and scale (B, Hkv, Lmax) (decode_i8) or (B, Hkv, Lmax, E/G) "
        "(decode_i8_g32: G = 32), a scale per group of G channels: scale = max|x| / 127, code = round(x / scale). "
        "kv_length is not changed: advance it by Lnew.");
    m.def("set_default_threads", &rt::set_default_threads, "threads"_a,
          "Threads every call uses unless it says otherwise (0: one per core).");

    nb::class_<BoundKernel>(m, "Kernel", R"(A kernel bound to its sizes by attnforge.kernel(); call it with the inputs
(keyword arguments, as run()) and optionally out=, an array of output_shape and the result's
element type that the kernel writes into (and returns).)")
        .def(
            "__call__",
            [](const BoundKernel& k, nb::handle out, const nb::kwargs& inputs) { return k.call(inputs, out); },
            nb::kw_only(), "out"_a = nb::none(), "inputs"_a,
            nb::sig("def __call__(self, *, out: object | None = None, **inputs: object) -> object"),
            "Runs the kernel on these inputs (shapes as input_shapes), into out= when given.")
        .def_prop_ro(
            "name", [](const BoundKernel& k) { return std::string(k.entry().name); }, "The kernel's name.")
        .def_prop_ro("variant", [](const BoundKernel& k) { return std::string(k.entry().variant); })
        .def_prop_ro("result", [](const BoundKernel& k) { return std::string(k.entry().result); })
        .def_prop_ro(
            "dtype", [](const BoundKernel& k) { return std::string(k.entry().storage); },
            "Its storage type: float32, bf16 or fp16.")
        .def_prop_ro("strategy", [](const BoundKernel& k) { return std::string(k.entry().strategy); })
        .def_prop_ro("size_class", [](const BoundKernel& k) { return std::string(k.entry().size_class); })
        .def_prop_ro(
            "input_shapes",
            [](const BoundKernel& k) {
                nb::dict d;
                for (const auto& [name, shape] : k.input_shapes()) d[name.c_str()] = nb::tuple(nb::cast(shape));
                return d;
            },
            nb::sig("def input_shapes(self) -> dict[str, tuple[int, ...]]"),
            "Each input's shape under the bound sizes.")
        .def_prop_ro(
            "output_shape", [](const BoundKernel& k) { return nb::tuple(nb::cast(k.output_shape())); },
            nb::sig("def output_shape(self) -> tuple[int, ...]"), "The result's shape.")
        .def("__repr__", [](const BoundKernel& k) {
            return "attnforge.Kernel(" + std::string(k.entry().name) + ", " + k.sizes_text() + ")";
        });

    m.def("kernel", [](const std::string& variant, const std::string& result, const std::optional<std::string>& dtype,
                       const std::optional<int>& threads, const nb::kwargs& sizes) {
              return BoundKernel(variant, result, dtype, threads, sizes);
          },
          "variant"_a, nb::kw_only(), "result"_a = "output", "dtype"_a = nb::none(), "threads"_a = nb::none(),
          "sizes"_a,
          nb::sig("def kernel(variant: str, *, result: str = 'output', dtype: str | None = None, "
                  "threads: int | None = None, **sizes: int) -> Kernel"),
          R"(The kernel the rule picks for these sizes, bound to them for repeated calls.

sizes: every size of the variant (attnforge.signature(variant)['sizes']): B, H where it has them, and
    L<name> for each sequence, e.g. kernel('sdpa', B=1, H=8, Lq=128, Lkv=128).
dtype: 'float32' (None), 'bf16' or 'fp16'. threads: as in run().)");
}
