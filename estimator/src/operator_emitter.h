// What operator_costs.cpp and moe_layer_costs.cpp build operators with: the nominal FLOPs per
// element of element-wise kernels, the profile names of their forward and backward kernels, the
// steps of a layer's forward (OperatorCost::step) and an Emitter that costs each operator with
// DeviceModel and hands it to an OperatorSink.
#pragma once

#include <string_view>

#include "plansight/estimator/operator_costs.h"

namespace plansight::estimator::operators {

// Nominal FLOPs per element of the element-wise kernels, forward and backward, counted by hand
// from each kernel's arithmetic (one FLOP per add, multiply, divide, exp or compare). They only
// place a kernel on the roofline (intensity well below 10 FLOP/byte, far left of any GPU's
// ridge); its time comes from its bytes, and no FLOP total of the estimate counts them.
struct ElementFlops {
  double forward, backward;
};
// LayerNorm: mean (1), variance (3), normalise (2), scale and shift (2); RMSNorm: square and
// sum (2), scale by 1/rms and by the weight (2). Backward about twice the forward (the gradient
// of x through the statistics, and the weight's gradient).
constexpr ElementFlops kLayerNormFlops{8, 16}, kRmsNormFlops{4, 8};
// Bias add, dropout scale, residual add; backward the dropout scale and the bias-gradient sum.
constexpr ElementFlops kResidualFlops{3, 2};
// tanh-GeLU: x^3, two multiply-adds, tanh, x (1 + t) / 2; SwiGLU's sigmoid and products are as many.
constexpr ElementFlops kActivationFlops{8, 16};
constexpr ElementFlops kSoftmaxFlops{5, 4};      // max, subtract, exp, sum, divide; dS = P (dP - rowsum(P dP))
constexpr ElementFlops kDropoutFlops{2, 1};      // compare with a random number, scale
constexpr ElementFlops kCrossEntropyFlops{5, 3}; // max, subtract, exp, sum, pick; softmax minus one-hot, scale
constexpr ElementFlops kRotaryFlops{3, 3};       // x cos + rotate(x) sin
constexpr ElementFlops kRouterFlops{5, 4};       // softmax (or sigmoid) scores and top-k over the experts
constexpr ElementFlops kCopyFlops{0, 0};         // permutation: data movement only

// The forward and backward kernels of one element-wise operation, named so that a measured
// profile can give each its own throughput (DeviceModel::elementwise_seconds).
struct Elementwise {
  ElementwiseKind forward, backward;
};
constexpr Elementwise kNorm{ElementwiseKind::norm_forward, ElementwiseKind::norm_backward};
constexpr Elementwise kResidual{ElementwiseKind::residual_forward, ElementwiseKind::residual_backward};
constexpr Elementwise kActivation{ElementwiseKind::activation_forward, ElementwiseKind::activation_backward};
constexpr Elementwise kSoftmax{ElementwiseKind::softmax_forward, ElementwiseKind::softmax_backward};
constexpr Elementwise kDropout{ElementwiseKind::dropout_forward, ElementwiseKind::dropout_backward};
constexpr Elementwise kCrossEntropy{ElementwiseKind::cross_entropy_forward, ElementwiseKind::cross_entropy_backward};
constexpr Elementwise kRotary{ElementwiseKind::rotary_forward, ElementwiseKind::rotary_backward};

// Builds and hands over operators; `core` marks the attention core's.
class Emitter {
 public:
  Emitter(const DeviceModel& dev, OperatorSink& sink) : dev_(dev), sink_(sink) {}
  void set_core(bool core) { core_ = core; }
  // FP8 training (Transformer Engine): GEMMs from here on take fp8 operands, cast by the kernels
  // that fp8_casts() below adds. Off for GEMMs frameworks keep in 16 bits (router, LM head).
  void set_fp8(bool fp8) { fp8_ = fp8; }

