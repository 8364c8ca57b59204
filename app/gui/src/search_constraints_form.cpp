// Search constraints form (see search_constraints_form.h). Two rows of small fields rather than
// a form layout: the constraints are secondary to the results, which keep the page's height.
#include "plansight/gui/search_constraints_form.h"

#include <string_view>

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include "plansight/estimator/search_constraints.h"

namespace plansight::gui {

namespace est = plansight::estimator;

SearchConstraintsForm::SearchConstraintsForm(QWidget* parent) : QWidget(parent) {
  const std::pair<const char*, QString> dims[] = {
      {"tp", tr("TP")},         {"pp", tr("PP")},
      {"vpp", tr("VPP")},       {"dp", tr("DP")},
      {"cp", tr("CP")},         {"micro_batch", tr("Micro-batch")},
      {"zero_stage", tr("ZeRO")}, {"recompute", tr("Recompute")},
      {"schedule", tr("Schedule")}, {"sequence_parallel", tr("Seq. parallel")},
      {"precision", tr("Precision")},     {"offload", tr("Offload")},
  };
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  int i = 0;
  for (const auto& [dim, label] : dims) {
    auto* edit = new QLineEdit(this);
    edit->setObjectName(QStringLiteral("constraint_%1").arg(QLatin1String(dim)));
    const bool precision = std::string_view(dim) == "precision", offload = std::string_view(dim) == "offload";
    edit->setPlaceholderText(precision || offload ? tr("the plan's") : tr("any"));
    edit->setToolTip(precision ? tr("The plan's (empty), one (fp8), a list (bf16,fp8) or any (bf16, fp16 and fp8 where the GPU has them)")
                     : offload ? tr("The plan's (empty), a list of none or optimizer, params, activations joined by + "
                                    "(none,optimizer,optimizer+params) or any")
                               : tr("Any, a value (8), a list (2,4,8) or a range (2..8, ..8, 4..)"));
    edit->setMaximumWidth(110);
    auto* caption = new QLabel(label, this);
    caption->setBuddy(edit);
    const int row = i / 5, col = (i % 5) * 2;
    grid->addWidget(caption, row, col);
    grid->addWidget(edit, row, col + 1);
    fields_.push_back({dim, label, edit});
    ++i;
  }
  rules_ = new QCheckBox(tr("Framework rules"), this);
  rules_->setObjectName(QStringLiteral("frameworkRules"));
  rules_->setChecked(true);
  rules_->setToolTip(tr("Reject what Megatron-LM and DeepSpeed do not run: context parallelism without flash "
                        "attention, ZeRO-2/3 with pipeline parallelism"));
  attention_ = new QComboBox(this);
  attention_->setObjectName(QStringLiteral("searchAttention"));
  attention_->addItem(tr("Attention as in the plan"));
  attention_->addItem(tr("Standard attention"), static_cast<int>(est::AttentionKernel::standard));
  attention_->addItem(tr("Flash attention"), static_cast<int>(est::AttentionKernel::flash));
  top_ = new QSpinBox(this);
  top_->setObjectName(QStringLiteral("searchTop"));
  top_->setRange(1, 200);
  top_->setValue(10);
  top_->setPrefix(tr("show top "));
  const int below = (i + 4) / 5;  // the row after the fields
  grid->addWidget(rules_, below, 0, 1, 3);
  grid->addWidget(attention_, below, 3, 1, 3);
  grid->addWidget(top_, below, 6, 1, 2);
  grid->setColumnStretch(10, 1);
}

QLineEdit* SearchConstraintsForm::field(const char* dimension) const {
  for (const auto& f : fields_) {
    if (QLatin1String(f.dimension) == QLatin1String(dimension)) return f.edit;
  }
  return nullptr;
}

Result<est::SearchOptions> SearchConstraintsForm::options() const {
  est::SearchOptions o;
  std::vector<Diagnostic> errors;
  for (const auto& f : fields_) {
    auto e = est::set_search_constraint(o.space, f.dimension, f.edit->text().toStdString(), f.label.toStdString());
    errors.insert(errors.end(), e.begin(), e.end());
  }
  o.space.framework_rules = rules_->isChecked();
  o.top = static_cast<std::size_t>(top_->value());
  if (!errors.empty()) return errors;
  return o;
}

std::optional<est::AttentionKernel> SearchConstraintsForm::attention() const {
  const QVariant v = attention_->currentData();
  if (!v.isValid()) return std::nullopt;
  return static_cast<est::AttentionKernel>(v.toInt());
}

}  // namespace plansight::gui
