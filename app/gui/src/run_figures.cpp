// add_run_figures() (run_figures.h). The measured tensor-core share is read off the stored
// timeline, as the predicted one is, so that both are summed alike; the probe's own figure (its
// device report, summed by the probe from the same traced step, or from hardware counters) is
// quoted beside it and wins only where the run stored no timeline.
#include "run_figures.h"

#include <cmath>

#include "plansight/core/plan_run_comparison.h"
#include "plansight/core/predicted_gemm_share.h"
#include "plansight/core/run_throughput.h"
#include "plansight/core/tensor_core_rows.h"
#include "plansight/gui/format.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

QString q(const std::string& s) { return QString::fromStdString(s); }

// More decimals under 1%: a tiny model's MFU on a big GPU is 0.004%, not "0.0%".
QString percent(double fraction) {
  const double p = fraction * 100;
  const int decimals = std::fabs(p) < 5e-4 || std::fabs(p) >= 1 ? 1 : std::fabs(p) >= 0.1 ? 2 : 3;
  return format_fixed(p, decimals) + QLatin1Char('%');
}

QString share_text(std::optional<double> share) { return share ? percent(*share) : QStringLiteral("-"); }

// A difference of fractions in percentage points, decimals as percent(): "+2.5 pt".
QString points_text(double points) {
  const QString p = percent(points);
  return (points >= 0 ? QStringLiteral("+") : QString()) + p.left(p.size() - 1) + QStringLiteral(" pt");
}

std::string report_text(const nlohmann::json& report, const char* key) {
  const auto it = report.find(key);
  return it != report.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<FigureRow> throughput_rows(const core::RunThroughput& t) {
  FigureRow tokens;
  tokens.name = QStringLiteral("tokens/s");
  tokens.predicted = t.predicted_tokens_per_s;
  tokens.measured = t.measured_tokens_per_s;
  tokens.predicted_text = format_count(t.predicted_tokens_per_s);
  tokens.measured_text = t.measured_tokens_per_s > 0 ? format_count(t.measured_tokens_per_s) : QStringLiteral("-");
  if (t.measured_tokens_per_s > 0) tokens.difference = t.predicted_tokens_per_s / t.measured_tokens_per_s - 1;
  tokens.difference_text = q(core::percent_text(tokens.difference));
  tokens.tool_tip = QStringLiteral("global batch x sequence length over the step; difference: predicted / measured - 1");
  std::vector<FigureRow> rows{tokens};
  if (!t.predicted_mfu && !t.measured_mfu) return rows;  // no peak to divide by: the note says why
  FigureRow mfu;
  mfu.name = QStringLiteral("MFU");
  mfu.predicted = t.predicted_mfu;
  mfu.measured = t.measured_mfu;
  mfu.predicted_text = share_text(t.predicted_mfu);
  mfu.measured_text = share_text(t.measured_mfu);
  if (t.predicted_mfu && t.measured_mfu) mfu.difference = *t.predicted_mfu - *t.measured_mfu;
  mfu.difference_text = mfu.difference ? points_text(*mfu.difference) : QStringLiteral("-");
  mfu.tool_tip = QStringLiteral("model FLOPs per step over the step and the %1").arg(q(t.peak_source));
  rows.push_back(mfu);
  return rows;
}

// Kernel-class rows hold the class's part of the kernel time: their names say so.
QString class_label(const std::string& name) {
  if (name == "tensor_core_gemm") return QStringLiteral("in tensor-core GEMMs");
  if (name == "compute") return QStringLiteral("in other compute");
  return QStringLiteral("in ") + q(name);
}

QString side_tip(const char* side, const core::TensorCoreRow& r, const core::TensorCoreTime& t, const core::TensorCoreTime& step) {
  if (t.kernel_s <= 0) return QStringLiteral("%1: no kernel time").arg(QLatin1String(side));
  if (r.group == core::TensorCoreRow::Group::kernel_class) {
    return QStringLiteral("%1: %2 of the step's %3 kernel time")
        .arg(QLatin1String(side), format_seconds(t.kernel_s), format_seconds(step.kernel_s));
  }
  return QStringLiteral("%1: %2 of %3 kernel time on tensor cores")
      .arg(QLatin1String(side), format_seconds(t.tensor_core_s), format_seconds(t.kernel_s));
}

std::vector<FigureRow> share_rows(const core::TensorCoreShares& predicted, const core::TensorCoreShares& measured) {
  std::vector<FigureRow> rows;
  for (const core::TensorCoreRow& r : core::tensor_core_rows(predicted, measured)) {
    FigureRow row;
    row.name = r.group == core::TensorCoreRow::Group::kernel_class ? class_label(r.name) : q(r.name);
    row.predicted = r.predicted_figure;
    row.measured = r.measured_figure;
    row.predicted_text = share_text(row.predicted);
    row.measured_text = share_text(row.measured);
    row.difference = r.difference();
    row.difference_text = row.difference ? points_text(*row.difference) : QStringLiteral("-");
    row.tool_tip = side_tip("predicted", r, r.predicted, predicted.step) + QLatin1Char('\n') +
                   side_tip("measured", r, r.measured, measured.step);
    row.bold = r.group == core::TensorCoreRow::Group::step;
    rows.push_back(row);
  }
  return rows;
}

// What the probe itself reported for the step, for the note: "41.2% (kernel-name rules)", and
// the hardware counters' share where a step was profiled. Empty when it reported none.
QString probe_figure(const nlohmann::json& report) {
  const auto tc = report.value("tensor_cores", nlohmann::json::object());
  const auto step = tc.value("step", nlohmann::json::object());
  if (!step.contains("share")) return {};
  QString text = QStringLiteral("%1 (%2)").arg(percent(step.value("share", 0.0)), q(tc.value("source", std::string("?"))));
  if (const auto c = tc.find("counter_share"); c != tc.end() && c->is_number()) {
    text += QStringLiteral("; by hardware counters %1").arg(percent(c->get<double>()));
  }
  return text;
}

}  // namespace

