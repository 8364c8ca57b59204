// MPI_Comm_split for whichever communicator a rank holds: the in-process one (runtime::split),
// the device one for virtual ranks on a GPU (split_device) or the NCCL one (split_nccl), so that
// code that builds the TP/PP/DP groups needs not know which world it runs in.
#pragma once

#include <memory>
#include <string>

#include "plansight/estimator/diagnostic.h"
#include "plansight/runtime/communicator.h"

namespace plansight::runtime::cuda {

Result<std::unique_ptr<Communicator>> split_any(Communicator& parent, int colour, int key, const std::string& name);

}  // namespace plansight::runtime::cuda
