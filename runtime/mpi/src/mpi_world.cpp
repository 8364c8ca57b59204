// MpiWorld (see mpi_world.h): start-up, failure notices, the test loop, and the world-wide
// collectives of a run's bookkeeping.
#include "plansight/runtime/mpi/mpi_world.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <sched.h>
#include <thread>

#include <unistd.h>

#include "mpi_communicator.h"

namespace plansight::runtime::mpi {
namespace {

// Failure notices travel on their own communicator under this tag; nothing else uses it.
constexpr int kNoticeTag = 1;
// Clock exchanges of measure_clock_offsets().
constexpr int kClockTag = 2;

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// "Open MPI v4.1.4, package: Debian OpenMPI, ..." -> "Open MPI v4.1.4".
std::string library_name() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  const auto cut = s.find_first_of(",\n");
  if (cut != std::string::npos) s.resize(cut);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

Result<std::unique_ptr<MpiWorld>> MpiWorld::initialize(int& argc, char**& argv, const MpiSettings& settings) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return make_error("mpi", "MPI is already initialised in this process; one MpiWorld per process");
  int provided = 0;
  if (const int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided); rc != MPI_SUCCESS) {
    return make_error("mpi", "MPI_Init_thread failed: " + mpi_error_text(rc));
  }
  std::unique_ptr<MpiWorld> w(new MpiWorld());
  w->settings_ = settings;
  w->library_ = library_name();
  if (provided < MPI_THREAD_MULTIPLE) {
    w->finalized_ = true;
    MPI_Finalize();
    return make_error("mpi", w->library_ + " gives thread level " + std::to_string(provided) +
                                 ", the probe needs MPI_THREAD_MULTIPLE (a rank's compute and gradient threads "
                                 "communicate at once); use an MPI built with thread support");
  }
  // Errors come back as codes (a truncated receive names its communicator) instead of ending the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &w->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w->size_);
  MPI_Comm_dup(MPI_COMM_WORLD, &w->control_);

  // Every process learns every process's host and pid (the run reports them; a test kills one).
  ProcessInfo self;
  self.rank = w->rank_;
  char host[MPI_MAX_PROCESSOR_NAME];
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  self.host.assign(host, static_cast<std::size_t>(host_length));
  self.pid = static_cast<long long>(getpid());
  std::vector<char> hosts(static_cast<std::size_t>(w->size_) * MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0');
  std::memcpy(mine.data(), host, static_cast<std::size_t>(host_length));
  MPI_Allgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, w->control_);
  std::vector<long long> pids(static_cast<std::size_t>(w->size_));
  MPI_Allgather(&self.pid, 1, MPI_LONG_LONG, pids.data(), 1, MPI_LONG_LONG, w->control_);
  for (int r = 0; r < w->size_; ++r) {
    const char* h = hosts.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    w->processes_.push_back({r, std::string(h, strnlen(h, MPI_MAX_PROCESSOR_NAME)), pids[static_cast<std::size_t>(r)]});
  }
  MpiWorld* self_ptr = w.get();
  w->progress_ = std::thread([self_ptr] { self_ptr->progress_loop(); });
  return w;
}

void MpiWorld::send_started() {
  {
    std::lock_guard lock(progress_mutex_);
    ++sends_in_flight_;
  }
  progress_wanted_.notify_one();
}

void MpiWorld::send_completed() {
  std::lock_guard lock(progress_mutex_);
  if (sends_in_flight_ > 0) --sends_in_flight_;
}

void MpiWorld::progress_loop() {
  // A large message is sent by rendezvous: its data moves only while the sender's process is
  // inside MPI. The sender's thread has returned to compute, so while any send is in flight this
  // thread enters MPI every 50 us (a matched probe for failure notices, which also turns MPI's
  // progress engine); it sleeps otherwise.
  // With a failure hook it also looks for notices every millisecond while idle.
  std::unique_lock lock(progress_mutex_);
  while (!progress_stop_) {
    if (sends_in_flight_ == 0) {
      if (!watch_notices_.load()) {
        progress_wanted_.wait(lock, [&] { return progress_stop_ || sends_in_flight_ > 0 || watch_notices_.load(); });
        continue;
      }
      progress_wanted_.wait_for(lock, std::chrono::milliseconds(1));
      if (progress_stop_) break;
      lock.unlock();
      poll_notices();
      lock.lock();
      continue;
    }
    lock.unlock();
    poll_notices();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    lock.lock();
  }
}

