// Plan page layout and inline diagnostics (see plan_form.h); plan <-> widgets is in
// plan_form_binding.cpp.
#include "plansight/gui/plan_form.h"

#include <tuple>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "plansight/estimator/enums.h"
#include "plansight/estimator/plan_fields.h"
#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/plan_summary.h"
#include "plansight/gui/preset_model.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

template <class E>
void fill_enum(QComboBox* combo, std::initializer_list<E> values) {
  for (E v : values) {
    const auto name = est::to_string(v);
    combo->addItem(QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size())), static_cast<int>(v));
  }
}


}  // namespace

PlanForm::PlanForm(PlanDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
  build();
  populate();
  connect(document_, &PlanDocument::planReplaced, this, &PlanForm::populate);
  connect(document_, &PlanDocument::estimateReady, this, &PlanForm::showDiagnostics);
}

void PlanForm::addField(QFormLayout* form, const QString& field, const QString& given_label, QWidget* editor) {
  editor->setObjectName(field);
  QString label = given_label, tooltip;
  // A plan field's label, help and range are the estimator's field table's (plan_fields.h), as
  // the CLI's flags and --help are.
  if (const est::PlanField* f = est::find_plan_field(field.toStdString())) {
    const QString name = QString::fromUtf8(f->label.data(), static_cast<qsizetype>(f->label.size()));
    QString help = QString::fromUtf8(f->help.data(), static_cast<qsizetype>(f->help.size()));
    if (!f->unit.empty() && f->unit != "currency") help += QStringLiteral(" [%1]").arg(QString::fromUtf8(f->unit.data(), static_cast<qsizetype>(f->unit.size())));
    tooltip = help + QStringLiteral("\n") + tr("Plan file: %1; flag: %2")
                                                .arg(field, QString::fromUtf8(f->flag.data(), static_cast<qsizetype>(f->flag.size())));
    editor->setToolTip(tooltip);
    if (auto* box = qobject_cast<QCheckBox*>(editor)) {
      box->setText(name);
      label.clear();
    } else {
      label = name;
    }
    // Whole numbers in a 32-bit spin box; reals in the editor's display unit (B tokens: 1e9).
    const double scale = field == QStringLiteral("training.tokens") ? 1e9 : 1.0;
    if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
      spin->setRange(static_cast<int>(std::min(f->min, 2e9)), static_cast<int>(std::min(f->max, 2e9)));
    } else if (auto* real = qobject_cast<QDoubleSpinBox*>(editor)) {
      real->setRange(f->min / scale, f->max / scale);
    }
  }
  auto* message = new QLabel(this);
  message->setWordWrap(true);
  message->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  message->setObjectName(field + QStringLiteral(".message"));
  form->addRow(label, editor);
  form->addRow(QString(), message);
  form->setRowVisible(message, false);
  fields_.insert(field, {editor, message, form, tooltip});
}

QSpinBox* PlanForm::addSpin(QFormLayout* form, const QString& field) {
  auto* spin = new QSpinBox(this);
  spin->setGroupSeparatorShown(true);
  spin->setKeyboardTracking(true);
  addField(form, field, QString(), spin);  // label and range: the field table's
  connect(spin, &QSpinBox::valueChanged, this, &PlanForm::onEdited);
  return spin;
}

QComboBox* PlanForm::addCombo(QFormLayout* form, const QString& field, const QString& label) {
  auto* combo = new QComboBox(this);
  addField(form, field, label, combo);
  return combo;
}

