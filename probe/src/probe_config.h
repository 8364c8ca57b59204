// ProbeConfig: a ProbeRequest turned into what the rank threads execute — tensor sizes per TP
// rank, the rank grid (TP innermost, then DP, then PP, as Megatron-LM orders its groups), the
// layers of each model chunk, the ScheduleTable every pipeline rank walks and the groups its
// transfers go in (pipeline_transfers.h). make_config() refuses what the CPU probe cannot run,
// naming the request field.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "pipeline_transfers.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::probe {

// Sizes of one TP rank's slice of the model (Shoeybi et al. 2019, Sec. 3: heads, the QKV and
// fc1 output columns and the proj/fc2 input rows are split; the vocabulary is split by rows of
// the embedding, padded to a multiple of TP as Megatron pads it).
struct Dims {
  int B = 1, T = 1, C = 1, NH = 1, F = 1, V = 1, Vp = 1, maxT = 1;
  int tp = 1;
  bool qkv_bias = true, proj_bias = true, mlp_bias = true, tied = true;

  int N() const { return B * T; }
  int Cl() const { return C / tp; }   // local attention width (heads * head size)
  int NHl() const { return NH / tp; }
  int Fl() const { return F / tp; }
  int Vl() const { return Vp / tp; }  // local vocabulary rows
};

struct RankCoords {
  int tp = 0, dp = 0, pp = 0;
};

struct ProbeConfig {
  ProbeRequest request;
  Dims dims;
  int tp = 1, pp = 1, vpp = 1, dp = 1;
  int micro_batches = 1;  // per DP rank per step
  int zero_stage = 0;
  estimator::Recompute recompute = estimator::Recompute::none;
  estimator::ScheduleTable schedule;
  std::vector<TransferPlan> transfers;  // by pipeline rank: the groups its sends and receives go in
  std::vector<int> chunk_layers;  // by global chunk (pipeline order)
  std::vector<int> chunk_first_layer;

  int world() const { return tp * pp * dp; }
  int chunks() const { return pp * vpp; }
  RankCoords coords(int world_rank) const {
    return {world_rank % tp, (world_rank / tp) % dp, world_rank / (tp * dp)};
  }
  int world_rank(const RankCoords& c) const { return c.tp + tp * (c.dp + dp * c.pp); }
};

Result<ProbeConfig> make_config(const ProbeRequest& request);

}  // namespace plansight::probe
