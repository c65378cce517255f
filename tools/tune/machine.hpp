// This machine and these sources as a tuning record's key (host target, CPU model, versions), and a new
// record's id and time. The records themselves: the catalogue (attnforge/catalogue/tuning_records.hpp).
#pragma once

#include "problem.hpp"
#include <attnforge/catalogue/tuning_records.hpp>

#include <string>

namespace attnforge::tune {

using catalogue::Database;
using catalogue::Record;
using catalogue::RecordKey;
using catalogue::Trial;

RecordKey machine_key(const Problem& p, int threads);
std::string host_target_string();  // Halide's, features included
std::string cpu_model();           // /proc/cpuinfo "model name"

std::string new_record_id();  // 12 hex digits
std::string utc_now();        // ISO 8601

}  // namespace attnforge::tune