void PlanForm::build() {
  auto* content = new QWidget;
  content_ = content;
  auto* grid = new QGridLayout(content);
  const auto group = [&](const QString& title, int row, int column) {
    auto* box = new QGroupBox(title, content);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    grid->addWidget(box, row + 1, column);  // row 0: top_spacer_
    return form;
  };

  // Model.
  QFormLayout* model = group(tr("Model"), 0, 0);
  model_presets_ = PresetModel::models(this);
  model_combo_ = addCombo(model, QStringLiteral("model"), tr("Preset"));
  model_combo_->setModel(model_presets_);
  connect(model_combo_, &QComboBox::activated, this, &PlanForm::onModelPreset);
  addSpin(model, QStringLiteral("model.layers"));
  addSpin(model, QStringLiteral("model.hidden"));
  addSpin(model, QStringLiteral("model.heads"));
  addSpin(model, QStringLiteral("model.kv_heads"));
  addSpin(model, QStringLiteral("model.ffn_hidden"));
  addSpin(model, QStringLiteral("model.vocab"));
  // Mixture of experts, multi-head latent attention and MTP (0 experts: a dense model).
  addSpin(model, QStringLiteral("model.moe.experts"))->setSpecialValueText(tr("none (dense)"));
  addSpin(model, QStringLiteral("model.moe.top_k"));
  addSpin(model, QStringLiteral("model.moe.expert_ffn_hidden"));
  addSpin(model, QStringLiteral("model.moe.shared_experts"));
  addSpin(model, QStringLiteral("model.moe.first_dense_layers"));
  addSpin(model, QStringLiteral("model.moe.layer_interval"));
  load_imbalance_ = new QDoubleSpinBox(this);
  load_imbalance_->setRange(0, 1e6);
  load_imbalance_->setDecimals(2);
  load_imbalance_->setSingleStep(0.05);
  addField(model, QStringLiteral("model.moe.load_imbalance"), tr("Load imbalance (max/mean)"), load_imbalance_);
  connect(load_imbalance_, &QDoubleSpinBox::valueChanged, this, &PlanForm::onEdited);
  capacity_factor_ = new QDoubleSpinBox(this);
  capacity_factor_->setRange(0, 1e6);
  capacity_factor_->setDecimals(2);
  capacity_factor_->setSingleStep(0.25);
  capacity_factor_->setSpecialValueText(tr("dropless"));
  addField(model, QStringLiteral("model.moe.capacity_factor"), tr("Capacity factor"), capacity_factor_);
  connect(capacity_factor_, &QDoubleSpinBox::valueChanged, this, &PlanForm::onEdited);
  addSpin(model, QStringLiteral("model.mla.kv_lora_rank"))->setSpecialValueText(tr("none (no MLA)"));
  addSpin(model, QStringLiteral("model.mla.q_lora_rank"));
  addSpin(model, QStringLiteral("model.mtp_modules"));
  auto* import = new QPushButton(tr("Import config.json…"), this);
  import->setObjectName(QStringLiteral("importConfig"));
  connect(import, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import a Hugging Face config.json"), QString(),
                                                      tr("config.json (*.json);;All files (*)"));
    if (!path.isEmpty()) importHfConfig(path);
  });
  model_summary_ = new QLabel(this);
  model_summary_->setObjectName(QStringLiteral("modelSummary"));
  model->addRow(import, model_summary_);

  // Cluster.
  QFormLayout* cluster = group(tr("Cluster"), 1, 0);
  system_presets_ = PresetModel::systems(this);
  gpu_presets_ = PresetModel::gpus(this);
  system_combo_ = addCombo(cluster, QStringLiteral("cluster.system"), tr("System"));
  system_combo_->setModel(system_presets_);
  connect(system_combo_, &QComboBox::activated, this, &PlanForm::onSystemPreset);
  gpu_combo_ = addCombo(cluster, QStringLiteral("cluster.gpu"), tr("GPU"));
  gpu_combo_->setModel(gpu_presets_);
  connect(gpu_combo_, &QComboBox::activated, this, &PlanForm::onGpuPreset);
  addSpin(cluster, QStringLiteral("cluster.gpus"));
  price_ = new QDoubleSpinBox(this);
  price_->setRange(0, 1e6);
  price_->setDecimals(2);
  price_->setSpecialValueText(tr("unknown"));
  addField(cluster, QStringLiteral("cluster.price_per_gpu_hour"), tr("Price per GPU-hour"), price_);
  connect(price_, &QDoubleSpinBox::valueChanged, this, &PlanForm::onEdited);
  host_link_ = new QDoubleSpinBox(this);
  host_link_->setRange(0, 1e4);
  host_link_->setDecimals(1);
  host_link_->setSuffix(tr(" GB/s"));
  host_link_->setSpecialValueText(tr("unknown"));
  addField(cluster, QStringLiteral("cluster.host_link_gb_per_s"), tr("Host link per GPU"), host_link_);
  connect(host_link_, &QDoubleSpinBox::valueChanged, this, &PlanForm::onEdited);

  // Layout.
  QFormLayout* layout = group(tr("Parallel layout"), 0, 1);
  addSpin(layout, QStringLiteral("layout.tp"));
  addSpin(layout, QStringLiteral("layout.pp"));
  addSpin(layout, QStringLiteral("layout.vpp"));
  QSpinBox* dp = addSpin(layout, QStringLiteral("layout.dp"));
  dp->setSpecialValueText(tr("auto"));
  addSpin(layout, QStringLiteral("layout.cp"));
  addSpin(layout, QStringLiteral("layout.ep"));
  addSpin(layout, QStringLiteral("layout.etp"))->setSpecialValueText(tr("= TP"));
  QComboBox* zero = addCombo(layout, QStringLiteral("layout.zero_stage"), tr("ZeRO stage"));
  for (int s = 0; s <= 3; ++s) zero->addItem(s == 0 ? tr("0 (none)") : QString::number(s), s);
  sequence_parallel_ = new QCheckBox(tr("sequence parallel"), this);
  addField(layout, QStringLiteral("layout.sequence_parallel"), QString(), sequence_parallel_);
  connect(sequence_parallel_, &QCheckBox::toggled, this, &PlanForm::onEdited);
  // Communication hidden under compute: Megatron-Core's --tp-comm-overlap and combined 1F1B.
  for (auto [field, label] : {std::pair{"layout.tp_overlap", tr("overlap TP communication")},
                              std::pair{"layout.ep_overlap", tr("overlap expert all-to-all")}}) {
    auto* box = new QCheckBox(label, this);
    addField(layout, QString::fromLatin1(field), QString(), box);
    connect(box, &QCheckBox::toggled, this, &PlanForm::onEdited);
  }
  // Offloading to host memory (estimator/offload.h): ZeRO-Offload, ZeRO-Infinity, activations.
  for (auto [box, field, label] : {std::tuple{&offload_optimizer_, "layout.offload_optimizer", tr("offload optimizer to CPU")},
                                   std::tuple{&offload_params_, "layout.offload_params", tr("offload parameters to CPU")},
                                   std::tuple{&offload_activations_, "layout.offload_activations", tr("offload activations to CPU")}}) {
    *box = new QCheckBox(label, this);
    addField(layout, QString::fromLatin1(field), QString(), *box);
    connect(*box, &QCheckBox::toggled, this, &PlanForm::onEdited);
  }
  fill_enum(addCombo(layout, QStringLiteral("layout.recompute"), tr("Recomputation")),
            {est::Recompute::none, est::Recompute::selective, est::Recompute::full});
  fill_enum(addCombo(layout, QStringLiteral("layout.schedule"), tr("Schedule")),
            {est::PipelineSchedule::gpipe, est::PipelineSchedule::one_f_one_b, est::PipelineSchedule::interleaved,
             est::PipelineSchedule::zb_h1, est::PipelineSchedule::dualpipev, est::PipelineSchedule::dualpipe});

  // Training.
  QFormLayout* training = group(tr("Training"), 1, 1);
  addSpin(training, QStringLiteral("training.micro_batch"));
  addSpin(training, QStringLiteral("training.global_batch"));
  addSpin(training, QStringLiteral("training.seq_len"));
  // Megatron-LM's --make-vocab-size-divisible-by: the vocabulary is padded to this x TP; 1 shows
  // what an unpadded vocabulary (50257) costs against a padded one (50304).
  addSpin(training, QStringLiteral("training.vocab_divisible_by"));
  tokens_ = new QDoubleSpinBox(this);
  tokens_->setRange(0, 1e9);
  tokens_->setDecimals(1);
  tokens_->setSuffix(tr(" B tokens"));
  tokens_->setSpecialValueText(tr("none (no duration)"));
  addField(training, QStringLiteral("training.tokens"), tr("Token budget"), tokens_);
  connect(tokens_, &QDoubleSpinBox::valueChanged, this, &PlanForm::onEdited);
  fill_enum(
      addCombo(training, QStringLiteral("training.precision"), tr("Precision")),
      {est::Precision::fp32, est::Precision::tf32, est::Precision::fp16, est::Precision::bf16, est::Precision::fp8});
  fill_enum(addCombo(training, QStringLiteral("training.optimizer"), tr("Optimizer")),
            {est::Optimizer::adam, est::Optimizer::adam8bit, est::Optimizer::sgd_momentum, est::Optimizer::sgd});

  for (const char* field :
       {"layout.zero_stage", "layout.recompute", "layout.schedule", "training.precision", "training.optimizer"}) {
    auto* combo = qobject_cast<QComboBox*>(fields_.value(QString::fromLatin1(field)).editor);
    connect(combo, &QComboBox::currentIndexChanged, this, &PlanForm::onEdited);
  }

  general_messages_ = new QLabel(content);
  general_messages_->setObjectName(QStringLiteral("generalMessages"));
  general_messages_->setWordWrap(true);
  grid->addWidget(general_messages_, 3, 0, 1, 2);
  grid->setRowStretch(4, 1);
  top_spacer_ = new QWidget(content);
  top_spacer_->setObjectName(QStringLiteral("formTopSpacer"));
  top_spacer_->setFixedHeight(0);
  grid->addWidget(top_spacer_, 0, 0, 1, 2);

  auto* scroll = new QScrollArea(this);
  scroll_ = scroll;
  scroll->setWidgetResizable(true);
  scroll->setWidget(content);
  scroll->setFrameShape(QFrame::NoFrame);
  // The summary beside the form, outside its scroll area: it stays in view while the user types
  // anywhere in the form.
  auto* summary = new PlanSummary(document_, this);
  summary->setFixedWidth(300);
  auto* side = new QVBoxLayout;
  side->addWidget(summary);
  side->addStretch(1);
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll, 1);
  outer->addLayout(side);
}

