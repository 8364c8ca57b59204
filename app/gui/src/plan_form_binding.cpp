// Plan <-> widgets of the Plan page, preset choices and config.json import (see plan_form.h).
// Collect starts from the document's plan, so fields the form does not show (norms, biases,
// bandwidths, reserve, ...) survive every edit. Model fields are edits of a base model through
// estimator::derive_model, the rule plan files and CLI flags follow: typing a hidden size moves
// the MLP width with it unless the MLP width was typed too.
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QSpinBox>
#include <algorithm>

#include "plansight/estimator/hf_config.h"
#include "plansight/estimator/model_derivation.h"
#include "plansight/estimator/plan_fields.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/plan_form.h"
#include "plansight/gui/preset_model.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

int clamp_int(std::int64_t v) { return static_cast<int>(std::clamp<std::int64_t>(v, 0, 2'000'000'000)); }

void set_combo_data(QComboBox* combo, int value) { combo->setCurrentIndex(combo->findData(value)); }

template <class E>
E combo_enum(const QComboBox* combo, E fallback) {
  const QVariant v = combo->currentData();
  return v.isValid() ? static_cast<E>(v.toInt()) : fallback;
}

// How an editor shows a field's value: whole numbers in spin boxes, reals in their display unit
// (the token budget in billions), toggles as check boxes, names (and the ZeRO stage) in combos.
double display_scale(const est::PlanField& f) { return f.path == "training.tokens" ? 1e9 : 1.0; }

void show_value(QWidget* editor, const est::PlanField& f, const nlohmann::json& value) {
  if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
    const int v = clamp_int(value.get<std::int64_t>());
    if (spin->value() != v) spin->setValue(v);
  } else if (auto* real = qobject_cast<QDoubleSpinBox*>(editor)) {
    real->setValue(value.get<double>() / display_scale(f));
  } else if (auto* box = qobject_cast<QCheckBox*>(editor)) {
    box->setChecked(value.get<bool>());
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    combo->setCurrentIndex(value.is_string() ? combo->findText(QString::fromStdString(value.get<std::string>()))
                                             : combo->findData(static_cast<int>(value.get<std::int64_t>())));
  }
}

// The editor's value as the field's JSON value; `current` (the plan's) when the editor shows it
// rounded (a spin box with 1 decimal shows 31.5 GB/s as 31.5): an untouched editor keeps the
// plan's exact value.
nlohmann::json edited_value(const QWidget* editor, const est::PlanField& f, const nlohmann::json& current) {
  if (const auto* spin = qobject_cast<const QSpinBox*>(editor)) return static_cast<std::int64_t>(spin->value());
  if (const auto* real = qobject_cast<const QDoubleSpinBox*>(editor)) {
    const double scale = display_scale(f);
    const double half_step = 0.5 * std::pow(10.0, -real->decimals());
    if (current.is_number() && std::abs(real->value() - current.get<double>() / scale) < half_step) return current;
    return real->value() * scale;
  }
  if (const auto* box = qobject_cast<const QCheckBox*>(editor)) return box->isChecked();
  if (const auto* combo = qobject_cast<const QComboBox*>(editor)) {
    if (f.kind == est::FieldKind::choice) return combo->currentText().toStdString();
    return static_cast<std::int64_t>(combo->currentData().toInt());
  }
  return current;
}

// The preset row whose structure equals the model's, so that an edited preset shows as custom.
int matching_model_row(const PresetModel* presets, const est::ModelSpec& m) {
  const int row = presets->rowOf(QString::fromStdString(m.name));
  if (row < 0) return -1;
  const auto& p = est::model_presets()[static_cast<std::size_t>(row)];
  // The routing assumptions (imbalance, capacity) are not structure: the preset still shows.
  est::MoeSpec routed = m.moe;
  routed.load_imbalance = p.moe.load_imbalance;
  routed.capacity_factor = p.moe.capacity_factor;
  const bool same = p.layers == m.layers && p.hidden == m.hidden && p.heads == m.heads && p.kv_heads == m.kv_heads &&
                    p.ffn_hidden == m.ffn_hidden && p.vocab == m.vocab && p.moe == routed && p.mla == m.mla &&
                    p.mtp_modules == m.mtp_modules;
  return same ? row : -1;
}

// The model spin boxes and the ModelSpec field each edits.
struct ModelSpin {
  const char* field;
  std::int64_t est::ModelSpec::*member;
};
constexpr ModelSpin kModelSpins[] = {{"model.layers", &est::ModelSpec::layers},         {"model.hidden", &est::ModelSpec::hidden},
                                     {"model.heads", &est::ModelSpec::heads},           {"model.kv_heads", &est::ModelSpec::kv_heads},
                                     {"model.ffn_hidden", &est::ModelSpec::ffn_hidden}, {"model.vocab", &est::ModelSpec::vocab}};

// MoE / MLA / MTP spin boxes: plain fields of the model (nothing derives from or into them).
struct NestedSpin {
  const char* field;
  std::int64_t* (*member)(est::ModelSpec&);
};
constexpr NestedSpin kNestedSpins[] = {
    {"model.moe.experts", [](est::ModelSpec& m) { return &m.moe.experts; }},
    {"model.moe.top_k", [](est::ModelSpec& m) { return &m.moe.top_k; }},
    {"model.moe.expert_ffn_hidden", [](est::ModelSpec& m) { return &m.moe.expert_ffn_hidden; }},
    {"model.moe.shared_experts", [](est::ModelSpec& m) { return &m.moe.shared_experts; }},
    {"model.moe.first_dense_layers", [](est::ModelSpec& m) { return &m.moe.first_dense_layers; }},
    {"model.moe.layer_interval", [](est::ModelSpec& m) { return &m.moe.layer_interval; }},
    {"model.mla.kv_lora_rank", [](est::ModelSpec& m) { return &m.mla.kv_lora_rank; }},
    {"model.mla.q_lora_rank", [](est::ModelSpec& m) { return &m.mla.q_lora_rank; }},
    {"model.mtp_modules", [](est::ModelSpec& m) { return &m.mtp_modules; }},
};

}  // namespace

void PlanForm::showModel(const est::ModelSpec& model) {
  const bool was_populating = populating_;
  populating_ = true;
  for (const auto& s : kModelSpins) {
    auto* spin = qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(s.field)).editor);
    if (spin->value() != clamp_int(model.*s.member)) spin->setValue(clamp_int(model.*s.member));
  }
  est::ModelSpec shown = model;
  for (const auto& s : kNestedSpins) {
    auto* spin = qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(s.field)).editor);
    if (spin->value() != clamp_int(*s.member(shown))) spin->setValue(clamp_int(*s.member(shown)));
  }
  if (load_imbalance_->value() != model.moe.load_imbalance) load_imbalance_->setValue(model.moe.load_imbalance);
  if (capacity_factor_->value() != model.moe.capacity_factor) capacity_factor_->setValue(model.moe.capacity_factor);
  const int row = matching_model_row(model_presets_, model);
  if (model_combo_->currentIndex() != row) model_combo_->setCurrentIndex(row);
  const QString name = QString::fromStdString(model.name);
  model_combo_->setPlaceholderText(name.startsWith(QStringLiteral("custom")) ? name : name + tr(" (custom)"));
  shown_model_ = model;
  populating_ = was_populating;
}

