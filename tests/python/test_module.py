"""The Python module (python/): every built-in variant against PyTorch in float64, zero-copy inputs, the GIL
released while a kernel runs, errors with the CLI's messages, no leaks, bf16/fp16/int32 inputs, the bound
form with out=."""
import gc
import math
import os
import subprocess
import sys
import threading
import time

import attnforge
import numpy as np
import pytest
import torch

from inputs import make_inputs, sizes_of
from references import bound, reference


@pytest.mark.parametrize("variant", attnforge.variants())
def test_every_variant_matches_pytorch_in_float64(variant):
    g = torch.Generator().manual_seed(sum(map(ord, variant)))
    inputs = make_inputs(variant, g)
    ref = reference(variant, inputs)
    got = attnforge.run(variant, **inputs)  # torch tensors in, a torch tensor out
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert tuple(got.shape) == tuple(ref.shape)
    err = (got.to(torch.float64) - ref).abs().max().item()
    assert err <= bound(variant, inputs, ref), f"{variant}: max |kernel − PyTorch| = {err}"
    # NumPy in, NumPy out: the same kernel, the same numbers.
    got_np = attnforge.run(variant, **{n: t.numpy() for n, t in inputs.items()})
    assert isinstance(got_np, np.ndarray) and np.array_equal(got_np, got.numpy())


@pytest.mark.parametrize("variant", ["sdpa", "sdpa_causal", "mha", "decode_gqa", "masked_attention"])
def test_bf16_through_torch_tensors(variant):
    g = torch.Generator().manual_seed(7)
    inputs = {n: (t.to(torch.bfloat16) if t.is_floating_point() else t) for n, t in make_inputs(variant, g).items()}
    got = attnforge.run(variant, **inputs)  # dtype implied by torch.bfloat16 inputs
    assert got.dtype == torch.bfloat16
    ref = reference(variant, inputs)  # on the rounded inputs (contract §5)
    err = (got.to(torch.float64) - ref).abs().max().item()
    assert err <= bound(variant, inputs, ref, "bf16"), f"{variant} bf16: {err}"
    # float32 inputs with dtype="bf16" are rounded to nearest even on the way in: the same result.
    as_f32 = {n: (t.float() if t.is_floating_point() else t) for n, t in inputs.items()}
    assert torch.equal(attnforge.run(variant, dtype="bf16", **as_f32), got)


def test_fp16_from_numpy_float16():
    g = torch.Generator().manual_seed(3)
    inputs = {n: t.numpy().astype(np.float16) for n, t in make_inputs("sdpa", g).items()}
    got = attnforge.run("sdpa", **inputs)
    assert got.dtype == np.float16
    ref = reference("sdpa", {n: torch.from_numpy(a) for n, a in inputs.items()})
    err = np.abs(got.astype(np.float64) - ref.numpy()).max()
    assert err <= bound("sdpa", inputs, ref, "fp16")



@pytest.mark.parametrize("dtype, numpy_type", [("fp16", np.float16), ("bf16", None)])
def test_float32_arrays_rounded_to_the_storage_type_alike_on_every_path(dtype, numpy_type):
    # Contiguous float32 takes the tight conversion loop, a strided view the generic walk; both round to
    # nearest even, as NumPy's own float16 cast does (bf16: the result of torch.bfloat16 tensors).
    rng = np.random.default_rng(11)
    q, k, v = (rng.uniform(-3, 3, (1, 2, 33, 64)).astype(np.float32) for _ in range(3))
    fast = attnforge.run("sdpa", dtype=dtype, q=q, k=k, v=v)
    wide = np.zeros((1, 2, 33, 128), np.float32)
    wide[..., ::2] = q
    strided = attnforge.run("sdpa", dtype=dtype, q=wide[..., ::2], k=k, v=v)
    assert np.array_equal(fast, strided)
    if numpy_type is not None:
        rounded = attnforge.run("sdpa", q=q.astype(numpy_type), k=k.astype(numpy_type), v=v.astype(numpy_type))
    else:
        rounded = attnforge.run("sdpa", **{n: torch.from_numpy(a).to(torch.bfloat16)
                                           for n, a in (("q", q), ("k", k), ("v", v))}).float().numpy()
    assert np.array_equal(np.asarray(fast, np.float32), np.asarray(rounded, np.float32))


