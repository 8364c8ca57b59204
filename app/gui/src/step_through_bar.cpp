// StepThroughBar (see step_through_bar.h).
#include "plansight/gui/step_through_bar.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QTimer>
#include <algorithm>

#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

StepThroughBar::StepThroughBar(TimelineWidget* view, QWidget* parent)
    : QToolBar(parent), view_(view), slider_(new QSlider(Qt::Horizontal, this)), label_(new QLabel(this)), timer_(new QTimer(this)) {
  mode_ = addAction(tr("Step through"));
  mode_->setCheckable(true);
  mode_->setToolTip(tr("Reveal the timeline one event at a time"));
  connect(mode_, &QAction::toggled, this, &StepThroughBar::setStepMode);
  controls_.push_back(addAction(tr("|◀"), this, [this] { setStep(0); }));
  controls_.back()->setToolTip(tr("First event"));
  controls_.push_back(addAction(tr("◀"), this, [this] { setStep(steps_.step() > 0 ? steps_.step() - 1 : 0); }));
  controls_.back()->setToolTip(tr("Previous event"));
  controls_.push_back(addAction(tr("▶"), this, [this] { setStep(steps_.step() + 1); }));
  controls_.back()->setToolTip(tr("Next event"));
  controls_.push_back(addAction(tr("▶|"), this, [this] { setStep(steps_.size()); }));
  controls_.back()->setToolTip(tr("Last event"));
  play_ = addAction(tr("Play"));
  play_->setCheckable(true);
  controls_.push_back(play_);
  // Play's pace: a slow one for explaining each event, fast ones for a long schedule. Past 60
  // events per second a tick (every 16 ms, one frame) reveals several events.
  timer_->setObjectName(QStringLiteral("playTimer"));
  speed_ = new QComboBox(this);
  speed_->setObjectName(QStringLiteral("stepSpeed"));
  speed_->setToolTip(tr("Events revealed per second while playing"));
  for (int rate : {1, 2, 8, 30, 120, 500, 2000}) speed_->addItem(tr("%1/s").arg(rate), rate);
  speed_->setCurrentIndex(speed_->findData(8));
  controls_.push_back(addWidget(speed_));
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
  controls_.push_back(addWidget(slider_));
  controls_.push_back(addWidget(label_));
  connect(view_, &TimelineWidget::timelineChanged, this, &StepThroughBar::reset);
  setStepMode(false);
  reset();
}

bool StepThroughBar::stepMode() const { return mode_->isChecked(); }

void StepThroughBar::reset() {
  const auto index = view_->timeline();
  steps_ = index ? StepThrough(*index) : StepThrough();
  slider_->blockSignals(true);
  slider_->setRange(0, static_cast<int>(steps_.size()));
  slider_->blockSignals(false);
  steps_.set_step(stepMode() ? 0 : steps_.size());
  apply();
}

void StepThroughBar::setStepMode(bool on) {
  if (mode_->isChecked() != on) {
    mode_->setChecked(on);  // comes back here through toggled()
    return;
  }
  for (QAction* a : controls_) a->setVisible(on);
  if (!on) play_->setChecked(false);
  steps_.set_step(on ? 0 : steps_.size());
  apply();
  if (!on) emit detailsChanged(QString());
}

void StepThroughBar::setStep(std::size_t k) {
  if (!stepMode()) return;
  steps_.set_step(k);
  apply();
}

void StepThroughBar::apply() {
  const bool on = stepMode() && steps_.available();
  if (!on) {
    view_->setReveal(nullptr, 0, -1, -1);
    label_->clear();
    return;
  }
  slider_->blockSignals(true);
  slider_->setValue(static_cast<int>(steps_.step()));
  slider_->blockSignals(false);
  label_->setText(tr(" %1 / %2 ").arg(steps_.step()).arg(steps_.size()));
  if (steps_.step() == 0) {
    view_->setReveal(&steps_.revealed(), steps_.revealed_until_ns(), -1, -1);
    emit detailsChanged(tr("Step through: press ▶ (or Play) to reveal the timeline one event at a time."));
    return;
  }
  const auto e = steps_.event(steps_.step() - 1);
  view_->setReveal(&steps_.revealed(), steps_.revealed_until_ns(), static_cast<std::ptrdiff_t>(e.track),
                   static_cast<std::ptrdiff_t>(e.span));
  emit detailsChanged(span_details(*view_->timeline(), e.track, e.span));
}

}  // namespace plansight::gui
