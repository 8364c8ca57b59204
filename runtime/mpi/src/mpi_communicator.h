// A runtime::Communicator over one MPI communicator: collectives are MPI's non-blocking ones
// (MPI_Iallreduce, MPI_Ireduce_scatter_block, MPI_Iallgather, MPI_Ibcast) completed through the
// world's test loop, so a peer's failure ends the wait. Sends copy the message and return at
// once, as the interface promises (a pipeline stage sends before its neighbour posts the
// receive, both ways at once in 1F1B's steady state); their requests complete in the
// background of later calls and before the communicator goes away. One instance belongs to one
// thread.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <mpi.h>

#include "plansight/runtime/mpi/mpi_world.h"

namespace plansight::runtime::mpi {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MpiWorld& world, MPI_Comm comm, std::string name);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  MPI_Comm comm() const { return comm_; }
  MpiWorld& world() const { return world_; }

  Status all_reduce(float* data, std::size_t count) override;
  Status reduce_scatter(const float* in, float* out, std::size_t count) override;
  Status all_gather(const float* in, float* out, std::size_t count) override;
  Status broadcast(float* data, std::size_t count, int root) override;
  Status send(const float* data, std::size_t count, int peer, int tag = 0) override;
  Status recv(float* data, std::size_t count, int peer, int tag = 0) override;

 private:
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<float> data;
  };
  Status check_count(std::size_t count, const char* what) const;
  Status check_peer(int peer, int tag, const char* what) const;
  Status wait(MPI_Request& request, const char* what);
  Status started(int mpi_error, const char* what) const;
  void reap_sends();  // frees the buffers of sends that completed

  MpiWorld& world_;
  MPI_Comm comm_;
  std::string name_;
  int rank_ = 0, size_ = 1;
  int tag_limit_ = 32767;  // MPI_TAG_UB, at least 32767 by the standard
  std::deque<PendingSend> sends_;
  std::vector<std::vector<float>> spare_;  // buffers of completed sends, for later ones
};

}  // namespace plansight::runtime::mpi
