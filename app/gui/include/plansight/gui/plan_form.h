// The Plan page: model, cluster, layout and training as form fields. Every edit becomes a plan
// for PlanDocument (which re-estimates off the GUI thread); every diagnostic the estimator
// returns is shown inline under the widget its field names ("layout.tp" -> the TP spin box,
// whose objectName is that path), errors in red and warnings in amber.
#pragma once

#include <QHash>
#include <QSet>
#include <QString>
#include <QWidget>

#include "plansight/estimator/plan.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QScrollArea;
class QSpinBox;

namespace plansight::gui {

class PlanDocument;
class PresetModel;

class PlanForm : public QWidget {
  Q_OBJECT

 public:
  explicit PlanForm(PlanDocument* document, QWidget* parent = nullptr);

  // The widget editing a diagnostic's field: the longest registered prefix of it, or nullptr.
  QWidget* editorFor(const QString& field) const;
  // The inline message currently shown for an editor's field (empty when none).
  QString messageFor(const QString& field) const;
  // Replaces the model with one read from a Hugging Face config.json; false (and a message)
  // when the file cannot be read or parsed.
  bool importHfConfig(const QString& path);

 signals:
  void statusMessage(const QString& text);

 private:
  struct Field {
    QWidget* editor = nullptr;
    QLabel* message = nullptr;
    QFormLayout* form = nullptr;
    QString help;  // the field table's help: the editor's tooltip, under any message
  };

  void build();
  QSpinBox* addSpin(QFormLayout* form, const QString& field);  // a plan field's spin box (plan_fields.h)
  QComboBox* addCombo(QFormLayout* form, const QString& field, const QString& label);
  void addField(QFormLayout* form, const QString& field, const QString& label, QWidget* editor);
  void populate();                  // plan -> widgets
  estimator::Plan collect() const;  // widgets -> plan (on top of the document's plan)
  // Model spin boxes whose value differs from the document's model were typed by the user:
  // they become explicit fields of the model (see collect()).
  void noteExplicitModelEdits();
  void showModel(const estimator::ModelSpec& model);  // derived spins and the preset name
  void onEdited();
  void onModelPreset(int row);
  void onSystemPreset(int row);
  void onGpuPreset(int row);
  void showDiagnostics();
  void clearMessages();
  // Messages appear and vanish above the field being typed in (an edit of the micro-batch can
  // flag the model's heads): the form scrolls so that this field stays where it was on screen
  // instead of jumping under the cursor: by scrolling, by holding the space of vanished messages
  // above the form while at the top, and by growing the page at the bottom when it must.
  void keepInPlace(QWidget* anchor, int viewport_y_before);

  PlanDocument* document_;
  bool populating_ = false;
  QHash<QString, Field> fields_;
  PresetModel* model_presets_ = nullptr;
  PresetModel* gpu_presets_ = nullptr;
  PresetModel* system_presets_ = nullptr;
  QComboBox* model_combo_ = nullptr;
  QComboBox* system_combo_ = nullptr;
  QComboBox* gpu_combo_ = nullptr;
  QLabel* model_summary_ = nullptr;
  QLabel* general_messages_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  QWidget* content_ = nullptr;  // the form inside scroll_
  QWidget* top_spacer_ = nullptr;  // space held above the form while messages vanish above a field
  QDoubleSpinBox* tokens_ = nullptr;
  QDoubleSpinBox* price_ = nullptr;
  QCheckBox* sequence_parallel_ = nullptr;
  QCheckBox* offload_optimizer_ = nullptr;    // layout.offload_optimizer
  QCheckBox* offload_params_ = nullptr;       // layout.offload_params
  QCheckBox* offload_activations_ = nullptr;  // layout.offload_activations
  QDoubleSpinBox* host_link_ = nullptr;       // cluster.host_link_gb_per_s (0: unknown)
  QDoubleSpinBox* load_imbalance_ = nullptr;   // model.moe.load_imbalance
  QDoubleSpinBox* capacity_factor_ = nullptr;  // model.moe.capacity_factor (0: dropless)
  // The model edits start from (a preset, an opened plan's or an imported model) and the model
  // fields the user typed since: the rest follow estimator::derive_model's rules, as in files.
  estimator::ModelSpec model_base_;
  QSet<QString> explicit_model_fields_;
  estimator::ModelSpec shown_model_;  // the model the form shows now
};

}  // namespace plansight::gui
