// Every plan field set by its flag gives the plan its plan-file path gives (the field table,
// estimator/plan_fields.h): `--tp 4` and {"layout": {"tp": 4}} are one plan, for each field.
#include <gtest/gtest.h>

#include <sstream>

#include "plansight/cli/args.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan_fields.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

bool on_moe_model(const est::PlanField& f) {
  const std::string path(f.path);
  return path.rfind("model.moe.", 0) == 0 || path.rfind("model.mla.", 0) == 0 || path == "model.mtp_modules" ||
         path == "layout.ep" || path == "layout.etp";
}

TEST(PlanFieldsCli, EveryFlagMeansItsPlanFileField) {
  for (const auto& f : est::plan_fields()) {
    const nlohmann::json example = nlohmann::json::parse(f.example);
    const std::string model = on_moe_model(f) ? "deepseek-v3" : "gpt3-175b";
    std::vector<std::string> argv = {"--model", model, std::string(f.flag)};
    if (f.kind != est::FieldKind::toggle && f.kind != est::FieldKind::toggle_off) {
      argv.push_back(example.is_string() ? example.get<std::string>() : example.dump());
    }
    auto args = Args::parse(argv, plan_command_flags());
    ASSERT_TRUE(args) << f.flag << ": " << args.error_text();
    std::vector<Diagnostic> flag_notes, file_notes;
    auto by_flag = plan_from_args(*args, &flag_notes);
    ASSERT_TRUE(by_flag) << f.flag << ": " << by_flag.error_text();

    nlohmann::json file = {{"model", {{"preset", model}}}};
    est::set_field_value(file, f, example);
    auto by_file = est::plan_from_json(file, &file_notes);
    ASSERT_TRUE(by_file) << f.path << ": " << by_file.error_text();

    EXPECT_EQ(est::to_json(*by_flag), est::to_json(*by_file)) << f.flag << " and " << f.path << " differ";
    EXPECT_EQ(est::field_value(est::to_json(*by_flag), f), example) << f.flag;
    EXPECT_EQ(flag_notes.size(), file_notes.size()) << f.flag << ": the same adjustments either way";
  }
}

TEST(PlanFieldsCli, HelpOfAPlanCommandListsEveryFieldsFlag) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"estimate", "--help"}, out, err), Status::ok);
  for (const auto& f : est::plan_fields()) {
    EXPECT_NE(out.str().find("    " + std::string(f.flag)), std::string::npos) << f.flag;
  }
}

}  // namespace
}  // namespace plansight::cli
