// The predicted timeline laid out layer by layer (timeline_layers.h): every collective its own
// span, every op in its window, every figure of the timeline unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_layers.h"
#include "plansight/estimator/timeline_metrics.h"
#include "zero3_test_plan.h"

namespace plansight::estimator {
namespace {

struct Predicted {
  Timeline timeline;
  std::int64_t padded_vocab = 0;
};

Predicted predicted(const Plan& plan) {
  TimePrediction prediction;
  EstimateOptions options;
  options.prediction = &prediction;
  auto e = estimate(plan, options);
  EXPECT_TRUE(e.ok()) << e.error_text();
  return {std::move(prediction.timeline), e.ok() ? e->padded_vocab : 0};
}

Plan small(std::int64_t tp, std::int64_t pp, bool sp) {
  Plan plan = default_plan();  // GPT-3 175B on 1024 A100s, TP 8 x PP 8
  plan.layout.tp = tp;
  plan.layout.pp = pp;
  plan.layout.sequence_parallel = sp;
  plan.layout.recompute = Recompute::none;  // no R ops: each pass's collectives counted once
  plan.training.global_batch = plan.dp() * 16;  // 16 micro-batches of 1
  return plan;
}

// Per rank and lane: busy time by span kind (kernel, collective or send), bytes and FLOPs.
struct Sums {
  std::map<std::tuple<std::int32_t, Lane, SpanKind>, std::int64_t> ns;
  std::map<std::pair<std::int32_t, Lane>, double> bytes, flops;
};
Sums sums(const Timeline& t) {
  Sums s;
  for (const Track& track : t.tracks) {
    for (const Span& x : track.spans) {
      s.ns[{track.rank, track.lane, x.kind}] += x.duration_ns;
      s.bytes[{track.rank, track.lane}] += x.bytes;
      s.flops[{track.rank, track.lane}] += x.flops;
    }
  }
  return s;
}

// The layer timeline's track of rank r and lane (its communication track, not the sends').
std::size_t track_of(const Timeline& t, std::int32_t rank, Lane lane) {
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    if (t.tracks[i].rank == rank && t.tracks[i].lane == lane && t.tracks[i].stream < 1) return i;
  }
  ADD_FAILURE() << "no track for rank " << rank;
  return 0;
}

std::int64_t count_named(const Timeline& t, std::size_t track, std::int32_t stage, std::int32_t mb, Phase phase,
                         const std::string& part) {
  std::int64_t n = 0;
  for (const Span& x : t.tracks[track].spans) {
    if (x.stage == stage && x.micro_batch == mb && (x.phase == phase || phase == Phase::none) &&
        t.name_of(x).find(part) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

// Rank `rank`'s track of the collectives compute hides (stream 2), or null.
const Track* hidden_track(const Timeline& t, std::int32_t rank) {
  for (const Track& track : t.tracks) {
    if (track.rank == rank && track.stream == 2) return &track;
  }
  return nullptr;
}

// Rank `stage`'s pieces of micro-batch `mb` named after a layer, in time order: the compute of
// `phase` and the collectives of every phase.
std::vector<std::pair<std::int64_t, std::string>> layer_pieces(const Timeline& t, std::int32_t stage, std::int32_t mb,
                                                               Phase phase) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  for (std::size_t track : {track_of(t, stage, Lane::compute), track_of(t, stage, Lane::communication)}) {
    for (const Span& x : t.tracks[track].spans) {
      if (x.stage == stage && x.micro_batch == mb && (x.phase == phase || x.phase == Phase::communication) &&
          t.name_of(x).rfind("layer", 0) == 0) {
        out.emplace_back(x.start_ns, t.name_of(x));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every track keeps its busy time per kind to the nanosecond, its bytes and FLOPs; every figure
// read from the timeline (bubble per stage, window) is the same; most ops are laid out.
TEST(LayerTimeline, KeepsEveryTotalAndTheBubble) {
  Plan interleaved = small(8, 4, true);
  interleaved.layout.schedule = PipelineSchedule::interleaved;
  interleaved.layout.vpp = 2;
  Plan zero3 = small(4, 4, false);
  zero3.layout.zero_stage = 3;
  zero3.training.zero3_prefetch = false;
  Plan zb = small(8, 4, false);
  zb.layout.schedule = PipelineSchedule::zb_h1;
  Plan dualpipev = small(8, 4, true);
  dualpipev.layout.schedule = PipelineSchedule::dualpipev;
  dualpipev.layout.vpp = 2;
  Plan dualpipe = dualpipev;
  dualpipe.layout.schedule = PipelineSchedule::dualpipe;
  Plan context = small(8, 4, true);
  context.layout.cp = 2;
  context.training.global_batch = context.dp() * 16;
  Plan recompute = small(8, 4, false);
  recompute.layout.recompute = Recompute::full;
  recompute.layout.zero_stage = 3;  // prefetched gathers: collectives of their own on the lane
  Plan context_recompute = context;  // the ring under the recomputed attention, and again under the backward's
  context_recompute.layout.recompute = Recompute::full;
  Plan tp_overlap = small(8, 4, true);  // TP's collectives under the linear GEMMs
  tp_overlap.layout.tp_overlap = true;
  for (const Plan& plan : {small(8, 4, false), small(8, 4, true), interleaved, zero3, zb, dualpipev, dualpipe, context,
                           recompute, context_recompute, tp_overlap}) {
    SCOPED_TRACE(std::string(to_string(plan.layout.schedule)) + (plan.layout.sequence_parallel ? " sp" : "") +
                 " zero " + std::to_string(plan.layout.zero_stage) + " cp " + std::to_string(plan.layout.cp) +
                 " recompute " + std::string(to_string(plan.layout.recompute)));
    const Predicted p = predicted(plan);
    auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
    ASSERT_TRUE(layered.ok()) << layered.error_text();
    const Timeline& t = layered->timeline;
    EXPECT_GT(layered->ops_laid_out, 0);
    EXPECT_LT(layered->ops_kept, layered->ops_laid_out / 10 + 1) << "almost every op is laid out";
    // Per rank: its compute and communication tracks, and one for the pipeline's sends; and the
    // track of the collectives compute hides where the plan has some (CP's ring exchange).
    const auto hidden = static_cast<std::size_t>(std::count_if(p.timeline.tracks.begin(), p.timeline.tracks.end(),
                                                                [](const Track& x) { return x.stream == 2; }));
    const bool hides = plan.layout.cp > 1 || plan.layout.tp_overlap || (plan.layout.zero_stage == 3 && plan.training.zero3_prefetch);
    EXPECT_EQ(hidden, hides ? p.timeline.tracks.size() / 3 : 0);
    ASSERT_EQ(t.tracks.size(), (p.timeline.tracks.size() - hidden) / 2 * 3 + hidden);
    const Sums a = sums(p.timeline), b = sums(t);
    EXPECT_EQ(a.ns, b.ns);
    for (const auto& [track, bytes] : a.bytes) EXPECT_NEAR(b.bytes.at(track), bytes, 1e-9 * bytes + 1e-6) << track.first;
    for (const auto& [track, flops] : a.flops) EXPECT_NEAR(b.flops.at(track), flops, 1e-9 * flops + 1e-6) << track.first;
    EXPECT_EQ(t.begin_ns(), p.timeline.begin_ns());
    EXPECT_EQ(t.end_ns(), p.timeline.end_ns());
    const ScheduleBubbles before = schedule_bubbles(p.timeline), after = schedule_bubbles(t);
    EXPECT_EQ(after.bubble_ns, before.bubble_ns);
    EXPECT_EQ(after.busy_ns, before.busy_ns);
    EXPECT_DOUBLE_EQ(after.mean_fraction, before.mean_fraction);
    // The measured-timeline metrics (analyze, the Compare page) read it the same way.
    BubbleOptions exact;
    exact.min_gap_ns = 0;
    const auto stages_before = pipeline_bubbles(p.timeline, exact), stages_after = pipeline_bubbles(t, exact);
    ASSERT_EQ(stages_after.size(), stages_before.size());
    for (std::size_t i = 0; i < stages_before.size(); ++i) {
      EXPECT_EQ(stages_after[i].bubble_ns, stages_before[i].bubble_ns) << "stage " << i;
    }
    // Busy and compute time too. What a union of communication counts may differ by up to the
    // sends: one still running when the next op starts meets that op's first pieces in a new
    // place (a collective now, where the op's compute was); and, where hidden collectives move to
    // their layers inside an op, by up to what else the lane ran while the rank computed (a
    // gradient bucket that now meets a hidden piece, or no longer does).
    const auto ranks_before = rank_breakdown(p.timeline), ranks_after = rank_breakdown(t);
    ASSERT_EQ(ranks_after.size(), ranks_before.size());
    for (std::size_t i = 0; i < ranks_before.size(); ++i) {
      const std::int32_t rank = ranks_before[i].rank;
      std::int64_t sends = 0, beside_compute = 0;
      const Track* compute = nullptr;
      for (const Track& track : p.timeline.tracks) compute = track.rank == rank && track.lane == Lane::compute ? &track : compute;
      for (const Track& track : p.timeline.tracks) {
        if (track.rank != rank || track.lane != Lane::communication) continue;
        for (const Span& x : track.spans) {
          if (x.kind == SpanKind::send) {
            sends += x.duration_ns;
          } else if (track.stream < 0 && hides) {
            for (const Span& c : compute->spans) {
              beside_compute += std::max<std::int64_t>(0, std::min(x.end_ns(), c.end_ns()) - std::max(x.start_ns, c.start_ns));
            }
          }
        }
      }
      EXPECT_EQ(ranks_after[i].busy_ns, ranks_before[i].busy_ns) << "rank " << i;
      EXPECT_EQ(ranks_after[i].compute_ns, ranks_before[i].compute_ns) << "rank " << i;
      EXPECT_LE(std::abs(ranks_after[i].communication_ns - ranks_before[i].communication_ns), sends + beside_compute) << "rank " << i;
      EXPECT_LE(std::abs(ranks_after[i].overlap_ns - ranks_before[i].overlap_ns), sends + beside_compute) << "rank " << i;
    }
    // A lane still runs one thing at a time.
    for (const Track& track : t.tracks) {
      for (std::size_t i = 1; i < track.spans.size(); ++i) {
        ASSERT_LE(track.spans[i - 1].end_ns(), track.spans[i].start_ns) << track.label << " span " << i;
      }
    }
  }
}

// Shoeybi et al. 2019 (Fig. 3): two all-reduces per layer in the forward (after attention and
// after the MLP) and two in the backward; with sequence parallelism (Korthikanti et al. 2022,
// Fig. 5) an all-gather before and a reduce-scatter after each block: four per layer per pass.
// The vocabulary-parallel embedding adds one in the forward of the first chunk.
TEST(LayerTimeline, EachLayerHasItsCollectivesInOrder) {
  for (const bool sp : {false, true}) {
    SCOPED_TRACE(sp ? "sequence parallel" : "tensor parallel");
    const Plan plan = small(8, 4, sp);  // 96 layers: 24 per stage
    const Predicted p = predicted(plan);
    auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
    ASSERT_TRUE(layered.ok()) << layered.error_text();
    const Timeline& t = layered->timeline;
    const std::int64_t per_block = sp ? 2 : 1;
    // Stage 1 (rank 1), micro-batch 5: 24 layers x 2 blocks.
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::communication), 1, 5, Phase::communication, "TP "), 2 * 2 * 24 * per_block);  // F and B
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 5, Phase::forward, "attention"), 24);
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 5, Phase::forward, " MLP"), 24);
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 5, Phase::forward, "layer 24 attention"), 1);  // stage 1 holds layers 24..47
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 5, Phase::forward, "layer 23 "), 0);
    // Stage 0: the embedding and its collective; stage 3: the head.
    EXPECT_EQ(count_named(t, track_of(t, 0, Lane::compute), 0, 5, Phase::forward, "embedding"), 1);
    EXPECT_EQ(count_named(t, track_of(t, 0, Lane::communication), 0, 5, Phase::communication, "embedding TP"), 1);
    EXPECT_EQ(count_named(t, track_of(t, 3, Lane::compute), 3, 5, Phase::forward, "head"), 1);
    const std::string first = sp ? "TP all-gather" : "TP all-reduce";
    EXPECT_EQ(count_named(t, track_of(t, 1, Lane::communication), 1, 5, Phase::communication, "layer 24 " + first), 4);  // 2 blocks x (F, B)

    // Order within stage 1's forward of micro-batch 5: attention, its collective, MLP, its
    // collective, layer after layer, each piece where the one before ended.
    const auto pieces = layer_pieces(t, 1, 5, Phase::forward);
    ASSERT_GE(pieces.size(), 4u);
    std::vector<std::string> expected = sp ? std::vector<std::string>{"layer 24 TP all-gather", "layer 24 attention",
                                                                      "layer 24 TP reduce-scatter", "layer 24 TP all-gather",
                                                                      "layer 24 MLP", "layer 24 TP reduce-scatter"}
                                           : std::vector<std::string>{"layer 24 attention", "layer 24 TP all-reduce",
                                                                      "layer 24 MLP", "layer 24 TP all-reduce"};
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(pieces[i].second.substr(0, expected[i].size()), expected[i]) << i;
    }
  }
}