void PlanForm::noteExplicitModelEdits() {
  const est::ModelSpec& current = document_->plan().model;
  for (const auto& s : kModelSpins) {
    const auto* spin = qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(s.field)).editor);
    if (spin->value() != clamp_int(current.*s.member)) explicit_model_fields_.insert(QString::fromLatin1(s.field));
  }
}

void PlanForm::populate() {
  populating_ = true;
  const est::Plan& plan = document_->plan();

  // A model from outside the form (preset, file, import) is the new base of edits.
  if (!est::same_structure(plan.model, shown_model_) || plan.model.name != shown_model_.name) {
    model_base_ = plan.model;
    explicit_model_fields_.clear();
  }
  showModel(plan.model);

  system_combo_->setCurrentIndex(system_presets_->rowOf(QString::fromStdString(plan.cluster.name)));
  system_combo_->setPlaceholderText(tr("custom"));
  gpu_combo_->setCurrentIndex(gpu_presets_->rowOf(QString::fromStdString(plan.cluster.gpu.name)));
  gpu_combo_->setPlaceholderText(QString::fromStdString(plan.cluster.gpu.name) + tr(" (custom)"));
  // Cluster, layout and training fields: each editor shows its field's value (plan_fields.h).
  for (const auto& f : est::plan_fields()) {
    if (f.section() == "model") continue;  // showModel(): edits of a base model
    if (QWidget* editor = fields_.value(QString::fromUtf8(f.path.data(), static_cast<qsizetype>(f.path.size()))).editor) {
      show_value(editor, f, f.get(plan));
    }
  }
  price_->setSuffix(QLatin1Char(' ') + QString::fromStdString(plan.cluster.currency));  // the price's unit, shown
  populating_ = false;
}

