// Timeline view state and input handling (see timeline_widget.h).
#include "plansight/gui/timeline_widget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "plansight/gui/format.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {
QString q(std::string_view s) { return QString::fromLatin1(s.data(), static_cast<qsizetype>(s.size())); }
}  // namespace

QString span_details(const TimelineIndex& index, std::size_t track, std::size_t span) {
  const est::Track& t = index.track(track);
  const est::Span& s = t.spans[span];
  QString name = QString::fromStdString(index.timeline().name_of(s));
  if (name.isEmpty()) name = q(est::to_string(s.kind));
  QString text = QStringLiteral("<b>%1</b> — %2 (%3) on %4<br>start %5, duration %6")
                     .arg(name.toHtmlEscaped(), style_name(style_of(s)), q(est::to_string(s.kind)), track_label(t),
                          format_duration_ns(s.start_ns - index.begin_ns()), format_duration_ns(s.duration_ns));
  if (s.stage >= 0) text += QStringLiteral("<br>chunk %1").arg(s.stage);
  if (s.micro_batch >= 0) text += QStringLiteral(", micro-batch %1").arg(s.micro_batch);
  if (s.flops > 0) {
    text += QStringLiteral("<br>%1").arg(format_flops(s.flops));
    if (s.duration_ns > 0)
      text += QStringLiteral(", %1").arg(format_tflops(s.flops / static_cast<double>(s.duration_ns) / 1e3));
  }
  if (s.bytes > 0) {
    text += QStringLiteral("<br>%1").arg(format_bytes_exact(s.bytes));
    if (s.duration_ns > 0)
      text += QStringLiteral(", %1 GB/s").arg(format_fixed(s.bytes / static_cast<double>(s.duration_ns), 1));
  }
  // A CPU probe span's thread clock: how much of the span its thread ran, the rest waiting for
  // a peer or for a core it shares.
  if (s.cpu_ns >= 0 && s.duration_ns > 0) {
    text += QStringLiteral("<br>ran %1 of it on a core (%2%)")
                .arg(format_duration_ns(s.cpu_ns),
                     format_fixed(100.0 * static_cast<double>(s.cpu_ns) / static_cast<double>(s.duration_ns), 0));
  }
  return text;
}

TimelineWidget::TimelineWidget(QWidget* parent) : QAbstractScrollArea(parent) {
  setFocusPolicy(Qt::StrongFocus);
  viewport()->setMouseTracking(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setMinimumSize(400, 160);
}

double TimelineWidget::plotWidth() const { return std::max(viewport()->width() - kLabelWidth, 10.0); }

void TimelineWidget::setTimeline(std::shared_ptr<const TimelineIndex> index, std::vector<QString> track_notes) {
  index_ = std::move(index);
  notes_ = std::move(track_notes);
  hover_track_ = hover_span_ = -1;
  if (index_ && (!user_zoomed_ || axis_.span_ns() <= 1)) {
    axis_ = fit_axis(extentBegin(), extentEnd(), plotWidth());
  } else if (index_) {
    axis_ = axis_.resized(plotWidth()).clamped(extentBegin(), extentEnd());
  }
  updateScrollBar();
  viewport()->update();
  emit axisChanged();
  emit timelineChanged();
}

void TimelineWidget::setReveal(const std::vector<std::size_t>* reveal, std::int64_t until_ns, std::ptrdiff_t track,
                               std::ptrdiff_t span) {
  reveal_ = reveal;
  reveal_until_ns_ = reveal ? until_ns : std::numeric_limits<std::int64_t>::max();
  highlight_track_ = track;
  highlight_span_ = span;
  viewport()->update();
}

void TimelineWidget::setAxis(const TimeAxis& axis) {
  axis_ = axis.resized(plotWidth());
  if (index_) axis_ = axis_.clamped(extentBegin(), extentEnd());
  user_zoomed_ = true;
  viewport()->update();
  emit axisChanged();
}

void TimelineWidget::zoomBy(double factor, double anchor_plot_x) { setAxis(axis_.zoomed(factor, anchor_plot_x)); }
void TimelineWidget::zoomIn() { zoomBy(1.5, plotWidth() / 2); }
void TimelineWidget::zoomOut() { zoomBy(1 / 1.5, plotWidth() / 2); }

void TimelineWidget::setExtent(std::int64_t begin_ns, std::int64_t end_ns) {
  extent_begin_ns_ = begin_ns;
  extent_end_ns_ = end_ns;
}

std::int64_t TimelineWidget::extentBegin() const {
  return extent_end_ns_ > extent_begin_ns_ ? extent_begin_ns_ : index_ ? index_->begin_ns() : 0;
}

std::int64_t TimelineWidget::extentEnd() const {
  return extent_end_ns_ > extent_begin_ns_ ? extent_end_ns_ : index_ ? index_->end_ns() : 1;
}

void TimelineWidget::fitAll() {
  if (!index_) return;
  axis_ = fit_axis(extentBegin(), extentEnd(), plotWidth());
  user_zoomed_ = false;
  viewport()->update();
  emit axisChanged();
}

TimelineScene TimelineWidget::scene(const QSizeF& size, double dpr) const {
  TimelineScene s;
  s.axis = axis_.resized(std::max(size.width() - kLabelWidth, 10.0));
  s.size = size;
  s.label_width = kLabelWidth;
  s.ruler_height = kRulerHeight;
  s.scroll_y = verticalScrollBar()->value();
  s.device_pixel_ratio = dpr;
  s.reveal = reveal_;
  s.reveal_until_ns = reveal_until_ns_;
  s.highlight_track = hover_track_ >= 0 ? hover_track_ : highlight_track_;
  s.highlight_span = hover_track_ >= 0 ? hover_span_ : highlight_span_;
  s.track_notes = notes_;
  s.palette = palette();
  s.font = font();
  return s;
}

void TimelineWidget::paintView(QPainter& painter, const QSizeF& size, double device_pixel_ratio) const {
  if (!index_) {
    painter.fillRect(QRectF(QPointF(0, 0), size), palette().color(QPalette::Base));
    return;
  }
  renderer_.paint(painter, *index_, scene(size, device_pixel_ratio));
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter painter(viewport());
  paintView(painter, viewport()->size(), viewport()->devicePixelRatioF());
}

void TimelineWidget::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  if (index_ && !user_zoomed_) {
    axis_ = fit_axis(extentBegin(), extentEnd(), plotWidth());
  } else {
    axis_ = axis_.resized(plotWidth());
  }
  updateScrollBar();
}