@pytest.mark.parametrize("variant", ["sdpa", "sdpa_causal", "decode"])
def test_scale_is_optional_a_number_or_a_0d_array(variant):
    # torch's scale=None is 1/sqrt(E); a scale given, a Python number or a 0-d array of any float type, is float32 in
    # every kernel (a bf16 call included).
    g = torch.Generator().manual_seed(5)
    inputs = make_inputs(variant, g)
    assert attnforge.signature(variant)["inputs"]["scale"] == {"shape": (), "dtype": "float32", "optional": True}
    for scale in (0.3, -1.5, np.float64(0.05), torch.tensor(2.0, dtype=torch.bfloat16)):
        ref = reference(variant, dict(inputs, scale=torch.as_tensor(float(scale), dtype=torch.float64)))
        got = attnforge.run(variant, scale=scale, **inputs)
        err = (got.to(torch.float64) - ref).abs().max().item()
        assert err <= 1e-4 * (1 + ref.abs().max().item()) * max(1.0, abs(float(scale)) * 8), (variant, scale, err)
    default = attnforge.run(variant, **inputs)
    explicit = attnforge.run(variant, scale=1 / math.sqrt(inputs["q"].shape[-1]), **inputs)
    assert torch.equal(default, explicit)
    bf = {n: t.to(torch.bfloat16) for n, t in inputs.items() if t.is_floating_point()}
    bf.update({n: t for n, t in inputs.items() if not t.is_floating_point()})
    assert attnforge.run(variant, scale=0.3, **bf).dtype == torch.bfloat16
    with pytest.raises(ValueError, match="a scale must be a finite number"):
        attnforge.run(variant, scale=float("nan"), **inputs)
    with pytest.raises(ValueError, match=r"input 'scale' must have shape \(\)"):
        attnforge.run(variant, scale=np.zeros(2, np.float32), **inputs)


@pytest.mark.parametrize("variant", ["sdpa_masked", "sdpa_additive", "sdpa_causal_masked", "decode_masked",
                                     "softcap_masked", "decode_softcap_masked"])
def test_torch_attn_masks_broadcast_over_batch_and_heads(variant):
    # PyTorch's attn_mask (contract §1): bool (True = attend) or float (added, −inf excludes), of shape
    # (B or 1, H or 1, Lq, Lk) as transformers passes it ((B, 1, Lq, Lk)); a bound kernel takes the same.
    g = torch.Generator().manual_seed(11)
    inputs = make_inputs(variant, g)
    b, h = inputs["q"].shape[:2]
    lq, lk = inputs["q"].shape[2], inputs["k"].shape[2]
    sig = attnforge.signature(variant)
    assert sig["inputs"]["attn_mask"]["shape"] == ("B", "H", "Lq", "Lkv")
    assert sig["inputs"]["attn_mask"]["broadcast"] == (0, 1)
    for mb, mh in ((b, h), (1, h), (b, 1), (1, 1)):
        if sig["inputs"]["attn_mask"]["dtype"] == "bool":
            mask = torch.rand((mb, mh, lq, lk), generator=g) < 0.75
            mask[0, 0, -1, :] = False  # a row with no key: zeros
        else:
            mask = (torch.rand((mb, mh, lq, lk), generator=g, dtype=torch.float64) * 4 - 2).to(torch.float32)
            mask[torch.rand((mb, mh, lq, lk), generator=g) < 0.25] = -torch.inf
        given = dict(inputs, attn_mask=mask)
        ref = reference(variant, given)
        got = attnforge.run(variant, **given)
        err = (got.to(torch.float64) - ref).abs().max().item()
        assert err <= bound(variant, given, ref), (variant, mb, mh, err)
        if mask.dtype == torch.bool:
            assert torch.all(got[0, 0, -1] == 0)
        sizes = {"B": b, "H": h, "Hkv": inputs["k"].shape[1], "E": inputs["q"].shape[3], "Lq": lq, "Lkv": lk}
        bound_kernel = attnforge.kernel(variant, **sizes)
        assert torch.equal(bound_kernel(**given), got)
    with pytest.raises(ValueError, match=r"input 'attn_mask' must have shape \(B=2 or 1, H=\d+ or 1, L\[q\]=\d+, L\[kv\]=\d+\)"):
        attnforge.run(variant, **dict(inputs, attn_mask=inputs["attn_mask"][:, :, :, :-1]))


@pytest.mark.parametrize("variant, name, value", [("sliding_window_attention", "window", 3),
                                                   ("softcap_attention", "cap", 2.5),
                                                   ("decode_sliding_window", "window", 37),
                                                   ("decode_softcap", "cap", 2.5),
                                                   ("decode_softcap", "window", 50),
                                                   ("softcap_masked", "cap", 2.5),
                                                   ("decode_softcap_masked", "cap", 2.5),
                                                   ("alibi_attention", "slopes", [0.5, 0.0625, 2.0])])
