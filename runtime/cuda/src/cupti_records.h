// Conversion of CUPTI activity records (cupti_activity.h structs of CUDA 13) into the plain
// ActivityRecord of activity_timeline.h. NVTX ranges arrive as a start and an end marker record
// with the same id; the converter keeps open starts until their end arrives, so it is stateful
// and used by one thread at a time (CUPTI's buffer-completion thread).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "plansight/runtime/cuda/activity_timeline.h"
#include "plansight/runtime/cuda/kernel_names.h"

namespace plansight::runtime::cuda {

class CuptiRecordConverter {
 public:
  // Appends what `record` describes to `out` (nothing for kinds that are not traced, and for the
  // start marker of a range until its end arrives).
  void add(const CUpti_Activity* record, std::vector<ActivityRecord>& out);
  std::size_t open_ranges() const { return open_.size(); }

 private:
  struct OpenRange {
    std::uint64_t start_ns;
    std::uint32_t thread;
    std::string name;
  };
  std::unordered_map<std::uint32_t, OpenRange> open_;
};

}  // namespace plansight::runtime::cuda
