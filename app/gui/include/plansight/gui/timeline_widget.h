// The interactive timeline: one row per rank and lane, zoom (wheel at the cursor, +/-, 0 to fit),
// pan (drag, arrow keys, horizontal wheel), hover details, and an optional step-through reveal
// set by the page. Painting is TimelineRenderer's; this class only owns the view state and input.
#pragma once

#include <QAbstractScrollArea>
#include <QString>
#include <memory>
#include <vector>

#include "plansight/gui/timeline_coordinates.h"
#include "plansight/gui/timeline_index.h"
#include "plansight/gui/timeline_painter.h"

namespace plansight::gui {

// Details of one span, as rich text for tooltips and the page's info line.
QString span_details(const TimelineIndex& index, std::size_t track, std::size_t span);

class TimelineWidget : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr double kLabelWidth = 150;
  static constexpr double kRulerHeight = 22;

  explicit TimelineWidget(QWidget* parent = nullptr);

  // A new timeline; the view is refit unless the user has zoomed, then kept where it was.
  void setTimeline(std::shared_ptr<const TimelineIndex> index, std::vector<QString> track_notes);
  std::shared_ptr<const TimelineIndex> timeline() const { return index_; }
  // Step-through: spans shown per track (null: all), bubbles until `until_ns`, one span outlined.
  void setReveal(const std::vector<std::size_t>* reveal, std::int64_t until_ns, std::ptrdiff_t track,
                 std::ptrdiff_t span);

  const TimeAxis& axis() const { return axis_; }
  void setAxis(const TimeAxis& axis);  // clamped to the extent
  // The time range the view may show: the data's by default; a longer one lets two views of
  // timelines of different lengths share one axis (the Plans page). end <= begin: the data's.
  void setExtent(std::int64_t begin_ns, std::int64_t end_ns);
  std::int64_t extentBegin() const;
  std::int64_t extentEnd() const;
  void zoomBy(double factor, double anchor_plot_x);
  void zoomIn();
  void zoomOut();
  void fitAll();
  double plotWidth() const;

  // (track, span) under a viewport point, or (-1, -1).
  std::pair<std::ptrdiff_t, std::ptrdiff_t> spanAt(const QPoint& viewport_pos) const;
  // The current view painted at `size` (export, screenshots, tests).
  void paintView(QPainter& painter, const QSizeF& size, double device_pixel_ratio) const;
  QSize sizeHint() const override { return {900, 420}; }

 signals:
  void hovered(const QString& details);  // empty when leaving a span
  void axisChanged();
  void timelineChanged();  // setTimeline() gave it another timeline (or none)

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool viewportEvent(QEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  TimelineScene scene(const QSizeF& size, double dpr) const;
  void updateScrollBar();

  std::shared_ptr<const TimelineIndex> index_;
  std::vector<QString> notes_;
  mutable TimelineRenderer renderer_;
  TimeAxis axis_;
  std::int64_t extent_begin_ns_ = 0, extent_end_ns_ = 0;  // end <= begin: the data's
  bool user_zoomed_ = false;
  const std::vector<std::size_t>* reveal_ = nullptr;
  std::int64_t reveal_until_ns_ = std::numeric_limits<std::int64_t>::max();
  std::ptrdiff_t highlight_track_ = -1, highlight_span_ = -1;  // step-through's current event
  std::ptrdiff_t hover_track_ = -1, hover_span_ = -1;
  bool dragging_ = false;
  QPoint drag_last_;
};

}  // namespace plansight::gui
