// GradSync: a rank's data-parallel gradient thread. The backward hands it one bucket per
// parameter unit (a layer, the embeddings, the head) as soon as that unit's gradients are final
// (ZeRO-0/1: after the last micro-batch; ZeRO-2/3: after every micro-batch, Rajbhandari et al.
// 2020 Sec. 5.2), so the reduction overlaps the rest of the backward as in PyTorch DDP (Li et al.
// 2020, Sec. 3.2.3) and Megatron's overlap_grad_reduce. It uses its own "dp-grad" communicator.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "plansight/runtime/communicator.h"
#include "rank_context.h"

namespace plansight::probe {

class GradSync {
 public:
  // overlap = false runs every task on the submitting thread at once (no overlap).
  // `started` runs first on the gradient thread (RunDevice::thread_started); when it fails, the
  // thread runs no task and drain() throws its error.
  GradSync(RankContext& ctx, runtime::Communicator& comm, bool overlap, std::function<runtime::Status()> started = {});
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  using Task = std::function<runtime::Status(runtime::Communicator&)>;
  // Runs `task` on the gradient thread, recorded as a collective span of `bytes`.
  void submit(const char* name, int stage, double bytes, Task task);
  // Waits until every submitted task ran; throws RankFailure with the first failure.
  void drain();
  // Waits until at most `pending` submitted tasks are queued or running (double buffering: a
  // backward about to fill a new gradient bucket waits for the one before last to be reduced).
  void wait_until_pending_at_most(std::size_t pending);

 private:
  struct Item {
    const char* name;
    int stage;
    double bytes;
    Task task;
  };
  void run(Item& item);
  void loop();

  RankContext& ctx_;
  runtime::Communicator& comm_;
  bool overlap_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  bool not_ready_ = false;  // `started` failed
  std::string error_;
  std::thread thread_;
};

}  // namespace plansight::probe
