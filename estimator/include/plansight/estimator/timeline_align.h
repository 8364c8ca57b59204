// Cross-rank alignment. Ranks' clocks differ by up to milliseconds, so a multi-rank timeline is
// put on one time axis by per-rank offsets, which are reported so a user can see what was done.
// Default: one shared offset for all ranks, moving the earliest event to 0 (as HTA's
// Trace._align_all_ranks does). Option: align the end of the same collective on every rank,
// since a collective completes on all members at about the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

enum class AlignMode : std::uint8_t { shared_offset, collective_end };

struct AlignOptions {
  AlignMode mode = AlignMode::shared_offset;
  // collective_end: which communication span of each rank, in start order, is the anchor.
  // 0 = first; -1 = last.
  std::int32_t collective_index = 0;
};

struct RankOffset {
  std::int32_t rank = 0;
  std::int64_t offset_ns = 0;  // added to every span of the rank
  bool anchored = false;       // collective_end: the rank had the anchor collective
};

struct Alignment {
  AlignMode mode = AlignMode::shared_offset;
  std::vector<RankOffset> offsets;  // one per rank, ascending
  std::vector<Diagnostic> warnings;  // ranks without an anchor, mismatched collective kinds
};

// Offsets only (pure). After applying them the earliest span of the timeline starts at 0.
Alignment compute_alignment(const Timeline& timeline, const AlignOptions& options = {},
                            const KernelClassifier& classifier = KernelClassifier());

// Adds each rank's offset to its spans.
void apply_alignment(Timeline& timeline, const Alignment& alignment);

}  // namespace plansight::estimator
