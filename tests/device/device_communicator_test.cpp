// The device communicator of virtual ranks on one GPU: each rank is a thread with its own stream
// and device buffers; collectives and point-to-point results checked exactly (small integers sum
// exactly in fp32), sub-groups by split_device, mismatched counts, abort. Without a device every
// test prints why and skips.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "device_test_util.h"
#include "plansight/runtime/cuda/device_communicator.h"
#include "plansight/runtime/cuda/split_any.h"
#include "virtual_ranks.h"

namespace plansight::runtime::cuda {
namespace {

using device_test::download;
using device_test::Ranks;
using device_test::upload;

std::vector<float> values_of(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((rank + 1) * 1000 + static_cast<int>(i % 997));
  return v;
}

class DeviceCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

TEST_F(DeviceCommunicatorTest, AllReduceSumsEveryRanksValues) {
  constexpr int kRanks = 4;
  const std::size_t n = 100003;  // not a multiple of the group size: uneven chunks
  // The sum over ranks, once (per element it would rebuild every rank's values: minutes).
  std::vector<float> sum(n, 0.0f);
  for (int q = 0; q < kRanks; ++q) {
    const auto theirs = values_of(q, n);
    for (std::size_t i = 0; i < n; ++i) sum[i] += theirs[i];
  }
  Ranks ranks(kRanks);
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    float* data = upload(values_of(r, n), stream);
    if (data == nullptr) return ranks.fail(r, "cudaMalloc");
    for (int repeat = 0; repeat < 3; ++repeat) {  // the buffer is reused: phases must not race
      if (auto s = comm.all_reduce(data, n); !s) return ranks.fail(r, s.error_text());
      const auto got = download(data, n, stream);
      for (std::size_t i = 0; i < n; ++i) {
        float expected = sum[i];
        for (int k = 0; k < repeat; ++k) expected *= kRanks;
        if (got[i] != expected) return ranks.fail(r, "element " + std::to_string(i) + " repeat " + std::to_string(repeat));
      }
    }
    cudaFree(data);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
}

TEST_F(DeviceCommunicatorTest, ReduceScatterAllGatherAndBroadcast) {
  constexpr int kRanks = 3;
  const std::size_t count = 1000;
  Ranks ranks(kRanks);
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    float* in = upload(values_of(r, count * kRanks), stream);
    float* out = upload(std::vector<float>(count * kRanks, 0.0f), stream);
    if (in == nullptr || out == nullptr) return ranks.fail(r, "cudaMalloc");
    if (auto s = comm.reduce_scatter(in, out, count); !s) return ranks.fail(r, s.error_text());
    auto got = download(out, count, stream);
    std::vector<float> expected(count, 0.0f);
    for (int q = 0; q < kRanks; ++q) {
      const auto theirs = values_of(q, count * kRanks);
      for (std::size_t i = 0; i < count; ++i) expected[i] += theirs[static_cast<std::size_t>(r) * count + i];
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (got[i] != expected[i]) return ranks.fail(r, "reduce_scatter element " + std::to_string(i));
    }
    if (auto s = comm.all_gather(in, out, count); !s) return ranks.fail(r, s.error_text());
    got = download(out, count * kRanks, stream);
    for (int q = 0; q < kRanks; ++q) {
      const auto theirs = values_of(q, count * kRanks);
      for (std::size_t i = 0; i < count; ++i) {
        if (got[static_cast<std::size_t>(q) * count + i] != theirs[i]) return ranks.fail(r, "all_gather block " + std::to_string(q));
      }
    }
    if (auto s = comm.broadcast(in, count, 2); !s) return ranks.fail(r, s.error_text());
    got = download(in, count, stream);
    const auto root = values_of(2, count * kRanks);
    for (std::size_t i = 0; i < count; ++i) {
      if (got[i] != root[i]) return ranks.fail(r, "broadcast element " + std::to_string(i));
    }
    cudaFree(in);
    cudaFree(out);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
}

TEST_F(DeviceCommunicatorTest, SendsAreEagerAndMatchedInOrderPerTag) {
  Ranks ranks(2);
  const std::size_t n = 4096;
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    if (r == 0) {
      for (int k = 0; k < 3; ++k) {  // three sends before any recv is posted
        float* data = upload(values_of(k, n), stream);
        if (auto s = comm.send(data, n, 1, 5); !s) return ranks.fail(r, s.error_text());
        cudaStreamSynchronize(stream);
        cudaFree(data);
      }
      return;
    }
    float* data = upload(std::vector<float>(n, 0.0f), stream);
    for (int k = 0; k < 3; ++k) {
      if (auto s = comm.recv(data, n, 0, 5); !s) return ranks.fail(r, s.error_text());
      if (download(data, n, stream) != values_of(k, n)) return ranks.fail(r, "message " + std::to_string(k));
    }
    const auto wrong_peer = comm.recv(data, n, 1, 0);
    if (wrong_peer.ok()) ranks.fail(r, "recv from itself accepted");
    cudaFree(data);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
}

TEST_F(DeviceCommunicatorTest, SplitMakesIndependentSubGroups) {
  constexpr int kRanks = 4;
  const std::size_t n = 777;
  Ranks ranks(kRanks);
  ranks.run([&](int r, Communicator& world, cudaStream_t stream) {
    // Pairs {0, 2} and {1, 3}, ordered by key = -rank (so rank 2 is rank 0 of its pair).
    auto pair = split_device(world, r % 2, -r, "dp");
    if (!pair || !*pair) return ranks.fail(r, pair ? "null communicator" : pair.error_text());
    Communicator& dp = **pair;
    if (dp.size() != 2 || dp.rank() != (r < 2 ? 1 : 0) || dp.name() != "dp") return ranks.fail(r, "group shape");
    if (stream_of(dp) != stream) return ranks.fail(r, "the split inherits the stream");
    float* data = upload(values_of(r, n), stream);
    if (auto s = dp.all_reduce(data, n); !s) return ranks.fail(r, s.error_text());
    const auto got = download(data, n, stream);
    const int partner = (r + 2) % kRanks;
    const auto mine = values_of(r, n), theirs = values_of(partner, n);
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != mine[i] + theirs[i]) return ranks.fail(r, "pair sum");
    }
    auto through_any = split_any(world, 0, r, "all");
    if (!through_any || !*through_any || !is_device_communicator(**through_any)) return ranks.fail(r, "split_any");
    auto none = split_device(world, r == 0 ? -1 : 0, 0, "rest");
    if (!none) return ranks.fail(r, none.error_text());
    if ((r == 0) != (*none == nullptr)) return ranks.fail(r, "a negative colour gets no communicator");
    cudaFree(data);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
}

TEST_F(DeviceCommunicatorTest, MismatchedCountsFailOnEveryRank) {
  Ranks ranks(2);
  std::vector<std::string> errors(2);
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    float* data = upload(std::vector<float>(200, 1.0f), stream);
    const auto s = comm.all_reduce(data, r == 0 ? 100 : 200);
    errors[static_cast<std::size_t>(r)] = s.ok() ? "" : s.error_text();
    cudaStreamSynchronize(stream);
    cudaFree(data);
  });
  for (const auto& e : errors) EXPECT_NE(e.find("passed 100 floats"), std::string::npos) << e;
}

