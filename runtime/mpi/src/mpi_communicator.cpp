// MpiCommunicator (see mpi_communicator.h).
#include "mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace plansight::runtime::mpi {

MpiCommunicator::MpiCommunicator(MpiWorld& world, MPI_Comm comm, std::string name)
    : world_(world), comm_(comm), name_(std::move(name)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
  if (found && tag_ub) tag_limit_ = *tag_ub;
}

MpiCommunicator::~MpiCommunicator() {
  // Messages still travelling must arrive before their buffers go; after a failure they never
  // will, and the job ends with MPI_Abort, which needs no clean-up.
  while (!sends_.empty() && !world_.aborted()) {
    if (!wait(sends_.front().request, "a send at close")) break;
    sends_.pop_front();
    world_.send_completed();
  }
  if (!world_.aborted()) MPI_Comm_free(&comm_);
}

Status MpiCommunicator::started(int mpi_error, const char* what) const {
  if (mpi_error == MPI_SUCCESS) return ok_status();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_error, text, &length);
  return make_error("communicator." + name_, std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

Status MpiCommunicator::wait(MPI_Request& request, const char* what) {
  return world_.wait(request, std::string(what) + " on \"" + name_ + "\"");
}

Status MpiCommunicator::check_count(std::size_t count, const char* what) const {
  if (count <= static_cast<std::size_t>(INT_MAX)) return ok_status();
  return make_error("communicator." + name_, std::string(what) + " of " + std::to_string(count) +
                                                 " elements; MPI counts are int: at most " + std::to_string(INT_MAX));
}

Status MpiCommunicator::check_peer(int peer, int tag, const char* what) const {
  if (peer < 0 || peer >= size_ || peer == rank_) {
    return make_error("communicator." + name_, std::string(what) + " peer " + std::to_string(peer) + " in group \"" +
                                                   name_ + "\" of " + std::to_string(size_) + " ranks; valid: 0.." +
                                                   std::to_string(size_ - 1) + " other than " + std::to_string(rank_));
  }
  if (tag < 0 || tag > tag_limit_) {
    return make_error("communicator." + name_, std::string(what) + " tag " + std::to_string(tag) + "; valid: 0.." +
                                                   std::to_string(tag_limit_) + " (MPI_TAG_UB)");
  }
  return ok_status();
}

void MpiCommunicator::reap_sends() {
  while (!sends_.empty()) {
    int done = 0;
    MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done) return;
    spare_.push_back(std::move(sends_.front().data));
    sends_.pop_front();
    world_.send_completed();
  }
}

Status MpiCommunicator::all_reduce(float* data, std::size_t count) {
  if (world_.aborted()) return world_.abort_status();
  if (size_ == 1 || count == 0) return ok_status();
  if (auto s = check_count(count, "all-reduce"); !s) return s;
  MPI_Request r = MPI_REQUEST_NULL;
  if (auto s = started(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_, &r), "all-reduce"); !s) return s;
  return wait(r, "all-reduce");
}

Status MpiCommunicator::reduce_scatter(const float* in, float* out, std::size_t count) {
  if (world_.aborted()) return world_.abort_status();
  if (size_ == 1) {
    if (in != out && count > 0) std::memmove(out, in, count * sizeof(float));
    return ok_status();
  }
  if (count == 0) return ok_status();
  if (auto s = check_count(count * static_cast<std::size_t>(size_), "reduce-scatter"); !s) return s;
  MPI_Request r = MPI_REQUEST_NULL;
  if (auto s = started(MPI_Ireduce_scatter_block(in, out, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_, &r), "reduce-scatter"); !s) return s;
  return wait(r, "reduce-scatter");
}

Status MpiCommunicator::all_gather(const float* in, float* out, std::size_t count) {
  if (world_.aborted()) return world_.abort_status();
  if (count == 0) return ok_status();
  if (size_ == 1) {
    if (in != out) std::memmove(out, in, count * sizeof(float));
    return ok_status();
  }
  if (auto s = check_count(count * static_cast<std::size_t>(size_), "all-gather"); !s) return s;
  // In place when the input is this rank's block of the output (MPI forbids other overlaps).
  const float* own_block = out + count * static_cast<std::size_t>(rank_);
  const void* send = in == own_block ? MPI_IN_PLACE : in;
  std::vector<float> copy;
  const bool overlaps = send != MPI_IN_PLACE && in < out + count * static_cast<std::size_t>(size_) && out < in + count;
  if (overlaps) {
    copy.assign(in, in + count);
    send = copy.data();
  }
  MPI_Request r = MPI_REQUEST_NULL;
  const int n = static_cast<int>(count);
  if (auto s = started(MPI_Iallgather(send, n, MPI_FLOAT, out, n, MPI_FLOAT, comm_, &r), "all-gather"); !s) return s;
  return wait(r, "all-gather");
}

Status MpiCommunicator::broadcast(float* data, std::size_t count, int root) {
  if (world_.aborted()) return world_.abort_status();
  if (root < 0 || root >= size_) {
    return make_error("communicator." + name_, "broadcast root " + std::to_string(root) + "; valid: 0.." + std::to_string(size_ - 1));
  }
  if (size_ == 1 || count == 0) return ok_status();
  if (auto s = check_count(count, "broadcast"); !s) return s;
  MPI_Request r = MPI_REQUEST_NULL;
  if (auto s = started(MPI_Ibcast(data, static_cast<int>(count), MPI_FLOAT, root, comm_, &r), "broadcast"); !s) return s;
  return wait(r, "broadcast");
}

Status MpiCommunicator::send(const float* data, std::size_t count, int peer, int tag) {
  if (world_.aborted()) return world_.abort_status();
  if (auto s = check_peer(peer, tag, "send to"); !s) return s;
  if (auto s = check_count(count, "send"); !s) return s;
  reap_sends();
  PendingSend p;
  if (!spare_.empty()) {
    p.data = std::move(spare_.back());
    spare_.pop_back();
  }
  p.data.assign(data, data + count);
  if (auto s = started(MPI_Isend(p.data.data(), static_cast<int>(count), MPI_FLOAT, peer, tag, comm_, &p.request), "send"); !s) return s;
  sends_.push_back(std::move(p));
  world_.send_started();
  return ok_status();
}

Status MpiCommunicator::recv(float* data, std::size_t count, int peer, int tag) {
  if (world_.aborted()) return world_.abort_status();
  if (auto s = check_peer(peer, tag, "receive from"); !s) return s;
  if (auto s = check_count(count, "receive"); !s) return s;
  reap_sends();
  MPI_Request r = MPI_REQUEST_NULL;
  if (auto s = started(MPI_Irecv(data, static_cast<int>(count), MPI_FLOAT, peer, tag, comm_, &r), "receive"); !s) return s;
  return wait(r, "receive");
}

}  // namespace plansight::runtime::mpi
