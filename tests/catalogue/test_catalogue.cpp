// The kernel catalogue (catalogue/): kernel lists and their errors, size classes and the rule, tuning
// records (round trip, corrupt lines, key matching), which records a build takes, where tuned lines
// go, the block-mask pre-pass, and what the build is given (the CMake include, both registries).
#define BOOST_TEST_MODULE catalogue
#include <attnforge/catalogue/catalogue.hpp>
#include <attnforge/catalogue/emit.hpp>
#include <attnforge/catalogue/size_class.hpp>
#include <attnforge/catalogue/strategies.hpp>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cat = attnforge::catalogue;

namespace {

cat::Record sample_record(const std::string& id, const std::string& target = "x86-64-linux-avx2") {
    cat::Record r;
    r.id = id;
    r.time = "2026-11-23T00:00:00Z";
    r.key = {"sdpa", "output", "sdpa = A", "1024<Lk<=2048", 2, target, "Test CPU", "21.0.0", "0.1.0"};
    r.sizes = {1, 8, 2048, 2048};
    r.search = "evolutionary";
    r.seed = 7;
    r.trials = 3;
    r.seconds = 12.5;
    r.best = {{"materialized", {{"q_block", 64}, {"q_unroll", 8}}}, "ok", 1.25, 1.3, 0.4};
    r.default_schedule = {{"materialized", {{"q_block", 32}, {"q_unroll", 8}}}, "ok", 1.5, 1.5, 0.4};
    r.autoschedulers = {{{"adams2019", {}}, "invalid: fails at the validation size", 0, 0, 50}};
    r.top = {r.best, r.default_schedule};
    return r;
}

// The build facts the sample records were made for.
cat::BuildFacts here() {
    return cat::facts_from_probe(
        R"({"target":"x86-64-linux-avx2","cpu":"Test CPU","variants":{"sdpa":"sdpa = A","mha":"mha = B"}})", "21.0.0",
        "0.1.0", 2);
}

std::vector<cat::KernelLine> parse(const std::string& text) {
    std::istringstream in(text);
    return cat::parse_kernel_list(in, "test.list");
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("attnforge_catalogue_" + name)).string();
}

