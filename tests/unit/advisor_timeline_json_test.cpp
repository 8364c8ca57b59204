// Advisor rules fire on the situations they describe (and stay quiet otherwise), and the
// Plansight timeline JSON round-trips a predicted timeline and rejects malformed files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "plansight/estimator/advisor.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
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
  // Exposed TP time over a quarter of the iteration: the hint names what is left to do. TP 8 over
  // nodes of 2 GPUs (then 1) crosses the network.
  const auto tp_hint = [](const Plan& plan) {
    auto x = estimate(plan);
    EXPECT_TRUE(x.ok()) << x.error_text();
    if (!x.ok()) return std::string();
    const auto it = std::find_if(x->warnings.begin(), x->warnings.end(), [](const Diagnostic& d) {
      return d.field == "layout.tp" && d.message.find("exposed tensor-parallel") != std::string::npos;
    });
    return it == x->warnings.end() ? std::string() : it->message;
  };
  Plan spread = default_plan();
  spread.cluster.gpus_per_node = 2;
  EXPECT_NE(tp_hint(spread).find("use sequence parallelism and overlap"), std::string::npos) << tp_hint(spread);
  spread.layout.sequence_parallel = true;
  EXPECT_NE(tp_hint(spread).find("overlap it with the GEMMs (tp_overlap"), std::string::npos) << tp_hint(spread);
  spread.cluster.gpus_per_node = 1;
  spread.layout.tp_overlap = true;
  EXPECT_NE(tp_hint(spread).find("even with tp_overlap"), std::string::npos) << tp_hint(spread);
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

// The default plan on 16 micro-batches, its predicted timeline kept.
Result<TimePrediction> small_prediction() {
  Plan p = default_plan();
  p.training.global_batch = 16 * 16;
  auto e = estimate(p);
  if (!e) return e.errors();
  return predict_time(p, e->padded_vocab);
}

TEST(TimelineJson, RoundTripOfAPredictedTimeline) {
  auto t = small_prediction();
  ASSERT_TRUE(t.ok());
  const auto json = to_json(t->timeline);
  auto back = timeline_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(to_json(*back), json);
  EXPECT_EQ(back->end_ns(), t->timeline.end_ns());
}

