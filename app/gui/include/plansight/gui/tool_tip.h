// The charts' tooltips: one handling of QEvent::ToolTip for widgets that describe what lies
// under the pointer as text.
#pragma once

#include <QEvent>
#include <QHelpEvent>
#include <QString>
#include <QToolTip>
#include <QWidget>

namespace plansight::gui {

// For a QEvent::ToolTip: shows text_at(position) at the pointer, or hides the tooltip when the
// text is empty, and returns true (handled). Any other event: false.
template <class TextAt>
bool show_tool_tip(QWidget* widget, QEvent* event, TextAt&& text_at) {
  if (event->type() != QEvent::ToolTip) return false;
  auto* help = static_cast<QHelpEvent*>(event);
  const QString text = text_at(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(help->globalPos(), text, widget);
  }
  return true;
}

}  // namespace plansight::gui
