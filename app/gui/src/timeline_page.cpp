// Timeline page: controls, figures and step-through around TimelineWidget (see timeline_page.h).
#include "plansight/gui/timeline_page.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QPainter>
#include <QRegularExpression>
#include <QSlider>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/theme.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

namespace est = plansight::estimator;

TimelinePage::TimelinePage(PlanDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      view_(new TimelineWidget(this)),
      toolbar_(new QToolBar(this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      step_label_(new QLabel(this)),
      figures_(new QLabel(this)),
      legend_(new QLabel(this)),
      details_(new QLabel(this)),
      timer_(new QTimer(this)) {
  view_->setObjectName(QStringLiteral("timelineView"));
  figures_->setObjectName(QStringLiteral("timelineFigures"));
  figures_->setWordWrap(true);
  details_->setObjectName(QStringLiteral("timelineDetails"));
  details_->setWordWrap(true);
  details_->setMinimumHeight(details_->fontMetrics().height() * 3);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  legend_->setText(legendHtml());

  toolbar_->addAction(tr("Zoom in"), view_, &TimelineWidget::zoomIn)->setShortcut(QKeySequence::ZoomIn);
  toolbar_->addAction(tr("Zoom out"), view_, &TimelineWidget::zoomOut)->setShortcut(QKeySequence::ZoomOut);
  toolbar_->addAction(tr("Fit"), view_, &TimelineWidget::fitAll);
  toolbar_->addSeparator();
  step_mode_ = toolbar_->addAction(tr("Step through"));
  step_mode_->setCheckable(true);
  step_mode_->setToolTip(tr("Reveal the schedule one event at a time"));
  connect(step_mode_, &QAction::toggled, this, &TimelinePage::setStepMode);
  toolbar_->addAction(tr("|◀"), this, [this] { setStep(0); })->setToolTip(tr("First event"));
  toolbar_->addAction(tr("◀"), this, [this] { setStep(steps_.step() > 0 ? steps_.step() - 1 : 0); })
      ->setToolTip(tr("Previous event"));
  toolbar_->addAction(tr("▶"), this, [this] { setStep(steps_.step() + 1); })->setToolTip(tr("Next event"));
  toolbar_->addAction(tr("▶|"), this, [this] { setStep(steps_.size()); })->setToolTip(tr("Last event"));
  play_ = toolbar_->addAction(tr("Play"));
  play_->setCheckable(true);
  // Play's pace: a slow one for explaining each event, fast ones for a long schedule. Past 60
  // events per second a tick (every 16 ms, one frame) reveals several events.
  timer_->setObjectName(QStringLiteral("playTimer"));
  speed_ = new QComboBox(this);
  speed_->setObjectName(QStringLiteral("stepSpeed"));
  speed_->setToolTip(tr("Events revealed per second while playing"));
  for (int rate : {1, 2, 8, 30, 120, 500, 2000}) speed_->addItem(tr("%1/s").arg(rate), rate);
  speed_->setCurrentIndex(speed_->findData(8));
  toolbar_->addWidget(speed_);
  const auto interval_ms = [this] { return std::max(16, 1000 / std::max(1, speed_->currentData().toInt())); };
  connect(speed_, &QComboBox::currentIndexChanged, this, [this, interval_ms] {
    if (timer_->isActive()) timer_->start(interval_ms());
  });
  connect(play_, &QAction::toggled, this, [this, interval_ms](bool on) { on ? timer_->start(interval_ms()) : timer_->stop(); });
  connect(timer_, &QTimer::timeout, this, [this] {
    if (steps_.step() >= steps_.size()) {
      play_->setChecked(false);
      return;
    }
    const int rate = std::max(1, speed_->currentData().toInt());
    const auto per_tick = static_cast<std::size_t>(std::max(1, rate * timer_->interval() / 1000));
    setStep(std::min(steps_.step() + per_tick, steps_.size()));
  });
  slider_->setObjectName(QStringLiteral("stepSlider"));
  connect(slider_, &QSlider::valueChanged, this, [this](int v) { setStep(static_cast<std::size_t>(v)); });
  toolbar_->addWidget(slider_);
  toolbar_->addWidget(step_label_);

  connect(view_, &TimelineWidget::hovered, this, [this](const QString& text) {
    if (!text.isEmpty() || !step_mode_->isChecked()) details_->setText(text);
  });

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(toolbar_);
  layout->addWidget(figures_);
  layout->addWidget(legend_);
  layout->addWidget(view_, 1);
  layout->addWidget(details_);

  connect(document_, &PlanDocument::timelineReady, this, &TimelinePage::refresh);
  setStepMode(false);
  refresh();
}

QString TimelinePage::legendHtml() const {
  QString html;
  const auto swatch = [](const QColor& c, const QString& name) {
    return QStringLiteral(
               "<span style=\"background-color:%1\">&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp;&nbsp;")
        .arg(c.name(), name);
  };
  for (std::size_t s = 0; s < kSpanStyleCount; ++s)
    html += swatch(style_colour(static_cast<SpanStyle>(s)), style_name(static_cast<SpanStyle>(s)));
  QColor bubble = bubble_colour();
  bubble.setAlpha(255);
  html += swatch(bubble.lighter(130), tr("bubble (idle)"));
  return html;
}

QString TimelinePage::figuresText() const {
  const auto outcome = document_->timeline();
  if (!outcome || !outcome->index) return outcome ? outcome->message : tr("Estimating…");
  const auto& b = outcome->bubbles;
  double overlap_sum = 0;
  int overlap_n = 0;
  for (const auto& r : outcome->ranks) {
    if (std::isfinite(r.overlap_ratio)) overlap_sum += r.overlap_ratio, ++overlap_n;
  }
  const auto& index = *outcome->index;
  return tr("Iteration %1 · bubble %2 mean, %3 max (per rank: idle pipeline time / its compute) · "
            "communication overlapped with compute %4 · %5 spans on %6 rows")
      .arg(format_duration_ns(index.end_ns() - index.begin_ns()), format_percent(b.mean_fraction),
           format_percent(b.max_fraction),
           overlap_n > 0 ? format_percent(overlap_sum / overlap_n) : tr("n/a (no communication)"))
      .arg(index.span_count())
      .arg(index.track_count());
}

void TimelinePage::refresh() {
  const auto outcome = document_->timeline();
  figures_->setText(figuresText());
  if (!outcome || !outcome->index) {
    steps_ = StepThrough();
    view_->setTimeline(nullptr, {});
    applyStep();
    return;
  }
  const auto& index = *outcome->index;
  std::vector<QString> notes(index.track_count());
  for (std::size_t t = 0; t < index.track_count(); ++t) {
    const auto& track = index.track(t);
    if (track.lane == est::Lane::compute) {
      for (std::size_t i = 0; i < outcome->bubbles.ranks.size(); ++i) {
        if (outcome->bubbles.ranks[i] == track.rank) notes[t] = format_percent(outcome->bubbles.fraction[i]);
      }
    } else {
      for (const auto& r : outcome->ranks) {
        if (r.rank == track.rank && std::isfinite(r.overlap_ratio))
          notes[t] = tr("ovl %1").arg(format_percent(r.overlap_ratio));
      }
    }
  }
  steps_ = StepThrough(index);
  view_->setTimeline(outcome->index, std::move(notes));
  slider_->blockSignals(true);
  slider_->setRange(0, static_cast<int>(steps_.size()));
  slider_->blockSignals(false);
  steps_.set_step(step_mode_->isChecked() ? 0 : steps_.size());
  applyStep();
}

void TimelinePage::setStepMode(bool on) {
  if (step_mode_->isChecked() != on) {
    step_mode_->setChecked(on);  // comes back here through toggled()
    return;
  }
  for (QAction* a : toolbar_->actions()) {
    if (a != step_mode_ && toolbar_->actions().indexOf(a) > toolbar_->actions().indexOf(step_mode_)) a->setVisible(on);
  }
  if (!on) play_->setChecked(false);
  steps_.set_step(on ? 0 : steps_.size());
  applyStep();
}

void TimelinePage::setStep(std::size_t k) {
  if (!step_mode_->isChecked()) return;
  steps_.set_step(k);
  applyStep();
}

void TimelinePage::applyStep() {
  const bool on = step_mode_->isChecked() && steps_.available();
  if (!on) {
    view_->setReveal(nullptr, 0, -1, -1);
    step_label_->clear();
    return;
  }
  slider_->blockSignals(true);
  slider_->setValue(static_cast<int>(steps_.step()));
  slider_->blockSignals(false);
  step_label_->setText(tr(" %1 / %2 ").arg(steps_.step()).arg(steps_.size()));
  if (steps_.step() == 0) {
    view_->setReveal(&steps_.revealed(), steps_.revealed_until_ns(), -1, -1);
    details_->setText(tr("Step through: press ▶ (or Play) to reveal the schedule one event at a time."));
    return;
  }
  const auto e = steps_.event(steps_.step() - 1);
  view_->setReveal(&steps_.revealed(), steps_.revealed_until_ns(), static_cast<std::ptrdiff_t>(e.track),
                   static_cast<std::ptrdiff_t>(e.span));
  details_->setText(span_details(*view_->timeline(), e.track, e.span));
}

QSize TimelinePage::exportSize() const {
  return view_->size().isEmpty() ? QSize(1200, 500) : view_->size() + QSize(0, 28);
}

void TimelinePage::renderExport(QPainter& painter, const QSize& size) const {
  // A header line with the figures, then the current view.
  painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRectF(8, 0, size.width() - 16, 28), Qt::AlignVCenter | Qt::AlignLeft,
                   QString(figuresText()).remove(QRegularExpression(QStringLiteral("<[^>]*>"))));
  painter.translate(0, 28);
  view_->paintView(painter, QSizeF(size.width(), size.height() - 28), painter.device()->devicePixelRatioF());
}

}  // namespace plansight::gui
