// Collective sweeps of the GPU calibration (gpu_calibration.h): virtual ranks on one GPU through
// the device communicator, and one rank per GPU through NCCL. Each group size runs as that many
// threads, each with its stream and device buffers; a case is timed on every rank as the wall
// time of `reps` calls up to its stream's completion, after an all-reduce that lines the ranks up,
// and the sample is the slowest rank's median: a collective is done when its last member is.
// Sizes are nccl-tests' S (the buffer; the gathered output; the scattered input; the message).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "../collective_cases.h"
#include "device_array.h"
#include "gpu_timing.h"
#include "plansight/probe/cuda/gpu_calibration.h"
#include "plansight/runtime/cuda/device_communicator.h"
#if defined(PLANSIGHT_HAVE_NCCL)
#include "plansight/runtime/cuda/nccl_communicator.h"
#endif

namespace plansight::probe::cuda {
namespace {

namespace est = plansight::estimator;
namespace kc = plansight::kernels::cuda;
namespace rt = plansight::runtime;

using Case = CollectiveCase;

rt::Status run_case(rt::Communicator& comm, const Case& c, float* in, float* out) {
  switch (c.op) {
    case est::Collective::all_reduce: return comm.all_reduce(in, c.count);
    case est::Collective::all_gather: return comm.all_gather(in, out, c.count);
    case est::Collective::reduce_scatter: return comm.reduce_scatter(in, out, c.count);
    case est::Collective::send_recv: return comm.rank() == 0 ? comm.send(in, c.count, 1) : comm.recv(out, c.count, 0);
    case est::Collective::broadcast: return comm.broadcast(in, c.count, 0);
  }
  return rt::ok_status();
}

int repetitions(double bytes, CalibrationLevel level) {
  if (level == CalibrationLevel::quick) return bytes <= 65536 ? 10 : 3;
  return bytes <= 262144 ? 50 : 10;
}

// How one group's ranks are set up: the device a rank's thread runs on, its communicator on its
// stream, and abort(reason), which releases ranks waiting in a collective when another failed.
struct Group {
  std::function<int(int rank)> device_of;
  std::function<Result<std::unique_ptr<rt::Communicator>>(int rank, cudaStream_t stream)> make_comm;
  std::function<void(const std::string&)> abort;
};

Result<std::vector<est::CollectiveSample>> sweep(std::int64_t ranks, const std::vector<double>& sizes,
                                                 CalibrationLevel level, const Group& group,
                                                 const std::atomic<bool>* stop) {
  const std::vector<Case> cases = collective_cases(ranks, sizes);
  const int trials = level == CalibrationLevel::quick ? 3 : 5;
  std::vector<std::vector<double>> seconds(cases.size(), std::vector<double>(static_cast<std::size_t>(ranks), 0.0));
  std::mutex mutex;
  std::vector<Diagnostic> errors;
  auto fail = [&](const std::vector<Diagnostic>& e) {
    std::lock_guard lock(mutex);
    if (errors.empty()) group.abort(e.empty() ? "calibration failed" : e.front().message);
    errors.insert(errors.end(), e.begin(), e.end());
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      const int device = group.device_of(r);
      if (auto s = cuda_ok(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")"); !s) {
        return fail(s.errors());
      }
      cudaStream_t stream = nullptr;
      if (auto s = cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); !s) {
        return fail(s.errors());
      }
      auto comm = group.make_comm(r, stream);
      // What each case reads and writes (collective_cases.h): a reduce-scatter reads a block per
      // rank, an all-gather writes one; the others move `count` values. Sized as count x ranks
      // for every case, the group held 2 S n^2 bytes: 32 GiB for 8 virtual ranks at S = 256 MiB.
      std::size_t in_count = 1, out_count = 1;
      for (const Case& c : cases) {
        const std::size_t all = c.count * static_cast<std::size_t>(ranks);
        in_count = std::max(in_count, c.op == est::Collective::reduce_scatter ? all : c.count);
        out_count = std::max(out_count, c.op == est::Collective::all_gather ? all : c.count);
      }
      auto in = DeviceArray::make(kc::DType::fp32, in_count, "collective input");
      auto out = DeviceArray::make(kc::DType::fp32, out_count, "collective output");
      auto flag = DeviceArray::make(kc::DType::fp32, 1, "collective stop flag");
      if (!comm || !in || !out || !flag) {
        cudaStreamDestroy(stream);
        return fail(!comm ? comm.errors() : (!in ? in.errors() : (!out ? out.errors() : flag.errors())));
      }
      // Whether any rank was asked to stop, decided together before each case: a rank that
      // stopped on its own would leave the others waiting in their next collective for ever.
      const auto stop_together = [&]() -> Result<bool> {
        const float mine = stop != nullptr && stop->load() ? 1.0f : 0.0f;
        float any = 0;
        if (auto s = cuda_ok(cudaMemcpyAsync(flag->as<float>(), &mine, sizeof mine, cudaMemcpyHostToDevice, stream),
                             "cudaMemcpyAsync (stop flag)");
            !s) {
          return s.errors();
        }
        if (auto s = (*comm)->all_reduce(flag->as<float>(), 1); !s) return s.errors();
        if (auto s = cuda_ok(cudaMemcpyAsync(&any, flag->as<float>(), sizeof any, cudaMemcpyDeviceToHost, stream),
                             "cudaMemcpyAsync (stop flag)");
            !s) {
          return s.errors();
        }
        if (auto s = cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize (stop flag)"); !s) return s.errors();
        return any > 0;
      };
      for (std::size_t i = 0; i < cases.size(); ++i) {
        auto stopping = stop_together();
        if (!stopping) return fail(stopping.errors());
        if (*stopping) break;
        const Case& c = cases[i];
        std::vector<double> per_call;
        for (int t = 0; t < trials; ++t) {
          if (auto s = (*comm)->all_reduce(in->as<float>(), 1); !s) return fail(s.errors());
          cudaStreamSynchronize(stream);
          const auto begin = std::chrono::steady_clock::now();
          const int reps = repetitions(c.bytes, level);
          for (int k = 0; k < reps; ++k) {
            if (auto s = run_case(**comm, c, in->as<float>(), out->as<float>()); !s) return fail(s.errors());
          }
          if (auto s = cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); !s) return fail(s.errors());
          per_call.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() / reps);
        }
        seconds[i][static_cast<std::size_t>(r)] = median(per_call);
      }
      comm->reset();
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  if (!errors.empty()) return errors;
  if (stop != nullptr && stop->load()) return make_error("calibration", "cancelled");
  std::vector<est::CollectiveSample> samples;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    est::CollectiveSample s;
    s.op = cases[i].op;
    s.ranks = ranks;
    s.bytes = cases[i].bytes;
    s.seconds = *std::max_element(seconds[i].begin(), seconds[i].end());
    s.crosses_nodes = false;  // one process: every GPU is on this node
    samples.push_back(s);
  }
  return samples;
}

}  // namespace

