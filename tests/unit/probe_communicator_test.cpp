// The in-process communicator against serial sums: ring collectives for sizes the group does not
// divide (including fewer elements than ranks), sub-groups from split(), tagged point-to-point
// matching, abort() waking every waiter so that a run with a failing rank ends, the typed
// calls (fp32 through them equals the float calls, 16-bit elements are refused: CPU ranks move
// fp32 only) with the communicator's name, and the point-to-point group.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plansight/runtime/communicator.h"

namespace plansight::runtime {
namespace {

// Runs body(rank, world communicator) on n threads and joins them.
void run_ranks(InProcessWorld& world, const std::function<void(int, Communicator&)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world.size(); ++r) {
    threads.emplace_back([&, r] {
      auto comm = world.world(r);
      body(r, *comm);
    });
  }
  for (auto& t : threads) t.join();
}

// A value no two (rank, index) pairs share, small enough that fp32 sums are exact.
float value(int rank, std::size_t i) { return static_cast<float>(rank * 1000 + static_cast<int>(i % 997)); }

class Collectives : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

TEST_P(Collectives, MatchSerialSums) {
  const auto [p, n] = GetParam();
  InProcessWorld world(p);
  std::vector<std::vector<float>> reduced(p), scattered(p), gathered(p), broadcast(p);
  run_ranks(world, [&](int r, Communicator& c) {
    std::vector<float> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = value(r, i);
    ASSERT_TRUE(c.all_reduce(data.data(), n));
    reduced[r] = data;

    std::vector<float> in(n * p), out(n);
    for (std::size_t i = 0; i < n * p; ++i) in[i] = value(r, i);
    ASSERT_TRUE(c.reduce_scatter(in.data(), out.data(), n));
    scattered[r] = out;

    std::vector<float> all(n * p);
    ASSERT_TRUE(c.all_gather(data.data() + 0, all.data(), n)) ;
    gathered[r] = all;

    std::vector<float> b(n, r == p - 1 ? 7.5f : -1.f);
    ASSERT_TRUE(c.broadcast(b.data(), n, p - 1));
    broadcast[r] = b;
  });
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      float sum = 0;
      for (int q = 0; q < p; ++q) sum += value(q, i);
      ASSERT_EQ(reduced[r][i], sum) << "all_reduce rank " << r << " element " << i;
      float block_sum = 0;
      for (int q = 0; q < p; ++q) block_sum += value(q, static_cast<std::size_t>(r) * n + i);
      ASSERT_EQ(scattered[r][i], block_sum) << "reduce_scatter rank " << r << " element " << i;
      for (int q = 0; q < p; ++q) ASSERT_EQ(gathered[r][static_cast<std::size_t>(q) * n + i], reduced[q][i]);
      ASSERT_EQ(broadcast[r][i], 7.5f);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Collectives,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 7),
                                            ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{5},
                                                              std::size_t{64}, std::size_t{1001})));

TEST(Split, SubGroupsReduceOnlyTheirMembers) {
  // 6 ranks as tp=2 x dp=3 (TP innermost): tp groups {0,1},{2,3},{4,5}; dp groups {0,2,4},{1,3,5}.
  InProcessWorld world(6);
  std::vector<float> tp_sum(6), dp_sum(6);
  std::vector<int> tp_rank(6), dp_rank(6), dp_size(6);
  run_ranks(world, [&](int r, Communicator& c) {
    auto tp = split(c, r / 2, r % 2, "tp");
    auto dp = split(c, r % 2, -r, "dp");  // key reversed: dp rank order is descending world rank
    auto none = split(c, r == 3 ? 0 : -1, 0, "only3");
    ASSERT_TRUE(tp && dp && none);
    EXPECT_EQ((*none) != nullptr, r == 3);
    float x = static_cast<float>(r);
    ASSERT_TRUE((*tp)->all_reduce(&x, 1));
    tp_sum[r] = x;
    float y = static_cast<float>(r);
    ASSERT_TRUE((*dp)->all_reduce(&y, 1));
    dp_sum[r] = y;
    tp_rank[r] = (*tp)->rank();
    dp_rank[r] = (*dp)->rank();
    dp_size[r] = (*dp)->size();
    EXPECT_EQ((*dp)->name(), "dp");
  });
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(tp_sum[r], static_cast<float>((r / 2) * 4 + 1));
    EXPECT_EQ(dp_sum[r], r % 2 == 0 ? 6.f : 9.f);
    EXPECT_EQ(tp_rank[r], r % 2);
    EXPECT_EQ(dp_size[r], 3);
    EXPECT_EQ(dp_rank[r], 2 - r / 2);
  }
}

