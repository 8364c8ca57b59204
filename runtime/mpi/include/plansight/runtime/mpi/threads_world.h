// ThreadsWorld: a world of P launched processes with k rank threads each (world rank
// p * k + t is thread t of process p), keeping the in-process communicator for the threads
// inside a process. Each group a split() makes must be one of two kinds:
//   - all its members in this process: an in-process group (runtime::split among the threads);
//   - each member in a different process, all at the same thread index: an MPI group (one
//     MPI_Comm_split per thread index, in index order, so every process makes them alike).
// With Megatron's rank order (tensor fastest, then data, then pipeline) and k dividing TP, the
// TP groups are of the first kind and the DP, PP and embedding groups of the second; a layout
// whose groups are neither is refused naming the group and its ranks. The world itself is
// both: its all-reduce (the step's closing [loss, stop] exchange) sums over the threads, then
// over the processes between the threads of index 0, then hands the sum back to the threads.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plansight/runtime/communicator.h"
#include "plansight/runtime/mpi/mpi_world.h"

namespace plansight::runtime::mpi {

class ThreadsWorld {
 public:
  ThreadsWorld(MpiWorld& mpi, int threads_per_process);
  ~ThreadsWorld();
  ThreadsWorld(const ThreadsWorld&) = delete;
  ThreadsWorld& operator=(const ThreadsWorld&) = delete;

  int threads_per_process() const { return k_; }
  // The world ranks of this process's threads.
  std::vector<int> local_ranks() const;

  // The world communicator of `world_rank` (one of this process's); every local thread calls it
  // together.
  Result<std::unique_ptr<Communicator>> world(int world_rank);
  // MPI_Comm_split of the world communicator (every rank of every process calls it together; a
  // negative colour gets null). Fails, on every rank, for a group that is neither kind above.
  Result<std::unique_ptr<Communicator>> split(Communicator& parent, int colour, int key, const std::string& name);

  // Fails every pending and later call, here and (through the MPI world) in every process.
  void abort(const std::string& reason);

  struct Call;  // one split() of the local threads

 private:
  MpiWorld& mpi_;
  int k_;
  InProcessWorld local_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::uint64_t, std::shared_ptr<Call>> calls_;
};

}  // namespace plansight::runtime::mpi
