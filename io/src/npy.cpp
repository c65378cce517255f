#include <attnforge/errors.hpp>
#include <attnforge/io/npy.hpp>

#include <fp16.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace attnforge::io {

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;

}  // namespace

std::size_t npy_item_bytes(npy_dtype t) {
    switch (t) {
        case npy_dtype::float32:
        case npy_dtype::int32:
            return 4;
        case npy_dtype::float64:
            return 8;
        case npy_dtype::float16:
            return 2;
        default:
            return 1;
    }
}

namespace {

// A strict reader of the Python dict literal in a .npy header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

    struct Header {
        std::string descr;
        bool fortran_order = false;
        std::vector<std::int64_t> shape;
        bool has_descr = false, has_order = false, has_shape = false;
    };

    Header parse() {
        Header h;
        expect('{');
        while (true) {
            skip_space();
            if (peek() == '}') break;
            const std::string key = string_literal();
            expect(':');
            skip_space();
            if (key == "descr") {
                h.descr = string_literal();
                h.has_descr = true;
            } else if (key == "fortran_order") {
                h.fortran_order = boolean();
                h.has_order = true;
            } else if (key == "shape") {
                h.shape = shape_tuple();
                h.has_shape = true;
            } else {
                fail("unknown header key '" + key + "'");
            }
            skip_space();
            if (peek() == ',') ++i_;
        }
        ++i_;
        if (!h.has_descr || !h.has_order || !h.has_shape)
            fail("the header must give 'descr', 'fortran_order' and 'shape'");
        return h;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw input_error(source_ + ": malformed .npy header: " + what);
    }
    char peek() const {
        if (i_ >= s_.size()) fail("it ends too early");
        return s_[i_];
    }
    void skip_space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }
    void expect(char c) {
        skip_space();
        if (peek() != c) fail(std::string("expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string string_literal() {
        skip_space();
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("expected a quoted string at offset " + std::to_string(i_));
        const std::size_t end = s_.find(quote, i_ + 1);
        if (end == std::string_view::npos) fail("unterminated string");
        std::string out(s_.substr(i_ + 1, end - i_ - 1));
        i_ = end + 1;
        return out;
    }
    bool boolean() {
        if (s_.substr(i_, 4) == "True") return i_ += 4, true;
        if (s_.substr(i_, 5) == "False") return i_ += 5, false;
        fail("'fortran_order' must be True or False");
    }
    std::vector<std::int64_t> shape_tuple() {
        expect('(');
        std::vector<std::int64_t> shape;
        while (true) {
            skip_space();
            if (peek() == ')') break;
            if (peek() < '0' || peek() > '9') fail("shape entries must be non-negative integers");
            std::int64_t n = 0;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
                if (n > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("a shape entry overflows");
                n = n * 10 + (s_[i_++] - '0');
            }
            if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long suffix
            shape.push_back(n);
            skip_space();
            if (peek() == ',')
                ++i_;
            else if (peek() != ')')
                fail("expected ',' or ')' in the shape");
        }
        ++i_;
        return shape;
    }

    std::string_view s_;
    const std::string& source_;
    std::size_t i_ = 0;
};

npy_dtype dtype_from_descr(const std::string& descr, const std::string& source) {
    if (descr == "<f4") return npy_dtype::float32;
    if (descr == "<f8") return npy_dtype::float64;
    if (descr == "|b1") return npy_dtype::boolean;
    if (descr == "|u1") return npy_dtype::uint8;
    if (descr == "<i4") return npy_dtype::int32;
    if (descr == "<f2") return npy_dtype::float16;
    if (descr == "|i1") return npy_dtype::int8;
    std::string why = "unsupported dtype '" + descr + "'";
    if (!descr.empty() && descr[0] == '>') why += " (big-endian; expected little-endian '<f4')";
    throw input_error(
        source + ": " + why +
        "; expected float32 '<f4' for tensors, bool '|b1' or uint8 '|u1' "
        "for masks, int32 '<i4' for index inputs, float16 '<f2' for fp16 kernels, uint8 '|u1' or int8 '|i1' "
        "for a quantized cache's codes, or float64 '<f8'");
}

std::uint32_t little_endian(const std::byte* p, std::size_t n) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint32_t(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
    return v;
}

}  // namespace

const char* npy_descr(npy_dtype dtype) {
    switch (dtype) {
        case npy_dtype::float32:
            return "<f4";
        case npy_dtype::float64:
            return "<f8";
        case npy_dtype::boolean:
            return "|b1";
        case npy_dtype::int32:
            return "<i4";
        case npy_dtype::float16:
            return "<f2";
        case npy_dtype::int8:
            return "|i1";
        default:
            return "|u1";
    }
}