std::string error_of(const std::string& list_text) {
    try {
        parse(list_text);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(size_buckets_and_size_classes) {
    BOOST_TEST(cat::size_bucket(1) == "Lk<=64");
    BOOST_TEST(cat::size_bucket(64) == "Lk<=64");
    BOOST_TEST(cat::size_bucket(65) == "64<Lk<=128");
    BOOST_TEST(cat::size_bucket(2048) == "1024<Lk<=2048");
    BOOST_TEST(cat::size_bucket(2049) == "2048<Lk<=4096");
    BOOST_TEST(cat::bucket_low(2048) == 1025);
    using cat::size_class_holds;
    BOOST_TEST(size_class_holds("any", 0));
    BOOST_TEST(size_class_holds("1024<Lk<=2048", 2048));
    BOOST_TEST(size_class_holds("1024<Lk<=2048", 1025));
    BOOST_TEST(!size_class_holds("1024<Lk<=2048", 1024));
    BOOST_TEST(!size_class_holds("1024<Lk<=2048", 2049));
    BOOST_TEST(size_class_holds("Lk<=8192", 8192));
    BOOST_TEST(!size_class_holds("Lk<=8192", 8193));
    BOOST_TEST(size_class_holds("Lk>8192", 8193));
    BOOST_TEST(!size_class_holds("Lk>8192", 8192));
    BOOST_CHECK_THROW(size_class_holds("1024<Lk<=x", 2000), std::logic_error);
    BOOST_CHECK_THROW(size_class_holds("Lk~2048", 2000), std::logic_error);
    BOOST_TEST(!cat::parse_size_class("2048<Lk<=1024"));  // empty
    BOOST_TEST(!cat::parse_size_class("Lk<=-3"));
    BOOST_TEST(!cat::parse_size_class("Lk<="));
    // Classes on the query length (decode kernels): the key length plays no part.
    BOOST_TEST(size_class_holds("Lq<=16", 1 << 20, 16));
    BOOST_TEST(!size_class_holds("Lq<=16", 1, 17));
    BOOST_TEST(size_class_holds("Lq>16", 1, 17));
    BOOST_TEST(!cat::parse_size_class("Lq<=x"));
    // One bound on each length, both holding: a decode kernel's few queries over a bucket of keys.
    BOOST_TEST(size_class_holds("Lq<=16,16384<Lk<=32768", 32768, 1));
    BOOST_TEST(size_class_holds("Lq<=16,16384<Lk<=32768", 16385, 16));
    BOOST_TEST(!size_class_holds("Lq<=16,16384<Lk<=32768", 32768, 17));  // prefill of that bucket
    BOOST_TEST(!size_class_holds("Lq<=16,16384<Lk<=32768", 16384, 1));
    BOOST_TEST(size_class_holds("Lk>4096,Lq>16", 8192, 32));
    BOOST_TEST(!size_class_holds("Lk>4096,Lq>16", 8192, 16));
    BOOST_TEST(cat::bounds_queries("Lq<=16,Lk>4096"));
    BOOST_TEST(!cat::bounds_queries("1024<Lk<=2048"));
    BOOST_TEST(cat::query_bound("Lq<=16,Lk>4096").value_or("") == "Lq<=16");
    BOOST_TEST(cat::query_bound("Lk>4096,Lq<=1").value_or("") == "Lq<=1");
    BOOST_TEST(cat::query_bound("Lq>16").value_or("") == "Lq>16");
    BOOST_TEST(!cat::query_bound("Lk>4096"));
    BOOST_TEST(!cat::query_bound("any"));
    BOOST_TEST(!cat::query_bound("Lq<=16,Lq<=4"));  // not a class
    for (const char* bad : {"Lq<=16,Lq<=4", "Lk<=4,Lk>2", "any,Lk<=4", "Lk<=4,any", "Lq<=16,", ",Lk<=4",
                            "Lq<=16,Lk<=4,Lk>2", "Lq<=16;Lk<=4"})
        BOOST_TEST(!cat::parse_size_class(bad), bad);
}

BOOST_AUTO_TEST_CASE(kernel_lines_are_checked_with_their_place) {
    const auto lines = parse(
        "# comment\n\nsdpa output materialized Lk<=8192   # trailing\nsdpa output streaming any q_block=32 "
        "block_mask=1\n");
    BOOST_TEST(lines.size() == 2u);
    BOOST_TEST(lines[0].where == "test.list:3");
    BOOST_TEST(lines[0].knobs.empty());
    BOOST_TEST(lines[1].knob_text() == "q_block=32 block_mask=1");
    BOOST_TEST(lines[1].knob_values().at("q_block") == 32);
    BOOST_TEST(error_of("sdpa output materialized\n").find("test.list:1: a kernel line needs variant, result") == 0);
    BOOST_TEST(error_of("\nsdpa logits materialized any\n").find("test.list:2: result 'logits'") == 0);
    BOOST_TEST(error_of("sdpa output tiled any\n").find("strategy 'tiled'") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming Lk<8192\n").find("'Lk<8192' is not a size class") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any q_block\n").find("'q_block' is not a knob") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any q_block=$(rm)\n").find("is not a knob") != std::string::npos);
    BOOST_TEST(error_of("my-variant output streaming any\n").find("not a variant name") != std::string::npos);
    BOOST_CHECK_THROW(cat::read_kernel_list(temp_path("missing.list")), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(kernel_names_are_those_the_build_always_made) {
    const auto lines = parse(
        "sdpa output materialized Lk<=8192\nsdpa output streaming any\nsdpa attention_weights materialized any\n"
        "sdpa output materialized 1024<Lk<=2048\nsdpa output adams2019 any\n");
    BOOST_TEST(cat::kernel_name(lines[0]) == "sdpa__materialized__Lk_8192");
    BOOST_TEST(cat::kernel_name(lines[1]) == "sdpa__streaming");
    BOOST_TEST(cat::kernel_name(lines[2]) == "sdpa__attention_weights");
    BOOST_TEST(cat::kernel_name(lines[3]) == "sdpa__materialized__1024_Lk_2048");
    BOOST_TEST(cat::kernel_name(lines[4]) == "sdpa__adams2019");
}

// E=64,128: one kernel per head width of a variant whose E is run-time, named by it, the rule per width; the
// generator gets head_width. Anything but a list of widths is refused with the line.
BOOST_AUTO_TEST_CASE(a_line_lists_head_widths) {
    const auto lines =
        parse("sdpa output materialized Lk<=8192 E=64,128 dtype=float32,bf16\nsdpa output streaming any E=128\n");
    BOOST_TEST(lines.size() == 5u);
    BOOST_TEST(lines[0].head_width == 64);
    BOOST_TEST(lines[1].head_width == 64);
    BOOST_TEST(lines[1].storage == "bf16");
    BOOST_TEST(lines[2].head_width == 128);
    BOOST_TEST(lines[0].knobs.empty());
    BOOST_TEST(cat::kernel_name(lines[0]) == "sdpa__E64__materialized__Lk_8192");
    BOOST_TEST(cat::kernel_name(lines[3]) == "sdpa__E128__bf16__materialized__Lk_8192");
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 9000, 0, "float32", "", 64) == nullptr);
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 9000, 0, "float32", "", 128) == &lines[4]);
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 64, 0, "float32", "", 128) == &lines[2]);
    const cat::Catalogue c = cat::assemble(lines, {});
    cat::EmitOptions o;
    o.source = "test.list";
    BOOST_TEST(cat::cmake_include(c, o).find("attnforge_kernel(sdpa__E128__streaming PARAMS variant=sdpa result=output "
                                             "strategy=streaming head_width=128)\n") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any E=64,x\n").find("E lists 'x', not a head width") !=
               std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any E=64,64\n").find("E lists 64 twice") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any E=0\n").find("not a head width") != std::string::npos);
}

