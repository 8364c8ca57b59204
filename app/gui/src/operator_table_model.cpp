// Operator table model (see operator_table_model.h).
#include "plansight/gui/operator_table_model.h"

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

QString size_text(double v) {
  return v == static_cast<double>(static_cast<long long>(v)) ? QString::number(static_cast<long long>(v))
                                                             : QString::number(v, 'f', 2);
}

QString bytes_text(double bytes) { return format_fixed(bytes / (1 << 20), 1); }

QString roof_text(const est::OperatorRow& row) {
  return row.attainable_flops_per_s > 0 ? format_percent(row.achieved_flops_per_s / row.attainable_flops_per_s)
                                        : QStringLiteral("—");
}

}  // namespace

QString operator_pass_text(const est::OperatorCost& op) {
  switch (op.pass) {
    case est::OperatorPass::forward: return QObject::tr("forward");
    case est::OperatorPass::recompute: return QObject::tr("recompute");
    case est::OperatorPass::backward_input:
      return op.op_class == est::OperatorClass::gemm ? QObject::tr("backward dX") : QObject::tr("backward");
    case est::OperatorPass::backward_weight: return QObject::tr("backward dW");
  }
  return {};
}

QString operator_shape_text(const est::OperatorCost& op) {
  if (op.op_class != est::OperatorClass::gemm) return {};
  QString s = QStringLiteral("%1 × %2 × %3").arg(size_text(op.m), size_text(op.n), size_text(op.k));
  if (op.batch != 1) s += QStringLiteral(" (×%1)").arg(size_text(op.batch));
  return s;
}

QString operator_row_text(const est::OperatorRow& row) {
  const auto& op = row.op;
  const QString shape = operator_shape_text(op);
  return QObject::tr("%1, %2%3: %4 GFLOP, %5 MiB, %6 FLOP/byte, %7, %8 bound, %9 TFLOP/s (%10 of its roof), %11 of the %12")
      .arg(QString::fromUtf8(op.name.data(), static_cast<qsizetype>(op.name.size())), operator_pass_text(op),
           shape.isEmpty() ? QString() : QStringLiteral(" ") + shape, format_fixed(op.flops / 1e9, 2), bytes_text(op.bytes),
           format_fixed(row.intensity_flops_per_byte, 1), format_seconds(op.seconds),
           row.compute_bound ? QObject::tr("compute") : QObject::tr("memory"))
      .arg(format_fixed(row.achieved_flops_per_s / 1e12, 1), roof_text(row), format_percent(row.share),
           row.block == est::OperatorBlock::layer ? QObject::tr("layer's time") : QObject::tr("LM head's time"));
}

OperatorTableModel::OperatorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void OperatorTableModel::setRows(std::vector<est::OperatorRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

void OperatorTableModel::clear() { setRows({}); }

int OperatorTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int OperatorTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant OperatorTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const est::OperatorRow& row = rows_[static_cast<std::size_t>(index.row())];
  const est::OperatorCost& op = row.op;
  if (role == Qt::ToolTipRole) return operator_row_text(row);
  const int column = index.column();
  if (role == Qt::TextAlignmentRole) {
    const bool text = column == BlockColumn || column == OperatorColumn || column == PassColumn || column == BoundColumn;
    return QVariant::fromValue<int>((text ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != ValueRole) return {};
  const bool value = role == ValueRole;
  switch (column) {
    case BlockColumn: return row.block == est::OperatorBlock::layer ? tr("layer") : tr("LM head");
    case OperatorColumn: return QString::fromUtf8(op.name.data(), static_cast<qsizetype>(op.name.size()));
    case PassColumn: return operator_pass_text(op);
    case ShapeColumn: return operator_shape_text(op);
    case FlopsColumn: return value ? QVariant(op.flops) : QVariant(format_fixed(op.flops / 1e9, 2));
    case BytesColumn: return value ? QVariant(op.bytes) : QVariant(bytes_text(op.bytes));
    case IntensityColumn:
      return value ? QVariant(row.intensity_flops_per_byte) : QVariant(format_fixed(row.intensity_flops_per_byte, 1));
    case TimeColumn: return value ? QVariant(op.seconds) : QVariant(format_fixed(op.seconds * 1e6, 1));
    case BoundColumn: return row.compute_bound ? tr("compute") : tr("memory");
    case AchievedColumn:
      return value ? QVariant(row.achieved_flops_per_s) : QVariant(format_fixed(row.achieved_flops_per_s / 1e12, 1));
    case RoofColumn:
      if (value) return row.attainable_flops_per_s > 0 ? row.achieved_flops_per_s / row.attainable_flops_per_s : 0.0;
      return roof_text(row);
    case ShareColumn: return value ? QVariant(row.share) : QVariant(format_percent(row.share));
    case TileColumn: {
      const est::GemmTiling& t = row.tiling;
      if (t.tiles <= 0) return value ? QVariant() : QVariant(t.aligned ? QString() : QStringLiteral("!"));
      if (value) return t.waves;
      return (t.waves == 1 ? tr("%1×%2%3, %4 wave") : tr("%1×%2%3, %4 waves"))
          .arg(t.tile_rows)
          .arg(t.tile_cols)
          .arg(t.aligned ? QString() : QStringLiteral(" !"))
          .arg(t.waves);
    }
    case FillColumn: {
      const est::GemmTiling& t = row.tiling;
      if (t.tiles <= 0) return {};
      return value ? QVariant(t.tile_fill * t.wave_fill) : QVariant(format_percent(t.tile_fill * t.wave_fill));
    }
    default: return {};
  }
}

QVariant OperatorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case ShapeColumn:
        return tr("C[M,N] = A[M,K] B[K,N], times the batch, as the time model costs it on one GPU (TP and sequence "
                  "parallelism applied)");
      case FlopsColumn: return tr("Arithmetic of the kernel; element-wise kernels: a nominal few FLOPs per element, in no FLOP total");
      case BytesColumn: return tr("HBM traffic: operands read and results written once (MiB = 2^20 bytes)");
      case IntensityColumn: return tr("Arithmetic intensity: FLOPs per byte of HBM traffic");
      case BoundColumn:
        return tr("Compute bound right of the GPU's ridge point (peak FLOP/s / HBM bandwidth), memory bound left of it");
      case RoofColumn: return tr("Achieved FLOP/s over the roof above its intensity: min(peak, intensity × HBM bandwidth)");
      case ShareColumn: return tr("Share of the layer's (or the LM head's) operator time");
      case TileColumn:
        return tr("The output tile a GEMM is costed with and its waves of one tile per SM; ! : N or K rows off the "
                  "16-byte alignment Tensor Cores want (half rate)");
      case FillColumn:
        return tr("Useful share of the tiles' work: tile quantization (partly empty edge tiles) times wave "
                  "quantization (SMs idle in the last wave)");
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case BlockColumn: return tr("Block");
    case OperatorColumn: return tr("Operator");
    case PassColumn: return tr("Pass");
    case ShapeColumn: return tr("GEMM M × N × K");
    case FlopsColumn: return tr("GFLOP");
    case BytesColumn: return tr("MiB");
    case IntensityColumn: return tr("FLOP/byte");
    case TimeColumn: return tr("Time (µs)");
    case BoundColumn: return tr("Bound");
    case AchievedColumn: return tr("TFLOP/s");
    case RoofColumn: return tr("Of roof");
    case ShareColumn: return tr("Share");
    case TileColumn: return tr("Tile");
    case FillColumn: return tr("Fill");
    default: return {};
  }
}

}  // namespace plansight::gui
