// A/B of two generated decode_u8 kernels (functions ka, kb) on the same inputs: medians of alternated batches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "HalideBuffer.h"
#include "ka.h"
#include "kb.h"
using Halide::Runtime::Buffer;
int main(int argc, char** argv) {
    int B = 1, H = std::atoi(argv[1]), Hkv = std::atoi(argv[2]), Lq = std::atoi(argv[3]), Lk = std::atoi(argv[4]), E = std::atoi(argv[5]);
    int rounds = argc > 6 ? std::atoi(argv[6]) : 11;
    std::mt19937 g(1);
    std::uniform_real_distribution<float> u(-1, 1);
    Buffer<float> q(E, Lq, H, B), ks(Lk, Hkv, B), kz(Lk, Hkv, B), vs(Lk, Hkv, B), vz(Lk, Hkv, B);
    Buffer<uint8_t> k(E, Lk, Hkv, B), v(E, Lk, Hkv, B);
    Buffer<float> scale = Buffer<float>::make_scalar(); scale() = 0.125f;
    Buffer<int32_t> len(B); len(0) = Lk;
    q.for_each_value([&](float& x) { x = u(g); });
    ks.for_each_value([&](float& x) { x = 0.01f + 0.01f * std::abs(u(g)); });
    kz.for_each_value([&](float& x) { x = 128 + 10 * u(g); });
    vs.for_each_value([&](float& x) { x = 0.01f + 0.01f * std::abs(u(g)); });
    vz.for_each_value([&](float& x) { x = 128 + 10 * u(g); });
    k.for_each_value([&](uint8_t& x) { x = g() & 255; });
    v.for_each_value([&](uint8_t& x) { x = g() & 255; });
    Buffer<float> o1(E, Lq, H, B), o2(E, Lq, H, B);
    auto run = [&](int w, Buffer<float>& o) {
        return w == 0 ? ka(q, k, ks, kz, scale, len, v, vs, vz, o) : kb(q, k, ks, kz, scale, len, v, vs, vz, o);
    };
    if (run(0, o1) || run(1, o2)) { std::puts("kernel error"); return 1; }
    double diff = 0, top = 0;
    for (int i = 0; i < (int)o1.number_of_elements(); i++) {
        diff = std::max(diff, (double)std::abs(o1.data()[i] - o2.data()[i]));
        top = std::max(top, (double)std::abs(o1.data()[i]));
    }
    int calls = std::max(3, (int)(200000.0 / Lk));
    std::vector<double> t[2];
    for (int round = 0; round < rounds; round++)
        for (int w0 = 0; w0 < 2; w0++) {
            int w = (round % 2) ? 1 - w0 : w0;
            std::vector<double> batch;
            for (int c = 0; c < calls; c++) {
                auto t0 = std::chrono::steady_clock::now();
                run(w, w ? o2 : o1);
                batch.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(batch.begin(), batch.end());
            t[w].push_back(batch[batch.size() / 2]);
        }
    std::vector<double> ratio;
    for (int r = 0; r < rounds; r++) ratio.push_back(t[1][r] / t[0][r]);
    for (auto& x : t) std::sort(x.begin(), x.end());
    std::sort(ratio.begin(), ratio.end());
    std::printf("H=%d Hkv=%d Lq=%d Lk=%d E=%d  a %.4f ms  b %.4f ms  b/a %.3f (per-round ratios %.3f-%.3f)  max|diff| %.2e of %.2e\n", H, Hkv, Lq, Lk, E,
                t[0][rounds / 2], t[1][rounds / 2], ratio[rounds / 2], ratio.front(), ratio.back(), diff, top);
}
