// GradSync's start hook (RunDevice::thread_started, where a GPU makes the rank's device current
// on the gradient thread): when it fails, the thread runs no task, since each would launch on
// another device, and the rank's next drain() throws the hook's error; when it succeeds, tasks
// run on that thread.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "backend.h"
#include "grad_sync.h"
#include "probe_config.h"
#include "probe_test_util.h"
#include "rank_context.h"

namespace plansight::probe {
namespace {

struct Fixture {
  Fixture() : config(*make_config(testing::matrix_request())), world(1), comm(world.world(0)),
              ctx(config, 0, nullptr, make_cpu_backend()) {}
  ProbeConfig config;
  runtime::InProcessWorld world;
  std::unique_ptr<runtime::Communicator> comm;
  RankContext ctx;
};

TEST(GradSync, AThreadWhoseDeviceCannotBeSelectedRunsNothingAndReportsWhy) {
  Fixture f;
  std::atomic<int> ran{0};
  GradSync sync(f.ctx, *f.comm, true, [] {
    return runtime::Status(make_error("device", "cuda: cudaSetDevice(3) on the gradient thread of rank 0: invalid device"));
  });
  sync.submit("dp.all_reduce", 0, 4.0, [&](runtime::Communicator&) {
    ++ran;
    return runtime::ok_status();
  });
  try {
    sync.drain();
    FAIL() << "drain() returned";
  } catch (const RankFailure& e) {
    EXPECT_NE(std::string(e.what()).find("gradient thread: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice(3)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ran.load(), 0);
}

TEST(GradSync, TasksRunOnTheThreadTheHookPrepared) {
  Fixture f;
  std::thread::id prepared, ran_on;
  GradSync sync(f.ctx, *f.comm, true, [&] {
    prepared = std::this_thread::get_id();
    return runtime::ok_status();
  });
  sync.submit("dp.all_reduce", 0, 4.0, [&](runtime::Communicator&) {
    ran_on = std::this_thread::get_id();
    return runtime::ok_status();
  });
  sync.drain();
  EXPECT_EQ(ran_on, prepared);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

}  // namespace
}  // namespace plansight::probe
