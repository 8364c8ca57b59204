// Communicator::send_recv_group's default (the CPU communicators'; NCCL overrides it with one
// ncclGroupStart/End): the sends in order and then the receives, the hook bracketing each
// transfer one at a time in that order, a crossing exchange (both ranks send before they
// receive, as 1F1B's neighbours do) with the data where it belongs, and a failure stopping the
// group before the receive, which then never waits.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plansight/runtime/communicator.h"

namespace plansight::runtime {
namespace {

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
