// NCCL's version as ncclGetVersion() reports it, and what this version can do for the probe:
// several ranks on one GPU needs NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL 2.30's
// multi-rank-per-GPU mode; before it, ncclCommInitRank fails when two ranks of a communicator
// share a device, "Duplicate GPU detected"). Plain C++, tested without NCCL.
#pragma once

#include <string>

namespace plansight::runtime::cuda {

struct NcclVersion {
  int major = 0, minor = 0, patch = 0;
  std::string to_string() const;  // "2.28.3"
  int code() const;               // as NCCL_VERSION(major, minor, patch)
};

// ncclGetVersion's integer: major*10000 + minor*100 + patch from NCCL 2.9 on, major*1000 +
// minor*100 + patch before (nccl.h, NCCL_VERSION_CODE).
NcclVersion decode_nccl_version(int code);

struct MultiRankGpu {
  bool available = false;
  std::string reason;  // why, either way: "NCCL 2.28.3 < 2.30" / "NCCL_MULTI_RANK_GPU_ENABLE is not 1" / ...
};

// Whether several ranks may share one GPU in an NCCL communicator, given the run-time version
// and the value of NCCL_MULTI_RANK_GPU_ENABLE (null: unset).
MultiRankGpu multi_rank_gpu_support(const NcclVersion& version, const char* env_value);

}  // namespace plansight::runtime::cuda
