#include <attnforge/errors.hpp>
#include <attnforge/interp/tensor.hpp>

#include <limits>

namespace attnforge::interp {

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape)
        if (d < 0) throw input_error("shape " + shape_string(shape) + " has a negative size");
    for (std::int64_t d : shape) {
        if (d == 0) return 0;
        if (n > std::numeric_limits<std::int64_t>::max() / d)
            throw input_error("shape " + shape_string(shape) + " has more elements than fit in 64 bits");
        n *= d;
    }
    return n;
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

Tensor::Tensor(std::vector<std::int64_t> shape_, double fill)
    : shape(std::move(shape_)), data(static_cast<std::size_t>(interp::element_count(shape)), fill) {}

Tensor::Tensor(std::vector<std::int64_t> shape_, std::vector<double> data_)
    : shape(std::move(shape_)), data(std::move(data_)) {
    if (interp::element_count(shape) != element_count()) {
        throw input_error("tensor of shape " + interp::shape_string(shape) + " needs " +
                          std::to_string(interp::element_count(shape)) + " values, given " +
                          std::to_string(data.size()));
    }
}

std::string Tensor::shape_string() const {
    return interp::shape_string(shape);
}

}  // namespace attnforge::interp
