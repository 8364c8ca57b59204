// FigureModel: formatted predicted-vs-measured figures as a table (see figure_model.h).
#include "plansight/gui/figure_model.h"

#include <QFont>

namespace plansight::gui {

namespace {
QVariant raw(const std::optional<double>& v) { return v ? QVariant(*v) : QVariant(); }
}  // namespace

FigureModel::FigureModel(QString name_header, QString difference_tip, QObject* parent)
    : QAbstractTableModel(parent), name_header_(std::move(name_header)), difference_tip_(std::move(difference_tip)) {}

void FigureModel::setRows(std::vector<FigureRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int FigureModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
int FigureModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant FigureModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const FigureRow& r = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kName: return r.name;
        case kPredicted: return r.predicted_text;
        case kMeasured: return r.measured_text;
        case kDifference: return r.difference_text;
        default: return {};
      }
    case Qt::UserRole:
      switch (index.column()) {
        case kName: return r.name;
        case kPredicted: return raw(r.predicted);
        case kMeasured: return raw(r.measured);
        case kDifference: return raw(r.difference);
        default: return {};
      }
    case Qt::ToolTipRole: return r.tool_tip.isEmpty() ? QVariant() : QVariant(r.tool_tip);
    case Qt::TextAlignmentRole:
      return index.column() == kName ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole: {
      if (!r.bold) return {};
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    default: return {};
  }
}

QVariant FigureModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) return section == kDifference ? QVariant(difference_tip_) : QVariant();
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kName: return name_header_;
    case kPredicted: return tr("Predicted");
    case kMeasured: return tr("Measured");
    case kDifference: return tr("Difference");
    default: return {};
  }
}

}  // namespace plansight::gui
