// Private to the memory estimates (memory.cpp, and its mirror in layout_search_lean.cpp): what
// the LM head keeps per micro-batch until its backward, and what its backward needs at once.
#pragma once

namespace plansight::estimator {

struct HeadActivationBytes {
  double stored = 0;   // per micro-batch awaiting its backward
  double working = 0;  // the head's backward, at once
};

// `tokens` of one micro-batch, e bytes an activation element, hidden h, padded vocabulary v,
// TP t (sp: sequence parallel). Stored: the final norm's and the LM head's inputs (2eh), the
// logits (e V/t) and the fp32 softmax the vocabulary-parallel cross-entropy keeps (4 V/t,
// Megatron-LM's _VocabParallelCrossEntropy saves its softmax for the backward); the backward
// needs the logits' gradient and the gradient into the final norm. `loss_in_place`
// (TrainingSpec::loss_in_place): the softmax overwrites the logits and the logits' gradient the
// softmax (llm.c's fused classifier; the probe's): neither the fp32 copy nor the gradient is extra.
inline HeadActivationBytes head_activation_bytes(double tokens, double e, double h, double v, double t, bool sp,
                                                 bool loss_in_place) {
  const double hidden = 2 * e * h / (sp ? t : 1.0);
  HeadActivationBytes out;
  out.stored = tokens * (hidden + (loss_in_place ? e : e + 4) * v / t);
  out.working = tokens * (hidden + (loss_in_place ? 0.0 : e * v / t));
  return out;
}

}  // namespace plansight::estimator
