// Private to the simulator: a schedule table's op lists as a simulation reads them. A long run
// skips most of its steady state (steady_state.h) and reads only the ops around it: a fifth of a
// 64-stage interleaved table with 4 virtual stages and 1,024 micro-batches, whose 524,288 ops took
// 0.4 ms of a 2 ms estimate to write (bench/results/time-core-cpu.txt).
// A sparse table (make_simulation_table) leaves the middle of each rank's steady loop unwritten:
// those ops are the loop's first period moved on, micro-batches later, and are written only when
// a simulation is about to read them (ensure). A table may be read by runs on several threads at
// once (ensure() is thread-safe, each range written once), but predict_time gives the run it
// puts beside the other a table of its own: sharing one, every cache line one thread wrote went
// over to the other core (bench/results/time-core-cpu.txt, 2026-11-28).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "plansight/estimator/pipeline_schedule.h"

namespace plansight::estimator {

// Of one rank's n ops, read(i) being op i: each local chunk c's first F (first_f[c]), first B
// (first_b[c]) and last B or W (last_bwd[c]), -1 where it has none; the arrays hold v entries
// set to -1. The walks stop once every chunk has them, a warm-up's and a drain's length, not the
// whole list (long runs skip their steady state and should not pay for reading it).
template <class Read>
void find_last_backwards(Read read, std::size_t n, std::size_t v, std::int64_t* last_bwd);
template <class Read>
void find_chunk_ops(Read read, std::size_t n, std::size_t v, std::int64_t* first_f, std::int64_t* first_b,
                    std::int64_t* last_bwd) {
  std::size_t missing = 2 * v;
  for (std::size_t i = 0; i < n && missing > 0; ++i) {
    const ScheduleOp o = read(i);
    const auto c = static_cast<std::size_t>(o.chunk);
    std::int64_t& first = o.kind == OpKind::forward ? first_f[c] : first_b[c];
    if (o.kind != OpKind::weight_grad && first < 0) first = static_cast<std::int64_t>(i), --missing;
  }
  find_last_backwards(read, n, v, last_bwd);
}
// find_chunk_ops()'s walk back from the end: each chunk's last B or W into last_bwd.
template <class Read>
void find_last_backwards(Read read, std::size_t n, std::size_t v, std::int64_t* last_bwd) {
  std::size_t missing = v;
  for (std::size_t i = n; i-- > 0 && missing > 0;) {
    const ScheduleOp o = read(i);
    const auto c = static_cast<std::size_t>(o.chunk);
    if (o.kind != OpKind::forward && last_bwd[c] < 0) last_bwd[c] = static_cast<std::int64_t>(i), --missing;
  }
}
// find_chunk_ops() for a list that runs every chunk's forwards and backwards in micro-batch order
// from micro-batch 0, as make_schedule's generators do (pipeline_schedule_test checks each): a
// chunk's first F and first B are its ops of micro-batch 0, so the walk to them tests each op's
// micro-batch only. (The walks were a third of making a 64 x 4 interleaved sparse table; this
// one took 2.95 -> 2.6 M instructions a table, bench/results/time-core-cpu.txt.) A list where
// some chunk has no such op is walked by find_chunk_ops.
template <class Read>
void find_generated_chunk_ops(Read read, std::size_t n, std::size_t v, std::int64_t* first_f, std::int64_t* first_b,
                              std::int64_t* last_bwd) {
  std::size_t missing = 2 * v;
  for (std::size_t i = 0; i < n; ++i) {
    const ScheduleOp o = read(i);
    if (o.micro_batch != 0 || o.kind == OpKind::weight_grad) [[likely]] continue;
    std::int64_t& first = (o.kind == OpKind::forward ? first_f : first_b)[static_cast<std::size_t>(o.chunk)];
    if (first >= 0) continue;
    first = static_cast<std::int64_t>(i);
    if (--missing == 0) {
      find_last_backwards(read, n, v, last_bwd);
      return;
    }
  }
  std::fill(first_f, first_f + v, -1);
  std::fill(first_b, first_b + v, -1);
  find_chunk_ops(read, n, v, first_f, first_b, last_bwd);
}

class ScheduleRows {
 public:
  ScheduleRows() = default;
  // Every op of `table`, which must outlive the rows.
  explicit ScheduleRows(const ScheduleTable& table);
  ScheduleRows(ScheduleRows&&) noexcept = default;
  ScheduleRows& operator=(ScheduleRows&&) noexcept = default;