  // A GEMM of the forward pass and its two backward GEMMs. `input_cast`: under fp8 its input
  // needs a cast kernel of its own (TE fuses the cast into a preceding norm or activation of its
  // fused modules, LayerNormLinear and LayerNormMLP; not after attention or an expert's
  // activation).
  void gemm(std::string_view name, double step, double M, double N, double K, double batch = 1,
            bool input_cast = false) {
    const double flops = 2 * M * N * K * batch;
    add_gemm(name, OperatorPass::forward, step, M, N, K, batch, flops);
    add_gemm(name, OperatorPass::backward_input, step, M, K, N, batch, flops);
    add_gemm(name, OperatorPass::backward_weight, step, K, N, M, batch, flops);
    if (fp8_) fp8_casts(step, input_cast ? M * K * batch : 0, M * N * batch);
  }
  // gemm() for a GEMM that every TP rank runs whole (OperatorCost::tp_duplicated).
  void duplicated_gemm(std::string_view name, double step, double M, double N, double K) {
    duplicated_ = true;
    gemm(name, step, M, N, K);
    duplicated_ = false;
  }
  // The casts of one fp8 GEMM: in the forward its input when no fused kernel produced it, in the
  // backward its output gradient; each reads 16 bits and writes the rowwise and the columnwise
  // fp8 copy (1 byte each: Hopper transposes physically) the two backward GEMMs need (TE docs,
  // "Performance Considerations": forward GEMMs use rowwise tensors, wgrad columnwise, dgrad the
  // output gradient rowwise). Memory bound: 4 bytes per element. The weights' casts happen once
  // per iteration (cached over micro-batches) and are left out.
  // Named "fp8 cast" (OperatorCost::name is static text), just before its GEMM.
  void fp8_casts(double step, double input_elements, double output_gradient_elements) {
    streaming("fp8 cast", step - 0.05, kCopyFlops, input_elements, 4 * input_elements, 4 * output_gradient_elements);
  }
  // One GEMM of one pass (the attention core's products), with its FLOPs as counted.
  void add_gemm(std::string_view name, OperatorPass pass, double step, double m, double n, double k, double batch,
                double flops) {
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return;  // a GEMM of nothing (a MoE layer without shared experts)
    OperatorCost op = base(name, pass, OperatorClass::gemm, step);
    op.m = m, op.n = n, op.k = k, op.batch = batch;
    op.flops = flops;
    op.bytes = dev_.gemm_bytes(m, n, k, batch);
    op.seconds = dev_.gemm_seconds(m, n, k, batch);
    op.matmul = true;
    op.tp_duplicated = duplicated_;
    sink_.add(op);
  }
  // An element-wise kernel over `elements`, moving `forward_bytes` and, in its backward,
  // `backward_bytes`; memory bound unless the profile measured that kind.
  void elementwise(std::string_view name, double step, Elementwise kind, ElementFlops per_element, double elements,
                   double forward_bytes, double backward_bytes) {
    add_elementwise(name, OperatorPass::forward, step, elements * per_element.forward, forward_bytes,
                    dev_.elementwise_seconds(kind.forward, forward_bytes));
    add_elementwise(name, OperatorPass::backward_input, step, elements * per_element.backward, backward_bytes,
                    dev_.elementwise_seconds(kind.backward, backward_bytes));
  }
  // A streaming kernel the time model charges as plain HBM traffic (DeviceModel::memory_seconds).
  void streaming(std::string_view name, double step, ElementFlops per_element, double elements, double forward_bytes,
                 double backward_bytes, double kernels = 1) {
    add_elementwise(name, OperatorPass::forward, step, kernels * elements * per_element.forward, kernels * forward_bytes,
                    kernels * dev_.memory_seconds(forward_bytes));
    add_elementwise(name, OperatorPass::backward_input, step, kernels * elements * per_element.backward,
                    kernels * backward_bytes, kernels * dev_.memory_seconds(backward_bytes));
  }
  void add_elementwise(std::string_view name, OperatorPass pass, double step, double flops, double bytes, double seconds) {
    OperatorCost op = base(name, pass, OperatorClass::elementwise, step);
    op.flops = flops;
    op.bytes = bytes;
    op.seconds = seconds;
    if (bytes > 0) sink_.add(op);
  }
  // A fused attention kernel (FlashAttention, or a profile's measured one).
  void attention(std::string_view name, OperatorPass pass, double step, double flops, double bytes, double seconds) {
    OperatorCost op = base(name, pass, OperatorClass::attention, step);
    op.flops = flops;
    op.bytes = bytes;
    op.seconds = seconds;
    op.matmul = true;
    if (flops > 0) sink_.add(op);
  }

 private:
  OperatorCost base(std::string_view name, OperatorPass pass, OperatorClass c, double step) const {
    OperatorCost op;
    op.name = name;
    op.pass = pass;
    op.op_class = c;
    op.step = step;
    op.attention_core = core_;
    return op;
  }

  const DeviceModel& dev_;
  OperatorSink& sink_;
  bool core_ = false;
  bool fp8_ = false;
  bool duplicated_ = false;  // the GEMMs added now are duplicated_gemm()'s
};

// Steps of a layer's forward, in the order Megatron-LM runs it (OperatorCost::step).
namespace step {
constexpr double kNormAttention = 0, kQkv = 1, kRotary = 2, kScores = 3, kSoftmax = 4, kDropout = 5, kContext = 6,
                 kAttentionOut = 7, kResidualAttention = 8, kNormMlp = 9, kMlpUp = 10, kActivation = 11, kMlpDown = 12,
                 kResidualMlp = 13;
}  // namespace step

}  // namespace plansight::estimator::operators
