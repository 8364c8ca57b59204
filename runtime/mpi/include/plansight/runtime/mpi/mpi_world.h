// MpiWorld: the probe's ranks as processes started by mpirun or srun, with MPI (Open MPI on the
// CPU) as the communication library. It owns MPI's lifetime in the process (MPI_Init_thread
// with MPI_THREAD_MULTIPLE, since a rank's compute thread and its gradient thread communicate
// at once), makes the world and its MPI_Comm_split sub-groups as runtime::Communicators, and
// turns a peer's failure into an error instead of a hang:
// - every wait is a test loop (MPI_Test) that also checks for failure notices from the other
//   processes and a wait limit, sleeping between tests so waiting ranks leave the cores to the
//   ranks that compute;
// - abort() notifies every other process with the reason, so their pending and later calls fail
//   within one test interval, naming the rank that failed;
// - a process that dies is handled by the launcher (mpirun/srun end the whole job).
// After a failure the job ends with abort_job() (MPI_Abort): requests of collectives a failed
// peer never joined cannot be completed, so MPI_Finalize would not return.
#pragma once

#include <atomic>
#include <condition_variable>
#include <thread>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "plansight/runtime/communicator.h"

namespace plansight::runtime::mpi {

struct ProcessInfo {
  int rank = 0;
  std::string host;  // MPI_Get_processor_name
  long long pid = 0;
};

// Offset of a process's steady clock from rank 0's, by Cristian's method (Cristian 1989,
// "Probabilistic clock synchronization"): rank 0 sends, the process answers with its clock,
// offset = its clock - midpoint of rank 0's send and receive; the exchange with the shortest
// round trip of several is kept, and half its round trip bounds the error.
struct ClockOffset {
  std::int64_t offset_ns = 0;  // subtract from the process's clock to get rank 0's
  std::int64_t round_trip_ns = 0;
};

struct MpiSettings {
  // The longest a single wait may last before the run fails (a peer that hangs without dying).
  double wait_limit_s = 600;
};

class MpiWorld {
 public:
  // Initialises MPI (once per process). Fails when MPI cannot give MPI_THREAD_MULTIPLE.
  static Result<std::unique_ptr<MpiWorld>> initialize(int& argc, char**& argv, const MpiSettings& settings = {});
  ~MpiWorld();  // MPI_Finalize, unless the job was aborted
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // "Open MPI v4.1.4" (the first line of MPI_Get_library_version, trimmed).
  const std::string& library() const { return library_; }
  const std::vector<ProcessInfo>& processes() const { return processes_; }  // by rank, every process has them

  // A communicator over every process (a duplicate of MPI_COMM_WORLD, so its messages never meet
  // another's). Every process calls it together.
  Result<std::unique_ptr<Communicator>> world(const std::string& name = "world");
  // MPI_Comm_split of a communicator made here: every member of `parent` calls it together; a
  // negative colour takes no part and gets null.
  Result<std::unique_ptr<Communicator>> split(Communicator& parent, int colour, int key, const std::string& name);

  // Fails every pending and later call in this process with `reason` and tells every other
  // process, whose calls then fail with it too. The first reason wins.
  void abort(const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // Called once, with the reason, when the run fails here or in another process: for
  // communication that does not go through this world's test loop (NCCL between GPUs), which
  // must be aborted to return. Set before the run; from then on a background thread also looks
  // for other processes' notices every millisecond.
  void on_failure(std::function<void(const std::string&)> hook);
  // The reason the run failed, as the first process that failed stated it ("rank 3: ...").
  std::string failure() const;

  // Collectives of the whole world for the run's bookkeeping (rendezvous, request, results).
  Status barrier();
  // Every process ends with root's text.
  Status broadcast_text(std::string& text, int root = 0);
  // Root receives every process's text, by rank; the others get an empty vector.
  Result<std::vector<std::string>> gather_text(const std::string& mine, int root = 0);
  // Root gets one offset per process (its own is 0); the others get an empty vector.
  Result<std::vector<ClockOffset>> measure_clock_offsets(int exchanges = 16);

  // Ends every process of the job with `code` (MPI_Abort). For failed runs only.
  [[noreturn]] void abort_job(int code);

  // The test loop every wait of this world's communicators goes through: done, or the run's
  // failure, or the wait limit (which aborts the run, naming `what`).
  Status wait(MPI_Request& request, const std::string& what);
  Status abort_status() const;
  // Communicators count their sends in flight, so the progress thread runs while there are any.
  void send_started();
  void send_completed();

 private:
  MpiWorld() = default;
  void poll_notices();
  void progress_loop();

  int rank_ = 0, size_ = 1;
  std::string library_;
  std::vector<ProcessInfo> processes_;
  MpiSettings settings_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mutex_;
  std::string failure_;
  std::vector<std::shared_ptr<std::string>> notices_sent_;  // buffers of in-flight notices
  MPI_Comm control_ = MPI_COMM_NULL;  // failure notices only
  bool finalized_ = false;
  std::thread progress_;
  std::mutex progress_mutex_;
  std::condition_variable progress_wanted_;
  int sends_in_flight_ = 0;
  bool progress_stop_ = false;
  std::function<void(const std::string&)> failure_hook_;  // under mutex_
  std::atomic<bool> watch_notices_{false};
};

}  // namespace plansight::runtime::mpi
