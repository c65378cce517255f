#include "progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unistd.h>

namespace attnforge::tune {

namespace {

std::string clock_text(double seconds) {
    const int s = static_cast<int>(std::lround(std::max(0.0, seconds)));
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string bar(double fraction, int width) {
    const int full = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
    std::string s = "[";
    for (int i = 0; i < width; ++i) s += i < full ? "#" : ".";
    return s + "]";
}

std::string best_text(const Progress& p) {
    if (!p.best || p.default_ms <= 0) return "best: -";
    return fmt::format("best {:.2f}x over default ({:.3f} ms)", p.default_ms / p.best->screen_ms, p.best->screen_ms);
}

}  // namespace

ProgressView::ProgressView(std::FILE* out) : out_(out), live_(isatty(fileno(out)) != 0) {}

void ProgressView::operator()(const Progress& p) {
    const double fraction = p.remaining >= 0 ? p.elapsed / std::max(p.elapsed + p.remaining, 1e-9)
                            : p.planned > 0  ? double(p.done) / p.planned
                                             : 0.0;
    const std::string counts = p.phase == "final" ? fmt::format("final timing {}", p.done)
                               : p.planned > 0    ? fmt::format("{}/{} trials", p.done, p.planned)
                                                  : fmt::format("{} trials", p.done);
    const std::string left = p.remaining >= 0 ? "~" + clock_text(p.remaining) + " left" : "";
    if (live_) {
        fmt::print(out_, "\r\033[K{} {}  {} elapsed {}  {}", bar(fraction, 24), counts, clock_text(p.elapsed), left,
                   best_text(p));
        std::fflush(out_);
        open_ = true;
        return;
    }
    if (p.phase == last_phase_ && p.done == last_done_) return;
    last_phase_ = p.phase;
    last_done_ = p.done;
    if (p.phase == "final") {
        if (p.done == 1) fmt::print(out_, "final comparison of the best candidates ...\n");
        return;
    }
    const std::string what = p.last ? fmt::format("{:<13} {}", p.last->point.strategy, p.last->point.knob_text()) : "";
    const std::string outcome = !p.last        ? ""
                                : p.last->ok() ? fmt::format("{:.3f} ms", p.last->screen_ms)
                                               : p.last->status;
    fmt::print(out_, "{} {} {} {}  {} | {}  {}\n", bar(fraction, 16), counts, clock_text(p.elapsed), left, best_text(p),
               what, outcome);
    std::fflush(out_);
}

void ProgressView::finish() {
    if (live_ && open_) fmt::print(out_, "\n");
    open_ = false;
}

}  // namespace attnforge::tune