// dtype= is the storage type, not a knob: it names the kernel, picks it by the rule and goes to the
// generator; anything but float32, bf16 and fp16 is refused with the line.
BOOST_AUTO_TEST_CASE(a_storage_type_names_its_kernel_and_has_its_own_rule) {
    const auto lines = parse(
        "sdpa output materialized Lk<=8192 dtype=bf16\nsdpa output streaming any q_block=32 dtype=fp16\n"
        "sdpa output streaming any\n");
    BOOST_TEST(lines[0].storage == "bf16");
    BOOST_TEST(lines[0].knobs.empty());
    BOOST_TEST(lines[1].knob_text() == "q_block=32");
    BOOST_TEST(lines[2].storage == "float32");
    BOOST_TEST(cat::kernel_name(lines[0]) == "sdpa__bf16__materialized__Lk_8192");
    BOOST_TEST(cat::kernel_name(lines[1]) == "sdpa__fp16__streaming");
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 64)->storage == "float32");
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 64, 0, "bf16") == &lines[0]);
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 9000, 0, "bf16") == nullptr);
    BOOST_TEST(error_of("sdpa output streaming any dtype=int8\n").find("dtype 'int8' is not float32, bf16 or fp16") !=
               std::string::npos);
}

// dtype=float32,bf16 makes one kernel per type, in that order; dtype.<input>=<type> gives an input a type of its
// own: it names the kernel, goes to the generator as input_types, and the rule is per (storage, input types).
BOOST_AUTO_TEST_CASE(a_line_lists_storage_types_and_inputs_of_their_own_type) {
    const auto lines = parse(
        "sdpa output materialized Lk<=8192 dtype=float32,bf16,fp16\n"
        "decode output decode Lq<=16 k_block=2048 dtype.v=bf16 dtype.k=bf16\n");
    BOOST_TEST(lines.size() == 4u);
    BOOST_TEST(lines[0].storage == "float32");
    BOOST_TEST(lines[1].storage == "bf16");
    BOOST_TEST(lines[2].storage == "fp16");
    BOOST_TEST(lines[1].where == "test.list:1");
    BOOST_TEST(lines[3].input_types == "k=bf16 v=bf16");  // sorted by name
    BOOST_TEST(lines[3].knob_text() == "k_block=2048");
    BOOST_TEST(cat::kernel_name(lines[3]) == "decode__k_bf16_v_bf16__decode__Lq_16");
    BOOST_TEST(cat::rule_choice(lines, "decode", "output", 64, 1) == nullptr);
    BOOST_TEST(cat::rule_choice(lines, "decode", "output", 64, 1, "float32", "k=bf16 v=bf16") == &lines[3]);
    BOOST_TEST(error_of("sdpa output streaming any dtype=bf16,bf16\n").find("lists 'bf16' twice") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any dtype.k=int32\n").find("dtype of input 'k'") != std::string::npos);
    BOOST_TEST(error_of("sdpa output streaming any dtype.k=bf16 dtype.k=fp16\n").find("given twice") !=
               std::string::npos);
}

// What a strategy can make is the strategy table's: a streaming line for attention weights, or block_mask=1
// on a strategy that takes no live key blocks, is refused with the line.
BOOST_AUTO_TEST_CASE(a_line_asks_only_what_its_strategy_makes) {
    BOOST_TEST(error_of("sdpa attention_weights streaming any\n").find("streaming strategy makes no attention_weights") !=
               std::string::npos);
    BOOST_TEST(error_of("sdpa output materialized any block_mask=1\n").find("block_mask=1 needs a strategy") !=
               std::string::npos);
    BOOST_TEST(error_of("sdpa output decode Lq<=16\n").empty());
    BOOST_TEST(cat::strategy_names() == "materialized, streaming, decode or unscheduled");
    BOOST_TEST(cat::general_strategies("attention_weights") == std::vector<std::string>{"materialized"});
}

BOOST_AUTO_TEST_CASE(the_kernel_lists_rule_gives_the_default) {
    const auto lines = cat::read_kernel_list(ATTNFORGE_SOURCE_DIR "/generated/kernels.list");
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 2048)->strategy == "materialized");
    BOOST_TEST(cat::rule_choice(lines, "sdpa", "output", 8193)->strategy == "streaming");
    BOOST_TEST(cat::rule_choice(lines, "no_such_variant", "output", 16) == nullptr);
    const auto documents = cat::rule_choice(lines, "document_attention", "output", 2048);
    BOOST_TEST(documents->strategy == "streaming");
    BOOST_TEST(documents->has_knob("block_mask=1"));
    // Every line of the shipped lists parses and names a kernel once.
    auto all = lines;
    const auto baselines = cat::read_kernel_list(ATTNFORGE_SOURCE_DIR "/generated/baselines.list");
    all.insert(all.end(), baselines.begin(), baselines.end());
    BOOST_CHECK_NO_THROW(cat::assemble(all, {}));
}

