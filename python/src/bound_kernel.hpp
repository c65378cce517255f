// attnforge.kernel(name, **sizes): a kernel picked once, by the rule, for sizes known up front (B, H and
// one L<sequence> per sequence: Lq, Lkv, Lx, ...), called many times. Each call checks its inputs against
// those sizes, reuses the kernels' scratch memory (runtime/scratch_memory.hpp) and can write into the
// caller's out= array, so that a loop of calls allocates nothing.
#pragma once

#include "calls.hpp"

#include <attnforge/dsl/passes/bind_shapes.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::python {

class BoundKernel {
public:
    BoundKernel(const std::string& variant, const std::string& result, const std::optional<std::string>& dtype,
                const std::optional<int>& threads, const nb::kwargs& sizes);

    nb::object call(const nb::kwargs& inputs, nb::handle out) const;

    const runtime::KernelEntry& entry() const { return *kernel_; }
    // Every input's shape and the result's, under the bound sizes.
    const std::map<std::string, std::vector<std::int64_t>>& input_shapes() const { return input_shapes_; }
    const std::vector<std::int64_t>& output_shape() const { return output_shape_; }
    std::string sizes_text() const;

private:
    std::string variant_, result_;
    dsl::element_type storage_;
    std::optional<int> threads_;
    const runtime::KernelEntry* kernel_;
    std::vector<std::pair<std::string, std::int64_t>> sizes_;  // in signature order, as given
    std::map<std::string, std::vector<std::int64_t>> input_shapes_;
    std::vector<std::int64_t> output_shape_;
};

// The size names of a variant: B and H where it has them, L<name> per sequence, in signature order.
std::vector<std::string> size_names(const dsl::graph_signature& signature);

}  // namespace attnforge::python
