// Preset list model (see preset_model.h).
#include "plansight/gui/preset_model.h"

#include "plansight/estimator/presets.h"
#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

PresetModel::PresetModel(QObject* parent) : QAbstractListModel(parent) {}

void PresetModel::setEntries(std::vector<Entry> entries) {
  beginResetModel();
  entries_ = std::move(entries);
  endResetModel();
}

int PresetModel::rowOf(const QString& name) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name.compare(name, Qt::CaseInsensitive) == 0) return static_cast<int>(i);
  }
  return -1;
}

int PresetModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

QVariant PresetModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Entry& e = entries_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
    case NameRole:
      return e.name;
    case Qt::ToolTipRole:
      return e.tooltip;
    default:
      return {};
  }
}

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

PresetModel* PresetModel::models(QObject* parent) {
  auto* m = new PresetModel(parent);
  std::vector<Entry> entries;
  for (const auto& model : est::model_presets()) {
    entries.push_back({q(model.name), QStringLiteral("%1 layers, hidden %2, %3 heads (%4 KV), vocab %5\nSource: %6")
                                          .arg(model.layers)
                                          .arg(model.hidden)
                                          .arg(model.heads)
                                          .arg(model.kv_heads)
                                          .arg(model.vocab)
                                          .arg(q(model.source))});
  }
  m->setEntries(std::move(entries));
  return m;
}

PresetModel* PresetModel::gpus(QObject* parent) {
  auto* m = new PresetModel(parent);
  std::vector<Entry> entries;
  for (const auto& gpu : est::gpu_presets()) {
    entries.push_back({q(gpu.name), QStringLiteral("%1, %2 TFLOP/s bf16 dense\nSource: %3")
                                        .arg(format_gib(static_cast<double>(gpu.memory_bytes)))
                                        .arg(format_fixed(gpu.peak_bf16_flops / 1e12, 0))
                                        .arg(q(gpu.source))});
  }
  m->setEntries(std::move(entries));
  return m;
}

PresetModel* PresetModel::systems(QObject* parent) {
  auto* m = new PresetModel(parent);
  std::vector<Entry> entries;
  for (const auto& system : est::system_presets()) {
    entries.push_back({q(system.name), q(system.description) + QStringLiteral("\nSource: ") + q(system.source)});
  }
  m->setEntries(std::move(entries));
  return m;
}

}  // namespace plansight::gui
