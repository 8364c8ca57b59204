// A tiny GPT-2-style decoder composed only of the CPU kernels (L=2, C=32, NH=4, T=8, V=64):
// its parameter gradient must match finite differences of the loss, and 20 AdamW steps on
// one fixed batch must drive the loss down. This is the composition the probe will run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels_test_util.h"
#include "plansight/kernels/kernels.h"

namespace pk = plansight::kernels;
namespace cpu = plansight::kernels::cpu;
using pk::test::random_normal;
using pk::test::random_tokens;

namespace {

struct Config {
  int V = 64, L = 2, C = 32, NH = 4, B = 2, T = 8;
};

// The parameters live in one flat buffer (so AdamW runs once over all of them); each tensor is
// a named slice. Per-layer tensors are GPT-2's: ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj, with weights stored [out, in].
struct Tensor {
  std::string name;
  std::size_t offset = 0, size = 0;
};

enum LayerSlot { kLn1W, kLn1B, kQkvW, kQkvB, kProjW, kProjB, kLn2W, kLn2B, kFcW, kFcB, kFcProjW, kFcProjB, kSlots };

struct LayerActs {  // what forward keeps for backward, and the matching gradient buffers
  std::vector<float> ln1, ln1_mean, ln1_rstd, qkv, att, atty, attproj, res2, ln2, ln2_mean,
      ln2_rstd, fch, fch_gelu, fcproj, res3;
};

class TinyGpt {
 public:
  explicit TinyGpt(Config cfg) : cfg_(cfg) {
    const std::size_t C = cfg.C;
    add("wte", cfg.V * C);
    add("wpe", cfg.T * C);
    for (int l = 0; l < cfg.L; ++l) {
      const std::string p = std::string("h").append(std::to_string(l)).append(".");
      const std::pair<const char*, std::size_t> layer[kSlots] = {
          {"ln_1.w", C},         {"ln_1.b", C},          {"c_attn.w", 3 * C * C},     {"c_attn.b", 3 * C},
          {"attn.c_proj.w", C * C}, {"attn.c_proj.b", C}, {"ln_2.w", C},             {"ln_2.b", C},
          {"c_fc.w", 4 * C * C}, {"c_fc.b", 4 * C},      {"mlp.c_proj.w", 4 * C * C}, {"mlp.c_proj.b", C}};
      for (const auto& [name, size] : layer) add(std::string(p).append(name), size);
    }
    add("ln_f.w", C);
    add("ln_f.b", C);
    params.resize(total_);
    grads.assign(total_, 0.0f);
    // Deterministic init, wider than GPT-2's 0.02 so that gradients are well above fp32 noise.
    std::uint32_t seed = 100;
    for (const Tensor& t : tensors) {
      const bool is_ln_weight = t.name.find("ln_") != std::string::npos && t.name.back() == 'w';
      const auto values = random_normal(t.size, seed++, is_ln_weight ? 0.1f : 0.2f, is_ln_weight ? 1.0f : 0.0f);
      std::copy(values.begin(), values.end(), params.begin() + static_cast<std::ptrdiff_t>(t.offset));
    }
    const std::size_t BT = static_cast<std::size_t>(cfg.B) * cfg.T;
    acts_.resize(cfg.L);
    dacts_.resize(cfg.L);
    for (int l = 0; l < cfg.L; ++l)
      for (LayerActs* a : {&acts_[l], &dacts_[l]}) {
        for (auto* v : {&a->ln1, &a->atty, &a->attproj, &a->res2, &a->ln2, &a->fcproj, &a->res3}) v->resize(BT * C);
        for (auto* v : {&a->ln1_mean, &a->ln1_rstd, &a->ln2_mean, &a->ln2_rstd}) v->resize(BT);
        a->qkv.resize(BT * 3 * C);
        a->att.resize(BT * cfg.NH * cfg.T);
        a->fch.resize(BT * 4 * C);
        a->fch_gelu.resize(BT * 4 * C);
      }
    encoded_.resize(BT * C);
    dencoded_.resize(BT * C);
    lnf_.resize(BT * C);
    dlnf_.resize(BT * C);
    lnf_mean_.resize(BT);
    lnf_rstd_.resize(BT);
    logits_.resize(BT * cfg.V);
    dlogits_.resize(BT * cfg.V);
    probs_.resize(BT * cfg.V);
    losses_.resize(BT);
    dlosses_.resize(BT);
  }

