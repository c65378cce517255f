// The kernels of a variant that serve inputs of head width E: every kernel of a variant whose E is static, and
// those generated for E of a variant whose E is run-time (a kernel line's E list). What the tests that run
// "every kernel" on one set of inputs run.
#pragma once

#include <attnforge/runtime/run.hpp>

#include <string_view>
#include <vector>

namespace attnforge::testing {

inline std::vector<const runtime::KernelEntry*> kernels_at(std::string_view variant, std::string_view result,
                                                           std::string_view dtype = "float32", int head_width = 64) {
    std::vector<const runtime::KernelEntry*> kernels = runtime::kernels_for(variant, result, dtype);
    std::erase_if(kernels, [&](const runtime::KernelEntry* k) { return k->head_width && k->head_width != head_width; });
    return kernels;
}

}  // namespace attnforge::testing
