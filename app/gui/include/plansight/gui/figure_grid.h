// A grid of captioned figures ("Iteration time  1.84 s"): the headline numbers of a page, each
// value label named (objectName) so that tests read exactly what the user sees.
#pragma once

#include <QString>
#include <QWidget>

class QGridLayout;
class QLabel;

namespace plansight::gui {

class FigureGrid : public QWidget {
  Q_OBJECT

 public:
  explicit FigureGrid(int columns, QWidget* parent = nullptr);
  // Adds a figure; the value label gets `object_name`.
  QLabel* add(const QString& object_name, const QString& caption, const QString& tooltip = {});
  void clearValues();  // every value shows "—"

 private:
  QGridLayout* grid_;
  int columns_;
  int count_ = 0;
};

}  // namespace plansight::gui
