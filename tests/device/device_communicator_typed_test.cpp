// Typed transfers of the device communicator (bf16, fp16 and fp32 through the typed calls): an
// all-reduce equals the fp32 sum of the same stored inputs in rank order, rounded once to the
// element type (round to nearest even), bit for bit on every rank; all-gather and send/recv move
// bytes exactly (odd counts, NaN payloads, signed zeros, subnormals); members that disagree on
// the element type fail, naming both types. Without a device every test prints why and skips.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "device_test_util.h"
#include "plansight/runtime/cuda/device_communicator.h"
#include "virtual_ranks.h"

namespace plansight::runtime::cuda {
namespace {

using device_test::download;
using device_test::narrow;
using device_test::Ranks;
using device_test::upload;
using device_test::widen;

template <class E>
constexpr Element element_of() {
  if constexpr (std::is_same_v<E, float>) {
    return Element::f32;
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return Element::bf16;
  } else {
    return Element::f16;
  }
}

// The first index where a and b differ in any bit, or -1 (bits, not values: -0 differs from +0).
template <class E>
long first_difference(const std::vector<E>& a, const std::vector<E>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(E)) != 0) return static_cast<long>(i);
  }
  return -1;
}

// What the all-reduce must give: per element, the stored inputs widened exactly to fp32, summed
// in rank order from 0, rounded once to E (the host's __float2bfloat16/__float2half round to
// nearest even, as the kernel's _rn conversions do).
template <class E>
std::vector<E> rank_order_sum(const std::vector<std::vector<E>>& inputs) {
  std::vector<E> out(inputs.front().size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    float sum = 0.0f;
    for (const auto& in : inputs) sum += widen(in[i]);
    out[i] = narrow<E>(sum);
  }
  return out;
}

// Half a unit in the last place of E at 1.0: in E, 1 + h + h is 1 + 2h when the fp32 sum is
// rounded once, but 1 when every addition rounds (1 + h is a tie that rounds to the even 1).
// IEEE 754-2008 binary16 has 10 fraction bits, bfloat16 7, binary32 23.
template <class E>
constexpr float half_ulp_at_one() {
  if constexpr (std::is_same_v<E, float>) {
    return 0x1p-24f;
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return 0x1p-8f;
  } else {
    return 0x1p-11f;
  }
}

template <class E>
class TypedAllReduce : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};
using Elements = ::testing::Types<__nv_bfloat16, __half, float>;
TYPED_TEST_SUITE(TypedAllReduce, Elements);

TYPED_TEST(TypedAllReduce, EqualsTheFp32SumRoundedOnceOnEveryRank) {
  using E = TypeParam;
  // 1: fewer elements than ranks (empty chunks); 7 and 10007: not multiples of 2, 3 or 4.
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{10007}}) {
    for (int p = 2; p <= 4; ++p) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(p) + " ranks");
      std::vector<std::vector<E>> inputs(static_cast<std::size_t>(p));
      for (int q = 0; q < p; ++q) {
        auto values = device_test::random_normal(n, 100u + static_cast<std::uint32_t>(q), 4.0f);
        values[0] = q == 0 ? 1.0f : half_ulp_at_one<E>();
        inputs[static_cast<std::size_t>(q)] = device_test::narrow_all<E>(values);
      }
      const std::vector<E> once = rank_order_sum(inputs);
      // The second round's inputs are the first round's result, the same on every rank.
      const std::vector<E> twice = rank_order_sum(std::vector<std::vector<E>>(static_cast<std::size_t>(p), once));
      if constexpr (!std::is_same_v<E, float>) {
        if (p == 3) {
          EXPECT_EQ(widen(once[0]), 1.0f + 2.0f * half_ulp_at_one<E>()) << "rounded once, not per addition";
        }
      }

      Ranks ranks(p);
      std::vector<std::vector<E>> got(static_cast<std::size_t>(p)), got_again(static_cast<std::size_t>(p));
      ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
        const auto mine = static_cast<std::size_t>(r);
        E* data = upload(inputs[mine], stream);
        if (data == nullptr) return ranks.fail(r, "cudaMalloc");
        if (auto s = comm.all_reduce_typed(data, n, element_of<E>()); !s) return ranks.fail(r, s.error_text());
        got[mine] = download(data, n, stream);
        // The buffer is reused at once: the phases must order it. fp32 takes the float call here,
        // which must give the same bits as the typed one.
        Status again = ok_status();
        if constexpr (std::is_same_v<E, float>) {
          again = comm.all_reduce(data, n);
        } else {
          again = comm.all_reduce_typed(data, n, element_of<E>());
        }
        if (!again) return ranks.fail(r, again.error_text());
        got_again[mine] = download(data, n, stream);
        cudaFree(data);
      });
      ASSERT_TRUE(ranks.failures().empty()) << ranks.failures().front();
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(first_difference(got[static_cast<std::size_t>(r)], once), -1) << "rank " << r;
        EXPECT_EQ(first_difference(got_again[static_cast<std::size_t>(r)], twice), -1) << "rank " << r << ", again";
      }
    }
  }
}

