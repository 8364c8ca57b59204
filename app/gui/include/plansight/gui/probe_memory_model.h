// Measured memory of a probe run per category (weights, gradients, optimizer, activations,
// buffers, reserve, total: the largest peak over ranks, as `plansight probe` stores it) as a
// table in MiB. Qt::UserRole gives bytes.
#pragma once

#include <QAbstractTableModel>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace plansight::gui {

class ProbeMemoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kCategory, kMemory, kColumnCount };

  explicit ProbeMemoryModel(QObject* parent = nullptr);
  // Rows in core::memory_categories() order; categories the map lacks are left out.
  void setMemory(const std::map<std::string, std::int64_t>& bytes);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<std::pair<QString, std::int64_t>> rows_;
};

}  // namespace plansight::gui
