// Colours and names of chart elements (see theme.h).
#include "plansight/gui/theme.h"

#include <QObject>

namespace plansight::gui {

namespace est = plansight::estimator;

QString style_name(SpanStyle style) {
  static const std::array<const char*, kSpanStyleCount> names = {
      "forward", "backward", "weight gradient", "recompute", "optimizer", "collective", "send/recv", "other"};
  return QString::fromLatin1(names[static_cast<std::size_t>(style)]);
}

QColor style_colour(SpanStyle style) {
  static const std::array<QRgb, kSpanStyleCount> colours = {0x4C78A8, 0xF58518, 0xEECA3B, 0xB279A2,
                                                            0x9D755D, 0x54A24B, 0x72B7B2, 0xBAB0AC};
  return QColor(colours[static_cast<std::size_t>(style)]);
}

QString memory_part_name(MemoryPart part) {
  static const std::array<const char*, kMemoryPartCount> names = {"weights",     "gradients", "optimizer states",
                                                                  "activations", "buffers",   "reserve"};
  return QString::fromLatin1(names[static_cast<std::size_t>(part)]);
}

QColor memory_part_colour(MemoryPart part) {
  static const std::array<QRgb, kMemoryPartCount> colours = {0x4C78A8, 0xF58518, 0x54A24B,
                                                             0xB279A2, 0x72B7B2, 0xBAB0AC};
  return QColor(colours[static_cast<std::size_t>(part)]);
}

double memory_part_bytes(const est::MemoryBreakdown& m, MemoryPart part) {
  switch (part) {
    case MemoryPart::weights:
      return m.weights_bytes;
    case MemoryPart::gradients:
      return m.gradients_bytes;
    case MemoryPart::optimizer:
      return m.optimizer_bytes;
    case MemoryPart::activations:
      return m.activations_bytes;
    case MemoryPart::buffers:
      return m.buffers_bytes;
    case MemoryPart::reserve:
      return m.reserve_bytes;
  }
  return 0;
}

QString time_part_name(TimePart part) {
  static const std::array<const char*, kTimePartCount> names = {
      "compute", "exposed TP", "exposed CP", "exposed PP", "exposed DP", "pipeline bubble", "optimizer",
      "expert all-to-all"};
  return QString::fromLatin1(names[static_cast<std::size_t>(part)]);
}

QString time_part_meaning(TimePart part) {
  switch (part) {
    case TimePart::compute:
      return QObject::tr("The first pipeline stage's kernels over all micro-batches, recomputation included");
    case TimePart::tp_comm:
    case TimePart::cp_comm:
    case TimePart::ep_comm:
      return QObject::tr("This group's collectives inside the first stage's forwards and backwards that its compute does "
                         "not hide: each op waits for them. Like every communication part, read off the predicted "
                         "timeline by the rule that measures probe and imported runs (analyze, Compare)");
    case TimePart::pp_comm:
      return QObject::tr("The first stage's pipeline sends while it has nothing else to do: the part of its sends its "
                         "compute does not hide, read off the predicted timeline by the rule that measures probe and "
                         "imported runs. Its sends run inside its pipeline bubble; with this row, the bubble row adds up "
                         "to it");
    case TimePart::dp_comm:
      return QObject::tr("Gradient reduction and ZeRO's parameter gathers that the first stage waits for, and the "
                         "optimizer's all-gather after its step");
    case TimePart::bubble:
      return QObject::tr("The first stage's time with no work at all in the pipeline window: fill, drain and waits for its "
                         "neighbours, its exposed sends left out");
    case TimePart::optimizer:
      return QObject::tr("The optimizer step itself (its gathers are under exposed DP)");
  }
  return {};
}

QColor time_part_colour(TimePart part) {
  static const std::array<QRgb, kTimePartCount> colours = {0x4C78A8, 0x54A24B, 0x88D27A, 0x72B7B2,
                                                           0xEECA3B, 0xE45756, 0x9D755D, 0xB279A2};
  return QColor(colours[static_cast<std::size_t>(part)]);
}

double time_part_seconds(const est::TimeBreakdown& b, TimePart part) {
  switch (part) {
    case TimePart::compute:
      return b.compute_s;
    case TimePart::tp_comm:
      return b.tp_comm_s;
    case TimePart::cp_comm:
      return b.cp_comm_s;
    case TimePart::pp_comm:
      return b.pp_comm_s;
    case TimePart::dp_comm:
      return b.dp_comm_s;
    case TimePart::bubble:
      return b.bubble_s;
    case TimePart::optimizer:
      return b.optimizer_s;
    case TimePart::ep_comm:
      return b.ep_comm_s;
  }
  return 0;
}

QColor bubble_colour() { return QColor(228, 87, 86, 70); }

bool is_dark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

QColor alert_colour(const QPalette& palette) { return is_dark(palette) ? QColor(0xFF6B6B) : QColor(0xC62828); }

QColor warning_colour(const QPalette& palette) { return is_dark(palette) ? QColor(0xFFC857) : QColor(0xA15C00); }

QColor text_on(const QColor& fill) {
  // Relative luminance with sRGB weights (ITU-R BT.709), threshold at mid-grey.
  const double l = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF();
  return l > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

}  // namespace plansight::gui
