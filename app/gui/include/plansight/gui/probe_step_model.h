// The steps of a probe run as a table: step number, loss and wall time of each step, in the
// order the probe ran them. Qt::UserRole gives the raw numbers (loss NaN when it diverged).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "plansight/gui/probe_runner.h"

namespace plansight::gui {

class ProbeStepModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kStep, kLoss, kSeconds, kColumnCount };

  explicit ProbeStepModel(QObject* parent = nullptr);
  void setSteps(std::vector<ProbeStep> steps);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<ProbeStep> steps_;
};

}  // namespace plansight::gui
