// Errors and warnings (validation and advisor) as a table: severity, field, message. The field
// is the plan's JSON path ("layout.tp"), so a view can jump to the widget that edits it.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::gui {

class DiagnosticModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { SeverityColumn, FieldColumn, MessageColumn, ColumnCount };
  static constexpr int FieldRole = Qt::UserRole + 1;

  explicit DiagnosticModel(QObject* parent = nullptr);
  void setDiagnostics(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace plansight::gui
