// Collective bandwidth sweep over runtime::InProcessWorld: the same communicator a CPU probe run
// uses, so the measured seconds include its synchronisation as well as its copies. Sizes follow
// nccl-tests' S (doc/PERFORMANCE.md) so bus bandwidth comes out with the estimator's bus_factor.
#include <algorithm>
#include <barrier>
#include <mutex>
#include <thread>

#include "collective_cases.h"
#include "plansight/probe/calibration.h"
#include "calibration_util.h"
#include "plansight/runtime/communicator.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
namespace rt = plansight::runtime;

using Case = CollectiveCase;

// One group size: `ranks` threads run every case; the sample is the slowest rank's median,
// since a collective is done only when its last member is.
Result<std::vector<est::CollectiveSample>> sweep(std::int64_t ranks, const std::vector<double>& sizes,
                                                 CalibrationLevel level, const std::atomic<bool>* stop) {
  const auto cases = collective_cases(ranks, sizes);
  const int n = static_cast<int>(ranks);
  rt::InProcessWorld world(n);
  std::vector<std::vector<double>> medians(static_cast<std::size_t>(n), std::vector<double>(cases.size(), 0.0));
  std::mutex error_mutex;
  std::vector<Diagnostic> errors;
  bool cancel = false;
  // The completion step runs once per phase, so every rank sees the same decision to stop.
  std::barrier sync(n, [&]() noexcept {
    if (stop && stop->load()) cancel = true;
    std::lock_guard lock(error_mutex);
    if (!errors.empty()) cancel = true;
  });
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto comm = world.world(r);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        std::vector<float> in(c.count * static_cast<std::size_t>(n)), out(c.count * static_cast<std::size_t>(n));
        fill_pattern(in);
        std::vector<double> times;
        const int reps = collective_repetitions(c.bytes, level);
        for (int rep = -1; rep < reps; ++rep) {  // rep -1 warms buffers and the communicator
          sync.arrive_and_wait();
          if (cancel) return;
          rt::Status status = rt::ok_status();
          const double s = seconds_of([&] { status = run_collective_case(*comm, c, in, out); });
          if (!status) {
            std::lock_guard lock(error_mutex);
            for (const auto& e : status.errors()) errors.push_back(e);
            world.abort("calibration: a collective failed");
          }
          if (rep >= 0) times.push_back(s);
          // Keep all-reduce sums bounded: repeated in-place sums of n copies grow as n^reps.
          if (c.op == est::Collective::all_reduce) fill_pattern(in);
        }
        medians[static_cast<std::size_t>(r)][i] = median(times);
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!errors.empty()) return errors;
  if (cancel) return make_error("calibration", "cancelled");
  std::vector<est::CollectiveSample> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    est::CollectiveSample s;
    s.op = cases[i].op;
    s.ranks = ranks;
    s.bytes = cases[i].bytes;
    for (int r = 0; r < n; ++r) s.seconds = std::max(s.seconds, medians[static_cast<std::size_t>(r)][i]);
    out.push_back(s);
  }
  return out;
}

}  // namespace

Result<std::vector<est::CollectiveSample>> measure_collectives(const std::vector<std::int64_t>& group_sizes,
                                                               const std::vector<double>& bytes,
                                                               CalibrationLevel level, const std::atomic<bool>* stop) {
  std::vector<est::CollectiveSample> all;
  for (auto ranks : group_sizes) {
    if (ranks < 2) continue;
    auto samples = sweep(ranks, bytes, level, stop);
    if (!samples) return samples.errors();
    all.insert(all.end(), samples->begin(), samples->end());
  }
  return all;
}

}  // namespace plansight::probe