// The backward runs the layers last first, each block's collective after its backward.
TEST(LayerTimeline, TheBackwardRunsTheLayersInReverse) {
  const Plan plan = small(8, 4, false);
  const Predicted p = predicted(plan);
  auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
  ASSERT_TRUE(layered.ok()) << layered.error_text();
  const Timeline& t = layered->timeline;
  const auto pieces = layer_pieces(t, 1, 5, Phase::backward);
  // The backward's compute pieces (the forward's collectives come before them).
  const auto b = std::find_if(pieces.begin(), pieces.end(), [](const auto& x) { return x.second == "layer 47 MLP"; });
  ASSERT_NE(b, pieces.end());
  ASSERT_GE(pieces.end() - b, 5);
  EXPECT_EQ((b + 1)->second.substr(0, 22), "layer 47 TP all-reduce");
  EXPECT_EQ((b + 2)->second, "layer 47 attention");
  EXPECT_EQ((b + 3)->second.substr(0, 22), "layer 47 TP all-reduce");
  EXPECT_EQ((b + 4)->second, "layer 46 MLP");
  EXPECT_EQ(pieces.back().second.substr(0, 22), "layer 24 TP all-reduce");
  // Without W ops the weight gradients run after the input gradients, as one span: named so.
  EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 5, Phase::backward, "weight gradients"), 1);
}