// Raw 16-bit patterns that a conversion would change: NaNs with payloads, -0, subnormals,
// infinities (fp16; NaNs in bf16), different on every rank. A byte copy keeps every bit.
std::vector<std::uint16_t> patterns(int rank, std::size_t n) {
  static constexpr std::uint16_t kSpecial[] = {0x7fc1, 0x8000, 0x0001, 0xfc00, 0x7c01, 0x3c00, 0xffff};
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<std::uint16_t>(kSpecial[i % 7] ^ (static_cast<unsigned>(rank) << 1) ^ ((i / 7) << 2));
  }
  return v;
}

class DeviceCommunicatorTypedTest : public ::testing::Test {
 protected:
  void SetUp() override { PLANSIGHT_SKIP_WITHOUT_DEVICE(); }
};

TEST_F(DeviceCommunicatorTypedTest, AllGatherMovesBytesExactly) {
  constexpr int kRanks = 3;
  const std::size_t count = 7;  // odd: blocks start at odd element offsets
  std::vector<std::uint16_t> expected;
  for (int q = 0; q < kRanks; ++q) {
    const auto theirs = patterns(q, count);
    expected.insert(expected.end(), theirs.begin(), theirs.end());
  }
  for (const Element element : {Element::bf16, Element::f16}) {
    SCOPED_TRACE(element_name(element));
    Ranks ranks(kRanks);
    ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
      std::uint16_t* in = upload(patterns(r, count), stream);
      std::uint16_t* out = upload(std::vector<std::uint16_t>(count * kRanks, 0), stream);
      if (in == nullptr || out == nullptr) return ranks.fail(r, "cudaMalloc");
      if (auto s = comm.all_gather_typed(in, out, count, element); !s) return ranks.fail(r, s.error_text());
      if (download(out, count * kRanks, stream) != expected) return ranks.fail(r, "all_gather bytes");
      // In place, as ZeRO gathers the compute weights: each rank's block is already in `out`.
      std::uint16_t* gathered = upload(std::vector<std::uint16_t>(count * kRanks, 0), stream);
      if (gathered == nullptr) return ranks.fail(r, "cudaMalloc");
      std::uint16_t* own = gathered + static_cast<std::size_t>(r) * count;
      cudaMemcpyAsync(own, in, count * sizeof(std::uint16_t), cudaMemcpyDeviceToDevice, stream);
      if (auto s = comm.all_gather_typed(own, gathered, count, element); !s) return ranks.fail(r, s.error_text());
      if (download(gathered, count * kRanks, stream) != expected) return ranks.fail(r, "in-place all_gather bytes");
      cudaFree(in);
      cudaFree(out);
      cudaFree(gathered);
    });
    EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
  }
}

