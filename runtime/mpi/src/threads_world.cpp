// ThreadsWorld (see threads_world.h).
#include "plansight/runtime/mpi/threads_world.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include "mpi_communicator.h"

namespace plansight::runtime::mpi {

// One split() of the local threads: their (colour, key) by thread index, and what the thread
// that completed the meeting worked out for each of them.
struct ThreadsWorld::Call {
  std::vector<std::pair<int, int>> colour_key;
  int arrived = 0, left = 0;
  bool done = false;
  std::string error;                  // for every thread
  std::vector<bool> local;            // by thread: an in-process group
  std::vector<MPI_Comm> comms;        // by thread: its MPI group (MPI_COMM_NULL: none)
};

namespace {

// The world communicator of a thread: its local world (the process's threads) and, on thread
// 0, the communicator between the processes' threads 0.
class WorldCommunicator final : public Communicator {
 public:
  WorldCommunicator(std::unique_ptr<Communicator> local, std::unique_ptr<Communicator> leaders, int rank, int size)
      : local_(std::move(local)), leaders_(std::move(leaders)), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  Communicator& local() { return *local_; }
  std::uint64_t next_split() { return splits_++; }

  Status all_reduce(float* data, std::size_t count) override {
    if (auto s = local_->all_reduce(data, count); !s) return s;
    if (leaders_) {
      if (auto s = leaders_->all_reduce(data, count); !s) return s;
    }
    return local_->broadcast(data, count, 0);
  }
  Status reduce_scatter(const float*, float*, std::size_t) override { return unsupported("reduce-scatter"); }
  Status all_gather(const float*, float*, std::size_t) override { return unsupported("all-gather"); }
  Status broadcast(float*, std::size_t, int) override { return unsupported("broadcast"); }
  Status send(const float*, std::size_t, int, int) override { return unsupported("send"); }
  Status recv(float*, std::size_t, int, int) override { return unsupported("receive"); }