Result<std::vector<est::CollectiveSample>> measure_device_collectives(const std::vector<std::int64_t>& ranks,
                                                                     const std::vector<double>& bytes,
                                                                     CalibrationLevel level, int device,
                                                                     const std::atomic<bool>* stop) {
  std::vector<est::CollectiveSample> all;
  for (std::int64_t n : ranks) {
    if (n < 2) continue;
    runtime::cuda::DeviceWorld world(static_cast<int>(n), device);
    const Group group{[device](int) { return device; },
                      [&world](int rank, cudaStream_t stream) { return world.world(rank, stream); },
                      [&world](const std::string& why) { world.abort(why); }};
    auto samples = sweep(n, bytes, level, group, stop);
    if (!samples) return samples.errors();
    all.insert(all.end(), samples->begin(), samples->end());
  }
  return all;
}

Result<std::vector<est::CollectiveSample>> measure_nccl_collectives(const std::vector<std::int64_t>& ranks,
                                                                   const std::vector<double>& bytes,
                                                                   CalibrationLevel level,
                                                                   const std::atomic<bool>* stop) {
#if defined(PLANSIGHT_HAVE_NCCL)
  int gpus = 0;
  if (auto s = cuda_ok(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount"); !s) return s.errors();
  std::vector<est::CollectiveSample> all;
  for (std::int64_t n : ranks) {
    if (n < 2 || n > gpus) continue;
    std::vector<int> devices;
    for (int d = 0; d < n; ++d) devices.push_back(d);
    auto world = runtime::cuda::NcclWorld::create(devices);
    if (!world) return world.errors();
    std::shared_ptr<runtime::cuda::NcclWorld> nccl = *world;
    const Group group{[nccl](int rank) { return nccl->device_of(rank); },
                      [nccl](int rank, cudaStream_t stream) { return nccl->world(rank, stream); },
                      [nccl](const std::string& why) { nccl->abort(why); }};
    auto samples = sweep(n, bytes, level, group, stop);
    if (!samples) return samples.errors();
    all.insert(all.end(), samples->begin(), samples->end());
  }
  return all;
#else
  (void)ranks;
  (void)bytes;
  (void)level;
  (void)stop;
  return make_error("calibration", "this build has no NCCL (PLANSIGHT_ENABLE_NCCL is OFF)");
#endif
}

}  // namespace plansight::probe::cuda