  std::size_t ranks() const { return rows_.size(); }
  std::size_t size(std::size_t r) const { return rows_[r].size; }
  // Rank r's ops, readable where ensure() has been asked for them (everywhere in a whole table).
  const ScheduleOp* data(std::size_t r) const { return rows_[r].ops; }
  bool sparse() const { return leaves_out_; }
  // Makes rank r's ops [from, to) readable through data(). Thread-safe; takes a lock when the
  // table is sparse, so a run asks for ranges ahead of its reads, not op by op.
  void ensure(std::size_t r, std::size_t from, std::size_t to) const {
    if (leaves_out_) ensure_sparse(r, from, to);
  }
  // Rank r's op i, written or not (no lock: it is derived when it lay in the middle left out).
  ScheduleOp at(std::size_t r, std::size_t i) const {
    const Row& row = rows_[r];
    return i - row.left_begin < row.left_end - row.left_begin ? derived(r, i) : row.ops[i];
  }
  // Rank r's ops [from, to) into `out`, written or not: at() for a range, deriving the ops left
  // out one after another (a division for the range, not for each op).
  void read(std::size_t r, std::size_t from, std::size_t to, ScheduleOp* out) const;
  // A bound on the micro-batches rank r's ops [0, to) run: 1 + the largest, or more (INT32_MAX:
  // none known, every micro-batch). A sparse rank's from its first ops and its base period.
  std::int32_t micro_batch_end(std::size_t r, std::size_t to) const;
  // A bound the other way: no op of rank r from `from` on runs a micro-batch below it.
  std::int32_t micro_batch_begin(std::size_t r, std::size_t from) const;
  // find_chunk_ops' arrays of every rank, r * v + c, when the table's maker found them (a sparse
  // table's, on its two threads, once for both runs); null otherwise.
  struct ChunkOps {
    std::vector<std::int64_t> first_f, first_b, last_bwd;
  };
  const ChunkOps* chunk_ops() const { return sparse_ != nullptr ? &sparse_->chunk_ops : nullptr; }

 private:
  friend class SparseRowsBuilder;
  struct Row {
    ScheduleOp* ops = nullptr;
    std::size_t size = 0;
    std::size_t left_begin = 0, left_end = 0;  // the ops left out (LeftOut), none in a whole table
  };
  // Per rank of a sparse table: ops [left_begin, left_end) were left out; each is op
  // base + (i - base) % period, (i - base) / period x shift micro-batches later. `holes`: the
  // ranges among them not written yet (under the rank's lock).
  struct LeftOut {
    std::size_t base = 0, period = 0, left_begin = 0, left_end = 0;
    std::int32_t shift = 0;
    // 1 + the largest micro-batch of the ops before left_begin; the largest and the smallest of
    // the base period; the smallest from left_end on.
    std::int32_t head_end = 0, base_max = 0, base_min = 0, tail_min = 0;
    std::vector<std::pair<std::size_t, std::size_t>> holes;
  };
  // Every rank's ops in one block, rank r's row r rows on (rows an odd number of cache lines
  // long); the block goes back to the thread that frees the table, for the next table made
  // there (take_block, give_back_block, row_stride: schedule_rows.cpp).
  struct OpBlock {
    std::unique_ptr<ScheduleOp[]> ops;
    std::size_t capacity = 0;  // ops
  };
  struct Sparse {
    Sparse() = default;
    Sparse(const Sparse&) = delete;
    Sparse& operator=(const Sparse&) = delete;
    ~Sparse();
    OpBlock storage;
    std::vector<LeftOut> left_out;
    ChunkOps chunk_ops;
    // Per rank: ops [left_begin, written_to) are written, published after the writes. Both runs
    // of predict_time move through the same ranges at about the same time: the second finds its
    // range written here without waiting for the lock the first holds.
    std::unique_ptr<std::atomic<std::size_t>[]> written_to;
    // Per rank, held while its holes are written and updated: with one lock for all ranks the
    // two runs waited for each other in the kernel (DualPipe's mirrored half 10 % slower than
    // with a whole table).
    std::unique_ptr<std::mutex[]> locks;
  };
  void ensure_sparse(std::size_t r, std::size_t from, std::size_t to) const;
  ScheduleOp derived(std::size_t r, std::size_t i) const;

  std::vector<Row> rows_;
  std::unique_ptr<Sparse> sparse_;  // a sparse table's storage
  bool leaves_out_ = false;         // some rank's ops were left out
};

// A table for the simulation: make_schedule's (`rows` over its lists) or a sparse one (its lists
// empty, its ops in `rows` only; ScheduleTable::repeating set as make_schedule sets it).
struct SimulationTable {
  ScheduleTable table;
  ScheduleRows rows;
};

// make_schedule's table (same errors), sparse where that can pay: 1F1B, ZB-H1, interleaved (its
// micro-batch groups whole) and DualPipeV, with a steady loop long enough to leave a middle out
// and enough micro-batches for the simulation to skip it (skippable, steady_state.h). Any other:
// a whole table. Every op, written or not, is make_schedule's (schedule_rows_test).
Result<SimulationTable> make_simulation_table(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                              ScheduleOptions options, bool sparse);
// make_dualpipe_lower_half's table (simulation_costs.h), sparse as above.
Result<SimulationTable> make_dualpipe_lower_half_table(std::int64_t p, std::int64_t m, ScheduleOptions options, bool sparse);

}  // namespace plansight::estimator