 private:
  Status unsupported(const char* what) const {
    return make_error("communicator.world", std::string(what) + " over the whole world of threads in processes; "
                                            "only all-reduce (and splits into groups) are provided");
  }
  std::unique_ptr<Communicator> local_, leaders_;
  int rank_, size_;
  std::string name_ = "world";
  std::uint64_t splits_ = 0;
};

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

}  // namespace

ThreadsWorld::ThreadsWorld(MpiWorld& mpi, int threads_per_process)
    : mpi_(mpi), k_(std::max(threads_per_process, 1)), local_(k_) {
  // A failure in another process (or here) also ends the threads' in-process waits.
  mpi_.on_failure([this](const std::string& reason) { local_.abort(reason); });
}

ThreadsWorld::~ThreadsWorld() { mpi_.on_failure({}); }

std::vector<int> ThreadsWorld::local_ranks() const {
  std::vector<int> ranks;
  for (int t = 0; t < k_; ++t) ranks.push_back(mpi_.rank() * k_ + t);
  return ranks;
}

void ThreadsWorld::abort(const std::string& reason) {
  mpi_.abort(reason);  // the failure hook aborts the local world too
  local_.abort(reason);
}

Result<std::unique_ptr<Communicator>> ThreadsWorld::world(int world_rank) {
  const int t = world_rank - mpi_.rank() * k_;
  if (t < 0 || t >= k_) {
    return make_error("communicator", "world rank " + std::to_string(world_rank) + " is not one of this process's (" +
                                          ranks_text(local_ranks()) + ")");
  }
  std::unique_ptr<Communicator> leaders;
  if (t == 0) {
    auto m = mpi_.world("world-leaders");
    if (!m) return m.errors();
    leaders = std::move(*m);
  }
  return std::unique_ptr<Communicator>(
      std::make_unique<WorldCommunicator>(local_.world(t), std::move(leaders), world_rank, mpi_.size() * k_));
}

Result<std::unique_ptr<Communicator>> ThreadsWorld::split(Communicator& parent, int colour, int key, const std::string& name) {
  auto* world = dynamic_cast<WorldCommunicator*>(&parent);
  if (!world) return make_error("communicator." + name, "split of \"" + parent.name() + "\": only the world of threads in processes splits");
  const int t = world->rank() - mpi_.rank() * k_;
  const std::uint64_t sequence = world->next_split();
  std::shared_ptr<Call> call;
  {
    std::unique_lock lock(mutex_);
    auto& slot = calls_[sequence];
    if (!slot) {
      slot = std::make_shared<Call>();
      slot->colour_key.assign(static_cast<std::size_t>(k_), {-1, 0});
    }
    call = slot;
    call->colour_key[static_cast<std::size_t>(t)] = {colour, key};
    if (++call->arrived < k_) {
      // Woken by the thread that completes the meeting; a failure elsewhere (which notifies
      // nobody here) is seen within 10 ms.
      while (!call->done && !mpi_.aborted()) changed_.wait_for(lock, std::chrono::milliseconds(10));
      if (!call->done) return mpi_.abort_status().errors();
    }
  }
  if (!call->done) {
    // The last thread to arrive meets the other processes for all of this process's threads.
    std::string mine;
    for (const auto& [c, k] : call->colour_key) mine += std::to_string(c) + " " + std::to_string(k) + " ";
    auto gathered = mpi_.gather_text(mine, 0);
    std::string all;
    if (gathered) for (const auto& g : *gathered) all += g;
    Status status = gathered ? mpi_.broadcast_text(all) : Status(gathered.errors());
    std::vector<std::pair<int, int>> table;  // by world rank
    std::istringstream in(all);
    for (int c, k; in >> c >> k;) table.emplace_back(c, k);
    call->local.assign(static_cast<std::size_t>(k_), false);
    call->comms.assign(static_cast<std::size_t>(k_), MPI_COMM_NULL);
    if (!status) call->error = status.error_text();
    const int world_size = mpi_.size() * k_;
    if (call->error.empty() && static_cast<int>(table.size()) != world_size) call->error = "the processes' split tables disagree";
    // Each thread's group: this process's alone, or one member in each of several processes at one
    // thread index; anything else cannot be made from in-process and MPI groups.
    std::vector<bool> cross(static_cast<std::size_t>(k_), false);
    for (int i = 0; i < k_ && call->error.empty(); ++i) {
      const int c = call->colour_key[static_cast<std::size_t>(i)].first;
      if (c < 0) continue;
      std::vector<int> members;
      for (int r = 0; r < world_size; ++r) if (table[static_cast<std::size_t>(r)].first == c) members.push_back(r);
      std::set<int> processes, indexes;
      for (int r : members) processes.insert(r / k_), indexes.insert(r % k_);
      if (processes.size() == 1) {
        call->local[static_cast<std::size_t>(i)] = true;
      } else if (processes.size() == members.size() && indexes.size() == 1) {
        cross[static_cast<std::size_t>(i)] = true;
      } else {
        call->error = "group \"" + name + "\" of ranks " + ranks_text(members) + " spans " +
                      std::to_string(processes.size()) + " processes with " + std::to_string(k_) +
                      " rank threads each, some of them together: with several ranks per process they must divide "
                      "the tensor-parallel size (or run one rank per process)";
      }
    }
    // One MPI split per thread index, in index order on every process (errors are the same everywhere).
    for (int i = 0; i < k_ && call->error.empty(); ++i) {
      const auto [c, k] = call->colour_key[static_cast<std::size_t>(i)];
      MPI_Comm comm = MPI_COMM_NULL;
      if (MPI_Comm_split(MPI_COMM_WORLD, cross[static_cast<std::size_t>(i)] ? c : MPI_UNDEFINED, k, &comm) != MPI_SUCCESS) {
        call->error = "MPI_Comm_split of \"" + name + "\" failed";
      }
      call->comms[static_cast<std::size_t>(i)] = comm;
    }
    std::lock_guard lock(mutex_);
    call->done = true;
    changed_.notify_all();
  }
  // Every local thread takes part in the in-process split (colour -1 unless its group is local).
  const bool local = call->error.empty() && call->local[static_cast<std::size_t>(t)];
  auto in_process = runtime::split(world->local(), local ? colour : -1, key, name);
  MPI_Comm comm = call->error.empty() ? call->comms[static_cast<std::size_t>(t)] : MPI_COMM_NULL;
  {
    std::lock_guard lock(mutex_);
    if (++call->left == k_) calls_.erase(sequence);
  }
  if (!call->error.empty()) return make_error("communicator." + name, call->error);
  if (!in_process) return in_process.errors();
  if (local) return std::move(*in_process);
  if (comm == MPI_COMM_NULL) return std::unique_ptr<Communicator>();
  return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(mpi_, comm, name));
}

}  // namespace plansight::runtime::mpi