QWidget* PlanForm::editorFor(const QString& field) const {
  QString key = field;
  while (!key.isEmpty()) {
    const auto it = fields_.constFind(key);
    if (it != fields_.constEnd()) return it->editor;
    const qsizetype dot = key.lastIndexOf(QLatin1Char('.'));
    if (dot < 0) break;
    key.truncate(dot);
  }
  return nullptr;
}

QString PlanForm::messageFor(const QString& field) const {
  const auto it = fields_.constFind(field);
  return it == fields_.constEnd() || !it->form->isRowVisible(it->message) ? QString() : it->message->text();
}

void PlanForm::clearMessages() {
  for (auto& f : fields_) {
    f.message->clear();
    f.form->setRowVisible(f.message, false);
    f.editor->setToolTip(f.help);
    f.editor->setPalette({});
  }
  general_messages_->clear();
}

void PlanForm::showDiagnostics() {
  const auto outcome = document_->estimate();
  if (!outcome) return;
  QWidget* anchor = QApplication::focusWidget();
  if (anchor && !content_->isAncestorOf(anchor)) anchor = nullptr;
  const int anchor_y = anchor ? anchor->mapTo(scroll_->viewport(), QPoint()).y() : 0;
  clearMessages();
  std::vector<Diagnostic> all = outcome->errors;
  if (outcome->estimate) {
    all.insert(all.end(), outcome->estimate->warnings.begin(), outcome->estimate->warnings.end());
    const auto& e = *outcome->estimate;
    model_summary_->setText(e.active_parameters != e.parameters
                                ? tr("%1 parameters, %2 active").arg(format_large_count(e.parameters), format_large_count(e.active_parameters))
                                : tr("%1 parameters").arg(format_large_count(e.parameters)));
  } else {
    model_summary_->setText(tr("(plan has errors)"));
  }
  QStringList general;
  for (const Diagnostic& d : all) {
    const bool error = d.severity == Severity::error;
    const QColor colour = error ? alert_colour(palette()) : warning_colour(palette());
    const QString text = QString::fromStdString(d.message).toHtmlEscaped();
    QWidget* editor = editorFor(QString::fromStdString(d.field));
    if (!editor) {
      general << QStringLiteral("<span style=\"color:%1\">%2</span> %3: %4")
                     .arg(colour.name(), error ? tr("error") : tr("warning"),
                          QString::fromStdString(d.field).toHtmlEscaped(), text);
      continue;
    }
    Field& f = fields_[editor->objectName()];
    const QString line = QStringLiteral("<span style=\"color:%1\">%2</span>").arg(colour.name(), text);
    f.message->setText(f.message->text().isEmpty() ? line : f.message->text() + QStringLiteral("<br>") + line);
    f.form->setRowVisible(f.message, true);
    editor->setToolTip(f.help.isEmpty() ? QString::fromStdString(d.message)
                                        : QString::fromStdString(d.message) + QStringLiteral("\n\n") + f.help);
    if (error) {
      // An opaque blend of the base colour towards red: readable in light and dark palettes.
      QPalette p = editor->palette();
      const QColor base = p.color(QPalette::Base);
      const QColor alert = alert_colour(palette());
      p.setColor(QPalette::Base, QColor::fromRgbF(0.75f * base.redF() + 0.25f * alert.redF(),
                                                  0.75f * base.greenF() + 0.25f * alert.greenF(),
                                                  0.75f * base.blueF() + 0.25f * alert.blueF()));
      editor->setPalette(p);
    }
  }
  general_messages_->setText(general.join(QStringLiteral("<br>")));
  if (anchor && isVisible()) keepInPlace(anchor, anchor_y);
}

