// The cases of a collective calibration sweep, shared by the CPU (collective_calibration.cpp)
// and GPU (cuda/gpu_collective_calibration.cpp) sweeps: for each message size, an all-reduce of
// the buffer, an all-gather and a reduce-scatter of one block per rank, and with two ranks a
// send/recv, each with nccl-tests' S (the buffer; the gathered output; the scattered input; the
// message).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plansight/estimator/comm_model.h"
#include "plansight/probe/calibration.h"
#include "plansight/runtime/communicator.h"

namespace plansight::probe {

struct CollectiveCase {
  estimator::Collective op;
  std::size_t count;  // floats per rank: the buffer (all-reduce, send/recv) or one block (gather/scatter)
  double bytes;       // nccl-tests S
};

// Small messages are latency-bound and cheap, so they get more repetitions.
inline int collective_repetitions(double bytes, CalibrationLevel level) {
  if (level == CalibrationLevel::quick) return bytes <= 65536 ? 8 : 3;
  return bytes <= 262144 ? 30 : 8;
}

inline std::vector<CollectiveCase> collective_cases(std::int64_t ranks, const std::vector<double>& sizes) {
  std::vector<CollectiveCase> out;
  const auto n = static_cast<std::size_t>(ranks);
  for (double s : sizes) {
    const std::size_t floats = std::max<std::size_t>(1, static_cast<std::size_t>(s / sizeof(float)));
    const std::size_t block = std::max<std::size_t>(1, floats / n);
    out.push_back({estimator::Collective::all_reduce, floats, static_cast<double>(floats * sizeof(float))});
    out.push_back({estimator::Collective::all_gather, block, static_cast<double>(block * n * sizeof(float))});
    out.push_back({estimator::Collective::reduce_scatter, block, static_cast<double>(block * n * sizeof(float))});
    if (ranks == 2) out.push_back({estimator::Collective::send_recv, floats, static_cast<double>(floats * sizeof(float))});
  }
  return out;
}

// One call of case `c` on `comm`: `in` holds size() * count values, `out` as many.
inline runtime::Status run_collective_case(runtime::Communicator& comm, const CollectiveCase& c, std::vector<float>& in,
                                           std::vector<float>& out) {
  switch (c.op) {
    case estimator::Collective::all_reduce: return comm.all_reduce(in.data(), c.count);
    case estimator::Collective::all_gather: return comm.all_gather(in.data(), out.data(), c.count);
    case estimator::Collective::reduce_scatter: return comm.reduce_scatter(in.data(), out.data(), c.count);
    case estimator::Collective::send_recv:
      return comm.rank() == 0 ? comm.send(in.data(), c.count, 1) : comm.recv(out.data(), c.count, 0);
    case estimator::Collective::broadcast: return comm.broadcast(in.data(), c.count, 0);
  }
  return runtime::ok_status();
}

}  // namespace plansight::probe
