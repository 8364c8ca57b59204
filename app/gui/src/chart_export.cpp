// PNG and SVG export through one painting path (see chart_export.h).
#include "plansight/gui/chart_export.h"

#include <QImage>
#include <QPainter>
#include <QWidget>

#ifdef PLANSIGHT_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

namespace plansight::gui {

bool svg_export_available() {
#ifdef PLANSIGHT_GUI_HAVE_SVG
  return true;
#else
  return false;
#endif
}

QString export_png(const ExportablePage& page, const QString& path, double scale) {
  const QSize size = page.exportSize();
  QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(scale);
  image.fill(Qt::transparent);
  {
    QPainter painter(&image);
    page.renderExport(painter, size);
  }
  if (!image.save(path, "PNG")) return QStringLiteral("Cannot write %1").arg(path);
  return {};
}

QString export_svg(const ExportablePage& page, const QString& path) {
#ifdef PLANSIGHT_GUI_HAVE_SVG
  const QSize size = page.exportSize();
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(0, 0), size));
  svg.setTitle(page.exportTitle());
  svg.setDescription(QStringLiteral("Plansight"));
  QPainter painter;
  if (!painter.begin(&svg)) return QStringLiteral("Cannot write %1").arg(path);
  page.renderExport(painter, size);
  painter.end();
  return {};
#else
  (void)page;
  return QStringLiteral("Cannot write %1: this build has no SVG support (Qt SVG was not found)").arg(path);
#endif
}

void render_widget(const QWidget& widget, QPainter& painter) {
  const_cast<QWidget&>(widget).render(&painter, QPoint(), QRegion(),
                                      QWidget::DrawWindowBackground | QWidget::DrawChildren);
}

}  // namespace plansight::gui