void add_run_figures(RunComparison& out, const store::RunRecord& run, const est::Plan& plan, const est::Estimate& estimate,
                     const est::HardwareProfile& profile, const est::Timeline& predicted, const est::Timeline* measured,
                     double predicted_step_s, double measured_step_s) {
  const nlohmann::json report = run.summary ? run.summary->device : nlohmann::json::object();
  const std::string gpu = report_text(report, "gpu");
  const std::string capability = report_text(report, "compute_capability");
  out.device = gpu.empty() ? q(run.device)
                           : q(gpu) + (capability.empty() ? QString() : QStringLiteral(" (compute capability %1)").arg(q(capability)));
  const std::string precision = report_text(report, "precision");
  out.precision = q(precision.empty() ? std::string(est::to_string(plan.training.precision)) : precision);

  // The CLI's call, with the CLI's steps and device name: the same tokens/s and MFU.
  const core::RunThroughput t = core::run_throughput(plan, estimate, predicted_step_s, measured_step_s, plan.cluster.gpu.name);
  out.throughput = throughput_rows(t);
  out.throughput_note = t.predicted_mfu || t.measured_mfu ? QStringLiteral("MFU: model FLOPs over the %1.").arg(q(t.peak_source))
                                                          : QString::fromStdString(t.mfu_note) + QLatin1Char('.');

  // A CPU has no tensor cores: no rows rather than a row of zeros.
  const bool on_gpu = !gpu.empty() || plan.cluster.gpu.name != "cpu";
  if (!on_gpu) return;
  core::TensorCoreShares p, m;
  QStringList tip;
  tip << QStringLiteral("Step and phases: the share of their kernel time (kernels and collectives) on tensor cores; "
                        "\"in …\" rows: each kernel class's part of the step's kernel time. Both timelines are summed "
                        "alike (core::tensor_core_shares). Measured: kernels the kernel-name rules or the probe flag as "
                        "tensor-core GEMMs. Predicted: each phase's GEMM share of compute time in the operator model "
                        "(GEMMs on tensor cores in %1; none in fp32). Difference: predicted - measured, in percentage "
                        "points.")
             .arg(out.precision);
  QString note;
  if (auto gemm = core::predicted_gemm_shares(plan, &profile)) {
    p = core::tensor_core_shares(predicted, &*gemm);
  } else {
    note = QStringLiteral("No predicted share: %1. ").arg(q(gemm.error_text()));
  }
  const QString probe = probe_figure(report);
  if (measured) {
    m = core::tensor_core_shares(*measured);
  } else if (report.contains("tensor_cores")) {
    // No timeline stored: the probe's own sums of its traced step are all there is.
    const auto step = report.at("tensor_cores").value("step", nlohmann::json::object());
    m.step = {step.value("seconds", 0.0), step.value("tensor_core_seconds", 0.0)};
  }
  if (!probe.isEmpty()) {
    note += QStringLiteral("The probe reported %1 for the step").arg(probe);
    note += measured && m.step.share() ? QStringLiteral("; the rows read its stored timeline (%1), as the prediction is read.")
                                              .arg(percent(*m.step.share()))
                                       : QStringLiteral(".");
    tip << QStringLiteral("The probe's own figure is from the run's device report: its sum over the kernels of the "
                          "step it traced, by the kernel-name rules (probe/src/tensor_core_share.cpp), with the share "
                          "by hardware counters where the probe profiled a step (CUPTI range profiler). It can differ "
                          "from the rows' where the two count a kernel differently; the rows count both sides alike.");
  } else if (!measured) {
    note += QStringLiteral("This run stored no timeline and no tensor-core figure: nothing measured to compare.");
  }
  out.tensor_cores = share_rows(p, m);
  out.tensor_core_note = note;
  out.tensor_core_tip = tip.join(QLatin1Char('\n'));
  if (!probe.isEmpty()) out.tensor_cores.front().tool_tip += QStringLiteral("\nthe probe's own figure: ") + probe;
}

}  // namespace plansight::gui
