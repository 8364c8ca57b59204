// RunDiffModel: two runs' timeline difference as a table (see run_diff_model.h).
#include "plansight/gui/run_diff_model.h"

#include <QFont>
#include <cmath>
#include <cstdlib>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace {
double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }
}  // namespace

RunDiffModel::RunDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunDiffModel::setDiff(const estimator::TimelineDiff& diff) {
  beginResetModel();
  rows_.clear();
  rows_.push_back({tr("step"), diff.makespan});
  // As the CLI's table: rows where neither run has time say nothing.
  for (const auto& r : diff.by_phase) if (r.a_ns || r.b_ns) rows_.push_back({tr("phase"), r});
  for (const auto& r : diff.by_kernel_class) if (r.a_ns || r.b_ns) rows_.push_back({tr("kernel class"), r});
  endResetModel();
}

void RunDiffModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

int RunDiffModel::rowOf(const QString& group, const QString& key) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].group == group && QString::fromStdString(rows_[i].diff.key) == key) return static_cast<int>(i);
  }
  return -1;
}

int RunDiffModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
int RunDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant RunDiffModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const auto& r = row.diff;
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kGroup: return row.group;
      case kKey: return QString::fromStdString(r.key);
      case kA: return seconds(r.a_ns);
      case kB: return seconds(r.b_ns);
      case kDelta: return seconds(r.delta_ns);
      case kRatio: return r.ratio;
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole) {
    return index.column() <= kKey ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::FontRole && index.row() == 0) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kGroup: return row.group;
    case kKey: return QString::fromStdString(r.key);
    case kA: return format_seconds(seconds(r.a_ns));
    case kB: return format_seconds(seconds(r.b_ns));
    case kDelta: return (r.delta_ns >= 0 ? QStringLiteral("+") : QStringLiteral("-")) + format_seconds(seconds(std::llabs(r.delta_ns)));
    case kRatio: return std::isfinite(r.ratio) ? format_fixed(r.ratio, 2) + QStringLiteral("x") : QStringLiteral("-");
    default: return {};
  }
}

QVariant RunDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kGroup: return tr("By");
    case kKey: return tr("What");
    case kA: return tr("A");
    case kB: return tr("B");
    case kDelta: return tr("B − A");
    case kRatio: return tr("B / A");
    default: return {};
  }
}

}  // namespace plansight::gui
