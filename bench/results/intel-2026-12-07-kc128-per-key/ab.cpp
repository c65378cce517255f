// A/B of two generated decode_u8_kc128 E=64 kernels on the same inputs: median ms of alternated batches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "HalideBuffer.h"
#include "fold.h"
#include "perkey.h"
using Halide::Runtime::Buffer;
int main(int argc, char** argv) {
    int B = 1, H = std::atoi(argv[1]), Hkv = std::atoi(argv[2]), Lq = std::atoi(argv[3]), Lk = std::atoi(argv[4]), E = 64;
    int blocks = (Lk + 127) / 128;
    std::mt19937 g(1);
    std::uniform_real_distribution<float> u(-1, 1);
    Buffer<float> q(E, Lq, H, B), ks(E, blocks, Hkv, B), kz(E, blocks, Hkv, B), vs(Lk, Hkv, B), vz(Lk, Hkv, B);
    Buffer<uint8_t> k(E, Lk, Hkv, B), v(E, Lk, Hkv, B);
    Buffer<float> scale = Buffer<float>::make_scalar(); scale() = 0.125f;
    Buffer<int32_t> len(B); len(0) = Lk;
    q.for_each_value([&](float& x) { x = u(g); });
    ks.for_each_value([&](float& x) { x = 0.01f + 0.01f * std::abs(u(g)); });
    kz.for_each_value([&](float& x) { x = 128 + 10 * u(g); });
    vs.for_each_value([&](float& x) { x = 0.01f; });
    vz.for_each_value([&](float& x) { x = 128; });
    k.for_each_value([&](uint8_t& x) { x = g() & 255; });
    v.for_each_value([&](uint8_t& x) { x = g() & 255; });
    Buffer<float> o1(E, Lq, H, B), o2(E, Lq, H, B);
    auto run = [&](int which, Buffer<float>& o) {
        return which == 0 ? fold(q, k, ks, kz, scale, len, v, vs, vz, o) : perkey(q, k, ks, kz, scale, len, v, vs, vz, o);
    };
    if (run(0, o1) || run(1, o2)) { std::puts("kernel error"); return 1; }
    double diff = 0;
    for (int i = 0; i < (int)o1.number_of_elements(); i++) diff = std::max(diff, (double)std::abs(o1.data()[i] - o2.data()[i]));
    std::vector<double> t[2];
    for (int round = 0; round < 15; round++)
        for (int w = 0; w < 2; w++) {
            std::vector<double> batch;
            for (int c = 0; c < 30; c++) {
                auto t0 = std::chrono::steady_clock::now();
                run(w, w ? o2 : o1);
                batch.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(batch.begin(), batch.end());
            t[w].push_back(batch[batch.size() / 2]);
        }
    for (auto& x : t) std::sort(x.begin(), x.end());
    std::printf("H=%d Hkv=%d Lq=%d Lk=%d  fold %.4f ms  per_key %.4f ms  per_key/fold %.3f (round medians %.3f-%.3f)  max|diff| %.2e\n", H, Hkv, Lq, Lk,
                t[0][7], t[1][7], t[1][7] / t[0][7], t[1][2] / t[0][12], t[1][12] / t[0][2], diff);
}