BOOST_AUTO_TEST_CASE(records_round_trip) {
    const cat::Record r = sample_record("0123456789ab");
    const cat::Record back = cat::record_from_json(nlohmann::json::parse(cat::to_json(r).dump()));
    BOOST_TEST(back.id == r.id);
    BOOST_TEST((back.key == r.key));
    BOOST_TEST(back.sizes.lk == 2048);
    BOOST_TEST(back.seed == 7u);
    BOOST_TEST((back.best.point == r.best.point));
    BOOST_TEST(back.best.ms == 1.25);
    BOOST_TEST((back.default_schedule.point == r.default_schedule.point));
    BOOST_TEST(back.autoschedulers.size() == 1u);
    BOOST_TEST(back.autoschedulers[0].status == r.autoschedulers[0].status);
    BOOST_TEST(back.top.size() == 2u);
    // One line per record: appending is a one-line diff.
    BOOST_TEST(cat::to_json(r).dump().find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(corrupt_database_lines_are_skipped_with_a_warning) {
    const std::string path = temp_path("corrupt.jsonl");
    std::filesystem::remove(path);
    cat::append_record(path, sample_record("aaaaaaaaaaaa"));
    {
        std::ofstream out(path, std::ios::app);
        out << "{\"id\": \"cut short\", \"variant\": \n";  // truncated JSON
        out << "not json at all\n";
        out << "{\"id\": \"x\"}\n";  // fields missing
        auto j = cat::to_json(sample_record("bbbbbbbbbbbb"));
        j["best"]["knobs"] = "q_block=sixty";  // a bad knob value
        out << j.dump() << "\n\n";
        j = cat::to_json(sample_record("dddddddddddd"));
        j["best"]["knobs"] = "q_block=64 $(rm -rf /)";  // not name=value
        out << j.dump() << "\n";
        j = cat::to_json(sample_record("eeeeeeeeeeee"));
        j["best"]["status"] = "invalid: differs";
        out << j.dump() << "\n";
        j = cat::to_json(sample_record("ffffffffffff"));
        j["size_bucket"] = "Lk<2048";
        out << j.dump() << "\n";
        j = cat::to_json(sample_record("a;b"));  // a character a kernel line cannot hold
        out << j.dump() << "\n";
        j = cat::to_json(sample_record("999999999999"));
        j["best"]["strategy"] = "tiled";
        out << j.dump() << "\n";
    }
    cat::append_record(path, sample_record("cccccccccccc"));
    const cat::Database db = cat::read_database(path);
    BOOST_TEST(db.records.size() == 2u);
    BOOST_TEST(db.warnings.size() == 9u);
    BOOST_TEST(db.warnings[0].find(":2:") != std::string::npos);
    BOOST_TEST(db.warnings[3].find("bad knob value") != std::string::npos);
    BOOST_TEST(db.warnings[4].find("bad knob") != std::string::npos);
    BOOST_TEST(db.warnings[5].find("not valid") != std::string::npos);
    BOOST_TEST(db.warnings[6].find("size bucket 'Lk<2048'") != std::string::npos);
    BOOST_TEST(db.warnings[7].find("characters a kernel line cannot hold") != std::string::npos);
    BOOST_TEST(db.warnings[8].find("unknown strategy 'tiled'") != std::string::npos);
    BOOST_TEST(cat::read_database(temp_path("missing.jsonl")).records.empty());
    std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(key_matching_takes_the_newest_exact_match_and_says_why_others_do_not_apply) {
    cat::Database db;
    db.records = {sample_record("old000000000"), sample_record("other0000000", "x86-64-linux-avx512"),
                  sample_record("new000000000")};
    const cat::RecordKey key = sample_record("").key;
    BOOST_TEST(cat::newest_matching(db, key)->id == "new000000000");
    cat::RecordKey elsewhere = key;
    elsewhere.target = "arm-64-linux";
    BOOST_TEST(cat::newest_matching(db, elsewhere) == nullptr);
    BOOST_TEST(cat::mismatch(db.records[1].key, key).find("tuned for target x86-64-linux-avx512") != std::string::npos);
    cat::RecordKey k = key;
    k.halide = "22.0.0";
    BOOST_TEST(cat::mismatch(key, k).find("Halide 21.0.0") != std::string::npos);
    k = key;
    k.canonical = "sdpa = something else";
    BOOST_TEST(cat::mismatch(key, k).find("definition changed") != std::string::npos);
    k = key;
    k.threads = 16;
    BOOST_TEST(cat::mismatch(key, k).find("2 threads") != std::string::npos);
    BOOST_TEST(cat::mismatch(key, key).empty());
}

BOOST_AUTO_TEST_CASE(a_build_takes_the_newest_record_that_applies_and_notes_the_others) {
    cat::Database db;
    db.records.push_back(sample_record("111111111111"));
    auto newer = sample_record("222222222222");
    newer.best.point.knobs = {{"q_block", 96}, {"q_unroll", 12}};
    auto other_bucket = sample_record("333333333333");
    other_bucket.key.size_bucket = "2048<Lk<=4096";
    db.records.push_back(newer);
    db.records.push_back(other_bucket);
    auto tuned = cat::select_tuned_lines(db, here());
    BOOST_TEST(tuned.notes.empty());
    BOOST_REQUIRE(tuned.lines.size() == 2u);
    BOOST_TEST(tuned.lines[0].knob_text() == "q_block=96 q_unroll=12");
    BOOST_TEST(tuned.lines[0].record == "222222222222");
    BOOST_TEST(tuned.lines[0].sizes == "1024<Lk<=2048");
    BOOST_TEST(tuned.lines[1].sizes == "2048<Lk<=4096");

    // Records for another machine or other sources: ignored, each with a note saying why.
    db.records.clear();
    auto with = [](std::string id, auto change) {
        auto r = sample_record(id);
        change(r);
        return r;
    };
    db.records = {with("444444444444", [](cat::Record& r) { r.key.target = "x86-64-linux-avx512"; }),
                  with("555555555555", [](cat::Record& r) { r.key.halide = "22.0.0"; }),
                  with("666666666666", [](cat::Record& r) { r.key.canonical = "sdpa = A'"; }),
                  with("777777777777", [](cat::Record& r) { r.key.threads = 16; }),
                  with("888888888888", [](cat::Record& r) { r.key.cpu = "Other CPU"; }),
                  with("999999999999", [](cat::Record& r) { r.key.variant = "no_such_variant"; })};
    tuned = cat::select_tuned_lines(db, here());
    BOOST_TEST(tuned.lines.empty());
    BOOST_REQUIRE(tuned.notes.size() == 6u);
    BOOST_TEST(tuned.notes[0].find("record 444444444444 (sdpa output 1024<Lk<=2048) ignored: tuned for target "
                                   "x86-64-linux-avx512, this machine is x86-64-linux-avx2") == 0);
    BOOST_TEST(tuned.notes[1].find("tuned with Halide 22.0.0, this build has 21.0.0") != std::string::npos);
    BOOST_TEST(tuned.notes[2].find("definition changed") != std::string::npos);
    BOOST_TEST(tuned.notes[3].find("16 threads") != std::string::npos);
    BOOST_TEST(tuned.notes[4].find("Other CPU") != std::string::npos);
    BOOST_TEST(tuned.notes[5].find("no built-in variant 'no_such_variant'") != std::string::npos);

    // Autoscheduler winners plan for the sizes they were tuned at.
    db.records = {with("dddddddddddd", [](cat::Record& r) { r.best.point = {"li2018", {}}; })};
    tuned = cat::select_tuned_lines(db, here());
    BOOST_REQUIRE(tuned.lines.size() == 1u);
    BOOST_TEST(tuned.lines[0].strategy == "li2018");
    BOOST_TEST(tuned.lines[0].knob_text() == "estimate_batch=1 estimate_heads=8 estimate_length=2048");
    BOOST_CHECK_THROW(cat::facts_from_probe("{\"target\": 3}", "", "", 1), std::runtime_error);
}

// A record of a bf16 kernel (attnforge tune --dtype bf16) keeps its storage type: in the JSON ("dtype"; absent
// in float32 records, as before), in its tuned line, and in the rule it joins (the bf16 kernels of its variant).
BOOST_AUTO_TEST_CASE(a_bf16_record_makes_a_bf16_kernel) {
    auto r = sample_record("aaaaaaaaaaaa");
    r.key.storage = "bf16";
    const auto back = cat::record_from_json(nlohmann::json::parse(cat::to_json(r).dump()));
    BOOST_TEST(back.key.storage == "bf16");
    BOOST_TEST(cat::to_json(r).dump().find("\"dtype\":\"bf16\"") != std::string::npos);
    BOOST_TEST(cat::to_json(sample_record("bbbbbbbbbbbb")).dump().find("dtype") == std::string::npos);
    auto wrong = cat::to_json(r);
    wrong["dtype"] = "int8";
    BOOST_CHECK_THROW(cat::record_from_json(nlohmann::json::parse(wrong.dump())), std::runtime_error);

    cat::Database db;
    db.records = {r, sample_record("cccccccccccc")};  // bf16 and float32, same variant and bucket: both apply
    const auto tuned = cat::select_tuned_lines(db, here());
    BOOST_REQUIRE(tuned.lines.size() == 2u);
    BOOST_TEST(tuned.lines[0].storage == "bf16");
    BOOST_TEST(tuned.lines[1].storage == "float32");
    const auto listed = parse("sdpa output materialized Lk<=8192\nsdpa output materialized Lk<=8192 dtype=bf16\n");
    std::vector<std::string> names;
    for (const auto& k : cat::assemble(listed, tuned.lines).kernels) names.push_back(k.name);
    const std::vector<std::string> expected{"sdpa__materialized__1024_Lk_2048", "sdpa__materialized__Lk_8192",
                                            "sdpa__bf16__materialized__1024_Lk_2048",
                                            "sdpa__bf16__materialized__Lk_8192"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(tuned_lines_go_first_for_their_variant_and_keep_the_block_mask) {
    const auto listed = parse(
        "sdpa output materialized Lk<=8192\nsdpa output streaming any\n"
        "mha_padding output materialized Lk<=8192\nmha_padding output streaming any block_mask=1\n");
    cat::KernelLine sdpa_tuned{"sdpa", "output", "materialized", "1024<Lk<=2048", {"q_block=64"}, "111111111111", "r"};
    cat::KernelLine padded_tuned{"mha_padding", "output", "streaming", "Lk<=64", {"q_block=32"}, "222222222222", "r"};
    cat::KernelLine orphan{"gqa", "output", "materialized", "Lk<=64", {}, "333333333333", "r"};
    const cat::Catalogue c = cat::assemble(listed, {sdpa_tuned, padded_tuned, orphan});
    std::vector<std::string> names;
    for (const auto& k : c.kernels) names.push_back(k.name);
    const std::vector<std::string> expected{
        "sdpa__materialized__1024_Lk_2048", "sdpa__materialized__Lk_8192",        "sdpa__streaming",
        "mha_padding__streaming__Lk_64",    "mha_padding__materialized__Lk_8192", "mha_padding__streaming"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
    BOOST_TEST(c.kernels[0].schedule() == "tuned, record 111111111111");
    BOOST_TEST(c.kernels[1].schedule() == "default");
    BOOST_TEST(c.kernels[3].prepass);  // a tuned streaming kernel of a block-masked variant keeps the pre-pass
    BOOST_TEST(c.kernels[3].line.knob_text() == "q_block=32 block_mask=1");
    BOOST_TEST(!c.kernels[4].prepass);
    BOOST_REQUIRE(c.notes.size() == 1u);
    BOOST_TEST(c.notes[0].find("no line of its variant and result") != std::string::npos);
    // Two kernels of one name: an error naming both lines.
    try {
        cat::assemble(parse("sdpa output streaming any\nsdpa output streaming any q_block=8\n"), {});
        BOOST_FAIL("a duplicate kernel was accepted");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(
            std::string(e.what()).find("test.list:2: kernel sdpa__streaming is made twice (also by test.list:1)") == 0);
    }
}

// A decode record names a bucket of Lk only; its kernel serves the queries of the list's decode line only, so
// that it never goes first for a prefill of its bucket.
BOOST_AUTO_TEST_CASE(a_tuned_decode_kernel_serves_the_decode_lines_queries) {
    const auto listed = parse("decode output decode Lq<=16 k_block=512\ndecode output streaming any\n");
    cat::KernelLine tuned{"decode", "output", "decode", "16384<Lk<=32768", {"k_block=2048"}, "444444444444", "r"};
    const cat::Catalogue c = cat::assemble(listed, {tuned});
    BOOST_REQUIRE(c.kernels.size() == 3u);
    BOOST_TEST(c.kernels[0].line.sizes == "Lq<=16,16384<Lk<=32768");
    BOOST_TEST(c.kernels[0].name == "decode__decode__Lq_16_16384_Lk_32768");
    BOOST_TEST(cat::size_class_holds(c.kernels[0].line.sizes, 32768, 1));
    BOOST_TEST(!cat::size_class_holds(c.kernels[0].line.sizes, 32768, 32768));
    // A listed class on both lengths gives the tuned one its query bound too.
    const auto both = parse("decode output decode Lq<=8,Lk>1024\ndecode output streaming any\n");
    BOOST_TEST(cat::assemble(both, {tuned}).kernels[0].line.sizes == "Lq<=8,16384<Lk<=32768");
}

BOOST_AUTO_TEST_CASE(the_build_is_given_one_call_per_kernel_and_registries_from_the_same_lines) {
    const auto listed = parse(
        "sdpa output materialized Lk<=8192 q_block=32\nsdpa attention_weights materialized any\n"
        "mha_padding output streaming any block_mask=1 k_block=64\nsdpa output adams2019 any\n");
    const cat::Catalogue c = cat::assemble(listed, {});
    cat::EmitOptions o;
    o.parallelism = 16;
    o.source = "test.list";
    const std::string cmake = cat::cmake_include(c, o);
    BOOST_TEST(cmake.find("attnforge_kernel(sdpa__materialized__Lk_8192 PARAMS variant=sdpa result=output "
                          "strategy=materialized q_block=32)\n") != std::string::npos);
    BOOST_TEST(cmake.find("attnforge_kernel(mha_padding__streaming PARAMS variant=mha_padding result=output "
                          "strategy=streaming block_mask=1 k_block=64)\n") != std::string::npos);
    BOOST_TEST(cmake.find("attnforge_kernel(mha_padding__streaming__block_ranges PARAMS variant=mha_padding "
                          "result=block_ranges strategy=streaming k_block=64)\n") != std::string::npos);
    BOOST_TEST(cmake.find("attnforge_kernel(sdpa__adams2019 AUTOSCHEDULER adams2019 PARAMS variant=sdpa result=output "
                          "strategy=unscheduled autoscheduler.parallelism=16)\n") != std::string::npos);
    const std::string registry = cat::kernel_registry_source(c, o);
    BOOST_TEST(registry.find("#include <attnforge_kernel_mha_padding__streaming__block_ranges.h>") !=
               std::string::npos);
    BOOST_TEST(registry.find("{\"sdpa__materialized__Lk_8192\", \"sdpa\", \"output\", \"materialized\", \"Lk<=8192\", "
                             "\"q_block=32\", \"default\",") != std::string::npos);
    BOOST_TEST(registry.find("&attnforge_kernel_mha_padding__streaming__block_ranges_argv") != std::string::npos);
    BOOST_TEST(registry.find("interp") == std::string::npos);  // the runtime's registry holds no interpreter
    const std::string reference = cat::reference_registry_source(c, o);
    BOOST_TEST(reference.find("{\"sdpa\", \"output\",") != std::string::npos);
    BOOST_TEST(reference.find("{\"sdpa\", \"attention_weights\",") != std::string::npos);
    BOOST_TEST(reference.find("{\"sdpa\", \"output\",", reference.find("{\"sdpa\", \"output\",") + 1) ==
               std::string::npos);  // once per (variant, result)
    // Unchanged text is not written again (the registry is not recompiled after a reconfigure).
    const std::string path = temp_path("registry.cpp");
    cat::write_if_changed(path, registry);
    const auto written = std::filesystem::last_write_time(path);
    cat::write_if_changed(path, registry);
    BOOST_TEST((std::filesystem::last_write_time(path) == written));
    std::filesystem::remove(path);
}
