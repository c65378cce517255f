// The body of attnforge.torch.scaled_dot_product_attention (python/attnforge/torch.py, docs/pytorch.md) in C++:
// torch's argument checks, the built-in variant for the arguments, the live keys of a bool mask, the output
// tensor, one kernel call with the GIL released. In C++ because at decode sizes a call's kernel is ~0.05-0.2 ms
// and the same work in Python cost 30 µs (checks, dictionaries, a DLPack capsule per tensor).
#pragma once

#include <attnforge/runtime/tensor_view.hpp>

#include <cstdint>
#include <map>
#include <nanobind/nanobind.h>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::python {

namespace nb = nanobind;

// Attention of (B, Hq, Lq, E) queries over (B, Hkv, Lk, E) keys and values, torch's meaning (docs/pytorch.md):
// attn_mask None, bool (True = takes part) or additive in query's dtype, broadcastable to (B, Hq, Lq, Lk);
// is_causal top-left; scale 1/√E when none; softcap cap·tanh(s/cap) before the mask. Returns (output, lse):
// output (B, Hq, Lq, E), or (B, Lq, Hq, E) when heads_last; lse (B, Hq, Lq) float32 when return_lse, else None.
// Every argument torch would refuse, and what no kernel serves, is an input_error (ValueError) saying so.
nb::tuple torch_attention(nb::handle query, nb::handle key, nb::handle value, nb::handle attn_mask, bool is_causal,
                          std::optional<double> scale, std::optional<double> softcap, bool enable_gqa, bool return_lse,
                          bool heads_last);

// For tests and bench/python_call_cost.py: what the last torch_attention call on this thread ran: its variant,
// kernel ("" when no key was left) and storage type (names from the registry), its inputs' views — their shapes
// only are meaningful after the call (the data pointers were the caller's tensors') — and the seconds its kernel
// calls took with the GIL released (runtime::evaluate_into, what a C++ program calls, its checks of the inputs
// included: the rest of the call is what Python adds).
struct TorchCall {
    std::string_view variant, kernel, dtype;
    runtime::ViewMap inputs;
    double kernel_seconds = 0;
};
const TorchCall& last_torch_call();

}  // namespace attnforge::python
