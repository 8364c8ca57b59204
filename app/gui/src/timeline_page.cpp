// Timeline page: controls, figures and step-through around TimelineWidget (see timeline_page.h).
#include "plansight/gui/timeline_page.h"

#include <QAction>
#include <QLabel>
#include <QPainter>
#include <QRegularExpression>
#include <QToolBar>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "plansight/estimator/timeline_layers.h"
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
      steps_(new StepThroughBar(view_, this)),
      figures_(new QLabel(this)),
      legend_(new QLabel(this)),
      details_(new QLabel(this)) {
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
  per_layer_ = toolbar_->addAction(tr("Per layer"));
  per_layer_->setObjectName(QStringLiteral("perLayerAction"));
  per_layer_->setCheckable(true);
  per_layer_->setToolTip(tr("Lay every op out layer by layer: attention and MLP blocks, each tensor-, context- and "
                            "expert-parallel collective its own span, in the order a layer runs them; sends on a row of "
                            "their own. The op windows, totals and bubble are the simulation's."));
  connect(per_layer_, &QAction::toggled, this, [this] { refresh(); });
  // The step-through (step_through_bar.h): it says what each revealed event is below the view.
  connect(steps_, &StepThroughBar::detailsChanged, details_, &QLabel::setText);

  connect(view_, &TimelineWidget::hovered, this, [this](const QString& text) {
    if (!text.isEmpty() || !steps_->stepMode()) details_->setText(text);
  });

  auto* bars = new QHBoxLayout;
  bars->addWidget(toolbar_);
  bars->addWidget(steps_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bars);
  layout->addWidget(figures_);
  layout->addWidget(legend_);
  layout->addWidget(view_, 1);
  layout->addWidget(details_);

  connect(document_, &PlanDocument::timelineReady, this, &TimelinePage::refresh);
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
  const auto& index = per_layer_->isChecked() && layered_ ? *layered_ : *outcome->index;
  QString text = tr("Iteration %1 · bubble %2 mean, %3 max (per rank: idle pipeline time / its work) · "
                    "communication overlapped with compute %4 · %5 spans on %6 rows")
                     .arg(format_duration_ns(index.end_ns() - index.begin_ns()), format_percent(b.mean_fraction),
                          format_percent(b.max_fraction),
                          overlap_n > 0 ? format_percent(overlap_sum / overlap_n) : tr("n/a (no communication)"))
                     .arg(index.span_count())
                     .arg(index.track_count());
  if (per_layer_->isChecked()) {
    text += layered_ ? tr(" · per layer") : tr(" · not per layer: %1").arg(layered_message_);
  }
  return text;
}

std::shared_ptr<const TimelineIndex> TimelinePage::shownIndex() {
  const auto outcome = document_->timeline();
  if (!outcome || !outcome->index) return nullptr;
  if (!per_layer_->isChecked()) return outcome->index;
  if (layered_generation_ != outcome->generation || (!layered_ && layered_message_.isEmpty())) {
    layered_.reset();
    layered_message_.clear();
    layered_generation_ = outcome->generation;
    const auto estimate = document_->estimate();
    if (!estimate || !estimate->estimate || estimate->generation != outcome->generation) {
      layered_message_ = tr("the estimate is being updated");
    } else {
      est::LayerTimelineOptions options;
      options.max_spans = kMaxLayerSpans;
      auto layered =
          est::layer_timeline(estimate->plan, estimate->estimate->padded_vocab, outcome->index->timeline(), options);
      if (layered) {
        layered_ = std::make_shared<const TimelineIndex>(std::move(layered->timeline));
      } else {
        layered_message_ = QString::fromStdString(layered.errors().front().message);
      }
    }
  }
  return layered_ ? layered_ : outcome->index;
}

void TimelinePage::setPerLayer(bool on) { per_layer_->setChecked(on); }

bool TimelinePage::perLayer() const { return per_layer_->isChecked(); }

void TimelinePage::refresh() {
  const auto outcome = document_->timeline();
  const auto shown = shownIndex();
  figures_->setText(figuresText());
  if (!outcome || !shown) {
    view_->setTimeline(nullptr, {});  // the step-through follows the view
    return;
  }
  const auto& index = *shown;
  std::vector<QString> notes(index.track_count());
  for (std::size_t t = 0; t < index.track_count(); ++t) {
    const auto& track = index.track(t);
    if (track.lane == est::Lane::compute) {
      for (std::size_t i = 0; i < outcome->bubbles.ranks.size(); ++i) {
        if (outcome->bubbles.ranks[i] == track.rank) notes[t] = format_percent(outcome->bubbles.fraction[i]);
      }
    } else if (track.stream < 1) {  // not the layer view's row of sends
      for (const auto& r : outcome->ranks) {
        if (r.rank == track.rank && std::isfinite(r.overlap_ratio))
          notes[t] = tr("ovl %1").arg(format_percent(r.overlap_ratio));
      }
    }
  }
  view_->setTimeline(shown, std::move(notes));
}

void TimelinePage::setStepMode(bool on) { steps_->setStepMode(on); }

void TimelinePage::setStep(std::size_t k) { steps_->setStep(k); }

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
