// Why a CPU step's GEMMs take longer than the calibration says: one GEMM of the probe's `small`
// model (QKV: 128 tokens x 128 -> 384, with its bias), 400 calls, timed back to back (as the
// calibration times it) and with 32 MiB of other memory traffic before each call (as the rest of
// a step's kernels make between two calls of one GEMM), each as the median the calibration
// records and as the mean a step's sum of calls adds up to. Run:
//   build/release/bench/plansight_bench_gemm_jitter [N C OC]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "plansight/kernels/blas_threads.h"
#include "plansight/kernels/matmul.h"

namespace kc = plansight::kernels::cpu;

int main(int argc, char** argv) {
  const int N = argc > 3 ? std::atoi(argv[1]) : 128, C = argc > 3 ? std::atoi(argv[2]) : 128,
            OC = argc > 3 ? std::atoi(argv[3]) : 384;
  if (N < 1 || C < 1 || OC < 1) {
    std::fprintf(stderr, "usage: plansight_bench_gemm_jitter [N C OC], each >= 1\n");
    return 2;
  }
  kc::set_blas_threads(1);  // one BLAS thread, as a probe rank has by default
  std::vector<float> x(static_cast<std::size_t>(N) * C, 0.01f), w(static_cast<std::size_t>(OC) * C, 0.02f),
      y(static_cast<std::size_t>(N) * OC), b(static_cast<std::size_t>(OC), 0.1f);
  std::vector<float> other(std::size_t{8} << 20, 1.0f);  // 32 MiB
  std::printf("GEMM + bias, N %d C %d OC %d, 400 calls each (us)\n", N, C, OC);
  for (const bool traffic : {false, true}) {
    std::vector<double> t;
    for (int i = 0; i < 400; ++i) {
      if (traffic) {
        for (std::size_t j = 0; j < other.size(); j += 16) other[j] += 1.0f;  // a cache line at a time
      }
      const auto start = std::chrono::steady_clock::now();
      kc::matmul_forward(y.data(), x.data(), w.data(), b.data(), N, C, OC);
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<double> sorted = t;
    std::sort(sorted.begin(), sorted.end());
    std::printf("%-40s median %7.1f  mean %7.1f  p90 %7.1f  p99 %7.1f\n",
                traffic ? "after 32 MiB of other traffic" : "back to back", sorted[sorted.size() / 2],
                std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size()), sorted[sorted.size() * 9 / 10],
                sorted[sorted.size() * 99 / 100]);
  }
  return 0;
}
