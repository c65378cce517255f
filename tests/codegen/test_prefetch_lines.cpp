// The lowering pass that makes a schedule's prefetches whole lines (codegen/prefetch_lines.hpp): Halide 21
// steps its single-line prefetches by 64 elements where it means 64 bytes; the pass steps them by one
// line and emits each as prefetcht2 (the LLVM intrinsic with locality 1).
#define BOOST_TEST_MODULE codegen_prefetch_lines
#include <attnforge/codegen/prefetch_lines.hpp>

#include <boost/test/unit_test.hpp>

#include <Halide.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace cg = attnforge::codegen;
using namespace Halide;
using namespace Halide::Internal;

namespace {

// for v in [0, 8): prefetch(buf, v·stride + base, 1, line) of elements of `type`.
Stmt prefetch_loop(Type type, int stride, int line) {
    const Expr v = Variable::make(Int(32), "v"), base = Variable::make(Int(32), "base");
    const Expr buffer = Variable::make(Handle(), "buf");
    const Expr call = Call::make(type, Call::prefetch, {buffer, v * stride + base, 1, line}, Call::Intrinsic);
    return For::make("v", 0, 8, ForType::Serial, Partition::Auto, DeviceAPI::None, Evaluate::make(call));
}

Stmt corrected(const Stmt& s) {
    cg::PrefetchEveryLine pass;
    return pass.mutate(s);
}

const Call* prefetch_call(const Stmt& s) {
    const For* loop = s.as<For>();
    BOOST_REQUIRE(loop);
    const Evaluate* e = loop->body.as<Evaluate>();
    BOOST_REQUIRE(e);
    return e->value.as<Call>();
}

// The bytes between the addresses of iterations v = 1 and v = 0 of the rewritten call, at base 0: its address
// is reinterpret(handle, reinterpret(uint64, buf) + byte offset).
std::int64_t byte_step(const Call* call) {
    const Reinterpret* address = call->args.at(0).as<Reinterpret>();
    BOOST_REQUIRE(address);
    const Expr bytes = substitute("base", 0, address->value);
    const Expr step = simplify(cast<std::int64_t>(substitute("v", 1, bytes) - substitute("v", 0, bytes)));
    const auto value = as_const_int(step);
    BOOST_REQUIRE(value.has_value());
    return *value;
}

std::string lowered_text(bool with_pass) {
    ImageParam in(Float(32), 2, "in");
    Func f("f");
    Var x("x"), y("y");
    f(x, y) = in(x, y) * 2.0f;
    f.prefetch(in, y, y, 4, PrefetchBoundStrategy::NonFaulting);
    Pipeline p(f);
    if (with_pass) p.add_custom_lowering_pass(new cg::PrefetchEveryLine);
    const auto file = std::filesystem::temp_directory_path() /
                      ("attnforge_prefetch_lines_" + std::to_string(with_pass) + ".stmt");
    p.compile_to_lowered_stmt(file.string(), {in}, StmtOutputFormat::Text, get_host_target());
    std::ifstream read(file);
    std::stringstream text;
    text << read.rdbuf();
    std::filesystem::remove(file);
    return text.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(float32_lines_are_stepped_by_64_bytes_as_prefetcht2) {
    const Stmt fixed = corrected(prefetch_loop(Float(32), 64, 16));  // kept: the call lives in it
    const Call* call = prefetch_call(fixed);
    BOOST_REQUIRE(call);
    BOOST_TEST(call->name == "llvm.prefetch.p0");
    BOOST_TEST(call->call_type == Call::Extern);
    BOOST_TEST(byte_step(call) == 64);  // was 64 elements: 256 bytes
    BOOST_TEST(*as_const_int(call->args.at(2)) == 1);  // locality 1: L2
    BOOST_TEST(*as_const_int(fixed.as<For>()->extent) == 8);  // as many lines as Halide counted
}

BOOST_AUTO_TEST_CASE(bf16_lines_are_stepped_by_64_bytes_too) {
    const Stmt fixed = corrected(prefetch_loop(BFloat(16), 64, 32));
    const Call* call = prefetch_call(fixed);
    BOOST_REQUIRE(call);
    BOOST_TEST(call->name == "llvm.prefetch.p0");
    BOOST_TEST(byte_step(call) == 64);
}

BOOST_AUTO_TEST_CASE(a_prefetch_stepped_by_a_line_already_is_left_alone) {
    const Stmt kept = corrected(prefetch_loop(Float(32), 16, 16));
    const Call* call = prefetch_call(kept);
    BOOST_REQUIRE(call);
    BOOST_TEST(call->is_intrinsic(Call::prefetch));
}

// Halide's own lowering holds the loop the pass corrects: if a Halide release fixes its step, this fails and
// the pass (and its hint) should be looked at again.
BOOST_AUTO_TEST_CASE(halide_lowering_gives_the_loop_the_pass_corrects) {
    const std::string before = lowered_text(false), after = lowered_text(true);
    BOOST_TEST(std::regex_search(before, std::regex(R"(prefetch_split_in\.0\*64\))")));
    BOOST_TEST(before.find("llvm.prefetch.p0") == std::string::npos);
    BOOST_TEST(after.find("llvm.prefetch.p0") != std::string::npos);
    BOOST_TEST(after.find("prefetch(in,") == std::string::npos);  // every one rewritten
}