void PlanForm::keepInPlace(QWidget* anchor, int viewport_y_before) {
  // The rows' new sizes reach the group boxes, the page and the scroll area as posted layout
  // requests, one level each: deliver them now to measure where the field went.
  const auto lay_out = [] {
    for (int level = 0; level < 4; ++level) QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  };
  QScrollBar* bar = scroll_->verticalScrollBar();
  content_->setMinimumHeight(0);
  // A few rounds: each corrects what it can (spacer above, scrolling, page below) and measures again.
  for (int round = 0; round < 4; ++round) {
    lay_out();
    const int moved = anchor->mapTo(scroll_->viewport(), QPoint()).y() - viewport_y_before;
    const int spacer = top_spacer_->height();
    if (moved == 0) return;
    if (moved > 0 && spacer > 0) {
      top_spacer_->setFixedHeight(spacer - std::min(moved, spacer));  // give back space held above
    } else if (moved > 0) {
      const int target = bar->value() + moved;
      // Scrolling that far needs more page below the view than there is: add it at the bottom.
      if (target > bar->maximum()) content_->setMinimumHeight(content_->height() + target - bar->maximum());
      lay_out();
      bar->setValue(target);
    } else if (bar->value() > 0) {
      bar->setValue(std::max(0, bar->value() + moved));
    } else {
      top_spacer_->setFixedHeight(spacer - moved);  // at the top already: hold the space above
    }
  }
}

}  // namespace plansight::gui
