// Shared by the device communicator tests: one thread per virtual rank of a DeviceWorld on GPU 0,
// each with its own non-blocking stream and world communicator, failures collected (a failing
// rank aborts the world, so that no other rank waits for it); and copies between host vectors
// and device buffers on a rank's stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plansight/runtime/cuda/device_communicator.h"

namespace plansight::device_test {

class Ranks {
 public:
  explicit Ranks(int n) : world_(n, 0) {}

  void run(const std::function<void(int rank, runtime::Communicator& comm, cudaStream_t stream)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < world_.size(); ++r) {
      threads.emplace_back([&, r] {
        cudaStream_t stream = nullptr;
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return fail(r, "stream");
        auto comm = world_.world(r, stream);
        if (!comm) {
          fail(r, comm.error_text());
        } else {
          body(r, **comm, stream);
        }
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
      });
    }
    for (auto& t : threads) t.join();
  }

  void fail(int rank, const std::string& what) {
    std::lock_guard lock(mutex_);
    failures_.push_back("rank " + std::to_string(rank) + ": " + what);
    world_.abort(what);
  }
  const std::vector<std::string>& failures() const { return failures_; }
  runtime::cuda::DeviceWorld& world() { return world_; }

 private:
  runtime::cuda::DeviceWorld world_;
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

// Waits for the stream, so that earlier work on it is part of what is read.
template <class T>
std::vector<T> download(const T* device, std::size_t n, cudaStream_t stream) {
  std::vector<T> host(n);
  cudaMemcpyAsync(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  return host;
}

// Null when cudaMalloc fails. The copy is ordered on `stream`, before the rank's later work; the
// host vector may go at once (a copy from pageable memory returns after reading it, CUDA Runtime
// API, "API synchronization behavior").
template <class T>
T* upload(const std::vector<T>& host, cudaStream_t stream) {
  void* device = nullptr;
  if (cudaMalloc(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpyAsync(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream);
  return static_cast<T*>(device);
}

}  // namespace plansight::device_test
