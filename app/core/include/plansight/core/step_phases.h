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

}  // namespace plansight::core
