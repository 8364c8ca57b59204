// Export of what a page shows: every page that can be exported implements ExportablePage and
// paints itself into any QPainter, so PNG (a QImage at 2x for crisp HiDPI output) and SVG
// (QSvgGenerator, when Qt SVG was found at build time) share one painting path.
#pragma once

#include <QSize>
#include <QString>

class QPainter;
class QWidget;

namespace plansight::gui {

class ExportablePage {
 public:
  virtual ~ExportablePage() = default;
  virtual QString exportTitle() const = 0;  // used in file names and the SVG title
  virtual QSize exportSize() const = 0;     // logical size to paint
  virtual void renderExport(QPainter& painter, const QSize& size) const = 0;
};

bool svg_export_available();
// Errors come back as a message naming the file; empty on success.
QString export_png(const ExportablePage& page, const QString& path, double scale = 2.0);
QString export_svg(const ExportablePage& page, const QString& path);

// A page that exports by rendering a whole widget (forms, tables).
void render_widget(const QWidget& widget, QPainter& painter);

// `inner` with a caption band above it: a title line and a line saying which plan it shows, so
// that a chart still says what it is of once it is pasted into slides or a report.
class CaptionedPage : public ExportablePage {
 public:
  static constexpr int kBandHeight = 44;  // two lines of the default font and a margin
  CaptionedPage(const ExportablePage& inner, QString title, QString caption);
  QString exportTitle() const override;
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 private:
  const ExportablePage& inner_;
  QString title_, caption_;
};

}  // namespace plansight::gui
