// Tuning records: generated/tuning_records.jsonl, append-only, one JSON object per line (so a new
// record is a one-line diff), fields in a fixed order. A record says: for this key, the schedule
// that measured fastest, its time, the default's time and the runners-up. The build
// (the catalogue program, select_tuned_lines) uses, per (variant, result, size bucket), the newest record
// whose key matches the machine and the sources; attnforge tune seeds every search with that record's
// schedule, so a newer record is never slower than an older one. No Halide here: the tuner adds this
// machine's key (tools/tune/machine.hpp).
#pragma once

#include <attnforge/catalogue/schedule_point.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnforge::catalogue {

// The sizes a record was measured at.
struct ProblemSizes {
    std::int64_t batch = 1, heads = 8, lq = 512, lk = 512;
    std::int64_t head_width = 64;  // E, for a variant whose E is run-time
};

// Everything a record is valid for. Two records with equal keys compete; the newest wins.
struct RecordKey {
    std::string variant, result;
    std::string canonical;    // the variant's canonical DSL text (dsl::canonical): what it computes
    std::string size_bucket;  // "1024<Lk<=2048": the size class of the tuned kernel
    int threads = 0;
    std::string target;               // Halide's host target string, features included
    std::string cpu;                  // /proc/cpuinfo "model name"
    std::string halide;               // Halide version, "21.0.0"
    std::string attnforge;            // attnforge version (project VERSION)
    std::string storage = "float32";  // the kernel's storage type, float32 | bf16 | fp16 (a record's "dtype")
    int head_width = 0;               // the E of the kernel, for a variant whose E is run-time (a record's "E")
    bool operator==(const RecordKey&) const = default;
};

struct Trial {
    SchedulePoint point;
    std::string status = "ok";  // ok | invalid: why | failed: why | skipped: why
    double ms = 0;              // final protocol where measured, else screening; 0 when not ok
    double screen_ms = 0;
    double compile_s = 0;
    bool ok() const { return status == "ok"; }
};

struct Record {
    std::string id;    // 12 hex digits, unique per record
    std::string time;  // UTC, ISO 8601
    RecordKey key;
    ProblemSizes sizes;  // where it was measured
    std::string search;  // evolutionary | random
    std::uint64_t seed = 0;
    int trials = 0;      // candidates evaluated (all statuses)
    double seconds = 0;  // wall time of the run
    bool interrupted = false;
    Trial best, default_schedule;
    std::vector<Trial> autoschedulers;  // each autoscheduler's outcome
    std::vector<Trial> top;             // best valid candidates, fastest first (best included)
};

nlohmann::ordered_json to_json(const Trial& t);
Trial trial_from_json(const nlohmann::json& j);  // throws std::runtime_error
nlohmann::ordered_json to_json(const Record& r);
// Throws std::runtime_error naming the first missing or ill-typed field, or a field a kernel line
// cannot hold (a size bucket that is not one, an unknown strategy, an id or name with other characters).
Record record_from_json(const nlohmann::json& j);

struct Database {
    std::vector<Record> records;        // in file order (oldest first)
    std::vector<std::string> warnings;  // one per unreadable line: "tuning_records.jsonl:7: ..."
};

// A missing file is an empty database; corrupt lines are skipped with a warning.
Database read_database(const std::string& path);
void append_record(const std::string& path, const Record& r);

// The newest record with exactly this key.
const Record* newest_matching(const Database& db, const RecordKey& key);
// Why a record of the same variant, result and bucket does not apply here ("" when it does).
std::string mismatch(const RecordKey& record, const RecordKey& here);

}  // namespace attnforge::catalogue
