// Small helpers shared by the calibration benchmarks: timing one call, the median of samples,
// and running the same body on several threads that start together (ranks share the cores).
#pragma once

#include <algorithm>
#include <cstdint>
#include <barrier>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "plansight/probe/calibration.h"

namespace plansight::probe {

template <class F>
double seconds_of(F&& body) {
  const auto t0 = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// Deterministic, non-denormal values: a GEMM on zeros or denormals would time a different path.
inline void fill_pattern(std::vector<float>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.001f * static_cast<float>(static_cast<int>(i % 97) - 48);
}

// Values like a layer's activations (zero mean, unit scale; a fixed pseudo-random sequence).
// Element-wise kernels are timed on these, not on fill_pattern's small values: tanhf and expf
// take different paths for tiny and unit-scale arguments, and GeLU timed on |x| < 0.05 ran 1.7x
// faster than in a training step.
inline void fill_activations(std::vector<float>& v) {
  std::uint32_t state = 12345u;
  for (auto& x : v) {
    float sum = 0;  // Irwin-Hall: the sum of 4 uniforms on [0, 1) has mean 2 and variance 1/3
    for (int i = 0; i < 4; ++i) {
      state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG
      sum += static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
    }
    x = (sum - 2.0f) * 1.7320508f;
  }
}

// A shared array of n (at least 1) unit-scale values, for calibration calls that own their operands.
inline std::shared_ptr<std::vector<float>> activation_buffer(double n) {
  auto b = std::make_shared<std::vector<float>>(static_cast<std::size_t>(std::max(n, 1.0)));
  fill_activations(*b);
  return b;
}

// Runs body(0..n-1) on n threads released together by a barrier, so that their timed sections
// overlap; n <= 1 runs on the calling thread.
template <class F>
void run_concurrently(int n, F&& body) {
  if (n <= 1) {
    body(0);
    return;
  }
  std::barrier start(n);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (auto& th : threads) th.join();
}

// Seconds per call when `concurrency` threads each make `reps` calls at the same time: the wall
// time of the window (first start to last finish) over `reps`, median over `windows`. Timing
// single calls would miss the sharing: a short call is rarely preempted, so the wait for a core
// falls between calls. make_call(thread) runs before the window (allocation, warm-up) and
// returns the call.
template <class MakeCall>
double shared_seconds_per_call(int concurrency, int windows, int reps, MakeCall&& make_call) {
  using clock = std::chrono::steady_clock;
  std::vector<double> per_window;
  clock::time_point start;
  bool in_window = false;
  auto on_phase = [&]() noexcept {  // runs once per phase, when the last thread arrives
    if (in_window) per_window.push_back(std::chrono::duration<double>(clock::now() - start).count() / reps);
    else start = clock::now();
    in_window = !in_window;
  };
  std::barrier sync(concurrency, on_phase);
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&, t] {
      auto call = make_call(t);
      for (int w = 0; w < windows; ++w) {
        sync.arrive_and_wait();
        for (int i = 0; i < reps; ++i) call();
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& th : threads) th.join();
  return median(per_window);
}

// Seconds of one call with `concurrency` threads each running their own copy, as measure_gemm
// does: windows long against the scheduler's time slice when threads share the cores.
template <class MakeCall>
inline double kernel_seconds(CalibrationLevel level, int concurrency, MakeCall make_call) {
  auto call = make_call(0);
  std::vector<double> times;
  const int min_reps = level == CalibrationLevel::quick ? 3 : 9;
  const double target_s = level == CalibrationLevel::quick ? 0.003 : 0.02;
  double spent = 0;
  while (static_cast<int>(times.size()) < min_reps || (spent < target_s && times.size() < 1000)) {
    times.push_back(seconds_of(call));
    spent += times.back();
  }
  const double alone = median(times);
  // As measure_gemm: a call's mean over windows of calls back to back, alone or sharing the cores.
  const double window_s = level == CalibrationLevel::quick ? 0.015 : 0.04;
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  const double slowdown = std::max(1.0, concurrency / cores);
  const int reps = static_cast<int>(std::clamp(window_s / (alone * slowdown), 2.0, 2000.0));
  return shared_seconds_per_call(concurrency, level == CalibrationLevel::quick ? 2 : 3, reps, make_call);
}

// "2025-03-01T12:00:00Z"
std::string utc_now_iso8601();

}  // namespace plansight::probe
