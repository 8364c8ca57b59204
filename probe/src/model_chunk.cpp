// ModelChunk: forward and backward of one micro-batch through a chunk, with ZeRO-3 gathers
// around each unit's use (Rajbhandari et al. 2020, Sec. 5.3: parameters are all-gathered just
// before a layer's forward and backward and freed after) and each layer's gradients handed to
// the data-parallel reduction as soon as its backward is done.
#include "model_chunk.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using runtime::MemoryCategory;

}  // namespace

ModelChunk::ModelChunk(RankContext& ctx, int global_chunk) : ctx_(ctx), global_(global_chunk) {
  const Dims& d = ctx.cfg.dims;
  const bool tied_across_stages = d.tied && ctx.cfg.pp > 1;
  if (first()) {
    wte_ = std::make_unique<ParamUnit>(ctx, "wte", std::vector<TensorDesc>{word_embedding_tensor(d, "wte")}, global_, tied_across_stages);
    wpe_ = std::make_unique<ParamUnit>(ctx, "wpe", std::vector<TensorDesc>{position_tensor(d)}, global_, false);
  }
  const int first_layer = ctx.cfg.chunk_first_layer[static_cast<std::size_t>(global_)];
  for (int l = 0; l < ctx.cfg.chunk_layers[static_cast<std::size_t>(global_)]; ++l) {
    blocks_.push_back(std::make_unique<TransformerBlock>(ctx, first_layer + l, global_));
  }
  if (last()) {
    lnf_ = std::make_unique<ParamUnit>(ctx, "lnf", final_norm_tensors(d), global_, false);
    if (!d.tied) {
      head_weight_ = std::make_unique<ParamUnit>(ctx, "lm_head", std::vector<TensorDesc>{word_embedding_tensor(d, "lm_head")}, global_, false);
    } else if (!first()) {
      // The last stage's copy starts from the same values (same name, same init) as the first's.
      head_weight_ = std::make_unique<ParamUnit>(ctx, "wte", std::vector<TensorDesc>{word_embedding_tensor(d, "wte")}, global_, true);
    } else {
      wte_->set_backward_uses(2);  // used by the embedding and by the head in each backward
    }
  }
}

std::vector<ParamUnit*> ModelChunk::units() {
  std::vector<ParamUnit*> out;
  for (auto* u : {wte_.get(), wpe_.get()}) if (u) out.push_back(u);
  for (auto& b : blocks_) out.push_back(&b->unit());
  for (auto* u : {lnf_.get(), head_weight_.get()}) if (u) out.push_back(u);
  return out;
}

const void* ModelChunk::output(const ChunkActs& a) const {
  return blocks_.empty() ? a.input.data() : a.layers.back().out.data();
}

void ModelChunk::forward(ChunkActs& a, int mb) {
  const Dims& d = ctx_.cfg.dims;
  const auto n = static_cast<std::size_t>(d.N()) * d.C;
  if (first()) {
    // Unfilled: the lookup writes every row (zeros for tokens outside this rank's vocabulary).
    a.input = Buf(ctx_.be, MemoryCategory::activations, n, ctx_.be.act(), Fill::none);
    wte_->acquire(est::Phase::forward, mb);
    wpe_->acquire(est::Phase::forward, mb);
    embedding_forward(ctx_, *wte_, *wpe_, a.tokens.i32(), a.input.data(), global_, mb);
    wpe_->release();
    wte_->release();
  }
  a.layers.resize(blocks_.size());
  const void* x = a.input.data();
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    TransformerBlock& b = *blocks_[l];
    b.unit().acquire(est::Phase::forward, mb);
    b.forward(x, a.layers[l], est::Phase::forward, mb);
    b.trim(a.layers[l]);
    b.unit().release();
    x = a.layers[l].out.data();
  }
  if (last()) {
    lnf_->acquire(est::Phase::forward, mb);
    head_weight().acquire(est::Phase::forward, mb);
    head_forward(ctx_, *lnf_, head_weight(), x, a.targets.i32(), a.head, global_, mb);
    head_weight().release();
    lnf_->release();
  }
}

Buf ModelChunk::backward(ChunkActs& a, const void* dout, int mb, bool last_micro_batch) {
  const Dims& d = ctx_.cfg.dims;
  const auto n = static_cast<std::size_t>(d.N()) * d.C;
  // Unfilled: head_backward zeroes it before LayerNorm's backward adds into it; a chunk before
  // the last copies the received gradient over it whole.
  Buf grad(ctx_.be, MemoryCategory::activations, n, ctx_.be.act(), Fill::none);
  if (last()) {
    // Mean over every token of the step: N per micro-batch, m micro-batches, dp replicas.
    // fp16 multiplies it by the loss scale (ctx_.loss_scale), which AdamW divides out again.
    const float scale = ctx_.loss_scale / (static_cast<float>(d.N()) * static_cast<float>(ctx_.cfg.micro_batches) *
                                           static_cast<float>(ctx_.cfg.dp));
    ParamUnit& w = head_weight();
    lnf_->acquire(est::Phase::backward, mb);
    w.acquire(est::Phase::backward, mb);
    lnf_->begin_backward();
    w.begin_backward();
    head_backward(ctx_, *lnf_, w, output(a), a.targets.i32(), a.head, scale, grad.data(), global_, mb);
    a.head = HeadActs{};
    lnf_->end_backward(last_micro_batch);
    w.end_backward(last_micro_batch);
    w.release();
    lnf_->release();
  } else {
    ctx_.be.copy(grad.data(), dout, grad.bytes(), Queue::compute);
  }
  for (std::size_t l = blocks_.size(); l-- > 0;) {
    TransformerBlock& b = *blocks_[l];
    const void* x = l == 0 ? a.input.data() : a.layers[l - 1].out.data();
    Buf dx(ctx_.be, MemoryCategory::activations, n, ctx_.be.act(), Fill::none);  // backward() overwrites dx
    b.unit().acquire(est::Phase::backward, mb);
    b.restore(x, a.layers[l], mb);
    b.unit().begin_backward();
    b.backward(x, grad.data(), dx.data(), a.layers[l], mb);
    b.unit().end_backward(last_micro_batch);
    b.unit().release();
    a.layers[l] = LayerActs{};
    grad = std::move(dx);
  }
  if (!first()) return grad;
  wte_->acquire(est::Phase::backward, mb);
  wpe_->acquire(est::Phase::backward, mb);
  wte_->begin_backward();
  wpe_->begin_backward();
  embedding_backward(ctx_, *wte_, *wpe_, a.tokens.i32(), grad.data(), global_, mb);
  wpe_->end_backward(last_micro_batch);
  wte_->end_backward(last_micro_batch);
  wpe_->release();
  wte_->release();
  return Buf();
}

}  // namespace plansight::probe
