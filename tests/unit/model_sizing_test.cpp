// --params N: a GPT-shaped model of N parameters. 175e9 must give GPT-3 175B's own shape (Brown
// et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads), and any size its count within a
// few percent, the width a multiple of 128 near 128 x the depth.
#include <gtest/gtest.h>

#include "plansight/estimator/model_sizing.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

TEST(ModelSizing, GivesGpt3sOwnShapeAt175B) {
  auto m = gpt_model_with_parameters(175e9);
  ASSERT_TRUE(m.ok()) << m.error_text();
  EXPECT_EQ(m->layers, 96);
  EXPECT_EQ(m->hidden, 12288);
  EXPECT_EQ(m->heads, 96);
  EXPECT_EQ(m->ffn_hidden, 4 * 12288);
  EXPECT_EQ(m->vocab, 50257);
  EXPECT_EQ(count_parameters(*m).total, count_parameters(*find_model("gpt3-175b")).total);
}

TEST(ModelSizing, AnySizeWithinAFewPercentAndGptShaped) {
  for (double n : {1.3e8, 3.5e8, 1e9, 7e9, 13e9, 70e9, 1e12, 1e14}) {
    auto m = gpt_model_with_parameters(n);
    ASSERT_TRUE(m.ok()) << n << ": " << m.error_text();
    const double got = count_parameters(*m).total;
    EXPECT_NEAR(got / n, 1.0, n >= 1e9 ? 0.02 : 0.15) << n;  // small models step by a whole layer
    EXPECT_EQ(m->hidden % 128, 0) << n;
    EXPECT_EQ(m->heads * 128, m->hidden) << n;
    EXPECT_EQ(m->ffn_hidden, 4 * m->hidden) << n;
    const double aspect = static_cast<double>(m->hidden) / static_cast<double>(m->layers);
    if (n >= 1e9) {
      EXPECT_TRUE(aspect > 64 && aspect < 256) << n << ": d_model / n_layers " << aspect;
    }
    EXPECT_NE(m->source.find("Brown et al. 2020"), std::string::npos);
  }
}

TEST(ModelSizing, BadSizesNameTheFlag) {
  for (double n : {0.0, -1.0, 1e15, 1e5}) {
    auto m = gpt_model_with_parameters(n);
    ASSERT_FALSE(m.ok()) << n;
    EXPECT_EQ(m.errors().front().field, "--params") << n;
  }
  EXPECT_NE(gpt_model_with_parameters(1e5).error_text().find("valid: at least 6.89 M"), std::string::npos);
}

}  // namespace
}  // namespace plansight::estimator
