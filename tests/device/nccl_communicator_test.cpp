// The NCCL communicator on real GPUs, one thread per GPU: all-reduce, reduce-scatter, all-gather
// and broadcast in fp32, send/recv in call order, ncclCommSplit sub-groups, and all-gather,
// all-reduce and send/recv through the typed calls in bf16 and fp16, all checked exactly (small
// integers), a crossing send/recv group with messages above NCCL's buffers, and abort() from
// another thread. Needs at least two GPUs (NCCL before 2.30 puts one rank per GPU); otherwise every
// test prints why and skips.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device_test_util.h"
#include "plansight/runtime/cuda/nccl_communicator.h"

namespace plansight::runtime::cuda {
namespace {

std::vector<float> values_of(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((rank + 1) * 100 + static_cast<int>(i % 97));
  return v;
}

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLANSIGHT_SKIP_WITHOUT_DEVICE();
    ASSERT_EQ(cudaGetDeviceCount(&devices_), cudaSuccess);
    if (devices_ < 2) {
      std::printf("SKIPPED: the NCCL communicator needs 2 GPUs, found %d\n", devices_);
      GTEST_SKIP() << "needs 2 GPUs, found " << devices_;
    }
  }

  // One thread per GPU; each gets its communicator and a stream on its device.
  void run(const std::function<void(int rank, Communicator& comm, cudaStream_t stream)>& body) {
    std::vector<int> devices;
    for (int d = 0; d < devices_; ++d) devices.push_back(d);
    auto world = NcclWorld::create(devices);
    ASSERT_TRUE(world.ok()) << world.error_text();
    world_ = world->get();
    std::vector<std::thread> threads;
    for (int r = 0; r < devices_; ++r) {
      threads.emplace_back([&, r] {
        cudaSetDevice(r);
        cudaStream_t stream = nullptr;
        cudaStreamCreate(&stream);
        auto comm = (*world)->world(r, stream);
        if (!comm) return fail(r, comm.error_text());
        body(r, **comm, stream);
        cudaStreamSynchronize(stream);
        comm->reset();
        cudaStreamDestroy(stream);
      });
    }
    for (auto& t : threads) t.join();
    world_ = nullptr;
    EXPECT_TRUE(failures_.empty()) << failures_.front();
  }
  // A rank that stops early skips the next collective: the world is aborted, so its peers'
  // pending NCCL work returns instead of waiting for it for ever.
  void fail(int rank, const std::string& what) {
    std::lock_guard lock(mutex_);
    failures_.push_back("rank " + std::to_string(rank) + ": " + what);
    if (world_ != nullptr) world_->abort(failures_.back());
  }