NpyArray parse_npy(std::span<const std::byte> file, const std::string& source) {
    if (file.size() < magic_size + 2 || std::memcmp(file.data(), magic, magic_size) != 0)
        throw input_error(source + ": not a .npy file (it does not start with the \\x93NUMPY magic)");
    const int major = std::to_integer<int>(file[6]), minor = std::to_integer<int>(file[7]);
    if (major < 1 || major > 3 || minor != 0)
        throw input_error(source + ": unsupported .npy format version " + std::to_string(major) + "." +
                          std::to_string(minor) + "; expected 1.0, 2.0 or 3.0");
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (file.size() < 8 + length_bytes) throw input_error(source + ": truncated .npy header");
    const std::size_t header_length = little_endian(file.data() + 8, length_bytes);
    const std::size_t data_offset = 8 + length_bytes + header_length;
    if (file.size() < data_offset)
        throw input_error(source + ": truncated .npy header (it declares " + std::to_string(header_length) +
                          " header bytes, the file has " + std::to_string(file.size() - 8 - length_bytes) + ")");
    const std::string_view header(reinterpret_cast<const char*>(file.data()) + 8 + length_bytes, header_length);

    const auto h = HeaderParser(header, source).parse();
    if (h.fortran_order)
        throw input_error(source +
                          ": Fortran-order arrays are not supported; save a C-order array "
                          "(numpy.ascontiguousarray)");
    NpyArray array;
    array.dtype = dtype_from_descr(h.descr, source);
    array.shape = h.shape;

    // Validate the declared size against the bytes present before allocating anything.
    const std::size_t available = file.size() - data_offset;
    const std::size_t item = npy_item_bytes(array.dtype);
    std::size_t count = 1;
    for (std::int64_t d : array.shape) {
        const auto n = static_cast<std::size_t>(d);
        if (n != 0 && count > std::numeric_limits<std::size_t>::max() / item / n)
            throw input_error(source + ": declared shape " + interp::shape_string(array.shape) +
                              " is too large (its byte size overflows)");
        count *= n;
    }
    if (count * item != available)
        throw input_error(source + ": shape " + interp::shape_string(array.shape) + " of " + h.descr + " needs " +
                          std::to_string(count * item) + " data bytes, the file has " + std::to_string(available) +
                          (available < count * item ? " (truncated)" : " (trailing bytes)"));
    array.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(data_offset), file.end());
    if (array.dtype == npy_dtype::boolean)
        for (std::byte b : array.bytes)
            if (std::to_integer<int>(b) > 1)
                throw input_error(source + ": a bool value is neither 0 nor 1 (corrupt data)");
    return array;
}

NpyArray read_npy(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw input_error(path + ": is a directory, not a .npy file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(path + ": cannot open file for reading (" + std::strerror(errno) + ")");
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw input_error(path + ": read error");
    return parse_npy(std::as_bytes(std::span(raw)), path);
}

interp::Tensor to_tensor(const NpyArray& a) {
    const auto n = static_cast<std::size_t>(a.element_count());
    std::vector<double> values(n);
    const std::byte* p = a.bytes.data();
    for (std::size_t i = 0; i < n; ++i) {
        switch (a.dtype) {
            case npy_dtype::float32: {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                values[i] = f;
                break;
            }
            case npy_dtype::float64:
                std::memcpy(&values[i], p + 8 * i, 8);
                break;
            case npy_dtype::int32: {
                std::int32_t v;
                std::memcpy(&v, p + 4 * i, 4);
                values[i] = v;
                break;
            }
            case npy_dtype::float16: {
                std::uint16_t h;
                std::memcpy(&h, p + 2 * i, 2);
                values[i] = fp16_ieee_to_fp32_value(h);  // exact
                break;
            }
            case npy_dtype::int8:
                values[i] = static_cast<std::int8_t>(std::to_integer<std::uint8_t>(p[i]));
                break;
            default:
                values[i] = std::to_integer<int>(p[i]) != 0 ? 1.0 : 0.0;
        }
    }
    return interp::Tensor(a.shape, std::move(values));
}

namespace {
// One writer for every element type written: `descr` its .npy descriptor, `bytes` the values' bytes.
void write_npy_bytes(const std::string& path, const std::vector<std::int64_t>& shape, std::size_t count,
                     const char* descr, std::span<const std::byte> bytes) {
    if (interp::element_count(shape) != static_cast<std::int64_t>(count))
        throw input_error("write_npy: shape " + interp::shape_string(shape) + " does not match " +
                          std::to_string(count) + " values");
    std::string header = std::string("{'descr': '") + descr +
                         "', 'fortran_order': False, 'shape': " + interp::shape_string(shape) + ", }";
    // Pad with spaces so that magic + version + length + header + '\n' is a multiple of 64 bytes.
    const std::size_t unpadded = magic_size + 2 + 2 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';

    const std::string tmp = path + ".tmp-attnforge";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw input_error(path + ": cannot open for writing (" + std::strerror(errno) + ")");
        out.write(magic, magic_size);
        const char version[2] = {1, 0};
        out.write(version, 2);
        const char length[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
        out.write(length, 2);
        out.write(header.data(), static_cast<std::streamsize>(header.size()));
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) {
            std::remove(tmp.c_str());
            throw input_error(path + ": write failed");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        throw input_error(path + ": cannot write (" + ec.message() + ")");
    }
}

}  // namespace

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const float> values) {
    write_npy_bytes(path, shape, values.size(), "<f4", std::as_bytes(values));
}

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const std::uint8_t> codes) {
    write_npy_bytes(path, shape, codes.size(), "|u1", std::as_bytes(codes));
}

void write_npy(const std::string& path, const std::vector<std::int64_t>& shape, std::span<const std::int8_t> codes) {
    write_npy_bytes(path, shape, codes.size(), "|i1", std::as_bytes(codes));
}

void write_npy(const std::string& path, const interp::Tensor& t) {
    std::vector<float> values(t.data.begin(), t.data.end());
    write_npy(path, t.shape, values);
}

}  // namespace attnforge::io
