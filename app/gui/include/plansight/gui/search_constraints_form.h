// The Search page's constraints: a field per layout dimension taking what `plansight search`
// takes ("any", "8", "2,4,8", "2..8"; estimator/search_constraints.h), framework rules on/off,
// the attention kernel to search with, and how many layouts to show. Errors name the field's
// label, the text and what is valid.
#pragma once

#include <QWidget>
#include <optional>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/layout_search.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace plansight::gui {

class SearchConstraintsForm : public QWidget {
 public:
  explicit SearchConstraintsForm(QWidget* parent = nullptr);

  // The search options the fields describe (top included); errors for every bad field.
  Result<estimator::SearchOptions> options() const;
  // The attention kernel chosen for the search; nullopt: the plan's own.
  std::optional<estimator::AttentionKernel> attention() const;

  // For tests and the page: the field of a dimension ("tp", "micro_batch", ...), or null.
  QLineEdit* field(const char* dimension) const;
  QCheckBox* frameworkRules() const { return rules_; }
  QComboBox* attentionBox() const { return attention_; }
  QSpinBox* topBox() const { return top_; }

 private:
  struct Field {
    const char* dimension;
    QString label;
    QLineEdit* edit;
  };
  std::vector<Field> fields_;
  QCheckBox* rules_;
  QComboBox* attention_;
  QSpinBox* top_;
};

}  // namespace plansight::gui