// Mixtral 8x7B on 64 GPUs, PP 4, EP 8, 8 micro-batches; `tp` > 1 with sequence parallelism.
Plan mixtral_on_64(std::int64_t tp) {
  Plan plan = default_plan();
  plan.model = *find_model("mixtral-8x7b");
  plan.cluster.gpus = 64;
  plan.layout.tp = tp;
  plan.layout.pp = 4;
  plan.layout.ep = 8;
  plan.layout.sequence_parallel = tp > 1;
  plan.layout.recompute = Recompute::none;
  plan.training.global_batch = plan.dp() * 8;
  return plan;
}

TEST(LayerTimeline, ExpertAllToAllsAroundTheExperts) {
  const Plan plan = mixtral_on_64(1);
  const Predicted p = predicted(plan);
  auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
  ASSERT_TRUE(layered.ok()) << layered.error_text();
  const Timeline& t = layered->timeline;
  // Stage 1's 8 layers, each a MoE layer: a dispatch and a combine per pass.
  EXPECT_EQ(count_named(t, track_of(t, 1, Lane::communication), 1, 2, Phase::communication, "all-to-all dispatch"), 2 * 8);
  EXPECT_EQ(count_named(t, track_of(t, 1, Lane::communication), 1, 2, Phase::communication, "all-to-all combine"), 2 * 8);
  EXPECT_EQ(count_named(t, track_of(t, 1, Lane::compute), 1, 2, Phase::forward, " experts"), 8);
}