def test_built_in_parameters_at_run_time(variant, name, value):
    # The window, the cap and ALiBi's slopes a call gives (a number, a 0-d or (H) array); left out, their defaults
    # (test_every_variant_matches_pytorch_in_float64). Parameters stay float32 (int32) in a bf16 kernel.
    g = torch.Generator().manual_seed(3)
    inputs = make_inputs(variant, g)
    assert attnforge.signature(variant)["inputs"][name]["optional"]
    given = torch.tensor(value, dtype=torch.float32) if isinstance(value, list) else value
    ref = reference(variant, dict(inputs, **{name: torch.as_tensor(value, dtype=torch.float64)}))
    got = attnforge.run(variant, **inputs, **{name: given})
    err = (got.to(torch.float64) - ref).abs().max().item()
    assert err <= bound(variant, inputs, ref), (variant, err)
    assert not torch.equal(got, attnforge.run(variant, **inputs))  # not the default's result
    bf = {n: (t.to(torch.bfloat16) if t.is_floating_point() else t) for n, t in inputs.items()}
    got = attnforge.run(variant, **bf, **{name: given})
    ref = reference(variant, dict(bf, **{name: torch.as_tensor(value, dtype=torch.float64)}))
    assert (got.to(torch.float64) - ref).abs().max().item() <= bound(variant, bf, ref, "bf16")


def test_bf16_result_goes_to_numpy_as_float32():
    q = np.random.default_rng(1).uniform(-1, 1, (1, 2, 5, 64)).astype(np.float32)
    got = attnforge.run("sdpa", dtype="bf16", q=q, k=q, v=q)
    assert got.dtype == np.float32
    as_bits = got.view(np.uint32)
    assert not np.any(as_bits & 0xFFFF), "a bf16 result holds bf16 values"


