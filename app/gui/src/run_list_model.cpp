// Run list table model (see run_list_model.h).
#include "plansight/gui/run_list_model.h"

#include <QStringList>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace {
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunListModel::setRuns(std::vector<RunEntry> runs) {
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

const RunEntry* RunListModel::entry(int row) const {
  return row >= 0 && row < rowCount() ? &runs_[static_cast<std::size_t>(row)] : nullptr;
}

int RunListModel::rowOf(std::int64_t run_id) const {
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].run.id == run_id) return static_cast<int>(i);
  }
  return -1;
}

int RunListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const RunEntry& e = runs_[static_cast<std::size_t>(index.row())];
  if (role == RunIdRole) return static_cast<qlonglong>(e.run.id);
  if (role == Qt::ToolTipRole && !e.run.notes.empty()) return QString::fromStdString(e.run.notes);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case IdColumn:
      return static_cast<qlonglong>(e.run.id);
    case NameColumn:
      return QString::fromStdString(e.run.name);
    case KindColumn:
      return q(store::to_string(e.run.kind));
    case StatusColumn:
      return q(store::to_string(e.run.status));
    case DeviceColumn:
      return QString::fromStdString(e.run.device);
    case CreatedColumn:
      return QString::fromStdString(e.run.created_at);
    case StepColumn:
      return e.run.summary && e.run.summary->step_time_s ? format_seconds(*e.run.summary->step_time_s) : QString();
    case TimelinesColumn: {
      QStringList sources;
      for (const auto& t : e.timelines) sources << q(estimator::to_string(t.source));
      return sources.join(QStringLiteral(", "));
    }
    default:
      return {};
  }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case IdColumn:
      return tr("Run");
    case NameColumn:
      return tr("Name");
    case KindColumn:
      return tr("Kind");
    case StatusColumn:
      return tr("Status");
    case DeviceColumn:
      return tr("Device");
    case CreatedColumn:
      return tr("Created (UTC)");
    case StepColumn:
      return tr("Step time");
    case TimelinesColumn:
      return tr("Timelines");
    default:
      return {};
  }
}

}  // namespace plansight::gui
