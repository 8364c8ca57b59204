// Advisor rules fire on the situations they describe (and stay quiet otherwise), and the
// Plansight timeline JSON round-trips a predicted timeline and rejects malformed files.
#include <gtest/gtest.h>

#include <algorithm>

#include "plansight/estimator/advisor.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_json.h"

namespace plansight::estimator {
namespace {

bool warns(const Estimate& e, const std::string& field) {
  return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const Diagnostic& d) { return d.field == field; });
}

TEST(Advisor, VocabularyPadding) {
  // The default plan pads 50257 to 51200 (training.vocab_divisible_by 128 x TP 8): its logits
  // GEMMs are aligned, so there is nothing to advise.
  EXPECT_FALSE(warns(*estimate(default_plan()), "model.vocab"));
  Plan p = default_plan();
  p.training.vocab_divisible_by = 1;  // as is (rounded to TP only): 50264 / 8 = 6283 columns per GPU
  auto e = estimate(p);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(warns(*e, "model.vocab"));
  const auto it = std::find_if(e->warnings.begin(), e->warnings.end(), [](const Diagnostic& d) { return d.field == "model.vocab"; });
  EXPECT_NE(it->message.find("6283"), std::string::npos) << it->message;
  EXPECT_NE(it->message.find("pad it to 50304"), std::string::npos) << it->message;
  p.model.vocab = 50304;
  EXPECT_FALSE(warns(*estimate(p), "model.vocab"));
}

TEST(Advisor, TensorParallelAcrossNodesAndBubbles) {
  Plan p = default_plan();
  p.layout.tp = 16;
  p.model.heads = 96;
  p.layout.pp = 4;
  auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_TRUE(warns(*e, "layout.tp"));
  Plan q = default_plan();
  q.training.global_batch = 16 * 8;  // 8 micro-batches on 8 stages
  auto f = estimate(q);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(warns(*f, "layout.schedule")) << "bubble of (p-1)/m = 7/8";
  EXPECT_FALSE(warns(*estimate(default_plan()), "layout.schedule"));
}

TEST(Advisor, ExposedDataParallelAndSmallMicroBatches) {
  Plan p = default_plan();
  p.model = *find_model("llama-2-7b");
  p.layout = LayoutSpec{};
  p.layout.dp_overlap = false;
  p.cluster.gpus = 256;
  p.training.global_batch = 256;
  p.training.seq_len = 32;
  auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_TRUE(warns(*e, "layout.dp_overlap"));
  EXPECT_TRUE(warns(*e, "training.micro_batch")) << "32-token micro-batches: the weights' reads dominate";
}

TEST(TimelineJson, RoundTripOfAPredictedTimeline) {
  Plan p = default_plan();
  p.training.global_batch = 16 * 16;
  auto e = estimate(p);
  auto t = predict_time(p, e->padded_vocab);
  ASSERT_TRUE(t.ok());
  const auto json = to_json(t->timeline);
  auto back = timeline_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  EXPECT_EQ(back->end_ns(), t->timeline.end_ns());
}

TEST(TimelineJson, MalformedFilesAreErrors) {
  EXPECT_FALSE(timeline_from_json(nlohmann::json::array()).ok());
  EXPECT_FALSE(timeline_from_json({{"format", "plansight-timeline"}, {"version", 7}}).ok());
  nlohmann::json j = {{"format", "plansight-timeline"}, {"version", 1}, {"names", {"a"}},
                      {"tracks", {{{"rank", 0}, {"lane", "compute"}, {"spans", {{0, 10, 3, "kernel", "forward", 0, 0, 0, 0, false}}}}}}};
  auto r = timeline_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors()[0].field.find("spans[0]"), std::string::npos);
  j["tracks"][0]["spans"][0][2] = 0;
  EXPECT_TRUE(timeline_from_json(j).ok());
  j["tracks"][0]["lane"] = "sideways";
  EXPECT_FALSE(timeline_from_json(j).ok());
}

}  // namespace
}  // namespace plansight::estimator