def test_c_contiguous_inputs_are_read_in_place():
    g = torch.Generator().manual_seed(5)
    inputs = make_inputs("decode", g)  # float32 and int32 inputs
    arrays = {n: t.numpy() for n, t in inputs.items()}
    for given, address in ((inputs, lambda t: t.data_ptr()), (arrays, lambda a: a.ctypes.data)):
        seen = attnforge._native._borrowed_addresses("decode", **given)
        assert set(seen) == set(given)
        for name, (where, zero_copy) in seen.items():
            assert zero_copy and where == address(given[name]), name
    # Model weights (nn.Parameter, requires_grad) are read in place too: the forward pass only, no autograd.
    weight = torch.nn.Parameter(torch.rand(512, 512))
    assert attnforge._native._borrowed_addresses("mha", wq=weight)["wq"] == (weight.data_ptr(), True)
    bf = {n: (t.to(torch.bfloat16) if t.is_floating_point() else t) for n, t in inputs.items()}
    for name, (where, zero_copy) in attnforge._native._borrowed_addresses("decode", **bf).items():
        assert zero_copy and where == bf[name].data_ptr(), name
    # Not contiguous, or not of the kernel's type: converted into memory of the call's own, same result.
    q = arrays["q"]
    strided = np.asfortranarray(q)
    seen = attnforge._native._borrowed_addresses("decode", **dict(arrays, q=strided))
    assert not seen["q"][1]
    assert np.array_equal(attnforge.run("decode", **dict(arrays, q=strided)), attnforge.run("decode", **arrays))
    assert not attnforge._native._borrowed_addresses("decode", dtype="bf16", **arrays)["q"][1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_strided_views_are_read_in_place_and_out_takes_the_models_layout(dtype):
    # As transformers passes them (contract §1): q, k, v views (B, H, L, E) of (B, L, H, E) buffers, an attn_mask
    # expanded over the heads (stride 0), the output written as (B, Lq, H, E) through out=: no copy anywhere.
    g = torch.Generator().manual_seed(13)
    b, h, hkv, lq, lk, e = 2, 4, 2, 7, 45, 64
    q = torch.rand(b, lq, h, e, generator=g).to(dtype).transpose(1, 2)
    k = torch.rand(b, lk, hkv, e, generator=g).to(dtype).transpose(1, 2)
    v = torch.rand(b, lk, hkv, e, generator=g).to(dtype).transpose(1, 2)
    mask = (torch.rand(b, 1, lq, lk, generator=g) < 0.8).expand(b, h, lq, lk)
    assert not q.is_contiguous() and mask.stride(1) == 0
    for variant, given in (("sdpa", dict(q=q, k=k, v=v)), ("sdpa_masked", dict(q=q, k=k, v=v, attn_mask=mask))):
        seen = attnforge._native._borrowed_addresses(variant, **given)
        for name, (where, zero_copy) in seen.items():
            assert zero_copy and where == given[name].data_ptr(), (variant, name)
        dense = attnforge.run(variant, **{n: t.contiguous() for n, t in given.items()})
        assert torch.equal(attnforge.run(variant, **given), dense)
        out = torch.empty(b, lq, h, e, dtype=dtype)
        assert attnforge.run(variant, out=out.transpose(1, 2), **given).data_ptr() == out.data_ptr()
        assert torch.equal(out, dense.transpose(1, 2))
        seen = attnforge._native._last_call_addresses()
        assert seen[""] == out.data_ptr() and seen["q"] == q.data_ptr()
        bound = attnforge.kernel(variant, B=b, H=h, Hkv=hkv, E=e, Lq=lq, Lkv=lk, dtype="bf16" if dtype != torch.float32 else None)
        out2 = torch.empty(b, lq, h, e, dtype=dtype)
        bound(out=out2.transpose(1, 2), **given)
        assert torch.equal(out2, out)
    # A view whose rows are not contiguous (the last axis strided) is converted, with the same result; an out= whose
    # elements overlap is refused, saying why.
    fortran = np.asfortranarray(q.float().contiguous().numpy())
    assert not attnforge._native._borrowed_addresses("sdpa", q=fortran, k=k.float(), v=v.float())["q"][1]
    with pytest.raises(ValueError, match="a stride of 0 in a result"):
        attnforge.run("sdpa", q=q, k=k, v=v, out=torch.empty(b, 1, lq, e, dtype=dtype).expand(b, h, lq, e))
    with pytest.raises(ValueError, match="out= is for the kernel engine"):
        attnforge.run("sdpa", q=q, k=k, v=v, engine="interpreter", out=torch.empty(b, h, lq, e, dtype=dtype))


def test_the_kernel_reads_the_callers_memory():
    # What the kernel itself was handed (the runtime's record of its last call on this thread), on both call
    # paths: run() and a bound Kernel, with NumPy arrays and torch tensors, float32 and bf16.
    g = torch.Generator().manual_seed(7)
    inputs = make_inputs("decode", g)
    arrays = {n: t.numpy() for n, t in inputs.items()}
    bf = {n: (t.to(torch.bfloat16) if t.is_floating_point() else t) for n, t in inputs.items()}
    for given, address in ((inputs, lambda t: t.data_ptr()), (arrays, lambda a: a.ctypes.data),
                           (bf, lambda t: t.data_ptr())):
        result = attnforge.run("decode", **given)
        seen = attnforge._native._last_call_addresses()
        assert set(seen) == set(given) | {""}
        for name in given:
            assert seen[name] == address(given[name]), name
        assert seen[""] == address(result)
        bound = attnforge.kernel("decode", **sizes_of("decode"), dtype="bf16" if given is bf else None)
        out = torch.empty_like(result) if isinstance(result, torch.Tensor) else np.empty_like(result)
        assert bound(out=out, **given) is out
        seen = attnforge._native._last_call_addresses()
        for name in given:
            assert seen[name] == address(given[name]), name
        assert seen[""] == address(out)
    # A converted input (float64) is the call's own memory: the record says so.
    attnforge.run("decode", **dict(arrays, q=arrays["q"].astype(np.float64)))
    assert attnforge._native._last_call_addresses()["q"] != arrays["q"].ctypes.data


def test_inputs_in_types_of_their_own_run_on_their_kernel():
    # A float32 query over a bf16 cache: the kernel that takes exactly those types (decode__k_bf16_v_bf16__...),
    # every input read in place, a float32 result within the float32 bound of the interpreter on those values.
    g = torch.Generator().manual_seed(13)
    inputs = make_inputs("decode", g)
    mixed = dict(inputs, k=inputs["k"].to(torch.bfloat16), v=inputs["v"].to(torch.bfloat16))
    got = attnforge.run("decode", **mixed)
    assert got.dtype == torch.float32
    seen = attnforge._native._last_call_addresses()
    for name, t in mixed.items():
        assert seen[name] == t.data_ptr(), name
    expected = attnforge.run("decode", engine="interpreter", **mixed)
    assert (got.double() - expected).abs().max().item() <= 1e-4 * (1 + expected.abs().max().item())
    # dtype= still picks the kernels of one storage type, converting what is not of it.
    assert attnforge.run("decode", dtype="bf16", **mixed).dtype == torch.bfloat16
    listed = {k["name"]: k["input_types"] for k in attnforge.kernels("decode")}
    assert "k=bf16 v=bf16" in listed.values() and listed["decode__E64__streaming"] == ""


def test_bound_kernel_writes_into_out_and_reuses_it():
    g = torch.Generator().manual_seed(11)
    sizes = sizes_of("sdpa")
    inputs = {n: t.numpy() for n, t in make_inputs("sdpa", g, sizes).items()}
    k = attnforge.kernel("sdpa", **sizes)
    assert k.input_shapes["q"] == inputs["q"].shape and k.output_shape == (2, 3, 7, 64)
    out = np.empty(k.output_shape, np.float32)
    for _ in range(3):
        assert k(out=out, **inputs) is out
    assert np.array_equal(out, attnforge.run("sdpa", **inputs))
    assert np.array_equal(k(**inputs), out)
    with pytest.raises(ValueError, match=r"input 'q' must be \(2, 3, 7, 64\), given \(2, 3, 8, 64\)"):
        k(**dict(inputs, q=np.zeros((2, 3, 8, 64), np.float32)))
    with pytest.raises(ValueError, match=r"out= of .*: expected a CPU array float32 \(2, 3, 7, 64\)"):
        k(out=np.empty((2, 3, 7, 32), np.float32), **inputs)
    with pytest.raises(ValueError, match=r"out= of .*given float64"):
        k(out=np.empty(k.output_shape), **inputs)
    with pytest.raises(ValueError, match=r"writable"):
        readonly = np.empty(k.output_shape, np.float32)
        readonly.flags.writeable = False
        k(out=readonly, **inputs)
    with pytest.raises(ValueError, match=r"unknown size 'L'; its sizes are B, H, Lq, E, Hkv, Lkv"):
        attnforge.kernel("sdpa", B=1, H=1, Lq=1, L=2)
    with pytest.raises(ValueError, match=r"Lkv is missing"):
        attnforge.kernel("sdpa", B=1, H=1, Hkv=1, E=64, Lq=1)
    # The rule picks by the bound sizes, as run() does by the inputs'.
    assert attnforge.kernel("sdpa", B=1, H=1, Hkv=1, E=64, Lq=8, Lkv=9000).strategy == "streaming"
    assert attnforge.kernel("decode", B=1, H=8, Hkv=8, E=64, Lq=1, Lkv=4096).strategy == "decode"


def test_interpreter_engine_is_float64_and_the_kernel_agrees():
    g = torch.Generator().manual_seed(2)
    inputs = make_inputs("document_attention", g)
    spec = attnforge.run("document_attention", engine="interpreter", **inputs)
    assert spec.dtype == torch.float64
    assert (spec - reference("document_attention", inputs)).abs().max().item() < 1e-12
    got = attnforge.run("document_attention", **inputs)
    assert (got.double() - spec).abs().max().item() <= bound("document_attention", inputs, spec)


def test_other_results_and_threads():
    g = torch.Generator().manual_seed(4)
    inputs = make_inputs("sdpa", g)
    w = attnforge.run("sdpa", result="attention_weights", threads=1, **inputs)
    assert tuple(w.shape) == (2, 3, 7, 45)
    assert torch.allclose(w.sum(-1), torch.ones(2, 3, 7), atol=1e-5)
    lse = attnforge.run("sdpa", result="logsumexp", **inputs)
    assert tuple(lse.shape) == (2, 3, 7)


def test_no_keys_gives_zero_rows():
    q = np.ones((1, 2, 3, 64), np.float32)
    empty = np.zeros((1, 2, 0, 64), np.float32)
    assert np.array_equal(attnforge.run("sdpa", q=q, k=empty, v=empty), np.zeros_like(q))


def test_conversions_follow_the_npy_rules():
    g = torch.Generator().manual_seed(6)
    inputs = {n: t.numpy() for n, t in make_inputs("decode", g).items()}
    expected = attnforge.run("decode", **inputs)
    with pytest.warns(UserWarning, match="input 'q' is float64; converting to float32"):
        got = attnforge.run("decode", **dict(inputs, q=inputs["q"].astype(np.float64)))
    assert np.array_equal(got, expected)
    as_int64 = inputs["kv_length"].astype(np.int64)
    assert np.array_equal(attnforge.run("decode", **dict(inputs, kv_length=as_int64)), expected)
    m = {n: t.numpy() for n, t in make_inputs("masked_attention", g).items()}
    assert np.array_equal(attnforge.run("masked_attention", **dict(m, attn_mask=m["attn_mask"].astype(np.uint8))),
                          attnforge.run("masked_attention", **m))


def cli_message(cli, tmp_path, variant, inputs):
    args = [cli, "run", variant, "--output", str(tmp_path / "out.npy")]
    for name, a in inputs.items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    return r.stderr.strip().removeprefix("attnforge run: ")


@pytest.mark.parametrize("case", ["missing", "shape", "unknown_variant", "cache_length", "extra"])
def test_errors_are_value_errors_with_the_clis_message(cli, tmp_path, case):
    q = np.zeros((1, 2, 4, 64), np.float32)
    variant, inputs = {
        "missing": ("sdpa", {"q": q, "k": q}),
        "shape": ("sdpa", {"q": q, "k": q, "v": q[..., :32].copy()}),
        "unknown_variant": ("no_such_variant", {"q": q}),
        "cache_length": ("decode", {"q": q[:, :, :1], "k": q, "v": q, "kv_length": np.array([5], np.int32)}),
        "extra": ("sdpa", {"q": q, "k": q, "v": q, "w": q}),
    }[case]
    with pytest.raises(ValueError) as raised:
        attnforge.run(variant, **inputs)
    assert str(raised.value) == cli_message(cli, tmp_path, variant, inputs)


def test_bad_arguments_say_what_was_expected():
    q = np.zeros((1, 1, 2, 64), np.float32)
    with pytest.raises(ValueError, match="input 'q' must be an array .*given list"):
        attnforge.run("sdpa", q=[[1.0]], k=q, v=q)
    with pytest.raises(ValueError, match="input 'q' must be float32 .*given int64"):
        attnforge.run("sdpa", q=q.astype(np.int64), k=q, v=q)
    with pytest.raises(ValueError, match="storage type .* is float32, bf16 or fp16, given 'f8'"):
        attnforge.run("sdpa", dtype="f8", q=q, k=q, v=q)
    with pytest.raises(ValueError, match="'kernel' or 'interpreter'"):
        attnforge.run("sdpa", engine="jit", q=q, k=q, v=q)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        attnforge.run("sdpa", threads=0, q=q, k=q, v=q)
    with pytest.raises(ValueError, match=r"threads must be 0 \(one per core\) or more, given -1"):
        attnforge.set_default_threads(-1)
    with pytest.raises(ValueError, match="imply different storage types"):
        attnforge.run("sdpa", q=torch.zeros(1, 1, 2, 64, dtype=torch.bfloat16), k=q.astype(np.float16), v=q)


def test_the_gil_is_released_while_a_kernel_runs():
    """Another Python thread runs while a kernel does: with the GIL held it could not run at all between
    the call's start and end (a pure-Python loop needs the GIL)."""
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (1, 8, 2048, 64)).astype(np.float32)
    span = {}
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    def call():
        span["start"] = time.perf_counter()
        attnforge.run("sdpa", threads=1, q=q, k=q, v=q)
        span["end"] = time.perf_counter()

    spinner = threading.Thread(target=spin)
    spinner.start()
    caller = threading.Thread(target=call)
    caller.start()
    caller.join()
    stop.set()
    spinner.join()
    margin = 0.2 * (span["end"] - span["start"])
    inside = [t for t in ticks if span["start"] + margin < t < span["end"] - margin]
    assert len(inside) > 100, f"{len(inside)} Python steps of another thread during a {span['end'] - span['start']:.3f} s call"


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_no_leak_over_ten_thousand_calls(framework):
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (1, 2, 16, 64)).astype(np.float32)
    if framework == "torch":
        q = torch.from_numpy(q)
    k = attnforge.kernel("sdpa", B=1, H=2, Hkv=2, E=64, Lq=16, Lkv=16)
    for _ in range(1000):
        attnforge.run("sdpa", q=q, k=q, v=q)
        k(q=q, k=q, v=q)
    gc.collect()
    refs, before = sys.getrefcount(q), rss_bytes()
    for _ in range(10_000):
        attnforge.run("sdpa", q=q, k=q, v=q)
        k(q=q, k=q, v=q)
    gc.collect()
    assert sys.getrefcount(q) == refs
    # 2·10⁴ results of 8 KiB each: a leak of them would be 160 MiB.
    assert rss_bytes() - before < 16 << 20


