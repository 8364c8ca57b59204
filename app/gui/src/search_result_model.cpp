// SearchResultModel: formatting of ranked layouts (see search_result_model.h).
#include "plansight/gui/search_result_model.h"

#include <QStringList>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

SearchResultModel::SearchResultModel(QObject* parent) : QAbstractTableModel(parent) {}

void SearchResultModel::setResult(std::shared_ptr<const est::SearchResult> result) {
  beginResetModel();
  result_ = std::move(result);
  endResetModel();
}

const est::RankedLayout* SearchResultModel::layoutAt(int row) const {
  if (!result_ || row < 0 || row >= static_cast<int>(result_->layouts.size())) return nullptr;
  return &result_->layouts[static_cast<std::size_t>(row)];
}

int SearchResultModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(result_->layouts.size());
}

int SearchResultModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

namespace {

// The raw value of a cell: a number where the column is numeric, else text.
QVariant raw_value(const est::RankedLayout& l, int row, int column) {
  const auto& c = l.candidate;
  const auto& t = l.estimate.time;
  switch (column) {
    case SearchResultModel::kRank: return row + 1;
    case SearchResultModel::kTp: return static_cast<qlonglong>(c.tp);
    case SearchResultModel::kPp: return static_cast<qlonglong>(c.pp);
    case SearchResultModel::kVpp: return static_cast<qlonglong>(c.vpp);
    case SearchResultModel::kDp: return static_cast<qlonglong>(c.dp);
    case SearchResultModel::kCp: return static_cast<qlonglong>(c.cp);
    case SearchResultModel::kMicroBatch: return static_cast<qlonglong>(c.micro_batch);
    case SearchResultModel::kSp: return c.sequence_parallel ? QStringLiteral("yes") : QStringLiteral("no");
    case SearchResultModel::kZero: return static_cast<qlonglong>(c.zero_stage);
    case SearchResultModel::kRecompute: return QString::fromUtf8(est::to_string(c.recompute).data(), static_cast<int>(est::to_string(c.recompute).size()));
    case SearchResultModel::kSchedule: return QString::fromUtf8(est::to_string(c.schedule).data(), static_cast<int>(est::to_string(c.schedule).size()));
    case SearchResultModel::kPrecision: {
      const auto name = est::to_string(l.plan.training.precision);
      return QString::fromUtf8(name.data(), static_cast<int>(name.size()));
    }
    case SearchResultModel::kOffload: {
      const auto& x = l.plan.layout;
      QStringList parts;
      if (x.offload_optimizer) parts << QStringLiteral("optimizer");
      if (x.offload_params) parts << QStringLiteral("params");
      if (x.offload_activations) parts << QStringLiteral("activations");
      return parts.isEmpty() ? QStringLiteral("none") : parts.join(QLatin1Char('+'));
    }
    case SearchResultModel::kTokensPerS: return t.tokens_per_s;
    case SearchResultModel::kMfu: return t.mfu;
    case SearchResultModel::kIteration: return t.iteration_s;
    case SearchResultModel::kMemoryGib: return l.estimate.memory.peak.total_bytes() / double(1ull << 30);
    case SearchResultModel::kDays: return t.training_days;
    default: return {};
  }
}

}  // namespace

QVariant SearchResultModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.column() >= kColumnCount) return {};
  const est::RankedLayout* l = layoutAt(index.row());
  if (!l) return {};
  const QVariant raw = raw_value(*l, index.row(), index.column());
  if (role == kSortRole) return raw;
  if (role == Qt::TextAlignmentRole) {
    return index.column() == kSchedule || index.column() == kRecompute || index.column() == kSp
               ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
               : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kTokensPerS: return format_count(raw.toDouble());
    case kMfu: return format_percent(raw.toDouble());
    case kIteration: return format_seconds(raw.toDouble());
    case kMemoryGib: return format_fixed(raw.toDouble(), 2);
    case kDays: return raw.toDouble() > 0 ? format_fixed(raw.toDouble(), 1) : QStringLiteral("-");
    default: return raw;
  }
}

QVariant SearchResultModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const names[kColumnCount] = {"Rank", "TP", "PP", "VPP", "DP", "CP", "Micro-batch", "SP",
                                                  "ZeRO", "Recompute", "Schedule", "Precision", "Offload", "Tokens/s", "MFU", "Iteration",
                                                  "Memory GiB", "Days"};
  return section >= 0 && section < kColumnCount ? QVariant(tr(names[section])) : QVariant();
}

}  // namespace plansight::gui
