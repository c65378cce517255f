// Tensor: a dense row-major float64 array with its shape; the interpreter's only data type.
#pragma once

#include <attnforge/dsl/passes/bind_shapes.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnforge::interp {

struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<double> data;

    Tensor() = default;
    explicit Tensor(std::vector<std::int64_t> shape_, double fill = 0.0);
    Tensor(std::vector<std::int64_t> shape_, std::vector<double> data_);

    std::int64_t rank() const { return static_cast<std::int64_t>(shape.size()); }
    std::int64_t dim(std::int64_t axis) const { return shape.at(static_cast<std::size_t>(axis)); }
    std::int64_t element_count() const { return static_cast<std::int64_t>(data.size()); }
    double* ptr() { return data.data(); }
    const double* ptr() const { return data.data(); }

    // "(2, 8, 5, 64)"
    std::string shape_string() const;
};

// element_count and shape_string of a shape: attnforge/dsl/passes/bind_shapes.hpp.
using dsl::element_count;
using dsl::shape_string;

}  // namespace attnforge::interp