  float* param(int layer, LayerSlot slot) { return params.data() + layer_tensor(layer, slot).offset; }
  float* grad(int layer, LayerSlot slot) { return grads.data() + layer_tensor(layer, slot).offset; }

  // Mean cross-entropy over the positions whose target is not ignore_index, summed in double.
  double forward(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets) {
    const int B = cfg_.B, T = cfg_.T, C = cfg_.C, NH = cfg_.NH, BT = B * T;
    const std::size_t n = static_cast<std::size_t>(BT) * C;
    cpu::encoder_forward(encoded_.data(), tokens.data(), params.data() + tensors[0].offset,
                         params.data() + tensors[1].offset, B, T, C);
    const float* x = encoded_.data();
    for (int l = 0; l < cfg_.L; ++l) {
      LayerActs& a = acts_[l];
      cpu::layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), x, param(l, kLn1W), param(l, kLn1B), BT, C);
      cpu::matmul_forward(a.qkv.data(), a.ln1.data(), param(l, kQkvW), param(l, kQkvB), BT, C, 3 * C);
      cpu::attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), B, T, C, NH);
      cpu::matmul_forward(a.attproj.data(), a.atty.data(), param(l, kProjW), param(l, kProjB), BT, C, C);
      cpu::residual_forward(a.res2.data(), x, a.attproj.data(), n);
      cpu::layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(), param(l, kLn2W), param(l, kLn2B), BT, C);
      cpu::matmul_forward(a.fch.data(), a.ln2.data(), param(l, kFcW), param(l, kFcB), BT, C, 4 * C);
      cpu::gelu_forward(a.fch_gelu.data(), a.fch.data(), 4 * n);
      cpu::matmul_forward(a.fcproj.data(), a.fch_gelu.data(), param(l, kFcProjW), param(l, kFcProjB), BT, 4 * C, C);
      cpu::residual_forward(a.res3.data(), a.res2.data(), a.fcproj.data(), n);
      x = a.res3.data();
    }
    const std::size_t lnf = tensors.size() - 2;
    cpu::layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), x, params.data() + tensors[lnf].offset,
                           params.data() + tensors[lnf + 1].offset, BT, C);
    // Tied LM head: logits = ln_f(x) · wte^T, no bias (Radford et al. 2019 share wte with the head).
    cpu::matmul_forward(logits_.data(), lnf_.data(), params.data() + tensors[0].offset, nullptr, BT, C, cfg_.V);
    cpu::softmax_crossentropy_forward(losses_.data(), probs_.data(), logits_.data(), targets.data(), BT, cfg_.V, kIgnore);
    double sum = 0.0;
    counted_ = 0;
    for (int i = 0; i < BT; ++i)
      if (targets[i] != kIgnore) {
        sum += losses_[i];
        ++counted_;
      }
    targets_ = targets;
    tokens_ = tokens;
    return sum / counted_;
  }

  // Gradient of the last forward's mean loss into `grads` (zeroed first, as all buffers are).
  void backward() {
    const int B = cfg_.B, T = cfg_.T, C = cfg_.C, NH = cfg_.NH, BT = B * T;
    const std::size_t n = static_cast<std::size_t>(BT) * C;
    std::fill(grads.begin(), grads.end(), 0.0f);
    for (LayerActs& d : dacts_)
      for (auto* v : {&d.ln1, &d.qkv, &d.atty, &d.attproj, &d.res2, &d.ln2, &d.fch, &d.fch_gelu, &d.fcproj, &d.res3})
        std::fill(v->begin(), v->end(), 0.0f);
    for (auto* v : {&dencoded_, &dlnf_, &dlogits_}) std::fill(v->begin(), v->end(), 0.0f);
    std::fill(dlosses_.begin(), dlosses_.end(), 1.0f / static_cast<float>(counted_));

    float* dwte = grads.data() + tensors[0].offset;
    const std::size_t lnf = tensors.size() - 2;
    cpu::softmax_crossentropy_backward(dlogits_.data(), dlosses_.data(), probs_.data(), targets_.data(), BT, cfg_.V, kIgnore);
    cpu::matmul_backward(dlnf_.data(), dwte, nullptr, dlogits_.data(), lnf_.data(), params.data() + tensors[0].offset, BT, C, cfg_.V);
    const int last = cfg_.L - 1;
    cpu::layernorm_backward(dacts_[last].res3.data(), grads.data() + tensors[lnf].offset, grads.data() + tensors[lnf + 1].offset,
                            dlnf_.data(), acts_[last].res3.data(), params.data() + tensors[lnf].offset, lnf_mean_.data(), lnf_rstd_.data(), BT, C);
    for (int l = last; l >= 0; --l) {
      LayerActs& a = acts_[l];
      LayerActs& d = dacts_[l];
      const float* x = l == 0 ? encoded_.data() : acts_[l - 1].res3.data();
      float* dx = l == 0 ? dencoded_.data() : dacts_[l - 1].res3.data();
      cpu::residual_backward(d.res2.data(), d.fcproj.data(), d.res3.data(), n);
      cpu::matmul_backward(d.fch_gelu.data(), grad(l, kFcProjW), grad(l, kFcProjB), d.fcproj.data(), a.fch_gelu.data(), param(l, kFcProjW), BT, 4 * C, C);
      cpu::gelu_backward(d.fch.data(), a.fch.data(), d.fch_gelu.data(), 4 * n);
      cpu::matmul_backward(d.ln2.data(), grad(l, kFcW), grad(l, kFcB), d.fch.data(), a.ln2.data(), param(l, kFcW), BT, C, 4 * C);
      cpu::layernorm_backward(d.res2.data(), grad(l, kLn2W), grad(l, kLn2B), d.ln2.data(), a.res2.data(), param(l, kLn2W), a.ln2_mean.data(), a.ln2_rstd.data(), BT, C);
      cpu::residual_backward(dx, d.attproj.data(), d.res2.data(), n);
      cpu::matmul_backward(d.atty.data(), grad(l, kProjW), grad(l, kProjB), d.attproj.data(), a.atty.data(), param(l, kProjW), BT, C, C);
      cpu::attention_backward(d.qkv.data(), d.att.data(), d.atty.data(), a.qkv.data(), a.att.data(), B, T, C, NH);
      cpu::matmul_backward(d.ln1.data(), grad(l, kQkvW), grad(l, kQkvB), d.qkv.data(), a.ln1.data(), param(l, kQkvW), BT, C, 3 * C);
      cpu::layernorm_backward(dx, grad(l, kLn1W), grad(l, kLn1B), d.ln1.data(), x, param(l, kLn1W), a.ln1_mean.data(), a.ln1_rstd.data(), BT, C);
    }
    cpu::encoder_backward(dwte, grads.data() + tensors[1].offset, dencoded_.data(), tokens_.data(), B, T, C);
  }

  static constexpr std::int32_t kIgnore = -1;
  std::vector<Tensor> tensors;
  std::vector<float> params, grads;

 private:
  void add(const std::string& name, std::size_t size) {
    tensors.push_back({name, total_, size});
    total_ += size;
  }
  const Tensor& layer_tensor(int layer, LayerSlot slot) const { return tensors[2 + layer * kSlots + slot]; }

  Config cfg_;
  std::size_t total_ = 0;
  int counted_ = 0;
  std::vector<LayerActs> acts_, dacts_;  // dacts_[l].att is attention_backward's scratch
  std::vector<float> encoded_, dencoded_, lnf_, dlnf_, lnf_mean_, lnf_rstd_, logits_, dlogits_, probs_, losses_, dlosses_;
  std::vector<std::int32_t> tokens_, targets_;
};

