// ProbeStepModel: a probe run's steps as a table (see probe_step_model.h).
#include "plansight/gui/probe_step_model.h"

#include <cmath>

#include "plansight/gui/format.h"

namespace plansight::gui {

ProbeStepModel::ProbeStepModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProbeStepModel::setSteps(std::vector<ProbeStep> steps) {
  beginResetModel();
  steps_ = std::move(steps);
  endResetModel();
}

int ProbeStepModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(steps_.size());
}

int ProbeStepModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant ProbeStepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const ProbeStep& s = steps_[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kStep: return static_cast<qlonglong>(s.step);
      case kLoss: return s.loss;
      case kSeconds: return s.seconds;
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kStep: return static_cast<qlonglong>(s.step);
    case kLoss: return std::isfinite(s.loss) ? format_fixed(s.loss, 4) : tr("diverged");
    case kSeconds: return format_seconds(s.seconds);
    default: return {};
  }
}

QVariant ProbeStepModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kStep: return tr("Step");
    case kLoss: return tr("Loss");
    case kSeconds: return tr("Time");
    default: return {};
  }
}

}  // namespace plansight::gui
