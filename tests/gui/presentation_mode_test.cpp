// Presentation mode: the View menu's switch makes every widget's text 1.5x larger, is remembered
// in the settings for the next start, and is undone when switched off.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QTabWidget>
#include <QTemporaryDir>

#include "gui_test_support.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui {
namespace {

TEST(PresentationMode, EnlargesTextAndIsRemembered) {
  QTemporaryDir dir;
  const MainWindowOptions options = test::isolated_window_options(dir);
  const qreal normal = QApplication::font().pointSizeF();
  {
    MainWindow window(options);
    ASSERT_TRUE(test::wait_idle(*window.document()));
    auto* action = window.findChild<QAction*>(QStringLiteral("presentationMode"));
    ASSERT_NE(action, nullptr);
    EXPECT_FALSE(action->isChecked());
    action->trigger();
    EXPECT_TRUE(window.presentationMode());
    EXPECT_DOUBLE_EQ(QApplication::font().pointSizeF(), normal * 1.5);
    QCoreApplication::processEvents();  // the font change reaches existing widgets as an event
    EXPECT_DOUBLE_EQ(window.pages()->font().pointSizeF(), normal * 1.5) << "widgets follow the application font";
  }
  EXPECT_DOUBLE_EQ(QApplication::font().pointSizeF(), normal) << "a closed window leaves the font as it found it";
  {
    MainWindow again(options);
    ASSERT_TRUE(test::wait_idle(*again.document()));
    EXPECT_TRUE(again.presentationMode()) << "remembered";
    EXPECT_TRUE(again.findChild<QAction*>(QStringLiteral("presentationMode"))->isChecked());
    EXPECT_DOUBLE_EQ(QApplication::font().pointSizeF(), normal * 1.5);
    again.setPresentationMode(false);
    EXPECT_DOUBLE_EQ(QApplication::font().pointSizeF(), normal);
  }
  MainWindow third(options);
  EXPECT_FALSE(third.presentationMode());
}

}  // namespace
}  // namespace plansight::gui