struct Batch {
  std::vector<std::int32_t> tokens, targets;
};

// Next-token targets from one random stream; the last position of batch row 1 is ignored.
Batch fixed_batch(const Config& cfg) {
  const auto stream = random_tokens(static_cast<std::size_t>(cfg.B) * (cfg.T + 1), cfg.V, 7);
  Batch batch;
  for (int b = 0; b < cfg.B; ++b)
    for (int t = 0; t < cfg.T; ++t) {
      batch.tokens.push_back(stream[b * (cfg.T + 1) + t]);
      batch.targets.push_back(stream[b * (cfg.T + 1) + t + 1]);
    }
  batch.targets.back() = TinyGpt::kIgnore;
  return batch;
}

class KernelsGpt : public ::testing::Test {
 protected:
  void SetUp() override { cpu::set_blas_threads(1); }
};

}  // namespace

TEST_F(KernelsGpt, ParameterGradientMatchesFiniteDifferences) {
  const Config cfg;
  TinyGpt model(cfg);
  const Batch batch = fixed_batch(cfg);
  const double loss0 = model.forward(batch.tokens, batch.targets);
  EXPECT_NEAR(loss0, std::log(64.0), 1.5);  // near uniform at init
  model.backward();
  const std::vector<float> analytic = model.grads;
  auto loss = [&] { return model.forward(batch.tokens, batch.targets); };

  // Per tensor: the entry with the largest gradient plus two random entries. Random entries
  // may have tiny gradients, so the absolute floor is 1% of the tensor's largest gradient.
  std::mt19937 rng(11);
  for (const Tensor& t : model.tensors) {
    std::size_t largest = t.offset;
    double largest_abs = 0.0;
    for (std::size_t i = t.offset; i < t.offset + t.size; ++i)
      if (std::abs(analytic[i]) > largest_abs) {
        largest_abs = std::abs(analytic[i]);
        largest = i;
      }
    std::uniform_int_distribution<std::size_t> pick(t.offset, t.offset + t.size - 1);
    const std::vector<std::size_t> indices = {largest, pick(rng), pick(rng)};
    pk::test::GradientTolerance tol;
    tol.step = 1e-2f;
    tol.atol = 1e-2 * largest_abs + 1e-6;
    const double worst = pk::test::expect_gradient_matches(t.name, model.params, analytic, indices, loss, tol);
    RecordProperty(t.name, std::to_string(worst));
  }
}

