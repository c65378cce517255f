#include "workload.hpp"

namespace attnforge::tune {

Workload::Workload(const Problem& p) {
    inputs = attnforge::testing::synthetic_inputs(p.signature, p.sizes, {});
    output = runtime::Tensor::float32(p.result_shape());
    const std::size_t n = p.signature.inputs.size();
    dims_.resize(n + 1);
    buffers_.resize(n + 1);
    for (std::size_t i = 0; i < n; ++i) {
        const runtime::Tensor& t = inputs.at(p.signature.inputs[i].name);
        buffers_[i] = runtime::describe(t.data(), t.dtype, t.shape, dims_[i]);
    }
    buffers_[n] = runtime::describe(output.f32.data(), output.dtype, output.shape, dims_[n]);
    argv.push_back(nullptr);
    for (auto& b : buffers_) argv.push_back(&b);
}

}  // namespace attnforge::tune