  int devices_ = 0;
  NcclWorld* world_ = nullptr;  // during run()
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

std::vector<float> download(const float* device, std::size_t n, cudaStream_t stream) {
  std::vector<float> host(n);
  cudaMemcpyAsync(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  return host;
}

float* upload(const std::vector<float>& host) {
  float* device = nullptr;
  cudaMalloc(&device, host.size() * sizeof(float));
  cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  return device;
}

TEST_F(NcclCommunicatorTest, CollectivesMatchSerialSums) {
  const std::size_t count = 4099;
  run([&](int r, Communicator& comm, cudaStream_t stream) {
    const int p = comm.size();
    float* data = upload(values_of(r, count));
    if (auto s = comm.all_reduce(data, count); !s) return fail(r, s.error_text());
    auto got = download(data, count, stream);
    // Each rank's values made once, not once per element.
    std::vector<float> expected(count, 0.0f);
    for (int q = 0; q < p; ++q) {
      const auto theirs = values_of(q, count);
      for (std::size_t i = 0; i < count; ++i) expected[i] += theirs[i];
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (got[i] != expected[i]) return fail(r, "all_reduce element " + std::to_string(i));
    }
    float* blocks = upload(values_of(r, count * static_cast<std::size_t>(p)));
    float* out = upload(std::vector<float>(count * static_cast<std::size_t>(p), 0.0f));
    if (auto s = comm.reduce_scatter(blocks, out, count); !s) return fail(r, s.error_text());
    got = download(out, count, stream);
    std::fill(expected.begin(), expected.end(), 0.0f);
    for (int q = 0; q < p; ++q) {
      const auto theirs = values_of(q, count * static_cast<std::size_t>(p));
      for (std::size_t i = 0; i < count; ++i) expected[i] += theirs[static_cast<std::size_t>(r) * count + i];
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (got[i] != expected[i]) return fail(r, "reduce_scatter element " + std::to_string(i));
    }
    // All-gather: block q of every rank's output is rank q's input, exactly.
    float* mine = upload(values_of(r, count));
    float* gathered = upload(std::vector<float>(count * static_cast<std::size_t>(p), 0.0f));
    if (auto s = comm.all_gather(mine, gathered, count); !s) return fail(r, s.error_text());
    got = download(gathered, count * static_cast<std::size_t>(p), stream);
    for (int q = 0; q < p; ++q) {
      const auto theirs = values_of(q, count);
      if (!std::equal(theirs.begin(), theirs.end(), got.begin() + static_cast<std::ptrdiff_t>(count) * q)) {
        return fail(r, "all_gather block " + std::to_string(q));
      }
    }
    cudaFree(mine);
    cudaFree(gathered);
    if (auto s = comm.broadcast(blocks, count, 1); !s) return fail(r, s.error_text());
    if (download(blocks, count, stream) != std::vector<float>(values_of(1, count * static_cast<std::size_t>(p)).begin(),
                                                               values_of(1, count * static_cast<std::size_t>(p)).begin() +
                                                                   static_cast<std::ptrdiff_t>(count))) {
      return fail(r, "broadcast");
    }
    cudaFree(data);
    cudaFree(blocks);
    cudaFree(out);
  });
}

TEST_F(NcclCommunicatorTest, SendRecvInCallOrderAndSplit) {
  const std::size_t n = 1000;
  run([&](int r, Communicator& comm, cudaStream_t stream) {
    float* data = upload(values_of(r, n));
    // Ranks 0 and 1 exchange: rank 0 sends first, rank 1 receives first (stage parity).
    if (r == 0) {
      if (auto s = comm.send(data, n, 1); !s) return fail(r, s.error_text());
    } else if (r == 1) {
      if (auto s = comm.recv(data, n, 0); !s) return fail(r, s.error_text());
      if (download(data, n, stream) != values_of(0, n)) return fail(r, "received values");
    }
    auto solo = split_nccl(comm, r, 0, "solo");
    if (!solo || !*solo) return fail(r, solo ? "null communicator" : solo.error_text());
    if ((*solo)->size() != 1 || (*solo)->rank() != 0 || (*solo)->name() != "solo") return fail(r, "split shape");
    cudaFree(data);
  });
}

// Typed transfers of `zero`'s type: all-reduce, all-gather and a send from rank 0 to rank 1. The
// values are small integers whose sums over up to 32 ranks (at most 256) are exact in bf16 (8
// significant bits) and fp16, so NCCL's own summation order and precision cannot change them.
template <class E>
std::string typed_round(E zero, Element element, int r, Communicator& comm, cudaStream_t stream) {
  const std::size_t count = 1001;  // odd
  const int p = comm.size();
  auto small = [count](int rank) {
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(1 + (static_cast<std::size_t>(rank) + i) % 8);
    return device_test::narrow_all<E>(v);
  };
  auto same_bits = [](const std::vector<E>& a, const std::vector<E>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(E)) == 0;
  };
  auto to_device = [](const std::vector<E>& host) {
    void* device = nullptr;
    cudaMalloc(&device, host.size() * sizeof(E));
    cudaMemcpy(device, host.data(), host.size() * sizeof(E), cudaMemcpyHostToDevice);
    return device;
  };
  auto to_host = [stream](const void* device, std::size_t n) {
    std::vector<E> host(n, E{});
    cudaMemcpyAsync(host.data(), device, n * sizeof(E), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    return host;
  };
  const std::string type = element_name(element);
  std::vector<float> sums(count, 0.0f);
  std::vector<E> gathered;
  for (int q = 0; q < p; ++q) {
    const auto theirs = small(q);
    gathered.insert(gathered.end(), theirs.begin(), theirs.end());
    for (std::size_t i = 0; i < count; ++i) sums[i] += device_test::widen(theirs[i]);
  }
  void* data = to_device(small(r));
  void* out = to_device(std::vector<E>(count * static_cast<std::size_t>(p), zero));
  const std::string error = [&]() -> std::string {
    if (auto s = comm.all_gather_typed(data, out, count, element); !s) return s.error_text();
    if (!same_bits(to_host(out, count * static_cast<std::size_t>(p)), gathered)) return type + " all_gather";
    if (auto s = comm.all_reduce_typed(data, count, element); !s) return s.error_text();
    if (!same_bits(to_host(data, count), device_test::narrow_all<E>(sums))) return type + " all_reduce";
    if (r == 0) {
      if (auto s = comm.send_typed(out, count, element, 1, 0); !s) return s.error_text();
      cudaStreamSynchronize(stream);
    } else if (r == 1) {
      if (auto s = comm.recv_typed(data, count, element, 0, 0); !s) return s.error_text();
      if (!same_bits(to_host(data, count), small(0))) return type + " send/recv";  // rank 0's gathered block
    }
    return {};
  }();
  cudaFree(data);
  cudaFree(out);
  return error;
}

TEST_F(NcclCommunicatorTest, TypedTransfersInBf16AndFp16) {
  run([&](int r, Communicator& comm, cudaStream_t stream) {
    if (auto e = typed_round(__nv_bfloat16{}, Element::bf16, r, comm, stream); !e.empty()) return fail(r, e);
    if (auto e = typed_round(__half{}, Element::f16, r, comm, stream); !e.empty()) return fail(r, e);
  });
}

// 1F1B's crossing on two stages: each rank sends before it receives, with 64 MiB messages that
// no NCCL buffer holds. Issued one after the other this hangs on the device; as one
// send_recv_group (ncclGroupStart/End) both progress. The hook brackets the send, then the
// receive, whose bracket encloses ncclGroupEnd.
TEST_F(NcclCommunicatorTest, GroupedCrossingTransfersComplete) {
  const std::size_t n = std::size_t{16} << 20;
  run([&](int r, Communicator& comm, cudaStream_t stream) {
    if (r > 1) return;
    const int peer = 1 - r;
    float* out = upload(values_of(r, n));
    float* in = upload(std::vector<float>(n, -1.0f));
    std::vector<std::pair<std::size_t, bool>> hooks;
    auto s = comm.send_recv_group({{out, n, Element::f32, peer, 0}}, {{in, n, Element::f32, peer, 0}},
                                  [&](std::size_t i, bool starting) { hooks.push_back({i, starting}); });
    if (!s) return fail(r, s.error_text());
    if (download(in, n, stream) != values_of(peer, n)) return fail(r, "received values");
    if (hooks != std::vector<std::pair<std::size_t, bool>>{{0, true}, {0, false}, {1, true}, {1, false}}) {
      return fail(r, "hook order");
    }
    cudaFree(out);
    cudaFree(in);
  });
}

// abort() from another thread (as MPI's failure hook does): every later call fails with the
// reason, and closing the aborted communicators frees nothing twice.
TEST_F(NcclCommunicatorTest, AbortFailsLaterCallsWithTheReason) {
  std::vector<int> devices;
  for (int d = 0; d < devices_; ++d) devices.push_back(d);
  auto world = NcclWorld::create(devices);
  ASSERT_TRUE(world.ok()) << world.error_text();
  std::vector<std::unique_ptr<Communicator>> comms(static_cast<std::size_t>(devices_));
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(devices_), nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < devices_; ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      cudaStreamCreate(&streams[static_cast<std::size_t>(r)]);
      auto comm = (*world)->world(r, streams[static_cast<std::size_t>(r)]);
      if (!comm) return fail(r, comm.error_text());
      comms[static_cast<std::size_t>(r)] = std::move(*comm);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(failures_.empty()) << failures_.front();
  std::thread([&] { (*world)->abort("rank 1 failed"); }).join();
  for (int r = 0; r < devices_; ++r) {
    cudaSetDevice(r);
    float* data = upload(values_of(r, 16));
    auto s = comms[static_cast<std::size_t>(r)]->all_reduce(data, 16);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error_text().find("aborted: rank 1 failed"), std::string::npos) << s.error_text();
    cudaFree(data);
    comms[static_cast<std::size_t>(r)].reset();
    cudaStreamDestroy(streams[static_cast<std::size_t>(r)]);
  }
}

}  // namespace
}  // namespace plansight::runtime::cuda