def test_signature_and_kernels_describe_the_variant():
    s = attnforge.signature("decode_gqa")
    assert s["inputs"]["q"] == {"shape": ("B", 32, "Lq", 128), "dtype": "float32"}
    assert s["inputs"]["kv_length"] == {"shape": ("B",), "dtype": "int32"}
    assert s["sizes"] == ("B", "Lq", "Lkv") and "bf16" in s["dtypes"]
    names = [k["name"] for k in attnforge.kernels("sdpa")]
    assert names and all(n.startswith("sdpa__") for n in names)
    assert "Runs a variant" in attnforge.run.__doc__


def test_quantize_into_cache_writes_tokens_in_place_for_decode_u8():
    # A prompt of 20 tokens, then three single tokens, written into a uint8 cache by token (NumPy arrays, in place);
    # decode_u8 over it equals decode over the values the cache stands for, and each value is within half a step.
    rng = np.random.default_rng(5)
    b, h, hkv, e, lmax = 2, 4, 2, 64, 32
    cache = {n: np.zeros((b, hkv, lmax, e), np.uint8) for n in ("k", "v")}
    cache.update({f"{n}_{p}": np.zeros((b, hkv, lmax), np.float32) for n in ("k", "v") for p in ("scale", "zero")})
    lengths = np.zeros(b, np.int32)
    values = {"k": np.zeros((b, hkv, lmax, e), np.float32), "v": np.zeros((b, hkv, lmax, e), np.float32)}
    for n_new in (20, 1, 1, 1):
        for n in ("k", "v"):
            x = rng.normal(0.3, 2.0, (b, hkv, n_new, e)).astype(np.float32)
            attnforge.quantize_into_cache(x, lengths, cache[n], cache[f"{n}_scale"], cache[f"{n}_zero"])
            values[n][:, :, lengths[0]:lengths[0] + n_new] = x
        lengths += n_new
    dense = {n: (cache[n] - cache[f"{n}_zero"][..., None]) * cache[f"{n}_scale"][..., None] for n in ("k", "v")}
    for n in ("k", "v"):
        step = cache[f"{n}_scale"][:, :, :23, None]
        assert np.all(np.abs(dense[n][:, :, :23] - values[n][:, :, :23]) <= 0.5 * step * (1 + 1e-5) + 1e-6)
    q = rng.normal(size=(b, h, 1, e)).astype(np.float32)
    got = attnforge.run("decode_u8", q=q, kv_length=lengths, **cache)
    want = attnforge.run("decode", q=q, k=dense["k"].astype(np.float32), v=dense["v"].astype(np.float32),
                         kv_length=lengths)
    assert np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())
    # torch tensors too, written in place.
    codes, scale, zero = torch.zeros(1, 1, 4, 8, dtype=torch.uint8), torch.zeros(1, 1, 4), torch.zeros(1, 1, 4)
    attnforge.quantize_into_cache(torch.arange(8.0).reshape(1, 1, 1, 8), torch.tensor([2], dtype=torch.int32),
                                  codes, scale, zero)
    assert codes[0, 0, 2].tolist() == [0, 36, 73, 109, 146, 182, 219, 255]
    assert scale[0, 0, 2].item() == pytest.approx(7 / 255, rel=1e-6)


