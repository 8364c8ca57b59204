// PNG and SVG export through one painting path (see chart_export.h).
#include "plansight/gui/chart_export.h"

#include <QFont>
#include <QFontMetrics>
#include <QImage>
#include <QPainter>
#include <QWidget>
#include <utility>

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

CaptionedPage::CaptionedPage(const ExportablePage& inner, QString title, QString caption)
    : inner_(inner), title_(std::move(title)), caption_(std::move(caption)) {}

QString CaptionedPage::exportTitle() const { return inner_.exportTitle(); }

QSize CaptionedPage::exportSize() const { return inner_.exportSize() + QSize(0, kBandHeight); }

void CaptionedPage::renderExport(QPainter& painter, const QSize& size) const {
  // Dark text on white whatever the theme: exports go onto white slides and paper.
  painter.fillRect(QRect(0, 0, size.width(), kBandHeight), Qt::white);
  painter.setPen(Qt::black);
  QFont bold = painter.font();
  bold.setBold(true);
  painter.save();
  painter.setFont(bold);
  painter.drawText(QRect(8, 4, size.width() - 16, kBandHeight / 2 - 2), Qt::AlignLeft | Qt::AlignVCenter, title_);
  painter.restore();
  painter.setPen(QColor(60, 60, 60));
  painter.drawText(QRect(8, kBandHeight / 2, size.width() - 16, kBandHeight / 2 - 4), Qt::AlignLeft | Qt::AlignVCenter,
                   painter.fontMetrics().elidedText(caption_, Qt::ElideRight, size.width() - 16));
  painter.save();
  painter.translate(0, kBandHeight);
  inner_.renderExport(painter, size - QSize(0, kBandHeight));
  painter.restore();
}

}  // namespace plansight::gui