void TimelineWidget::updateScrollBar() {
  const double content = index_ ? rows_height(*index_) + kRulerHeight : 0;
  const int overflow = static_cast<int>(std::ceil(content - viewport()->height()));
  verticalScrollBar()->setRange(0, std::max(overflow, 0));
  verticalScrollBar()->setPageStep(viewport()->height());
  verticalScrollBar()->setSingleStep(static_cast<int>(kComputeRowPx));
}

void TimelineWidget::scrollContentsBy(int, int) { viewport()->update(); }

void TimelineWidget::wheelEvent(QWheelEvent* event) {
  const QPoint delta = event->angleDelta();
  const double x = event->position().x() - kLabelWidth;
  if (delta.x() != 0 || (event->modifiers() & Qt::ShiftModifier)) {
    const int d = delta.x() != 0 ? delta.x() : delta.y();
    setAxis(axis_.panned(-d / 120.0 * plotWidth() * 0.1));
  } else if (delta.y() != 0) {
    // 120 units (one notch) zoom by 1.25 around the cursor.
    zoomBy(std::pow(1.25, delta.y() / 120.0), std::clamp(x, 0.0, plotWidth()));
  }
  event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    dragging_ = true;
    drag_last_ = event->pos();
    viewport()->setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
  if (dragging_) {
    const QPoint d = event->pos() - drag_last_;
    drag_last_ = event->pos();
    if (d.x() != 0) setAxis(axis_.panned(-d.x()));
    if (d.y() != 0) verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
    return;
  }
  const auto [track, span] = spanAt(event->pos());
  if (track != hover_track_ || span != hover_span_) {
    hover_track_ = track;
    hover_span_ = span;
    viewport()->update();
    emit hovered(track >= 0 ? span_details(*index_, static_cast<std::size_t>(track), static_cast<std::size_t>(span))
                            : QString());
  }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent*) {
  dragging_ = false;
  viewport()->unsetCursor();
}

void TimelineWidget::keyPressEvent(QKeyEvent* event) {
  const double step = plotWidth() * 0.1;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomIn();
      break;
    case Qt::Key_Minus:
      zoomOut();
      break;
    case Qt::Key_0:
      fitAll();
      break;
    case Qt::Key_Left:
      setAxis(axis_.panned(-step));
      break;
    case Qt::Key_Right:
      setAxis(axis_.panned(step));
      break;
    case Qt::Key_Up:
      verticalScrollBar()->triggerAction(QAbstractSlider::SliderSingleStepSub);
      break;
    case Qt::Key_Down:
      verticalScrollBar()->triggerAction(QAbstractSlider::SliderSingleStepAdd);
      break;
    default:
      QAbstractScrollArea::keyPressEvent(event);
      return;
  }
  event->accept();
}

std::pair<std::ptrdiff_t, std::ptrdiff_t> TimelineWidget::spanAt(const QPoint& pos) const {
  if (!index_ || pos.x() < kLabelWidth || pos.y() < kRulerHeight) return {-1, -1};
  const auto rows = layout_rows(*index_, kRulerHeight - verticalScrollBar()->value());
  const TimelineRow* row = row_at(rows, pos.y());
  if (!row) return {-1, -1};
  const double x = pos.x() - kLabelWidth;
  const auto tolerance = static_cast<std::int64_t>(std::ceil(2 * axis_.ns_per_px()));
  const std::ptrdiff_t span = index_->span_at(row->track, axis_.ns_at(x), tolerance);
  if (span < 0) return {-1, -1};
  if (reveal_ && static_cast<std::size_t>(span) >= (*reveal_)[row->track]) return {-1, -1};
  return {static_cast<std::ptrdiff_t>(row->track), span};
}

bool TimelineWidget::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const auto [track, span] = spanAt(help->pos());
    if (track >= 0) {
      QToolTip::showText(help->globalPos(),
                         span_details(*index_, static_cast<std::size_t>(track), static_cast<std::size_t>(span)),
                         viewport());
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  if (event->type() == QEvent::Leave && hover_track_ >= 0) {
    hover_track_ = hover_span_ = -1;
    viewport()->update();
    emit hovered({});
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace plansight::gui
