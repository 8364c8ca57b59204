// plansight_bench_calibration: the CPU calibration's figures on this machine (probe/src/
// calibration.cpp), printed with the machine and the command: GEMM GFLOP/s from 64^3 to 512^3
// and the per-FLOP ratio of the largest to the smallest, one GEMM alone against several copies
// sharing the cores, the streaming copy bandwidth and the per-kernel overhead. These were timed
// assertions in tests/unit/calibration_test.cpp; a loaded machine moves them, so they are
// figures to read, not pass/fail checks. A small harness, not Google Benchmark: the calibration
// times itself (medians over repetitions).
//   plansight_bench_calibration [--full] [--copies N]
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include "plansight/kernels/blas_threads.h"
#include "plansight/probe/calibration.h"

namespace {

namespace pp = plansight::probe;

// The fastest of `tries` medians: one preempted median on a shared machine does not count.
plansight::estimator::GemmSample fastest(const pp::GemmShape& shape, pp::CalibrationLevel level, int copies, int tries) {
  auto best = pp::measure_gemm(shape, level, copies);
  for (int i = 1; i < tries; ++i) {
    const auto again = pp::measure_gemm(shape, level, copies);
    if (again.seconds < best.seconds) best = again;
  }
  return best;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
  pp::CalibrationLevel level = pp::CalibrationLevel::quick;
  int copies = 4;
  std::string command = argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    command += " " + arg;
    if (arg == "--full") {
      level = pp::CalibrationLevel::full;
    } else if (arg == "--copies" && i + 1 < argc) {
      copies = std::atoi(argv[++i]);
      command += std::string(" ") + argv[i];
    } else {
      std::fprintf(stderr, "usage: plansight_bench_calibration [--full] [--copies N] (got '%s')\n", arg.c_str());
      return 2;
    }
  }
  // One BLAS thread per copy, as calibrate() gives each rank threads_per_rank (1 by default).
  plansight::kernels::cpu::set_blas_threads(1);
  utsname un{};
  uname(&un);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::printf("# bench/bench_calibration.cpp — the CPU calibration's figures (%s level)\n",
              level == pp::CalibrationLevel::quick ? "quick" : "full");
  std::printf("# command: %s\n", command.c_str());
  std::printf("# machine: %s %s %s, %s; load average %s\n", un.sysname, un.release, un.machine,
              pp::cpu_device_name().c_str(), load_average().c_str());
  std::printf("# date: %s\n\n", date);

  std::printf("GEMM C[n,n] = A[n,n] B[n,n], fp32, one BLAS thread (fastest of 3 medians)\n");
  std::printf("%8s %14s %12s\n", "n", "seconds", "GFLOP/s");
  double small_gflops = 0, large_gflops = 0;
  for (std::int64_t n : {64, 128, 256, 512}) {
    const auto s = fastest({"square", n, n, n}, level, 1, 3);
    const double gflops = s.flops() / s.seconds / 1e9;
    if (n == 64) small_gflops = gflops;
    if (n == 512) large_gflops = gflops;
    std::printf("%8lld %14.6e %12.2f\n", static_cast<long long>(n), s.seconds, gflops);
  }
  std::printf("per FLOP, 512^3 against 64^3: %.2fx the throughput\n\n", large_gflops / small_gflops);

  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const auto alone = fastest({"square", 256, 256, 256}, level, 1, 3);
  const auto shared = fastest({"square", 256, 256, 256}, level, copies, 3);
  std::printf("256^3 GEMM alone: %.6e s; %d concurrent copies on %u cores: %.6e s per call each (%.2fx)\n\n", alone.seconds, copies,
              cores, shared.seconds, shared.seconds / alone.seconds);

  const double bandwidth = pp::measure_copy_bandwidth(level);
  std::printf("streaming copy (read + written): %.3f GB/s\n", bandwidth / 1e9);
  const double overhead = pp::measure_kernel_overhead(level);
  std::printf("per-kernel overhead (median of tiny matmul, GeLU, residual calls): %.3f us\n", overhead * 1e6);
  return 0;
}