def test_quantize_into_cache_writes_int8_codes_by_group_for_decode_i8_g32():
    # Symmetric int8 codes with a scale per 32 channels (torch tensors, in place): each value within half a step, the
    # largest magnitude of each group ±127; decode_i8_g32 and decode_i8 over such caches equal decode over their values.
    gen = torch.Generator().manual_seed(7)
    b, h, hkv, e, lmax = 2, 4, 2, 64, 24
    lengths = torch.tensor([0, 5], dtype=torch.int32)
    for variant, groups in (("decode_i8_g32", 2), ("decode_i8", None)):
        scale_shape = (b, hkv, lmax) + ((groups,) if groups else ())
        cache = {n: torch.zeros(b, hkv, lmax, e, dtype=torch.int8) for n in ("k", "v")}
        cache.update({f"{n}_scale": torch.zeros(scale_shape) for n in ("k", "v")})
        for n in ("k", "v"):
            x = torch.randn(b, hkv, 19, e, generator=gen)
            attnforge.quantize_into_cache(x, lengths, cache[n], cache[f"{n}_scale"])
            step = cache[f"{n}_scale"] if groups else cache[f"{n}_scale"][..., None]
            step = step.repeat_interleave(e // (groups or 1), dim=-1)
            for i, first in enumerate(lengths.tolist()):
                got = cache[n][i, :, first:first + 19].double() * step[i, :, first:first + 19]
                assert torch.all((got - x[i]).abs() <= 0.5 * step[i, :, first:first + 19] * (1 + 1e-5) + 1e-6)
                top = cache[n][i, :, first:first + 19].abs().reshape(hkv, 19, -1, e // (groups or 1)).amax(-1)
                assert torch.all(top == 127)
        kv_length = lengths + 19
        dense = {n: (cache[n].double() * (cache[f"{n}_scale"] if groups else cache[f"{n}_scale"][..., None])
                     .repeat_interleave(e // (groups or 1), dim=-1)).float() for n in ("k", "v")}
        q = torch.randn(b, h, 1, e, generator=gen)
        got = attnforge.run(variant, q=q, kv_length=kv_length, **cache)
        want = attnforge.run("decode", q=q, k=dense["k"], v=dense["v"], kv_length=kv_length)
        assert (got - want).abs().max() <= 1e-4 * (1 + want.abs().max())


def test_quantize_into_cache_writes_keys_by_channel_for_decode_u8_kc128():
    # Keys by channel of blocks of 128 tokens (NumPy arrays, in place): a prompt of 150 tokens, then single tokens and
    # a chunk that crosses a block's end, give the codes and scales of one write of all of them (the open block
    # quantized again from open_block); each value within half a step of its channel's block; decode_u8_kc128 over
    # the cache (values by token) equals decode over the values it stands for.
    rng = np.random.default_rng(9)
    b, h, hkv, e, lmax, t = 2, 4, 2, 64, 300, 128
    blocks = -(-lmax // t)
    x = rng.normal(0.2, 2.0, (b, hkv, 262, e)).astype(np.float32)
    steps = {n: np.zeros((b, hkv, lmax, e), np.uint8) for n in ("k", "v")}
    steps.update({f"k_{p}": np.zeros((b, hkv, blocks, e), np.float32) for p in ("scale", "zero")})
    steps.update({f"v_{p}": np.zeros((b, hkv, lmax), np.float32) for p in ("scale", "zero")})
    at_once = {n: a.copy() for n, a in steps.items()}
    open_block, lengths, done = np.zeros((b, hkv, t, e), np.float32), np.zeros(b, np.int32), 0
    for n_new in (150, 1, 1, 100, 10):
        attnforge.quantize_into_cache(x[:, :, done:done + n_new], lengths, steps["k"], steps["k_scale"],
                                      steps["k_zero"], open_block=open_block)
        attnforge.quantize_into_cache(x[:, :, done:done + n_new], lengths, steps["v"], steps["v_scale"],
                                      steps["v_zero"])
        lengths += n_new
        done += n_new
    attnforge.quantize_into_cache(x, np.zeros(b, np.int32), at_once["k"], at_once["k_scale"], at_once["k_zero"],
                                  open_block=np.zeros((b, hkv, t, e), np.float32))
    assert np.array_equal(steps["k"], at_once["k"])
    assert np.array_equal(steps["k_scale"], at_once["k_scale"]) and np.array_equal(steps["k_zero"], at_once["k_zero"])
    block = np.arange(lmax) // t
    dense_k = (steps["k"] - steps["k_zero"][:, :, block]) * steps["k_scale"][:, :, block]
    step = steps["k_scale"][:, :, block][:, :, :262]
    assert np.all(np.abs(dense_k[:, :, :262] - x) <= 0.5 * step * (1 + 1e-5) + 1e-6)
    dense_v = (steps["v"] - steps["v_zero"][..., None]) * steps["v_scale"][..., None]
    q = rng.normal(size=(b, h, 1, e)).astype(np.float32)
    got = attnforge.run("decode_u8_kc128", q=q, kv_length=lengths, **steps)
    want = attnforge.run("decode", q=q, k=dense_k.astype(np.float32), v=dense_v.astype(np.float32),
                         kv_length=lengths)
    assert np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())
    # Scales by token where by channel are taken: the shape expected, blocks of 128 tokens.
    wrong = dict(steps, k_scale=steps["v_scale"], k_zero=steps["v_zero"])
    with pytest.raises(ValueError, match=r"'k_scale' must have shape \(B=2, Hkv=2, L\[kv\]/128=3, E=64\)"):
        attnforge.run("decode_u8_kc128", q=q, kv_length=lengths, **wrong)
    with pytest.raises(ValueError, match="open_block is for uint8 keys by channel"):
        attnforge.quantize_into_cache(x[:, :, :1], lengths, np.zeros((b, hkv, lmax, e), np.int8),
                                      np.zeros((b, hkv, lmax), np.float32), open_block=open_block)


def test_scales_per_32_channels_need_a_head_width_multiple_of_32():
    # decode_i8_g32 at E = 80: no kernel can exist; both paths say why (not "build with E = 80").
    with pytest.raises(ValueError, match="E must be a multiple of 32, given E=80"):
        attnforge.kernel("decode_i8_g32", B=1, H=2, Hkv=1, E=80, Lq=1, Lkv=8)
    q = torch.zeros(1, 2, 1, 80)
    cache = {n: torch.zeros(1, 1, 8, 80, dtype=torch.int8) for n in ("k", "v")}
    cache.update({f"{n}_scale": torch.ones(1, 1, 8, 2) for n in ("k", "v")})
    with pytest.raises(ValueError, match="the head width E=80 is not a multiple of 32"):
        attnforge.run("decode_i8_g32", q=q, kv_length=torch.tensor([8], dtype=torch.int32), **cache)
    # A scale per token where one per 32 channels is taken: the shape expected, with E/32 = 2.
    cache.update({n: torch.zeros(1, 1, 8, 64, dtype=torch.int8) for n in ("k", "v")})
    cache.update({f"{n}_scale": torch.ones(1, 1, 8) for n in ("k", "v")})
    with pytest.raises(ValueError, match=r"'k_scale' must have shape \(B=1, Hkv=1, L\[kv\]=8, E/32=2\)"):
        attnforge.run("decode_i8_g32", q=torch.zeros(1, 2, 1, 64), kv_length=torch.tensor([8], dtype=torch.int32),
                      **cache)


def test_quantize_into_cache_refuses_bad_input():
    codes, scale, zero = np.zeros((1, 1, 4, 8), np.uint8), np.zeros((1, 1, 4), np.float32), np.zeros((1, 1, 4), np.float32)
    x = np.ones((1, 1, 2, 8), np.float32)
    with pytest.raises(ValueError, match=r"slots 3..4 .* Lmax = 4"):
        attnforge.quantize_into_cache(x, np.array([3], np.int32), codes, scale, zero)
    with pytest.raises(ValueError, match="codes must be uint8, given float32"):
        attnforge.quantize_into_cache(x, np.array([0], np.int32), codes.astype(np.float32), scale, zero)
    with pytest.raises(ValueError, match="kv_length must be int32, given int64"):
        attnforge.quantize_into_cache(x, np.array([0]), codes, scale, zero)
    with pytest.raises(ValueError, match="codes must be int8, given uint8"):  # no zero point: symmetric int8 codes
        attnforge.quantize_into_cache(x, np.array([0], np.int32), codes, scale)
    with pytest.raises(ValueError, match=r"with G dividing E = 8 .*; given \(1, 1, 4, 3\)"):
        attnforge.quantize_into_cache(x, np.array([0], np.int32), codes.astype(np.int8), np.zeros((1, 1, 4, 3), np.float32))
    with pytest.raises(ValueError, match="writable"):
        read_only = codes.copy()
        read_only.flags.writeable = False
        attnforge.quantize_into_cache(x, np.array([0], np.int32), read_only, scale, zero)
    assert not codes.any() and not scale.any()