TEST_F(KernelsGpt, LossDecreasesOverTwentyAdamWSteps) {
  const Config cfg;
  TinyGpt model(cfg);
  const Batch batch = fixed_batch(cfg);
  pk::AdamWSettings settings;
  settings.learning_rate = 1e-2f;
  settings.weight_decay = 0.01f;
  std::vector<float> m(model.params.size(), 0.0f), v(model.params.size(), 0.0f);
  std::vector<double> history;
  for (int step = 1; step <= 20; ++step) {
    history.push_back(model.forward(batch.tokens, batch.targets));
    ASSERT_TRUE(std::isfinite(history.back())) << "step " << step;
    model.backward();
    cpu::adamw_update(model.params.data(), m.data(), v.data(), model.grads.data(), model.params.size(), settings, step);
  }
  history.push_back(model.forward(batch.tokens, batch.targets));
  RecordProperty("loss_before", std::to_string(history.front()));
  RecordProperty("loss_after", std::to_string(history.back()));
  EXPECT_LT(history.back(), 0.25 * history.front()) << "from " << history.front() << " to " << history.back();
  for (std::size_t i = 1; i < history.size(); ++i) EXPECT_LT(history[i], history[i - 1] + 0.05) << "step " << i;
}

TEST_F(KernelsGpt, ForwardAndBackwardAreDeterministic) {
  const Config cfg;
  TinyGpt first(cfg), second(cfg);
  const Batch batch = fixed_batch(cfg);
  EXPECT_EQ(first.forward(batch.tokens, batch.targets), second.forward(batch.tokens, batch.targets));
  first.backward();
  second.backward();
  EXPECT_EQ(first.grads, second.grads);
}
