// Timeline painting at frame rate (and the Operators page's edit -> report -> roofline repaint): a synthetic 1,000,000-span timeline (16 ranks, a compute lane of
// back-to-back F/B/W/R spans and a communication lane each) painted offscreen into a 1920x1080
// QImage at several zoom levels, and the whole "edit the default plan -> estimate -> repaint" path.
// The frame budget is 16 ms (DESIGN.md section 4). Run:
//   QT_QPA_PLATFORM=offscreen build/gui/bench/plansight_bench_timeline_paint --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <unordered_map>

#include <QApplication>
#include <QImage>
#include <QPainter>

#include "plansight/estimator/presets.h"
#include "plansight/estimator/operator_report.h"
#include "plansight/gui/memory_chart.h"
#include "plansight/gui/roofline_chart.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/timeline_painter.h"

namespace {

namespace est = plansight::estimator;
using namespace plansight::gui;

constexpr int kRanks = 16;
constexpr int kComputePerRank = 50'000;
constexpr int kCommPerRank = 12'500;  // 16 x (50,000 + 12,500) = 1,000,000 spans

const TimelineIndex& synthetic_timeline() {
  static const TimelineIndex index = [] {
    est::Timeline t;
    std::mt19937 rng(42);
    std::uniform_int_distribution<std::int64_t> duration(5'000, 50'000);  // 5-50 us kernels
    std::uniform_int_distribution<std::int64_t> gap(0, 3'000);
    const est::Phase phases[] = {est::Phase::forward, est::Phase::backward, est::Phase::weight_grad, est::Phase::recompute};
    std::unordered_map<std::string, std::int32_t> ids;  // Timeline::intern is a linear search
    const auto intern = [&](const std::string& name) {
      const auto [it, added] = ids.try_emplace(name, static_cast<std::int32_t>(t.names.size()));
      if (added) t.names.push_back(name);
      return it->second;
    };
    for (int r = 0; r < kRanks; ++r) {
      est::Track compute{r, est::Lane::compute, -1, {}, {}};
      est::Track comm{r, est::Lane::communication, -1, {}, {}};
      std::int64_t now = r * 200'000;  // pipeline-like skew
      for (int i = 0; i < kComputePerRank; ++i) {
        est::Span s;
        s.start_ns = now;
        s.duration_ns = duration(rng);
        s.phase = phases[i % 4];
        s.micro_batch = i / 4;
        s.name_id = intern(std::string(1, "FBWR"[i % 4]) + std::to_string(r) + "." + std::to_string(i / 4 % 1000));
        compute.spans.push_back(s);
        if (i % 4 == 1) {  // a collective alongside every backward
          est::Span c;
          c.start_ns = now + s.duration_ns / 2;
          c.duration_ns = s.duration_ns;
          c.kind = est::SpanKind::collective;
          c.phase = est::Phase::communication;
          comm.spans.push_back(c);
        }
        now += s.duration_ns + gap(rng);
      }
      t.tracks.push_back(std::move(compute));
      t.tracks.push_back(std::move(comm));
    }
    return TimelineIndex(std::move(t));
  }();
  return index;
}

// One frame at `zoom` (1 = everything) centred on the middle of the timeline.
void BM_PaintTimeline(benchmark::State& state) {
  const TimelineIndex& index = synthetic_timeline();
  const double zoom = static_cast<double>(state.range(0));
  const double dpr = static_cast<double>(state.range(1));
  const QSize size(1920, 1080);
  QImage image(size * dpr, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(dpr);
  TimelineRenderer renderer;
  TimelineScene scene;
  scene.size = size;
  scene.device_pixel_ratio = dpr;
  scene.label_width = 150;
  scene.palette = QGuiApplication::palette();
  scene.font = QGuiApplication::font();
  scene.axis = fit_axis(index.begin_ns(), index.end_ns(), size.width() - scene.label_width);
  scene.axis = scene.axis.zoomed(zoom, scene.axis.width_px / 2);
  for (auto _ : state) {
    QPainter painter(&image);
    renderer.paint(painter, index, scene);
    painter.end();
    benchmark::DoNotOptimize(image.constBits());
  }
  state.counters["spans"] = static_cast<double>(index.span_count());
  state.counters["visited"] = static_cast<double>(renderer.geometry().spans_visited);
  state.counters["rects"] = static_cast<double>(renderer.geometry().rect_count());
  state.counters["labels"] = static_cast<double>(renderer.geometry().labels.size());
}
BENCHMARK(BM_PaintTimeline)
    ->ArgNames({"zoom", "dpr"})
    ->Args({1, 1})->Args({10, 1})->Args({100, 1})->Args({1000, 1})->Args({10000, 1})->Args({100000, 1})
    ->Args({1, 2})->Args({1000, 2})
    ->Unit(benchmark::kMillisecond);

// The geometry alone (visible ranges, folding, batching), without QPainter: the part of a frame
// that depends on the span count.
void BM_BuildGeometry(benchmark::State& state) {
  const TimelineIndex& index = synthetic_timeline();
  const double zoom = static_cast<double>(state.range(0));
  const double dpr = static_cast<double>(state.range(1));
  TimeAxis axis = fit_axis(index.begin_ns(), index.end_ns(), 1770);
  axis = axis.zoomed(zoom, axis.width_px / 2);
  const std::vector<TimelineRow> rows = layout_rows(index, 22);
  GeometryOptions options;
  options.x_offset = 150;
  options.device_pixel_ratio = dpr;
  TimelineGeometry geometry;
  for (auto _ : state) {
    build_geometry(index, axis, rows, options, geometry);
    benchmark::DoNotOptimize(geometry.fills[0].data());
  }
  state.counters["visited"] = static_cast<double>(geometry.spans_visited);
  state.counters["rects"] = static_cast<double>(geometry.rect_count());
  state.counters["bubbles"] = static_cast<double>(geometry.bubbles.size());
}
BENCHMARK(BM_BuildGeometry)
    ->ArgNames({"zoom", "dpr"})
    ->Args({1, 1})->Args({10, 1})->Args({1000, 1})->Args({1, 2})
    ->Unit(benchmark::kMillisecond);

// What the GUI does after an edit of the default plan (TP 8 <-> 4): the worker's estimate, then
// the memory chart repaint (stage 1, what the user sees first); with `timeline` also the worker's
// predicted timeline and its repaint at full view (stage 2).
void BM_EditEstimateRepaint(benchmark::State& state) {
  const bool timeline = state.range(0) != 0;
  est::Plan plan = est::default_plan();
  QImage image(QSize(1280, 720), QImage::Format_ARGB32_Premultiplied);
  MemoryChart chart;
  TimelineRenderer renderer;
  std::int64_t spans = 0;
  for (auto _ : state) {
    plan.layout.tp = plan.layout.tp == 8 ? 4 : 8;
    est::TimePrediction prediction;  // as the app's worker: one simulation per edit
    const EstimateOutcome e = compute_estimate(plan, 0, &prediction);
    chart.setMemory(e.estimate->memory, QString());
    {
      QPainter painter(&image);
      chart.paintChart(painter, QRectF(0, 0, 1280, 720));
    }
    if (timeline) {
      const TimelineOutcome t = compute_timeline(e, &prediction);
      TimelineScene scene;
      scene.size = QSizeF(1280, 720);
      scene.palette = QGuiApplication::palette();
      scene.font = QGuiApplication::font();
      scene.axis = fit_axis(t.index->begin_ns(), t.index->end_ns(), 1280 - scene.label_width);
      QPainter painter(&image);
      renderer.paint(painter, *t.index, scene);
      spans = static_cast<std::int64_t>(t.index->span_count());
    }
    benchmark::DoNotOptimize(image.constBits());
  }
  if (timeline) state.counters["spans"] = static_cast<double>(spans);
}
BENCHMARK(BM_EditEstimateRepaint)->ArgNames({"timeline"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The parts of BM_EditEstimateRepaint/timeline:1 one by one, to see where an edit's time goes.
void BM_EditPart(benchmark::State& state) {
  const int part = static_cast<int>(state.range(0));
  est::Plan plan = est::default_plan();
  QImage image(QSize(1280, 720), QImage::Format_ARGB32_Premultiplied);
  MemoryChart chart;
  TimelineRenderer renderer;
  est::TimePrediction kept;
  const EstimateOutcome fixed = compute_estimate(plan, 0, &kept);
  const TimelineOutcome fixed_timeline = compute_timeline(fixed, &kept);
  for (auto _ : state) {
    switch (part) {
      case 0: {  // the worker's estimate, keeping the simulated timeline
        est::TimePrediction prediction;
        const EstimateOutcome e = compute_estimate(plan, 0, &prediction);
        benchmark::DoNotOptimize(e.estimate->time.iteration_s);
        break;
      }
      case 1: {  // the memory chart's repaint
        chart.setMemory(fixed.estimate->memory, QString());
        QPainter painter(&image);
        chart.paintChart(painter, QRectF(0, 0, 1280, 720));
        break;
      }
      case 2: {  // the timeline's metrics and index, from a kept prediction
        est::TimePrediction prediction;
        prediction.timeline = kept.timeline;  // a copy (counted): compute_timeline takes it over
        const TimelineOutcome t = compute_timeline(fixed, &prediction);
        benchmark::DoNotOptimize(t.index.get());
        break;
      }
      case 3: {  // the timeline's repaint at full view
        TimelineScene scene;
        scene.size = QSizeF(1280, 720);
        scene.palette = QGuiApplication::palette();
        scene.font = QGuiApplication::font();
        scene.axis = fit_axis(fixed_timeline.index->begin_ns(), fixed_timeline.index->end_ns(), 1280 - scene.label_width);
        QPainter painter(&image);
        renderer.paint(painter, *fixed_timeline.index, scene);
        break;
      }
    }
    benchmark::DoNotOptimize(image.constBits());
  }
}
BENCHMARK(BM_EditPart)->ArgNames({"part"})->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

// The Operators page after an edit of the default plan (TP 8 <-> 4): the operator report (one
// layer's and the LM head's kernels with their tilings), then the roofline's repaint at 1280 x 720.
void BM_EditOperatorsRepaint(benchmark::State& state) {
  est::Plan plan = est::default_plan();
  QImage image(QSize(1280, 720), QImage::Format_ARGB32_Premultiplied);
  RooflineChart chart;
  std::size_t rows = 0;
  for (auto _ : state) {
    plan.layout.tp = plan.layout.tp == 8 ? 4 : 8;
    auto report = est::operator_report(plan);
    if (!report.ok()) {
      state.SkipWithError("operator_report failed");
      break;
    }
    rows = report->rows.size();
    chart.setReport(report->roofline, std::move(report->rows));
    QPainter painter(&image);
    chart.paintChart(painter, QRectF(0, 0, 1280, 720));
    benchmark::DoNotOptimize(image.constBits());
  }
  state.counters["operators"] = static_cast<double>(rows);
}
BENCHMARK(BM_EditOperatorsRepaint)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  synthetic_timeline();  // built once, outside the timings
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
