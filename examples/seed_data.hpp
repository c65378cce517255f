// Seed 004's worked example: X (3x4) and W_Q, W_K, W_V (4x3), as printed in its PyTorch code.
#pragma once

#include <attnforge/interp/binding.hpp>

namespace attnforge::examples {

inline interp::TensorMap seed_004_inputs() {
    return {
        {"x", interp::Tensor({3, 4}, {1, 0, 1, 0, /**/ 0, 2, 0, 2, /**/ 1, 1, 1, 1})},
        {"wq", interp::Tensor({4, 3}, {1, 0, 1, /**/ 1, 0, 0, /**/ 0, 0, 1, /**/ 0, 1, 1})},
        {"wk", interp::Tensor({4, 3}, {0, 0, 1, /**/ 1, 1, 0, /**/ 0, 1, 0, /**/ 1, 1, 0})},
        {"wv", interp::Tensor({4, 3}, {0, 2, 0, /**/ 0, 3, 0, /**/ 1, 0, 3, /**/ 1, 1, 0})},
    };
}

}  // namespace attnforge::examples
