#include <attnforge/errors.hpp>
#include <attnforge/interp/tensor.hpp>

namespace attnforge::interp {

Tensor::Tensor(std::vector<std::int64_t> shape_, double fill)
    : shape(std::move(shape_)), data(static_cast<std::size_t>(dsl::element_count(shape)), fill) {}

Tensor::Tensor(std::vector<std::int64_t> shape_, std::vector<double> data_)
    : shape(std::move(shape_)), data(std::move(data_)) {
    if (dsl::element_count(shape) != element_count()) {
        throw input_error("tensor of shape " + dsl::shape_string(shape) + " needs " +
                          std::to_string(dsl::element_count(shape)) + " values, given " + std::to_string(data.size()));
    }
}

std::string Tensor::shape_string() const {
    return dsl::shape_string(shape);
}

}  // namespace attnforge::interp