// With layout.tp_overlap a MoE layer (no shared experts) hides its attention block's all-gather
// and reduce-scatter under the attention GEMMs and leaves its MLP block's exposed (layer_cost()):
// the layout draws two exposed TP pieces per layer and pass, not four shares of them.
TEST(LayerTimeline, OverlappedTpExposesAMoeLayersMlpBlockOnly) {
  Plan plan = mixtral_on_64(2);
  plan.layout.tp_overlap = true;
  const Predicted p = predicted(plan);
  auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
  ASSERT_TRUE(layered.ok()) << layered.error_text();
  const Timeline& t = layered->timeline;
  const std::size_t comm = track_of(t, 1, Lane::communication);
  // Stage 1, micro-batch 2, layer 8 (its first): the MLP block's gather and scatter, per pass.
  EXPECT_EQ(count_named(t, comm, 1, 2, Phase::communication, "layer 8 TP all-gather"), 2);
  EXPECT_EQ(count_named(t, comm, 1, 2, Phase::communication, "layer 8 TP reduce-scatter"), 2);
  const Track* hidden = hidden_track(t, 1);
  ASSERT_NE(hidden, nullptr);
  std::int64_t hidden_pieces = 0;
  for (const Span& x : hidden->spans) hidden_pieces += x.micro_batch == 2 && t.name_of(x).rfind("layer 8 TP ", 0) == 0;
  EXPECT_GT(hidden_pieces, 0) << "the attention block's, under the attention";
}

