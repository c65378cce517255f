// The reference registry: the float64 interpreter of every variant (and result) that has kernels,
// its source written by the catalogue program beside the kernel registry's. Linked by the engine
// (attnforge::engine), never by the runtime itself: a program that ships kernels carries no interpreter
// unless it opts in.
#pragma once

#include <attnforge/interp/binding.hpp>
#include <attnforge/runtime/tensor.hpp>

#include <span>
#include <string_view>

namespace attnforge::runtime {

struct ReferenceEntry {
    std::string_view variant;
    std::string_view result;  // "output", "attention_weights" or "logsumexp"
    interp::Tensor (*interpret)(const interp::TensorMap& inputs);
};

std::span<const ReferenceEntry> reference_registry();

// The same values in float64, for the interpreter (masks become 0 or 1, int32 exact). Inline: the tuner validates
// its candidates with it without the registries.
inline interp::Tensor to_float64(const Tensor& t) {
    interp::Tensor d(t.shape);
    for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] = t.value(i);
    return d;
}

inline interp::TensorMap to_float64(const TensorMap& tensors) {
    interp::TensorMap out;
    for (const auto& [name, t] : tensors) out.emplace(name, to_float64(t));
    return out;
}

}  // namespace attnforge::runtime
