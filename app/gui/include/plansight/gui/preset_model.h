// A list of named presets (models, GPUs, systems) for combo boxes: the name shows, the
// description and the source of its numbers are the tooltip.
#pragma once

#include <QAbstractListModel>
#include <QString>
#include <vector>

namespace plansight::gui {

class PresetModel : public QAbstractListModel {
  Q_OBJECT

 public:
  struct Entry {
    QString name;
    QString tooltip;
  };
  static constexpr int NameRole = Qt::UserRole + 1;

  explicit PresetModel(QObject* parent = nullptr);
  void setEntries(std::vector<Entry> entries);
  // Row of the entry with this name (case-insensitive), or -1.
  int rowOf(const QString& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  static PresetModel* models(QObject* parent);   // estimator::model_presets()
  static PresetModel* gpus(QObject* parent);     // estimator::gpu_presets()
  static PresetModel* systems(QObject* parent);  // estimator::system_presets()

 private:
  std::vector<Entry> entries_;
};

}  // namespace plansight::gui
