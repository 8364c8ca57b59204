// NCCL version decoding and the multi-rank-per-GPU rule (nccl_version.h).
#include "plansight/runtime/cuda/nccl_version.h"

#include <string_view>

namespace plansight::runtime::cuda {
namespace {

constexpr int kFirstNewEncoding = 20900;  // NCCL_VERSION(2, 9, 0) under the new encoding
constexpr NcclVersion kMultiRankGpu{2, 30, 0};

bool at_least(const NcclVersion& v, const NcclVersion& floor) {
  if (v.major != floor.major) return v.major > floor.major;
  if (v.minor != floor.minor) return v.minor > floor.minor;
  return v.patch >= floor.patch;
}

}  // namespace

std::string NcclVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

int NcclVersion::code() const {
  return (major > 2 || (major == 2 && minor >= 9)) ? major * 10000 + minor * 100 + patch
                                                   : major * 1000 + minor * 100 + patch;
}

NcclVersion decode_nccl_version(int code) {
  if (code >= kFirstNewEncoding) return {code / 10000, (code % 10000) / 100, code % 100};
  return {code / 1000, (code % 1000) / 100, code % 100};
}

MultiRankGpu multi_rank_gpu_support(const NcclVersion& version, const char* env_value) {
  if (!at_least(version, kMultiRankGpu)) {
    return {false, "NCCL " + version.to_string() + " < " + kMultiRankGpu.to_string() +
                       ": one rank per GPU (several ranks on one GPU need NCCL >= 2.30)"};
  }
  if (env_value == nullptr || std::string_view(env_value) != "1") {
    std::string value = "unset";
    if (env_value != nullptr) value.assign("\"").append(env_value).append("\"");
    return {false, "NCCL " + version.to_string() + " supports several ranks per GPU, but NCCL_MULTI_RANK_GPU_ENABLE is " +
                       value + " (set it to 1)"};
  }
  return {true, "NCCL " + version.to_string() + " with NCCL_MULTI_RANK_GPU_ENABLE=1"};
}

}  // namespace plansight::runtime::cuda
