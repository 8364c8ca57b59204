// The plan field table (estimator/plan_fields.h): one entry per path and flag, and every entry
// names a real field of the plan file: its example value, set at its path, is what the read plan
// holds there. (Flags: tests/integration/plan_fields_cli_test.cpp; the Plan form:
// tests/gui/plan_form_fields_test.cpp.)
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan_fields.h"

namespace plansight::estimator {
namespace {

// MoE, MLA and expert-parallel fields are set on a model that has them (DeepSeek-V3), the rest
// on the default plan's GPT-3 175B.
std::string base_model(const PlanField& f) {
  const std::string path(f.path);
  const bool moe = path.rfind("model.moe.", 0) == 0 || path.rfind("model.mla.", 0) == 0 ||
                   path == "model.mtp_modules" || path == "layout.ep" || path == "layout.etp";
  return moe ? "deepseek-v3" : "gpt3-175b";
}

TEST(PlanFields, EachPathAndFlagOnce) {
  std::set<std::string_view> paths, flags;
  for (const auto& f : plan_fields()) {
    EXPECT_TRUE(paths.insert(f.path).second) << f.path;
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_EQ(f.flag.rfind("--", 0), 0u) << f.flag;
    EXPECT_FALSE(f.label.empty()) << f.path;
    EXPECT_FALSE(f.help.empty()) << f.path;
    EXPECT_FALSE(f.example.empty()) << f.path;
    if (f.kind == FieldKind::integer || f.kind == FieldKind::number) {
      EXPECT_LT(f.min, f.max) << f.path;
    }
    if (f.kind == FieldKind::choice) {
      EXPECT_NE(f.choices.find('|'), std::string_view::npos) << f.path;
    }
    EXPECT_EQ(find_plan_field(f.path), &f);
    EXPECT_EQ(find_plan_field(f.flag), &f);
  }
  EXPECT_EQ(find_plan_field("layout.nope"), nullptr);
}

TEST(PlanFields, EveryExampleLandsAtItsPathAndDiffersFromTheBase) {
  for (const auto& f : plan_fields()) {
    const nlohmann::json example = nlohmann::json::parse(f.example);
    nlohmann::json file = {{"model", {{"preset", base_model(f)}}}};
    auto base = plan_from_json(file);
    ASSERT_TRUE(base) << f.path << ": " << base.error_text();
    EXPECT_NE(field_value(to_json(*base), f), example) << f.path << ": the example must change the plan";
    set_field_value(file, f, example);
    auto plan = plan_from_json(file);
    ASSERT_TRUE(plan) << f.path << ": " << plan.error_text();
    EXPECT_EQ(field_value(to_json(*plan), f), example) << f.path << " is not where the plan file keeps it";
  }
}

// The accessors agree with the plan file: what get() reads is what the writer writes at the
// path, and set() of the example is what reading the example from a file gives.
TEST(PlanFields, AccessorsAgreeWithThePlanFile) {
  for (const auto& f : plan_fields()) {
    ASSERT_TRUE(f.get && f.set) << f.path;
    auto base = plan_from_json({{"model", {{"preset", base_model(f)}}}});
    ASSERT_TRUE(base) << base.error_text();
    Plan plan = *base;
    // The writer leaves some fields out at their defaults (ep 1, offloading off).
    if (const nlohmann::json written = field_value(to_json(plan), f); !written.is_null()) {
      EXPECT_EQ(f.get(plan), written) << f.path;
    }
    const nlohmann::json example = nlohmann::json::parse(f.example);
    ASSERT_TRUE(f.set(plan, example)) << f.path;
    EXPECT_EQ(f.get(plan), example) << f.path;
    EXPECT_EQ(field_value(to_json(plan), f), example) << f.path;

    nlohmann::json file = {{"model", {{"preset", base_model(f)}}}};
    set_field_value(file, f, example);
    auto read = plan_from_json(file);
    ASSERT_TRUE(read) << read.error_text();
    EXPECT_EQ(f.get(*read), example) << f.path;

    // A value of the wrong type, or a name the reader does not know, changes nothing.
    const nlohmann::json wrong = f.kind == FieldKind::toggle || f.kind == FieldKind::toggle_off ? nlohmann::json("yes")
                                 : f.kind == FieldKind::choice || f.kind == FieldKind::text  ? nlohmann::json(7)
                                                                                             : nlohmann::json("seven");
    Plan untouched = *base;
    EXPECT_FALSE(f.set(untouched, wrong)) << f.path;
    EXPECT_EQ(to_json(untouched), to_json(*base)) << f.path;
    if (f.kind == FieldKind::choice) {
      EXPECT_FALSE(f.set(untouched, "no-such-name")) << f.path;
    }
  }
}

TEST(PlanFields, ChoicesAreTheNamesTheReaderAccepts) {
  for (const auto& f : plan_fields()) {
    if (f.kind != FieldKind::choice) continue;
    std::string_view rest = f.choices;
    while (!rest.empty()) {
      const auto bar = rest.find('|');
      const std::string name(rest.substr(0, bar));
      nlohmann::json file = nlohmann::json::object();
      set_field_value(file, f, name);
      auto plan = plan_from_json(file);
      ASSERT_TRUE(plan) << f.path << " = " << name << ": " << plan.error_text();
      EXPECT_EQ(field_value(to_json(*plan), f), name) << f.path;
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
  }
}

TEST(PlanFields, HelpListsEveryFlag) {
  const std::string help = plan_fields_help();
  for (const auto& f : plan_fields()) {
    EXPECT_NE(help.find("    " + std::string(f.flag) + " "), std::string::npos) << f.flag;
    EXPECT_NE(help.find(std::string(f.help)), std::string::npos) << f.flag;
  }
}

}  // namespace
}  // namespace plansight::estimator