MpiWorld::~MpiWorld() {
  {
    std::lock_guard lock(progress_mutex_);
    progress_stop_ = true;
  }
  progress_wanted_.notify_one();
  if (progress_.joinable()) progress_.join();
  if (finalized_) return;
  if (aborted()) abort_job(1);  // pending requests of a failed run would keep MPI_Finalize waiting
  MPI_Comm_free(&control_);
  MPI_Finalize();
}

void MpiWorld::abort_job(int code) {
  finalized_ = true;
  if (progress_.joinable()) progress_.detach();  // MPI_Abort ends the process, this thread with it
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] true if it did
}

void MpiWorld::on_failure(std::function<void(const std::string&)> hook) {
  std::string already;
  {
    std::lock_guard lock(mutex_);
    failure_hook_ = std::move(hook);
    if (aborted_.load() && failure_hook_) already = failure_;
  }
  if (!already.empty() && failure_hook_) failure_hook_(already);
  watch_notices_.store(static_cast<bool>(failure_hook_));  // an empty hook: no watching
  progress_wanted_.notify_one();
}

std::string MpiWorld::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

Status MpiWorld::abort_status() const {
  return make_error("communicator", "aborted: " + failure());
}

void MpiWorld::abort(const std::string& reason) {
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(mutex_);
    if (aborted_.load()) return;  // the first reason is the cause; later ones are its echoes
    failure_ = reason;
    aborted_.store(true, std::memory_order_release);
    // Tell everyone; the buffers stay until the job ends (a notice to a dead peer never completes).
    auto text = std::make_shared<std::string>(reason);
    notices_sent_.push_back(text);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Request request;
      MPI_Isend(text->data(), static_cast<int>(text->size()), MPI_CHAR, r, kNoticeTag, control_, &request);
      MPI_Request_free(&request);
    }
    hook = failure_hook_;
  }
  if (hook) hook(reason);
}

void MpiWorld::poll_notices() {
  // A matched probe (MPI_Improbe + MPI_Mrecv), so two threads polling at once never both claim
  // the same notice.
  int found = 0;
  MPI_Message message;
  MPI_Status status;
  MPI_Improbe(MPI_ANY_SOURCE, kNoticeTag, control_, &found, &message, &status);
  if (!found) return;
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string text(static_cast<std::size_t>(std::max(length, 0)), '\0');
  MPI_Mrecv(text.data(), length, MPI_CHAR, &message, MPI_STATUS_IGNORE);
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(mutex_);
    if (aborted_.load()) return;
    failure_ = text;
    aborted_.store(true, std::memory_order_release);
    hook = failure_hook_;
  }
  if (hook) hook(text);
}

Status MpiWorld::wait(MPI_Request& request, const std::string& what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Test, then yield, then sleep in growing steps (20 us to 100 us): a rank that waits long (a
  // pipeline bubble, the gradient thread between buckets) leaves the cores to ranks that compute,
  // which matters when ranks outnumber cores; a short wait costs no sleep at all, and a long one
  // notices its message within 100 us.
  for (int spin = 0;; ++spin) {
    int done = 0;
    // With MPI_ERRORS_RETURN a failed request (a truncated receive) comes back as the code.
    const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return make_error("communicator", what + " failed: " + mpi_error_text(rc));
    if (done) return ok_status();
    if (spin % 16 == 0) {
      poll_notices();
      if (aborted()) return abort_status();
      const double waited = std::chrono::duration<double>(clock::now() - start).count();
      if (waited > settings_.wait_limit_s) {
        const std::string reason = "rank " + std::to_string(rank_) + ": " + what + " waited " +
                                   std::to_string(static_cast<long long>(waited)) + " s (the limit) for a peer that neither "
                                   "answered nor failed";
        abort(reason);
        return abort_status();
      }
    }
    if (spin < 64) {
      sched_yield();
    } else {
      const int step = std::min((spin - 64) / 32, 3);  // 20, 40, 80, 160 us -> capped at 100 us
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(20 << step, 100)));
    }
  }
}

Result<std::unique_ptr<Communicator>> MpiWorld::world(const std::string& name) {
  if (auto s = barrier(); !s) return s.errors();  // everyone is here, so the blocking dup returns
  MPI_Comm comm = MPI_COMM_NULL;
  if (const int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm); rc != MPI_SUCCESS) {
    return make_error("communicator." + name, "MPI_Comm_dup failed: " + mpi_error_text(rc));
  }
  return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(*this, comm, name));
}

