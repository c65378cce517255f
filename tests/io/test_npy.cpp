// .npy reading and writing (docs/contract.md §4) against files NumPy wrote (tests/io/make_npy_cases.py), and
// the rejection, with a clear message, of everything the contract rules out.
#define BOOST_TEST_MODULE io_npy
#include <attnforge/errors.hpp>
#include <attnforge/io/npy.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace io = attnforge::io;
namespace {

const std::filesystem::path cases = ATTNFORGE_NPY_CASES_DIR;
std::string path(const char* name) {
    return (cases / name).string();
}

std::vector<double> expected_values() {
    std::vector<double> v(24);
    for (int i = 0; i < 24; ++i) v[i] = (i - 11.5) / 4;
    return v;
}

std::string rejection(const char* name) {
    try {
        io::read_npy(path(name));
    } catch (const attnforge::input_error& e) {
        return e.what();
    }
    return "<accepted>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(reads_numpy_float32_in_every_format_version) {
    for (const char* name : {"f4_v1.npy", "f4_v2.npy", "f4_v3.npy", "f8.npy"}) {
        BOOST_TEST_CONTEXT(name) {
            const auto a = io::read_npy(path(name));
            BOOST_TEST(a.shape == (std::vector<std::int64_t>{2, 3, 4}), boost::test_tools::per_element());
            BOOST_TEST(io::to_tensor(a).data == expected_values(), boost::test_tools::per_element());
        }
    }
    BOOST_TEST((io::read_npy(path("f8.npy")).dtype == io::npy_dtype::float64));
}

BOOST_AUTO_TEST_CASE(reads_masks_scalars_and_empty_arrays) {
    const std::vector<double> mask = {1, 0, 1, 0, 0, 1};
    const auto b = io::read_npy(path("b1.npy"));
    BOOST_TEST((b.dtype == io::npy_dtype::boolean));
    BOOST_TEST(io::to_tensor(b).data == mask, boost::test_tools::per_element());
    BOOST_TEST(io::to_tensor(io::read_npy(path("u1.npy"))).data == mask, boost::test_tools::per_element());
    const auto s = io::read_npy(path("scalar.npy"));
    BOOST_TEST(s.shape.empty());
    BOOST_TEST(io::to_tensor(s).data.at(0) == 2.5);
    BOOST_TEST(io::read_npy(path("empty.npy")).element_count() == 0);
}

BOOST_AUTO_TEST_CASE(reads_int32_index_inputs) {
    const auto a = io::read_npy(path("i4.npy"));
    BOOST_TEST((a.dtype == io::npy_dtype::int32));
    const std::vector<double> expected = {0, 7, -3, 2147483647};
    BOOST_TEST(io::to_tensor(a).data == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reads_float16_for_fp16_kernels) {
    const auto a = io::read_npy(path("f2.npy"));
    BOOST_TEST((a.dtype == io::npy_dtype::float16));
    // Exact: the largest normal, infinity and the smallest subnormal included.
    const std::vector<double> expected = {1.0, -0.0999755859375, 65504.0, INFINITY, 5.960464477539063e-08};
    BOOST_TEST(io::to_tensor(a).data == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(rejects_what_the_contract_rules_out_with_a_clear_message) {
    const std::pair<const char*, const char*> expected[] = {
        {"fortran.npy", "Fortran-order arrays are not supported"},
        {"big_endian.npy", "unsupported dtype '>f4' (big-endian"},
        {"int64.npy", "unsupported dtype '<i8'"},
        {"truncated_data.npy", "(truncated)"},
        {"trailing_data.npy", "(trailing bytes)"},
        {"truncated_header.npy", "truncated .npy header"},
        {"bad_magic.npy", "not a .npy file"},
        {"bad_version.npy", "unsupported .npy format version 7.0"},
        {"empty_file.npy", "not a .npy file"},
        {"huge_shape.npy", "is too large"},
        {"negative_shape.npy", "shape entries must be non-negative integers"},
        {"missing_key.npy", "must give 'descr', 'fortran_order' and 'shape'"},
        {"garbage_header.npy", "malformed .npy header"},
        {"bad_bool.npy", "neither 0 nor 1"},
        {"does_not_exist.npy", "cannot open file for reading"},
    };
    for (const auto& [name, fragment] : expected) {
        const std::string message = rejection(name);
        BOOST_TEST_CONTEXT(name << ": " << message) {
            BOOST_TEST(message.find(fragment) != std::string::npos);
            BOOST_TEST(message.find(name) != std::string::npos);  // names the file
        }
    }
}

BOOST_AUTO_TEST_CASE(writes_version_1_float32_that_reads_back_unchanged) {
    // check_numpy_reads_ours.py then loads these with NumPy itself.
    const auto values = io::to_tensor(io::read_npy(path("f4_v3.npy")));
    io::write_npy(path("written_tensor.npy"), values);
    io::write_npy(path("written_scalar.npy"), attnforge::interp::Tensor({}, {2.5}));
    io::write_npy(path("written_vector.npy"), attnforge::interp::Tensor({3}, {1.5, -2.0, 3.25}));
    io::write_npy(path("written_empty.npy"), attnforge::interp::Tensor({2, 0, 64}));
    const auto back = io::read_npy(path("written_tensor.npy"));
    BOOST_TEST(back.shape == values.shape, boost::test_tools::per_element());
    BOOST_TEST(io::to_tensor(back).data == values.data, boost::test_tools::per_element());
    BOOST_TEST(!std::filesystem::exists(path("written_tensor.npy") + ".tmp-attnforge"));
}

BOOST_AUTO_TEST_CASE(writes_and_reads_back_int8_codes) {
    // A quantized cache's int8 codes (attnforge quantize): |i1, read back as their signed values.
    const std::vector<std::int8_t> codes{-128, -127, -1, 0, 1, 127};
    io::write_npy(path("written_i1.npy"), {2, 3}, std::span<const std::int8_t>(codes));
    const io::NpyArray back = io::read_npy(path("written_i1.npy"));
    BOOST_TEST((back.dtype == io::npy_dtype::int8));
    BOOST_TEST(back.shape == (std::vector<std::int64_t>{2, 3}), boost::test_tools::per_element());
    BOOST_TEST(io::to_tensor(back).data == (std::vector<double>{-128, -127, -1, 0, 1, 127}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_no_file) {
    const std::string target = (cases / "no_such_dir" / "out.npy").string();
    BOOST_CHECK_THROW(io::write_npy(target, attnforge::interp::Tensor({2})), attnforge::input_error);
    BOOST_TEST(!std::filesystem::exists(target));
}