TEST(PointToPoint, MatchesByTagInSendOrder) {
  InProcessWorld world(2);
  std::vector<float> got;
  run_ranks(world, [&](int r, Communicator& c) {
    if (r == 0) {
      for (float v : {1.f, 2.f}) ASSERT_TRUE(c.send(&v, 1, 1, 5));
      float w = 9.f;
      ASSERT_TRUE(c.send(&w, 1, 1, 3));
    } else {
      float a = 0, b = 0, d = 0;
      ASSERT_TRUE(c.recv(&a, 1, 0, 3));  // tag 3 overtakes the earlier tag-5 sends
      ASSERT_TRUE(c.recv(&b, 1, 0, 5));
      ASSERT_TRUE(c.recv(&d, 1, 0, 5));
      got = {a, b, d};
    }
  });
  EXPECT_EQ(got, (std::vector<float>{9.f, 1.f, 2.f}));
}

TEST(PointToPoint, SizeMismatchAndBadPeerAreErrors) {
  InProcessWorld world(2);
  std::string error;
  run_ranks(world, [&](int r, Communicator& c) {
    float v[3] = {1, 2, 3};
    if (r == 0) {
      ASSERT_TRUE(c.send(v, 3, 1));
      EXPECT_FALSE(c.send(v, 1, 0));  // to itself
      EXPECT_FALSE(c.send(v, 1, 2));
    } else {
      auto st = c.recv(v, 2, 0);
      ASSERT_FALSE(st);
      error = st.error_text();
    }
  });
  EXPECT_NE(error.find("receive of 2 floats matched a send of 3"), std::string::npos) << error;
}

TEST(Abort, WakesEveryWaiterWithTheReason) {
  // Ranks 1..3 wait in a collective and a recv that rank 0 never joins; rank 0 fails and aborts.
  InProcessWorld world(4);
  std::vector<std::string> errors(4);
  run_ranks(world, [&](int r, Communicator& c) {
    if (r == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      world.abort("rank 0 failed: out of memory");
      return;
    }
    float x[8] = {};
    auto st = r == 3 ? c.recv(x, 8, 0, 1) : c.all_reduce(x, 8);
    if (!st) errors[r] = st.error_text();
    // Every later call fails at once rather than hanging.
    EXPECT_FALSE(c.all_reduce(x, 8));
    EXPECT_FALSE(split(c, 0, r, "late"));
  });
  for (int r = 1; r < 4; ++r) EXPECT_NE(errors[r].find("rank 0 failed: out of memory"), std::string::npos) << r;
}

