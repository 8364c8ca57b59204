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
  const auto spin = [&](const char* field, std::int64_t value) {
    qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(field)).editor)->setValue(clamp_int(value));
  };
  const auto combo = [&](const char* field) {
    return qobject_cast<QComboBox*>(fields_.value(QString::fromLatin1(field)).editor);
  };

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
  spin("cluster.gpus", plan.cluster.gpus);
  price_->setValue(plan.cluster.price_per_gpu_hour);
  price_->setSuffix(QLatin1Char(' ') + QString::fromStdString(plan.cluster.currency));  // the price's unit, shown
  host_link_->setValue(plan.cluster.host_link_bandwidth_bytes_per_s / 1e9);

  spin("layout.tp", plan.layout.tp);
  spin("layout.pp", plan.layout.pp);
  spin("layout.vpp", plan.layout.vpp);
  spin("layout.dp", plan.layout.dp);
  spin("layout.cp", plan.layout.cp);
  spin("layout.ep", plan.layout.ep);
  spin("layout.etp", plan.layout.etp);
  set_combo_data(combo("layout.zero_stage"), static_cast<int>(plan.layout.zero_stage));
  sequence_parallel_->setChecked(plan.layout.sequence_parallel);
  offload_optimizer_->setChecked(plan.layout.offload_optimizer);
  offload_params_->setChecked(plan.layout.offload_params);
  offload_activations_->setChecked(plan.layout.offload_activations);
  set_combo_data(combo("layout.recompute"), static_cast<int>(plan.layout.recompute));
  set_combo_data(combo("layout.schedule"), static_cast<int>(plan.layout.schedule));

  spin("training.micro_batch", plan.training.micro_batch);
  spin("training.global_batch", plan.training.global_batch);
  spin("training.seq_len", plan.training.seq_len);
  spin("training.vocab_divisible_by", plan.training.vocab_divisible_by);
  tokens_->setValue(plan.training.tokens / 1e9);
  set_combo_data(combo("training.precision"), static_cast<int>(plan.training.precision));
  set_combo_data(combo("training.optimizer"), static_cast<int>(plan.training.optimizer));
  populating_ = false;
}

est::Plan PlanForm::collect() const {
  est::Plan plan = document_->plan();
  const auto spin = [&](const char* field) -> std::int64_t {
    return qobject_cast<QSpinBox*>(fields_.value(QString::fromLatin1(field)).editor)->value();
  };
  const auto combo = [&](const char* field) {
    return qobject_cast<QComboBox*>(fields_.value(QString::fromLatin1(field)).editor);
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
  plan.cluster.gpus = spin("cluster.gpus");
  plan.cluster.price_per_gpu_hour = price_->value();
  // The spin box rounds to 0.1 GB/s: an unchanged value keeps the plan's exact bandwidth.
  if (std::abs(host_link_->value() - plan.cluster.host_link_bandwidth_bytes_per_s / 1e9) >= 0.05) {
    plan.cluster.host_link_bandwidth_bytes_per_s = host_link_->value() * 1e9;
  }

  plan.layout.tp = spin("layout.tp");
  plan.layout.pp = spin("layout.pp");
  plan.layout.vpp = spin("layout.vpp");
  plan.layout.dp = spin("layout.dp");
  plan.layout.cp = spin("layout.cp");
  plan.layout.ep = spin("layout.ep");
  plan.layout.etp = spin("layout.etp");
  plan.layout.zero_stage = combo("layout.zero_stage")->currentData().toInt();
  plan.layout.sequence_parallel = sequence_parallel_->isChecked();
  plan.layout.offload_optimizer = offload_optimizer_->isChecked();
  plan.layout.offload_params = offload_params_->isChecked();
  plan.layout.offload_activations = offload_activations_->isChecked();
  plan.layout.recompute = combo_enum(combo("layout.recompute"), plan.layout.recompute);
  plan.layout.schedule = combo_enum(combo("layout.schedule"), plan.layout.schedule);
  // As in plan files and flags: raising the virtual stages above 1 picks the interleaved schedule
  // (the schedule field then shows it); a schedule chosen with vpp > 1 stays the user's.
  if (plan.layout.vpp != document_->plan().layout.vpp && plan.layout.schedule == document_->plan().layout.schedule) {
    plan.layout.schedule = est::schedule_for_vpp(plan.layout.vpp, plan.layout.schedule);
  }

  plan.training.micro_batch = spin("training.micro_batch");
  plan.training.global_batch = spin("training.global_batch");
  plan.training.seq_len = spin("training.seq_len");
  plan.training.vocab_divisible_by = spin("training.vocab_divisible_by");
  plan.training.tokens = tokens_->value() * 1e9;
  const est::Precision precision = combo_enum(combo("training.precision"), plan.training.precision);
  if (precision != plan.training.precision) {
    // As in plan files and flags: gradients follow the compute precision.
    plan.training.grad_precision = est::gradient_precision_for(precision);
    plan.training.precision = precision;
  }
  plan.training.optimizer = combo_enum(combo("training.optimizer"), plan.training.optimizer);
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