TEST_F(DeviceCommunicatorTypedTest, SendRecvMoveBytesExactlyAndEagerly) {
  const std::size_t n = 7;
  Ranks ranks(2);
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    if (r == 0) {
      std::uint16_t* data = upload(patterns(0, n), stream);
      if (data == nullptr) return ranks.fail(r, "cudaMalloc");
      if (auto s = comm.send_typed(data, n, Element::bf16, 1, 1); !s) return ranks.fail(r, s.error_text());
      // Eager: the message is the data at the time of the send, whatever the buffer holds later.
      cudaMemsetAsync(data, 0x5a, n * sizeof(std::uint16_t), stream);
      if (auto s = comm.send_typed(data, n, Element::f16, 1, 2); !s) return ranks.fail(r, s.error_text());
      if (auto s = comm.send_typed(data, 0, Element::f16, 1, 3); !s) return ranks.fail(r, s.error_text());
      cudaStreamSynchronize(stream);
      cudaFree(data);
      return;
    }
    std::uint16_t* data = upload(std::vector<std::uint16_t>(n, 0), stream);
    if (data == nullptr) return ranks.fail(r, "cudaMalloc");
    // Tags match independently: tag 2 first, although it was sent second.
    if (auto s = comm.recv_typed(data, n, Element::f16, 0, 2); !s) return ranks.fail(r, s.error_text());
    if (download(data, n, stream) != std::vector<std::uint16_t>(n, 0x5a5a)) return ranks.fail(r, "tag 2 bytes");
    if (auto s = comm.recv_typed(data, n, Element::bf16, 0, 1); !s) return ranks.fail(r, s.error_text());
    if (download(data, n, stream) != patterns(0, n)) return ranks.fail(r, "tag 1 bytes");
    if (auto s = comm.recv_typed(data, 0, Element::f16, 0, 3); !s) return ranks.fail(r, s.error_text());
    cudaFree(data);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
}

bool names_both(const std::string& error, const char* a, const char* b) {
  return error.find(a) != std::string::npos && error.find(b) != std::string::npos;
}

TEST_F(DeviceCommunicatorTypedTest, MismatchedElementTypesFailNamingBoth) {
  Ranks ranks(2);
  std::vector<std::string> reduce_errors(2), gather_errors(2);
  std::string recv_error, recv_f32_error;
  ranks.run([&](int r, Communicator& comm, cudaStream_t stream) {
    const auto mine = static_cast<std::size_t>(r);
    std::uint16_t* data = upload(std::vector<std::uint16_t>(64, 0x3c00), stream);
    if (data == nullptr) return ranks.fail(r, "cudaMalloc");
    const auto reduced = comm.all_reduce_typed(data, 16, r == 0 ? Element::bf16 : Element::f16);
    reduce_errors[mine] = reduced.ok() ? "" : reduced.error_text();
    // The same 16 bytes as 4 floats on rank 0 and 8 bf16 values on rank 1: still a mismatch.
    const auto gathered = r == 0 ? comm.all_gather_typed(data, data + 16, 4, Element::f32)
                                 : comm.all_gather_typed(data, data + 16, 8, Element::bf16);
    gather_errors[mine] = gathered.ok() ? "" : gathered.error_text();
    if (r == 0) {
      if (auto s = comm.send_typed(data, 7, Element::bf16, 1, 0); !s) ranks.fail(r, s.error_text());
      if (auto s = comm.send_typed(data, 8, Element::bf16, 1, 0); !s) ranks.fail(r, s.error_text());
    } else {
      const auto received = comm.recv_typed(data, 7, Element::f16, 0, 0);
      recv_error = received.ok() ? "" : received.error_text();
      const auto as_floats = comm.recv(reinterpret_cast<float*>(data), 4, 0, 0);
      recv_f32_error = as_floats.ok() ? "" : as_floats.error_text();
    }
    cudaStreamSynchronize(stream);
    cudaFree(data);
  });
  EXPECT_TRUE(ranks.failures().empty()) << ranks.failures().front();
  for (const auto& e : reduce_errors) EXPECT_TRUE(names_both(e, "bf16", "fp16")) << e;
  for (const auto& e : gather_errors) EXPECT_TRUE(names_both(e, "4 floats", "8 bf16 elements")) << e;
  for (const auto& e : gather_errors) EXPECT_TRUE(names_both(e, "fp32", "bf16")) << e;
  EXPECT_TRUE(names_both(recv_error, "receive of 7 fp16 elements", "a send of 7 bf16 elements")) << recv_error;
  EXPECT_TRUE(names_both(recv_f32_error, "receive of 4 floats", "a send of 8 bf16 elements")) << recv_f32_error;
}

}  // namespace
}  // namespace plansight::runtime::cuda