// The streamed text is the document to_json() builds, with the extra members, and every number
// reads back to the same bits: a predicted timeline, and one with the values a writer gets wrong
// (integral and tiny doubles, the largest finite, -0, names needing escapes, invalid UTF-8).
TEST(TimelineJson, StreamedTextIsTheDocument) {
  auto predicted = small_prediction();
  ASSERT_TRUE(predicted.ok());
  Timeline odd;
  odd.source = TimelineSource::imported;
  odd.title = "a \"quoted\" title\twith a tab";
  odd.names = {"plain", "back\\slash \x01 ctl", "caf\xC3\xA9", "bad \xFF\xC3 utf-8"};
  Track track{3, Lane::communication, 7, "label \xE2\x80\x94 dash", {}};
  const double doubles[] = {0.0, -0.0, 5.0, 0.1, 1e300, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                            123456789.0 / 7.0, 2.5e-7};
  std::int64_t at = -5;
  for (const double d : doubles) {
    Span s;
    s.start_ns = at;
    s.duration_ns = std::numeric_limits<std::int64_t>::max() / 4;
    s.name_id = static_cast<std::int32_t>(at % 5) - 1;
    s.kind = SpanKind::collective;
    s.phase = Phase::backward;
    s.stage = -1;
    s.micro_batch = static_cast<std::int32_t>(at);
    s.flops = d;
    s.bytes = -d;
    s.tensor_core = at % 2 == 0;
    s.cpu_ns = at % 3 == 0 ? -1 : (at < 0 ? 0 : at);  // measured on some spans only
    s.operator_id = at % 2 == 0 ? -1 : 0;  // a GPU kernel's operator, with or without a CPU time
    track.spans.push_back(s);
    at += 1'000'000'007;
  }
  odd.tracks.push_back(track);
  odd.tracks.push_back(Track{4, Lane::host, -1, "", {}});  // no spans
  const nlohmann::json plan = {{"plan", to_json(default_plan())}, {"tracks", "not the timeline's"}};
  for (const Timeline* t : {&predicted->timeline, &odd}) {
    std::ostringstream text;
    write_json(text, *t, plan);
    const auto parsed = nlohmann::json::parse(text.str());
    nlohmann::json built = to_json(*t);
    built["plan"] = plan["plan"];
    // The built document as it is written out (its invalid UTF-8 replaced), read back.
    const auto expected = nlohmann::json::parse(built.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    ASSERT_EQ(parsed, expected);
    auto back = timeline_from_json(parsed);
    ASSERT_TRUE(back.ok()) << back.error_text();
    ASSERT_EQ(back->tracks.size(), t->tracks.size());
    for (std::size_t k = 0; k < t->tracks.size(); ++k) {
      for (std::size_t i = 0; i < t->tracks[k].spans.size(); ++i) {
        const Span& a = t->tracks[k].spans[i];
        const Span& b = back->tracks[k].spans[i];
        EXPECT_EQ(a.start_ns, b.start_ns);
        EXPECT_EQ(a.duration_ns, b.duration_ns);
        EXPECT_EQ(std::memcmp(&a.flops, &b.flops, sizeof(double)), 0) << a.flops << " read back as " << b.flops;
        EXPECT_EQ(std::memcmp(&a.bytes, &b.bytes, sizeof(double)), 0) << a.bytes << " read back as " << b.bytes;
        EXPECT_EQ(a.cpu_ns, b.cpu_ns);
        EXPECT_EQ(a.operator_id, b.operator_id);
      }
    }
  }
  // Not finite: null, as the built document dumps it (which no reader takes as a span).
  odd.tracks[0].spans[0].flops = std::nan("");
  std::ostringstream text;
  write_json(text, odd);
  EXPECT_EQ(nlohmann::json::parse(text.str())["tracks"][0]["spans"][0][7], nullptr);
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
  // An 11th element is the span's thread CPU time: a count of nanoseconds, never negative.
  j["tracks"][0]["spans"][0].push_back(7);
  auto clocked = timeline_from_json(j);
  ASSERT_TRUE(clocked.ok()) << clocked.error_text();
  EXPECT_EQ(clocked->tracks[0].spans[0].cpu_ns, 7);
  EXPECT_EQ(to_json(*clocked)["tracks"][0]["spans"][0].size(), 11U);
  j["tracks"][0]["spans"][0][10] = -3;
  EXPECT_FALSE(timeline_from_json(j).ok());
  j["tracks"][0]["spans"][0][10] = "7";
  EXPECT_FALSE(timeline_from_json(j).ok());
  j["tracks"][0]["spans"][0].erase(10);
  ASSERT_TRUE(timeline_from_json(j).ok());
  EXPECT_EQ(timeline_from_json(j)->tracks[0].spans[0].cpu_ns, -1) << "not measured";
  // A 12th is the span's operator, a name index, after a CPU time that may then be -1.
  j["tracks"][0]["spans"][0].push_back(-1);
  j["tracks"][0]["spans"][0].push_back(0);
  auto with_operator = timeline_from_json(j);
  ASSERT_TRUE(with_operator.ok()) << with_operator.error_text();
  EXPECT_EQ(with_operator->tracks[0].spans[0].operator_id, 0);
  EXPECT_EQ(with_operator->tracks[0].spans[0].cpu_ns, -1);
  EXPECT_EQ(to_json(*with_operator)["tracks"][0]["spans"][0].size(), 12U);
  j["tracks"][0]["spans"][0][11] = 1;
  auto outside = timeline_from_json(j);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error_text().find("operator index 1 out of range"), std::string::npos) << outside.error_text();
  j["tracks"][0]["spans"][0][11] = 0;
  j["tracks"][0]["spans"][0][10] = -2;
  EXPECT_FALSE(timeline_from_json(j).ok());
  j["tracks"][0]["spans"][0].erase(11);
  j["tracks"][0]["spans"][0].erase(10);
  j["tracks"][0]["lane"] = "sideways";
  EXPECT_FALSE(timeline_from_json(j).ok());
}

}  // namespace
}  // namespace plansight::estimator
