// The .npy reader on untrusted bytes: every file of the fuzz seed corpus parses, every adversarial
// case of tests/fuzz/regressions (and whatever libFuzzer found and we fixed) is either a valid file or
// an attnforge::input_error with a message — never another exception, a crash or an allocation the
// file's size does not justify (the sanitizer build runs this test too). Plus the messages of the
// cases docs/contract.md §4 names.
#define BOOST_TEST_MODULE io_npy_untrusted
#include "fuzz/read_untrusted_npy.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;
namespace io = attnforge::io;

namespace {

const fs::path fuzz_dir = ATTNFORGE_FUZZ_DIR;

std::vector<std::byte> bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<std::byte>(raw[i]);
    return out;
}

std::vector<fs::path> files_in(const char* folder) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fuzz_dir / folder))
        if (e.is_regular_file()) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

std::string rejection(const char* regression) {
    try {
        io::read_npy((fuzz_dir / "regressions" / regression).string());
    } catch (const attnforge::input_error& e) {
        return e.what();
    }
    return "<accepted>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_seed_of_the_corpus_is_a_valid_file) {
    const auto files = files_in("corpus");
    BOOST_TEST(files.size() >= 10u);
    for (const auto& f : files) BOOST_TEST_CONTEXT(f.filename()) {
            BOOST_TEST(attnforge::fuzz::read_untrusted_npy(bytes_of(f)));
        }
}

BOOST_AUTO_TEST_CASE(every_regression_is_handled_without_a_crash) {
    const auto files = files_in("regressions");
    BOOST_TEST(files.size() >= 15u);
    for (const auto& f : files) BOOST_TEST_CONTEXT(f.filename()) {
            BOOST_CHECK_NO_THROW(attnforge::fuzz::read_untrusted_npy(bytes_of(f)));
        }
}

BOOST_AUTO_TEST_CASE(adversarial_headers_are_rejected_with_what_was_expected) {
    const std::pair<const char*, const char*> expected[] = {
        {"huge_declared_shape.npy",
         "shape (1099511627776,) of <f4 needs 4398046511104 data bytes, the file has 16 (truncated)"},
        {"overflowing_shape.npy", "is too large (its byte size overflows)"},
        {"size_beyond_int64.npy", "a shape entry overflows"},
        {"negative_size.npy", "shape entries must be non-negative integers"},
        {"v2_header_length_4GiB.npy", "truncated .npy header (it declares 4294967295 header bytes"},
        {"header_unterminated.npy", "malformed .npy header"},
        {"header_unknown_key.npy", "unknown header key 'x'"},
        {"header_missing_shape.npy", "must give 'descr', 'fortran_order' and 'shape'"},
        {"descr_structured.npy", "expected a quoted string"},
        {"bool_value_2.npy", "a bool value is neither 0 nor 1"},
        {"truncated_data.npy", "(truncated)"},
        {"only_magic.npy", "not a .npy file"},
        {"version_9.npy", "unsupported .npy format version 9.0"},
        {"empty_file.npy", "not a .npy file"},
    };
    for (const auto& [file, fragment] : expected) {
        BOOST_TEST_CONTEXT(file) {
            const std::string message = rejection(file);
            BOOST_TEST(message.find(fragment) != std::string::npos, message);
        }
    }
    // A huge size times zero is a valid, empty array; the run API rejects the huge size before
    // looping over it (tests/runtime, tests/cli).
    BOOST_TEST(rejection("huge_times_zero.npy") == "<accepted>");
}
