// plan_caption(): see plan_caption.h. Fields a layout leaves at their default (VPP 1, CP 1, EP 1,
// no sequence parallelism) are left out, as the CLI's plan line leaves them out.
#include "plansight/gui/plan_caption.h"

#include <QStringList>

#include "plansight/estimator/enums.h"

namespace plansight::gui {

namespace {
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
}  // namespace

QString plan_caption(const estimator::Plan& plan) {
  const auto& l = plan.layout;
  QStringList parts;
  QString where = QStringLiteral("%1 on %2 x %3").arg(q(plan.model.name)).arg(plan.cluster.gpus).arg(q(plan.cluster.gpu.name));
  if (!plan.cluster.name.empty()) where += QStringLiteral(" (%1)").arg(q(plan.cluster.name));
  parts << where << QStringLiteral("TP %1").arg(l.tp) << QStringLiteral("PP %1").arg(l.pp);
  if (l.vpp > 1) parts << QStringLiteral("VPP %1").arg(l.vpp);
  parts << QStringLiteral("DP %1").arg(plan.dp());
  if (l.cp > 1) parts << QStringLiteral("CP %1").arg(l.cp);
  if (l.ep > 1) parts << QStringLiteral("EP %1").arg(l.ep);
  if (l.sequence_parallel) parts << QStringLiteral("SP");
  parts << QStringLiteral("ZeRO %1").arg(l.zero_stage) << QStringLiteral("recompute %1").arg(q(estimator::to_string(l.recompute)))
        << q(estimator::to_string(l.schedule))
        << QStringLiteral("micro-batch %1, global batch %2 x %3 tokens")
               .arg(plan.training.micro_batch)
               .arg(plan.training.global_batch)
               .arg(plan.training.seq_len)
        << q(estimator::to_string(plan.training.precision));
  return parts.join(QStringLiteral(" · "));
}

}  // namespace plansight::gui