// An all-gather (two phases) met by an all-reduce (three) would pair their phases wrongly: both
// ranks get an error naming the other's collective instead.
TEST_F(DeviceCommunicatorTest, MismatchedCollectivesFailOnEveryRank) {
  Ranks ranks(2);
  std::vector<std::string> errors(2);
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    float* data = upload(std::vector<float>(200, 1.0f), stream);
    const auto s = r == 0 ? comm.all_reduce(data, 100) : comm.all_gather(data, data + 100, 50);
    errors[static_cast<std::size_t>(r)] = s.ok() ? "" : s.error_text();
    cudaStreamSynchronize(stream);
    cudaFree(data);
  });
  EXPECT_NE(errors[0].find("rank 1 called all_gather"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("rank 0 called all_reduce"), std::string::npos) << errors[1];
}

TEST_F(DeviceCommunicatorTest, AbortReleasesAWaitingRank) {
  Ranks ranks(2);
  std::string error;
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    if (r == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ranks.world().abort("rank 1 failed");
      return;
    }
    float* data = upload(std::vector<float>(10, 1.0f), stream);
    const auto s = comm.all_reduce(data, 10);
    error = s.ok() ? "" : s.error_text();
    cudaStreamSynchronize(stream);
    cudaFree(data);
  });
  EXPECT_NE(error.find("aborted: rank 1 failed"), std::string::npos) << error;
}

}  // namespace
}  // namespace plansight::runtime::cuda
