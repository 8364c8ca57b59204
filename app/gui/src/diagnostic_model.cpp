// Diagnostics table model (see diagnostic_model.h).
#include "plansight/gui/diagnostic_model.h"

#include <QGuiApplication>
#include <QPalette>

#include "plansight/gui/theme.h"

namespace plansight::gui {

DiagnosticModel::DiagnosticModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiagnosticModel::setDiagnostics(std::vector<Diagnostic> diagnostics) {
  beginResetModel();
  diagnostics_ = std::move(diagnostics);
  endResetModel();
}

int DiagnosticModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(diagnostics_.size());
}

int DiagnosticModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DiagnosticModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Diagnostic& d = diagnostics_[static_cast<std::size_t>(index.row())];
  const bool error = d.severity == Severity::error;
  if (role == FieldRole) return QString::fromStdString(d.field);
  if (role == Qt::ToolTipRole) return QString::fromStdString(d.to_string());
  if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
    const QPalette palette = QGuiApplication::palette();
    return error ? alert_colour(palette) : warning_colour(palette);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case SeverityColumn:
      return error ? tr("error") : tr("warning");
    case FieldColumn:
      return QString::fromStdString(d.field);
    case MessageColumn:
      return QString::fromStdString(d.message);
    default:
      return {};
  }
}

QVariant DiagnosticModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case SeverityColumn:
      return tr("Severity");
    case FieldColumn:
      return tr("Field");
    case MessageColumn:
      return tr("Message");
    default:
      return {};
  }
}

}  // namespace plansight::gui
