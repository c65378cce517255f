// How much of this process's anonymous memory lies in transparent huge pages (2 MiB), from the kernel's
// own account (/proc/self/smaps_rollup, AnonHugePages). attnforge bench reports it next to GB/s: a cache
// streamed through 4 KiB pages reads at 22 GB/s on one Zen 4 core, through 2 MiB pages at 28-31 GB/s
// (docs/performance.md, decode), so a bandwidth figure means little without it.
#pragma once

#include <optional>

namespace attnforge::cli {

// Bytes in transparent huge pages, or nothing where the kernel does not say (no /proc, an old kernel).
std::optional<double> anon_huge_page_bytes();

}  // namespace attnforge::cli