// ZeRO-3's prefetched gathers and its reduce-scatters, which compute hides, are shared out over
// the layers like the exposed collectives: one gather per layer in the forward (layer 0 first),
// in the backward a gather and a reduce-scatter per layer (the last layer first), each piece
// under a compute piece, never under a TP collective; their total time and bytes kept.
TEST(LayerTimeline, ZeroThreeHiddenCollectivesLayerByLayer) {
  const Plan plan = zero3_7p5b_on_64(2, Recompute::none, 2);  // TP 2: ops laid out around its all-reduces
  const Predicted p = predicted(plan);
  auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
  ASSERT_TRUE(layered.ok()) << layered.error_text();
  const Timeline& t = layered->timeline;
  EXPECT_GT(layered->ops_laid_out, 0);
  const Track* before = hidden_track(p.timeline, 0);
  const Track* after = hidden_track(t, 0);
  ASSERT_TRUE(before != nullptr && after != nullptr);
  std::int64_t ns_before = 0, ns_after = 0;
  double bytes_before = 0, bytes_after = 0;
  for (const Span& x : before->spans) ns_before += x.duration_ns, bytes_before += x.bytes;
  for (const Span& x : after->spans) ns_after += x.duration_ns, bytes_after += x.bytes;
  EXPECT_EQ(ns_after, ns_before);
  EXPECT_NEAR(bytes_after, bytes_before, 1e-9 * bytes_before);
  // Per layer, in order: the first time each name appears.
  std::vector<std::string> forward, backward;
  const Track& compute = t.tracks[track_of(t, 0, Lane::compute)];
  for (const Span& x : after->spans) {
    const std::string& name = t.name_of(x);
    ASSERT_EQ(name.rfind("layer ", 0), 0u) << name;
    // The op it runs in: the compute piece that holds it, never a gap where a TP collective runs.
    const auto holder = std::find_if(compute.spans.begin(), compute.spans.end(), [&](const Span& c) {
      return c.start_ns <= x.start_ns && x.end_ns() <= c.end_ns();
    });
    ASSERT_NE(holder, compute.spans.end()) << name << " at " << x.start_ns;
    if (x.micro_batch != 0) continue;
    auto& list = holder->phase == Phase::forward ? forward : backward;
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  const std::string gather = " ZeRO-3 all-gather · dp x cp 32 · across nodes";
  const std::string scatter = " ZeRO-3 reduce-scatter · dp x cp 32 · across nodes";
  ASSERT_EQ(forward.size(), 36u);
  EXPECT_EQ(forward.front(), "layer 0" + gather);
  EXPECT_EQ(forward.back(), "layer 35" + gather);
  ASSERT_EQ(backward.size(), 72u);
  EXPECT_EQ(backward.front(), "layer 35" + gather);
  EXPECT_EQ(backward[35], "layer 0" + gather);
  EXPECT_EQ(backward[36], "layer 35" + scatter);
  EXPECT_EQ(backward.back(), "layer 0" + scatter);
}

// With layout.tp_overlap the all-gathers and reduce-scatters run under the layer's compute: each
// hidden piece is named after its layer and collective and lies inside that op's compute.
TEST(LayerTimeline, OverlappedTpCollectivesLayerByLayer) {
  Plan plan = small(8, 4, true);
  plan.layout.tp_overlap = true;
  const Predicted p = predicted(plan);
  auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
  ASSERT_TRUE(layered.ok()) << layered.error_text();
  const Timeline& t = layered->timeline;
  const Track* before = hidden_track(p.timeline, 0);
  const Track* after = hidden_track(t, 0);
  ASSERT_TRUE(before != nullptr && after != nullptr);
  std::int64_t ns_before = 0, ns_after = 0;
  for (const Span& x : before->spans) ns_before += x.duration_ns;
  for (const Span& x : after->spans) ns_after += x.duration_ns;
  EXPECT_EQ(ns_after, ns_before);
  const Track& compute = t.tracks[track_of(t, 0, Lane::compute)];
  std::size_t gathers = 0, scatters = 0;
  for (const Span& x : after->spans) {
    const std::string& name = t.name_of(x);
    ASSERT_EQ(name.rfind("layer ", 0), 0u) << name;
    gathers += name.find(" TP all-gather · tp 8") != std::string::npos;
    scatters += name.find(" TP reduce-scatter · tp 8") != std::string::npos;
    const auto holder = std::find_if(compute.spans.begin(), compute.spans.end(), [&](const Span& c) {
      return c.start_ns <= x.start_ns && x.end_ns() <= c.end_ns();
    });
    ASSERT_NE(holder, compute.spans.end()) << name << " at " << x.start_ns;
  }
  EXPECT_GT(gathers, 0u);
  EXPECT_GT(scatters, 0u);
  // On NVLink the layers' collectives hide completely: what stays exposed on the first stage is
  // the embedding's reduce-scatter, and the layout names it so.
  std::size_t exposed = 0;
  for (const Span& x : t.tracks[track_of(t, 0, Lane::communication)].spans) {
    const std::string& name = t.name_of(x);
    if (name.find(" TP ") == std::string::npos) continue;
    ++exposed;
    EXPECT_EQ(name.rfind("embedding ", 0), 0u) << name;
  }
  EXPECT_GT(exposed, 0u);
  // A middle stage's ops have no exposed collective left; they are laid out layer by layer all the
  // same (24 layers a chunk: an attention and an MLP piece each per pass).
  std::size_t layer_pieces = 0;
  for (const Span& x : t.tracks[track_of(t, 1, Lane::compute)].spans) {
    layer_pieces += x.micro_batch == 0 && t.name_of(x).rfind("layer ", 0) == 0;
  }
  EXPECT_EQ(layer_pieces, 2u * 24 * 2) << "forward and backward of micro-batch 0";
}

// Per op (rank, hidden track, chunk, micro-batch and the phase of the compute it runs under), the
// hidden collectives' time is the same laid out as predicted: none moves into the next op of the
// same chunk and micro-batch (R after F, B after R, W after B) when its own op was kept whole.
TEST(LayerTimeline, HiddenCollectivesStayUnderTheirOwnOp) {
  using Key = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, Phase>;
  const auto per_op = [](const Timeline& t) {
    std::map<Key, std::int64_t> out;
    for (const Track& hidden : t.tracks) {
      if (hidden.lane != Lane::communication || hidden.stream < 2) continue;
      const Track* compute = nullptr;
      for (const Track& c : t.tracks) compute = c.rank == hidden.rank && c.lane == Lane::compute ? &c : compute;
      for (const Span& x : hidden.spans) {
        const auto under = std::upper_bound(compute->spans.begin(), compute->spans.end(), x.start_ns,
                                            [](std::int64_t at, const Span& c) { return at < c.start_ns; });
        const Phase phase = under == compute->spans.begin() ? Phase::none : std::prev(under)->phase;
        out[{hidden.rank, hidden.stream, x.stage, x.micro_batch, phase}] += x.duration_ns;
      }
    }
    return out;
  };
  Plan zero3 = default_plan();
  zero3.cluster = find_system("dgx-h100")->cluster;
  zero3.cluster.gpus = 64;
  zero3.layout.tp = 8;
  zero3.layout.pp = 1;
  zero3.layout.zero_stage = 3;
  zero3.layout.sequence_parallel = true;
  zero3.layout.tp_overlap = true;
  zero3.layout.recompute = Recompute::full;
  zero3.training.global_batch = 64;
  Plan pipelined = small(8, 8, true);
  pipelined.layout.tp_overlap = true;
  pipelined.layout.recompute = Recompute::full;
  Plan dualpipe = small(8, 4, true);
  dualpipe.layout.tp_overlap = true;
  dualpipe.layout.schedule = PipelineSchedule::dualpipe;
  dualpipe.layout.vpp = 2;
  for (const Plan& plan : {zero3, pipelined, dualpipe}) {
    SCOPED_TRACE(std::string(to_string(plan.layout.schedule)) + " pp " + std::to_string(plan.layout.pp));
    const Predicted p = predicted(plan);
    auto layered = layer_timeline(plan, p.padded_vocab, p.timeline);
    ASSERT_TRUE(layered.ok()) << layered.error_text();
    const auto before = per_op(p.timeline), after = per_op(layered->timeline);
    EXPECT_FALSE(before.empty());
    std::size_t differing = 0;
    for (const auto& [key, ns] : before) {
      const auto it = after.find(key);
      differing += it == after.end() || it->second != ns;
    }
    EXPECT_EQ(differing, 0u);
    EXPECT_EQ(after.size(), before.size());
  }
}

TEST(LayerTimeline, RefusesWhatItCannotLayOut) {
  const Plan plan = small(8, 4, false);
  const Predicted p = predicted(plan);
  LayerTimelineOptions tight;
  tight.max_spans = 1000;
  auto over = layer_timeline(plan, p.padded_vocab, p.timeline, tight);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.errors().front().field, "timeline.layers");
  EXPECT_NE(over.error_text().find("1000"), std::string::npos) << over.error_text();

  Timeline measured = p.timeline;
  measured.source = TimelineSource::measured;
  auto wrong = layer_timeline(plan, p.padded_vocab, measured);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.errors().front().field, "timeline");

  Plan fewer = plan;  // a timeline of a plan with more chunks than this one
  fewer.layout.pp = 2;
  auto other = layer_timeline(fewer, p.padded_vocab, p.timeline);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.errors().front().field, "timeline");
}

}  // namespace
}  // namespace plansight::estimator
