// Small helpers shared by the calibration benchmarks: timing one call, the median of samples,
// and running the same body on several threads that start together (ranks share the cores).
#pragma once

#include <algorithm>
#include <barrier>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

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

// "2025-03-01T12:00:00Z"
std::string utc_now_iso8601();

}  // namespace plansight::probe
