// ModelChunk: the layers of one global model chunk on one rank (chunk c of pipeline rank r is
// global chunk c * pp + r, as LayoutSpec::stage_layers numbers them), plus the embedding on the
// first chunk and the final norm and head on the last. With a tied head and pp > 1 the last
// chunk keeps its own copy of the word embedding, synchronised by the embedding group as in
// Megatron-LM; with pp = 1 embedding and head share one unit.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "embedding_head.h"
#include "transformer_block.h"

namespace plansight::probe {

// Everything one micro-batch leaves in a chunk between its forward and its backward.
struct ChunkActs {
  Buf input;  // [N,C]: received from the previous chunk, or the embedding's output
  std::vector<LayerActs> layers;
  HeadActs head;
  Buf tokens, targets;  // int32 [N] in the backend's memory: first chunk's inputs, last chunk's targets
};

class ModelChunk {
 public:
  ModelChunk(RankContext& ctx, int global_chunk);

  int global() const { return global_; }
  bool first() const { return global_ == 0; }
  bool last() const { return global_ == ctx_.cfg.chunks() - 1; }

  // Runs the micro-batch forward: `a.input` (or `a.tokens` on the first chunk) in; the output is
  // output(a), or on the last chunk the loss, added to the backend's loss accumulator.
  void forward(ChunkActs& a, int micro_batch);
  const void* output(const ChunkActs& a) const;
  // Runs the backward from `dout` (null on the last chunk: from the loss) and frees the micro-
  // batch's activations; returns the input gradient (empty on the first chunk).
  Buf backward(ChunkActs& a, const void* dout, int micro_batch, bool last_micro_batch);

  std::vector<ParamUnit*> units();  // every unit this chunk owns, in a fixed order

 private:
  ParamUnit& head_weight() { return head_weight_ ? *head_weight_ : *wte_; }

  RankContext& ctx_;
  int global_;
  std::unique_ptr<ParamUnit> wte_, wpe_, lnf_, head_weight_;
  std::vector<std::unique_ptr<TransformerBlock>> blocks_;
};

}  // namespace plansight::probe
