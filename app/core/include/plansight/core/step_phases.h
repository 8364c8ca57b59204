// Where one step's time goes, as the same pure function of a Timeline for the predicted and the
// measured step (DESIGN §2: metrics mean the same on every source): per rank, the time covered
// by forward, backward (with recomputation and weight gradients) and optimizer spans, the
// communication not hidden behind them (from the moment the last peer arrived: waiting for a
// peer is idle time), and the rest of the step (idle). Averaged over ranks, the five add up
// to the step. Idle is not the pipeline bubble (schedule_metrics.h, which is the pipeline
// window's idle time facing no collective): it is all of the step's, fill, drain, waits and the
// host's gaps alike, so that the phases add up. Device work only: annotations and host (CPU) spans of imported traces are skipped.
#pragma once

#include "plansight/estimator/timeline.h"

namespace plansight::core {

struct StepPhases {
  double forward_s = 0;
  double backward_s = 0;
  double communication_s = 0;  // exposed: not overlapped by the rank's compute
  double idle_s = 0;           // neither computing nor moving data (waiting_s included)
  double waiting_s = 0;        // inside communication calls, waiting for a peer to arrive
  double optimizer_s = 0;
  double step_s = 0;           // the timeline's extent
  double other_s = 0;          // compute spans with no phase (none in either source today)
};

StepPhases step_phases(const estimator::Timeline& timeline);

// The same when the ranks share `processors` processors (cluster.shared_processors: virtual ranks
// on one GPU, rank threads on fewer cores) and outnumber them: each phase is the processor time
// it took, summed over ranks and divided by `processors`, so the phases add up to the step on one
// scale for every way of sharing. A rank's time counts at rate min(1, processors / k) while k
// ranks do device work at once: the predicted time model shares a processor among its k ranks
// (each span stretched k-fold) and a CPU's scheduler time-slices them alike, while a GPU runs
// one rank's kernel after another (spans at full speed, the others waiting): per-rank phases
// would read as +140% (predicted, stretched) against -100% idle (measured, waiting) for the same
// work, where processor time reads alike. A span that measured its thread's CPU time
// (Span::cpu_ns: the CPU probe's) counts that instead, with no inference: a CPU thread blocked
// in a collective, or runnable but waiting for a core, holds none. Idle is the processors' idle
// time (waiting for peers and cores included). `ranks_per_track`:
// how many ranks each rank of the timeline stands for (a predicted timeline draws one rank per
// pipeline stage for its TP x CP x DP identical ranks; a measured one draws every rank: 1). With
// processors <= 0 or at least as many as the ranks: step_phases(timeline).
StepPhases step_phases(const estimator::Timeline& timeline, std::int64_t processors, std::int64_t ranks_per_track = 1);

}  // namespace plansight::core