Result<std::unique_ptr<Communicator>> MpiWorld::split(Communicator& parent, int colour, int key, const std::string& name) {
  auto* p = dynamic_cast<MpiCommunicator*>(&parent);
  if (!p || &p->world() != this) {
    return make_error("communicator." + name, "split of \"" + parent.name() + "\", which is not an MPI communicator of this world");
  }
  // A test-loop rendezvous first: MPI_Comm_split blocks, so it is entered only once every member
  // is known to be alive and here.
  float one = 1;
  if (auto s = parent.all_reduce(&one, 1); !s) return s.errors();
  MPI_Comm comm = MPI_COMM_NULL;
  if (const int rc = MPI_Comm_split(p->comm(), colour < 0 ? MPI_UNDEFINED : colour, key, &comm); rc != MPI_SUCCESS) {
    return make_error("communicator." + name, "MPI_Comm_split failed: " + mpi_error_text(rc));
  }
  if (comm == MPI_COMM_NULL) return std::unique_ptr<Communicator>();
  return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(*this, comm, name));
}

Status MpiWorld::barrier() {
  if (aborted()) return abort_status();
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Ibarrier(control_, &r);
  return wait(r, "barrier");
}

Status MpiWorld::broadcast_text(std::string& text, int root) {
  if (aborted()) return abort_status();
  long long length = static_cast<long long>(text.size());
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Ibcast(&length, 1, MPI_LONG_LONG, root, control_, &r);
  if (auto s = wait(r, "broadcast of a text's length"); !s) return s;
  if (length > INT_MAX) return make_error("mpi", "a broadcast text of " + std::to_string(length) + " bytes; at most " + std::to_string(INT_MAX));
  text.resize(static_cast<std::size_t>(length));
  MPI_Ibcast(text.data(), static_cast<int>(length), MPI_CHAR, root, control_, &r);
  return wait(r, "broadcast of a text");
}

Result<std::vector<std::string>> MpiWorld::gather_text(const std::string& mine, int root) {
  if (aborted()) return abort_status().errors();
  if (mine.size() > static_cast<std::size_t>(INT_MAX)) return make_error("mpi", "a gathered part of " + std::to_string(mine.size()) + " bytes; at most " + std::to_string(INT_MAX));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, control_, &r);
  if (auto s = wait(r, "gather of the results' sizes"); !s) return s.errors();
  std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
  long long total = 0;
  for (int i = 0; i < size_; ++i) {
    offsets[static_cast<std::size_t>(i)] = static_cast<int>(std::min<long long>(total, INT_MAX));
    total += lengths[static_cast<std::size_t>(i)];
  }
  if (rank_ == root && total > INT_MAX) return make_error("mpi", "the gathered results are " + std::to_string(total) + " bytes; at most " + std::to_string(INT_MAX));
  std::string all(rank_ == root ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root, control_, &r);
  if (auto s = wait(r, "gather of the results"); !s) return s.errors();
  std::vector<std::string> out;
  if (rank_ != root) return out;
  for (int i = 0; i < size_; ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(i)]),
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(i)])));
  }
  return out;
}

Result<std::vector<ClockOffset>> MpiWorld::measure_clock_offsets(int exchanges) {
  if (auto s = barrier(); !s) return s.errors();
  std::vector<ClockOffset> out;
  if (rank_ == 0) out.assign(static_cast<std::size_t>(size_), ClockOffset{});
  // Rank 0 takes the processes in turn; each exchange is a ping (empty) and a pong (the peer's clock).
  for (int peer = 1; peer < size_; ++peer) {
    for (int i = 0; i < exchanges; ++i) {
      MPI_Request r = MPI_REQUEST_NULL;
      if (rank_ == 0) {
        std::int64_t theirs = 0;
        const std::int64_t sent = steady_ns();
        MPI_Isend(nullptr, 0, MPI_BYTE, peer, kClockTag, control_, &r);
        if (auto s = wait(r, "clock exchange"); !s) return s.errors();
        MPI_Irecv(&theirs, 1, MPI_INT64_T, peer, kClockTag, control_, &r);
        if (auto s = wait(r, "clock exchange"); !s) return s.errors();
        const std::int64_t received = steady_ns();
        ClockOffset& o = out[static_cast<std::size_t>(peer)];
        const std::int64_t rtt = received - sent;
        if (i == 0 || rtt < o.round_trip_ns) o = {theirs - (sent + received) / 2, rtt};
      } else if (rank_ == peer) {
        MPI_Irecv(nullptr, 0, MPI_BYTE, 0, kClockTag, control_, &r);
        if (auto s = wait(r, "clock exchange"); !s) return s.errors();
        std::int64_t now = steady_ns();
        MPI_Isend(&now, 1, MPI_INT64_T, 0, kClockTag, control_, &r);
        if (auto s = wait(r, "clock exchange"); !s) return s.errors();
      }
    }
  }
  if (auto s = barrier(); !s) return s.errors();
  return out;
}

}  // namespace plansight::runtime::mpi
