// Units people read: parameters in the short scale (10.34 T, not 10,340.69 B), memory
// past 1024 GiB in TiB, cost with its currency, `models` and `gpus` tables that fit 80 columns
// (sources behind `show NAME` and --json, an fp16 column, "—" for a precision a GPU lacks), and
// run metrics as words.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/cli_run.h"
#include "plansight/cli/format.h"
#include "plansight/store/metric_words.h"

namespace plansight::cli {
namespace {

using testing::run_cli;

// Terminal columns of a UTF-8 line: code points (the tables use only one-column characters).
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(CliUnits, LargeCountsAndMemoryReadInTheirScale) {
  EXPECT_EQ(format_large_count(10'340.69e9), "10.34 T");
  EXPECT_EQ(format_large_count(174.6e9), "174.60 B");
  EXPECT_EQ(format_large_count(124'439'808), "124.44 M");
  EXPECT_EQ(format_large_count(5000), "5,000");
  EXPECT_EQ(format_gib(161'860.0 * (1 << 30)), "158.07 TiB");
  EXPECT_EQ(format_gib(80.0 * (1 << 30)), "80.00 GiB");
  auto r = run_cli({"estimate", "--layers", "5000", "--hidden", "40960", "--heads", "320"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_NE(r.out.find("Parameters   100.67 T (100,668,100,894,720)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("24.85 TiB of 80.00 GiB  DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total (TiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not fit: stage 0 needs 24.85 TiB of 80.00 GiB"), std::string::npos) << r.out;
}

TEST(CliUnits, CostCarriesItsCurrency) {
  auto r = run_cli({"estimate", "--system", "dgx-a100-80gb"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  EXPECT_NE(r.out.find(" USD\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('$'), std::string::npos) << r.out;
  auto eur = run_cli({"estimate", "--price-per-gpu-hour", "2", "--currency", "EUR", "--json"});
  ASSERT_EQ(eur.status, Status::ok) << eur.err;
  const auto j = nlohmann::json::parse(eur.out);
  EXPECT_EQ(j["time"]["currency"], "EUR");
  EXPECT_EQ(j["plan"]["cluster"]["currency"], "EUR");
  auto bad = run_cli({"estimate", "--currency", ""});
  EXPECT_EQ(bad.status, Status::invalid_input);
  EXPECT_NE(bad.err.find("cluster.currency: value \"\" is invalid; valid: a currency code"), std::string::npos) << bad.err;
}

TEST(CliUnits, PresetTablesFitEightyColumns) {
  for (const char* cmd : {"models", "gpus"}) {
    auto r = run_cli({cmd});
    ASSERT_EQ(r.status, Status::ok) << cmd;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(columns(line), 80u) << cmd << ": " << line;
    EXPECT_NE(r.out.find(std::string("sources: plansight ") + cmd + " show NAME, or --json"), std::string::npos);
  }
  auto gpus = run_cli({"gpus"});
  EXPECT_NE(gpus.out.find("fp16"), std::string::npos);
  // The V100 has no bf16, fp8 or tf32: a dash, never 0.0.
  std::istringstream lines(gpus.out);
  std::string v100;
  for (std::string line; std::getline(lines, line);) if (line.rfind("v100", 0) == 0) v100 = line;
  ASSERT_FALSE(v100.empty()) << gpus.out;
  EXPECT_NE(v100.find("\u2014"), std::string::npos) << v100;
  EXPECT_EQ(v100.find(" 0.0"), std::string::npos) << v100;
  auto show = run_cli({"gpus", "show", "v100-32gb-sxm"});
  ASSERT_EQ(show.status, Status::ok) << show.err;
  EXPECT_NE(show.out.find("bf16  not supported"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("source: "), std::string::npos) << show.out;
  auto model = run_cli({"models", "show", "gpt3-175b"});
  ASSERT_EQ(model.status, Status::ok) << model.err;
  EXPECT_NE(model.out.find("gpt3-175b: 174.60 B parameters"), std::string::npos) << model.out;
  auto missing = run_cli({"models", "show", "gpt-9"});
  EXPECT_EQ(missing.status, Status::invalid_input);
}

TEST(CliUnits, RunMetricsAreWords) {
  EXPECT_EQ(store::describe_metric("stopped_early", 0).label, "stopped early");
  EXPECT_EQ(store::describe_metric("stopped_early", 0).value, "no");
  EXPECT_EQ(store::describe_metric("stopped_early", 1).value, "yes");
  EXPECT_EQ(store::describe_metric("tokens_per_s", 12345.6).value, "12,346");
  EXPECT_EQ(store::describe_metric("window_s", 0.013).value, "13.0 ms");
  EXPECT_EQ(store::describe_metric("spans", 1e6).value, "1,000,000");
  EXPECT_EQ(store::describe_metric("custom", 0.123456).value, "0.1235");
}

}  // namespace
}  // namespace plansight::cli