TEST(Typed, Fp32CallsEqualTheFloatCalls) {
  // Values whose fp32 sums depend on the order of the additions, so equal bits mean the same order.
  constexpr int kRanks = 3;
  const std::size_t n = 1001;
  InProcessWorld world(kRanks);
  std::vector<std::vector<float>> plain(kRanks), typed(kRanks), gathered_plain(kRanks), gathered_typed(kRanks);
  std::vector<float> received_plain, received_typed;
  run_ranks(world, [&](int r, Communicator& c) {
    std::vector<float> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = std::sin(static_cast<float>(i * 7 + static_cast<std::size_t>(r))) * 1e3f;
    std::vector<float> a = data, b = data;
    ASSERT_TRUE(c.all_reduce(a.data(), n));
    ASSERT_TRUE(c.all_reduce_typed(b.data(), n, Element::f32));
    plain[r] = a;
    typed[r] = b;
    std::vector<float> all_a(n * kRanks), all_b(n * kRanks);
    ASSERT_TRUE(c.all_gather(data.data(), all_a.data(), n));
    ASSERT_TRUE(c.all_gather_typed(data.data(), all_b.data(), n, Element::f32));
    gathered_plain[r] = all_a;
    gathered_typed[r] = all_b;
    if (r == 0) {  // each kind of send, received by the other kind
      ASSERT_TRUE(c.send_typed(data.data(), n, Element::f32, 1, 4));
      ASSERT_TRUE(c.send(data.data(), n, 1, 4));
    } else if (r == 1) {
      received_plain.resize(n);
      received_typed.resize(n);
      ASSERT_TRUE(c.recv(received_plain.data(), n, 0, 4));
      ASSERT_TRUE(c.recv_typed(received_typed.data(), n, Element::f32, 0, 4));
    }
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(typed[r], plain[r]) << "all_reduce rank " << r;
    EXPECT_EQ(gathered_typed[r], gathered_plain[r]) << "all_gather rank " << r;
  }
  ASSERT_EQ(received_plain.size(), n);
  EXPECT_EQ(received_typed, received_plain);
  EXPECT_EQ(received_plain, std::vector<float>(gathered_plain[1].begin(), gathered_plain[1].begin() + n));
}

TEST(Typed, SixteenBitElementsAreRefusedNamingTheCommunicator) {
  // Refused before any rank waits for another: no call below needs its peer to take part.
  InProcessWorld world(2);
  std::vector<std::string> errors;
  std::mutex mutex;
  run_ranks(world, [&](int r, Communicator& c) {
    auto tp = split(c, 0, r, "tp");
    ASSERT_TRUE(tp && *tp);
    std::uint16_t x[8] = {};
    for (const Element e : {Element::bf16, Element::f16}) {
      for (Communicator* comm : {&c, tp->get()}) {
        const Status calls[] = {comm->all_reduce_typed(x, 4, e), comm->all_gather_typed(x, x + 4, 2, e),
                                comm->send_typed(x, 4, e, 1 - r, 0), comm->recv_typed(x, 4, e, 1 - r, 0)};
        for (const Status& s : calls) {
          ASSERT_FALSE(s);
          std::lock_guard lock(mutex);
          errors.push_back(s.error_text());
        }
      }
    }
  });
  ASSERT_EQ(errors.size(), 2u * 2u * 2u * 4u);
  int world_named = 0, tp_named = 0, bf16 = 0, fp16 = 0;
  for (const auto& e : errors) {
    world_named += e.find("communicator.world: moves fp32 only") != std::string::npos;
    tp_named += e.find("communicator.tp: moves fp32 only") != std::string::npos;
    bf16 += e.find("a bf16 transfer needs a GPU communicator") != std::string::npos;
    fp16 += e.find("a fp16 transfer needs a GPU communicator") != std::string::npos;
  }
  EXPECT_EQ(world_named, 16);
  EXPECT_EQ(tp_named, 16);
  EXPECT_EQ(bf16, 16);
  EXPECT_EQ(fp16, 16);
}

// Communicator::send_recv_group's default (the CPU communicators'; NCCL overrides it with one
// ncclGroupStart/End): the sends in order and then the receives, the hook bracketing each
// transfer one at a time in that order, a crossing exchange (both ranks send before they
// receive, as 1F1B's neighbours do) with the data where it belongs, and a failure stopping the
// group before the receive, which then never waits.
std::vector<float> filled(float base, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

TEST(SendRecvGroup, CrossingExchangeDeliversEveryMessageInOrder) {
  InProcessWorld world(2);
  const std::size_t n = 1000;
  std::vector<std::vector<std::pair<std::size_t, bool>>> hooks(2);
  run_ranks(world, [&](int r, Communicator& c) {
    const int peer = 1 - r;
    const float mine = static_cast<float>(r) * 10000.0f, theirs = static_cast<float>(peer) * 10000.0f;
    // Both ranks send two messages with one tag before they receive: the group's receive gets
    // the peer's first, a later receive its second.
    const auto first = filled(mine, n), second = filled(mine + 5000.0f, n);
    std::vector<float> a(n, -1.0f), b(n, -1.0f);
    const std::vector<PeerSend> sends = {{first.data(), n, Element::f32, peer, 3}, {second.data(), n, Element::f32, peer, 3}};
    const std::vector<PeerRecv> recvs = {{a.data(), n, Element::f32, peer, 3}};
    ASSERT_TRUE(c.send_recv_group(sends, recvs, [&](std::size_t i, bool starting) { hooks[r].push_back({i, starting}); }));
    ASSERT_TRUE(c.recv(b.data(), n, peer, 3));
    EXPECT_EQ(a, filled(theirs, n));
    EXPECT_EQ(b, filled(theirs + 5000.0f, n));
  });
  const std::vector<std::pair<std::size_t, bool>> order = {{0, true}, {0, false}, {1, true}, {1, false}, {2, true}, {2, false}};
  EXPECT_EQ(hooks[0], order);
  EXPECT_EQ(hooks[1], order);
}

TEST(SendRecvGroup, OnlySendsOrOnlyAReceive) {
  InProcessWorld world(2);
  const std::size_t n = 64;
  std::vector<float> got(n, 0.0f);
  run_ranks(world, [&](int r, Communicator& c) {
    if (r == 0) {
      const auto data = filled(1.0f, n);
      ASSERT_TRUE(c.send_recv_group({{data.data(), n, Element::f32, 1, 0}}, {}));
    } else {
      ASSERT_TRUE(c.send_recv_group({}, {{got.data(), n, Element::f32, 0, 0}}));
    }
  });
  EXPECT_EQ(got, filled(1.0f, n));
}

TEST(SendRecvGroup, AFailedSendStopsTheGroupBeforeTheReceive) {
  InProcessWorld world(2);
  auto comm = world.world(0);
  const std::vector<float> data(8, 1.0f);
  std::vector<float> in(8);
  std::vector<std::pair<std::size_t, bool>> hooks;
  // Peer 5 does not exist in a group of 2: the error names it, and the receive (which would wait
  // forever: rank 1 never sends) is not posted.
  auto s = comm->send_recv_group({{data.data(), 8, Element::f32, 5, 0}}, {{in.data(), 8, Element::f32, 1, 0}},
                                 [&](std::size_t i, bool starting) { hooks.push_back({i, starting}); });
  ASSERT_FALSE(s);
  EXPECT_NE(s.error_text().find("peer 5"), std::string::npos) << s.error_text();
  EXPECT_EQ(hooks, (std::vector<std::pair<std::size_t, bool>>{{0, true}, {0, false}}));
}

TEST(SendRecvGroup, SixteenBitTransfersNeedAGpuCommunicator) {
  InProcessWorld world(2);
  auto comm = world.world(0);
  const std::vector<std::uint16_t> data(8, 0);
  auto s = comm->send_recv_group({{data.data(), 8, Element::bf16, 1, 0}}, {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error_text().find("bf16"), std::string::npos) << s.error_text();
}

}  // namespace
}  // namespace plansight::runtime