est::Plan PlanForm::collect() const {
  est::Plan plan = document_->plan();
  const auto spin = [&](const char* field) -> std::int64_t {
    return qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(field)).editor)->value();
  };

  // The typed fields over the base; derived fields the user did not type follow them.
  est::ModelSpec edited = model_base_;
  for (const auto& s : kModelSpins) {
    if (explicit_model_fields_.contains(QString::fromLatin1(s.field))) edited.*s.member = spin(s.field);
  }
  for (const auto& s : kNestedSpins) *s.member(edited) = spin(s.field);
  edited.moe.load_imbalance = load_imbalance_->value();
  edited.moe.capacity_factor = capacity_factor_->value();
  plan.model = est::derive_model(model_base_, edited,
                                 {.kv_heads = explicit_model_fields_.contains(QStringLiteral("model.kv_heads")),
                                  .ffn_hidden = explicit_model_fields_.contains(QStringLiteral("model.ffn_hidden"))});
  // Cluster, layout and training fields: each editor's value into its field (plan_fields.h).
  for (const auto& f : est::plan_fields()) {
    if (f.section() == "model") continue;
    const QWidget* editor = fields_.value(QString::fromUtf8(f.path.data(), static_cast<qsizetype>(f.path.size()))).editor;
    if (!editor) continue;
    const nlohmann::json value = edited_value(editor, f, f.get(plan));
    if (value != f.get(plan)) f.set(plan, value);
  }
  // As in plan files and flags: raising the virtual stages above 1 picks the interleaved schedule
  // (the schedule field then shows it); a schedule chosen with vpp > 1 stays the user's.
  const est::Plan& before = document_->plan();
  if (plan.layout.vpp != before.layout.vpp && plan.layout.schedule == before.layout.schedule) {
    plan.layout.schedule = est::schedule_for_vpp(plan.layout.vpp, plan.layout.schedule);
  }
  // Choosing DualPipeV sets its two virtual stages; leaving it goes back to one.
  if (plan.layout.schedule != before.layout.schedule && plan.layout.vpp == before.layout.vpp) {
    plan.layout.vpp = est::vpp_for_schedule(plan.layout.schedule, before.layout.schedule, plan.layout.vpp);
  }
  // As in plan files and flags: gradients follow the compute precision.
  if (plan.training.precision != before.training.precision) {
    plan.training.grad_precision = est::gradient_precision_for(plan.training.precision);
  }
  return plan;
}

void PlanForm::onEdited() {
  if (populating_) return;
  noteExplicitModelEdits();
  est::Plan plan = collect();
  showModel(plan.model);  // derived fields (MLP width, KV heads) and the model's name follow
  // A schedule that followed the virtual stages (collect()) shows in its field.
  auto* schedule = qobject_cast<QComboBox*>(fields_.value(QStringLiteral("layout.schedule")).editor);
  if (schedule->currentData().toInt() != static_cast<int>(plan.layout.schedule)) {
    populating_ = true;
    set_combo_data(schedule, static_cast<int>(plan.layout.schedule));
    populating_ = false;
  }
  // ... and virtual stages that followed the schedule in theirs.
  if (auto* vpp = qobject_cast<QSpinBox*>(fields_.value(QStringLiteral("layout.vpp")).editor);
      vpp != nullptr && vpp->value() != plan.layout.vpp) {
    populating_ = true;
    vpp->setValue(static_cast<int>(plan.layout.vpp));
    populating_ = false;
  }
  document_->editPlan(plan);
}

void PlanForm::onModelPreset(int row) {
  if (row < 0) return;
  est::Plan plan = collect();
  plan.model = est::model_presets()[static_cast<std::size_t>(row)];
  document_->replacePlan(plan);
}

void PlanForm::onSystemPreset(int row) {
  if (row < 0) return;
  est::Plan plan = collect();
  const std::int64_t gpus = plan.cluster.gpus;
  const double price = plan.cluster.price_per_gpu_hour;
  plan.cluster = est::system_presets()[static_cast<std::size_t>(row)].cluster;
  plan.cluster.gpus = gpus;
  if (price > 0) plan.cluster.price_per_gpu_hour = price;
  document_->replacePlan(plan);
}

void PlanForm::onGpuPreset(int row) {
  if (row < 0) return;
  est::Plan plan = collect();
  plan.cluster.gpu = est::gpu_presets()[static_cast<std::size_t>(row)];
  document_->replacePlan(plan);
}

bool PlanForm::importHfConfig(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    emit statusMessage(tr("Cannot read %1: %2").arg(path, file.errorString()));
    return false;
  }
  const QByteArray text = file.readAll();
  // The model takes its folder's name, as `plansight --model path/config.json` does.
  const QString name = QFileInfo(path).absoluteDir().dirName();
  auto model = est::model_from_hf_config(std::string_view(text.constData(), static_cast<std::size_t>(text.size())),
                                         name.toStdString());
  if (!model) {
    emit statusMessage(tr("Cannot import %1: %2").arg(path, QString::fromStdString(model.error_text())));
    return false;
  }
  est::Plan plan = collect();
  plan.model = std::move(model).value();
  document_->replacePlan(plan);
  emit statusMessage(tr("Imported %1 from %2").arg(QString::fromStdString(plan.model.name), path));
  return true;
}

}  // namespace plansight::gui
