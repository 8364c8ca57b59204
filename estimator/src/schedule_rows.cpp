// Schedule tables as the simulation reads them, whole or sparse (schedule_rows.h).
#include "schedule_rows.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>

#include "schedule_generators.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

static_assert(std::endian::native == std::endian::little && sizeof(ScheduleOp) == 8 &&
              offsetof(ScheduleOp, micro_batch) == 4, "an op's micro-batch is the high half of its word");

// A sparse rank's ops: an array of the list's length, the middle of its steady loop left out
// (generators::SteadyLoop), when that middle is worth leaving out.
struct ArraySink {
  static constexpr bool kLeavesOut = true;
  ScheduleOp* out = nullptr;
  std::size_t n = 0;
  // What was left out: ops [left_begin, left_end), which repeat [base, base + period) on.
  std::size_t base = 0, period = 0, left_begin = 0, left_end = 0;
  std::int32_t shift = 0;

  void put(ScheduleOp o) { out[n++] = o; }
  ScheduleOp& back() { return out[n - 1]; }
  std::size_t size() const { return n; }
  void skip(std::size_t k) { n += k; }
  // The iterations from a period after the base to a period before the end: the ops before
  // them hold the base period, those after them the end of the ops that repeat (which widening
  // the run reads, steady_state.h's repeating_run_around).
  generators::LeftOut steady(const generators::SteadyLoop& loop) {
    if (loop.per_period == 0 || left_end > left_begin) return {};
    const std::size_t from = loop.base + loop.per_period;
    if (loop.iterations < from + loop.per_period) return {};
    const std::size_t to = loop.iterations - loop.per_period;
    if ((to - from) * loop.ops_per_iteration < kMinLeftOut) return {};
    base = loop.first_op + loop.base * loop.ops_per_iteration;
    period = loop.per_period * loop.ops_per_iteration;
    shift = loop.shift;
    left_begin = loop.first_op + from * loop.ops_per_iteration;
    left_end = loop.first_op + to * loop.ops_per_iteration;
    return {from, to};
  }
  // Fewer ops are not worth a range to track.
  static constexpr std::size_t kMinLeftOut = 256;
};

bool may_be_sparse(PipelineSchedule kind) {
  return kind == PipelineSchedule::one_f_one_b || kind == PipelineSchedule::zb_h1 ||
         kind == PipelineSchedule::interleaved || kind == PipelineSchedule::dualpipev;
}

}  // namespace

ScheduleRows::ScheduleRows(const ScheduleTable& table) {
  rows_.reserve(table.ranks.size());
  // The rows only read through these pointers; the table's lists are never written here.
  for (const auto& list : table.ranks) rows_.push_back(Row{const_cast<ScheduleOp*>(list.data()), list.size()});
}

ScheduleOp ScheduleRows::derived(std::size_t r, std::size_t i) const {
  const LeftOut& l = sparse_->left_out[r];
  const std::size_t k = i - l.base;
  ScheduleOp o = rows_[r].ops[l.base + k % l.period];
  o.micro_batch += static_cast<std::int32_t>(k / l.period) * l.shift;
  return o;
}

void ScheduleRows::read(std::size_t r, std::size_t from, std::size_t to, ScheduleOp* out) const {
  const Row& row = rows_[r];
  to = std::min(to, row.size);
  for (std::size_t i = from; i < to;) {
    const bool left_out = i - row.left_begin < row.left_end - row.left_begin;
    if (!left_out) {
      const std::size_t end = i < row.left_begin ? std::min(to, row.left_begin) : to;
      std::copy(row.ops + i, row.ops + end, out + (i - from));
      i = end;
      continue;
    }
    const LeftOut& l = sparse_->left_out[r];
    const std::size_t end = std::min(to, row.left_end);
    const std::size_t k = i - l.base;
    std::size_t at = l.base + k % l.period;
    auto moved = static_cast<std::int32_t>(k / l.period) * l.shift;
    for (; i < end; ++i) {
      ScheduleOp o = row.ops[at];
      o.micro_batch += moved;
      out[i - from] = o;
      if (++at == l.base + l.period) at = l.base, moved += l.shift;
    }
  }
}

std::int32_t ScheduleRows::micro_batch_end(std::size_t r, std::size_t to) const {
  const Row& row = rows_[r];
  if (row.left_end == row.left_begin || to > row.left_end) return INT32_MAX;
  const LeftOut& l = sparse_->left_out[r];
  if (to <= row.left_begin) return l.head_end;
  // Op i left out is an op of the base period, (i - base) / period periods on.
  const auto periods = static_cast<std::int64_t>((to - 1 - l.base) / l.period);
  return static_cast<std::int32_t>(std::max<std::int64_t>(l.head_end, l.base_max + periods * l.shift + 1));
}

std::int32_t ScheduleRows::micro_batch_begin(std::size_t r, std::size_t from) const {
  const Row& row = rows_[r];
  if (row.left_end == row.left_begin || from < row.left_begin) return 0;
  const LeftOut& l = sparse_->left_out[r];
  if (from >= row.left_end) return l.tail_min;
  const auto periods = static_cast<std::int64_t>((from - l.base) / l.period);
  return static_cast<std::int32_t>(std::min<std::int64_t>(l.tail_min, l.base_min + periods * l.shift));
}

namespace {

// dst[j] = src[j] with `add` added to its micro-batch, for j < n, as 64-bit words, the
// micro-batch in the high half (steady_state.cpp's word_of): written field by field, each op's
// load a period later missed the store buffer's forwarding. The two ranges do not overlap. Four
// ops a step, as one vector of four words (GCC's and Clang's vector extension: SSE2 or AVX2 on
// x86-64, NEON on ARM), which the compiler's default vectorisation leaves to the loop below:
// the reads ahead of a run wrote this way were 8 % of a DualPipeV estimate's instructions with a
// new table each time (bench/results/time-core-cpu.txt).
void add_to_micro_batches(ScheduleOp* dst, const ScheduleOp* src, std::size_t n, std::int32_t add) {
  static_assert(offsetof(ScheduleOp, micro_batch) == 4 && std::endian::native == std::endian::little);
  const std::uint64_t add_word = static_cast<std::uint64_t>(static_cast<std::uint32_t>(add)) << 32;
  using Words = std::uint64_t __attribute__((vector_size(4 * sizeof(std::uint64_t))));
  static_assert(sizeof(Words) == 4 * sizeof(ScheduleOp));
  const Words add_words = {add_word, add_word, add_word, add_word};
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    Words words;
    std::memcpy(&words, src + j, sizeof words);
    words += add_words;
    std::memcpy(static_cast<void*>(dst + j), &words, sizeof words);
  }
  for (; j < n; ++j) {
    std::uint64_t word;
    std::memcpy(&word, src + j, sizeof word);
    word += add_word;
    std::memcpy(static_cast<void*>(dst + j), &word, sizeof word);
  }
}

}  // namespace

void ScheduleRows::ensure_sparse(std::size_t r, std::size_t from, std::size_t to) const {
  to = std::min(to, rows_[r].size);
  if (from >= to) return;
  LeftOut& l = sparse_->left_out[r];
  if (to <= l.left_begin || from >= l.left_end) return;  // written when the table was made
  std::atomic<std::size_t>& written_to = sparse_->written_to[r];
  if (from >= l.left_begin && to <= written_to.load(std::memory_order_acquire)) return;
  const std::lock_guard lock(sparse_->locks[r]);
  auto& holes = l.holes;
  ScheduleOp* const ops = rows_[r].ops;
  // The holes are sorted and apart: from the first that ends after `from`, found by bisection (a
  // run that skips leaves one behind each skip, up to 65 a rank in a DualPipeV run at 64 x 1024).
  auto first = std::partition_point(holes.begin(), holes.end(), [from](const auto& hole) { return hole.second <= from; });
  for (auto h = static_cast<std::size_t>(first - holes.begin()); h < holes.size() && holes[h].first < to;) {
    const auto [hb, he] = holes[h];
    const std::size_t a = std::max(hb, from), b = std::min(he, to);
    if (a >= b) {
      ++h;
      continue;
    }
    // Ops [a, b): the first period's from the base period (one division), every later one from
    // the op a period before it, just written (DualPipeV's periods are six ops: a division per
    // period was most of the writing). The runs ask for a few ops at a time, so most of the
    // writing is of that first period: in at most two runs (to the base period's end, then on
    // from its start), each copied with one add. With the base period's end checked op by op it
    // was 2.3 M of the 46 M instructions of a 64 x 4 interleaved ZeRO-3 estimate with new
    // tables (bench/results/time-core-cpu.txt, 2026-11-28, fourth).
    const std::size_t first_end = std::min(b, a + l.period);
    const std::size_t k = a - l.base;
    std::size_t from_base = l.base + k % l.period;
    auto moved = static_cast<std::int32_t>(k / l.period) * l.shift;
    for (std::size_t i = a; i < first_end; from_base = l.base, moved += l.shift) {
      const std::size_t run = std::min(first_end - i, l.base + l.period - from_base);
      add_to_micro_batches(ops + i, ops + from_base, run, moved);
      i += run;
    }
    // Every later period from the whole periods just written before it, in runs that double: op
    // i is op i - k x period moved on by k x shift. (Copied a period at a time, DualPipeV's six
    // ops were a call each: about 10 instructions an op, and a run that skips often writes
    // ranges of 256 ops after each skip, 1.3 M ops a run at 64 x 1024 with a new table.)
    for (std::size_t i = first_end; i < b;) {
      const std::size_t span = (i - a) / l.period * l.period;
      const std::size_t run = std::min(b - i, span);
      add_to_micro_batches(ops + i, ops + i - span, run, static_cast<std::int32_t>(span / l.period) * l.shift);
      i += run;
    }
    if (a == hb && hb == written_to.load(std::memory_order_relaxed)) written_to.store(b, std::memory_order_release);
    // What is left of the hole: before a, after b.
    if (a > hb && b < he) {
      holes[h] = {hb, a};
      holes.insert(holes.begin() + static_cast<std::ptrdiff_t>(h) + 1, {b, he});
      h += 2;
    } else if (a > hb) {
      holes[h] = {hb, a};
      ++h;
    } else if (b < he) {
      holes[h] = {b, he};
      ++h;
    } else {
      holes.erase(holes.begin() + static_cast<std::ptrdiff_t>(h));
    }
  }
}

namespace {

// The block of ops a thread's last sparse table freed, taken by the next table the thread makes.
// predict_time keeps one table a thread (time_model.cpp's kept_table) and frees it just before
// it makes the next, so an edit that changes the schedule's size writes its table into memory
// the last one had mapped. Freed to malloc instead, the blocks (six megabytes of a 64-stage
// interleaved table) let it trim its heap, and the estimate then faulted in fresh pages for
// them and for what it allocated after: 7.7 page faults an estimate of interleaved 64 x 4 x
// 1024 with ZeRO-3 and a new table each time, 2.7 with the block kept, and 37.6 once other
// allocations had moved (bench/estimate_page_faults.sh, bench/results/time-core-cpu.txt).
constexpr std::size_t kSpareBlockBytes = std::size_t{16} << 20;  // as kept_table's bound
// Constant-initialised and trivially destroyed, so readable while the thread's other
// thread_local objects are destroyed (a kept table may be freed after the spare).
thread_local ScheduleOp* spare_ops = nullptr;
thread_local std::size_t spare_capacity = 0;
thread_local bool spare_gone = false;  // the thread is exiting: blocks go back to malloc
struct SpareOwner {
  SpareOwner() = default;
  SpareOwner(const SpareOwner&) = delete;
  SpareOwner& operator=(const SpareOwner&) = delete;
  ~SpareOwner() {
    delete[] spare_ops;
    spare_ops = nullptr;
    spare_capacity = 0;
    spare_gone = true;
  }
};
void own_spare() { thread_local SpareOwner owner; }  // frees the spare when the thread exits

// A block of at least n ops (not initialised), and its size: the thread's spare if large enough.
std::pair<std::unique_ptr<ScheduleOp[]>, std::size_t> take_block(std::size_t n) {
  if (spare_ops != nullptr && spare_capacity >= n) {
    std::pair<std::unique_ptr<ScheduleOp[]>, std::size_t> out{std::unique_ptr<ScheduleOp[]>(spare_ops), spare_capacity};
    spare_ops = nullptr;
    spare_capacity = 0;
    return out;
  }
  delete[] spare_ops;  // too small for this table: freed before the new one is allocated
  spare_ops = nullptr;
  spare_capacity = 0;
  return {std::make_unique_for_overwrite<ScheduleOp[]>(n), n};
}

// Keeps a freed table's block as the thread's spare (the larger of the two, within the bound).
void give_back_block(std::unique_ptr<ScheduleOp[]> ops, std::size_t capacity) {
  if (ops == nullptr || spare_gone || capacity * sizeof(ScheduleOp) > kSpareBlockBytes || capacity <= spare_capacity) return;
  own_spare();
  delete[] spare_ops;
  spare_ops = ops.release();
  spare_capacity = capacity;
}

// Where rank r's row starts in the block: r x this many ops, an odd number of cache lines. The
// simulation reads every rank's row at about the same op, and rows a power of two apart (8,192
// ops, 64 kB, at 4 virtual stages x 1,024 micro-batches) would put all those ops in one set of
// L1 and of L2. (Rows allocated one by one were kept apart by malloc's headers; no difference
// between the two measured on the 64-stage plans, bench/results/time-core-cpu.txt.)
std::size_t row_stride(std::size_t n) {
  constexpr std::size_t kLineOps = 64 / sizeof(ScheduleOp);
  std::size_t lines = (n + kLineOps - 1) / kLineOps;
  if (lines % 2 == 0) ++lines;
  return lines * kLineOps;
}

}  // namespace

ScheduleRows::Sparse::~Sparse() { give_back_block(std::move(storage.ops), storage.capacity); }

namespace {

// The largest (Max) or the smallest micro-batch of ops [from, to): -1 or INT32_MAX when none.
// Four ops a step in two 16-byte vectors (GCC's and Clang's vector extension): an op is two 32-bit
// words, its micro-batch the high one (static_assert above), so each lane keeps the max or min of
// one word and the micro-batch lanes are read at the end. x86-64's baseline (SSE2) has no 32-bit
// max or min: each is a compare and a select, 4 instructions for two ops, against a compare and a
// conditional move an op with a loop-carried chain through it; the vectors took half the time on
// 830 ops of an interleaved head (a scratch program; cachegrind counts them as more instructions).
template <bool Max>
std::int32_t micro_batch_bound(const ScheduleOp* ops, std::size_t from, std::size_t to) {
  using V4 = std::int32_t __attribute__((vector_size(16)));
  constexpr std::int32_t kNone = Max ? -1 : INT32_MAX;
  const auto pick = [](V4 a, V4 b) PLANSIGHT_INLINE_LAMBDA { return Max ? (a > b ? a : b) : (a < b ? a : b); };
  V4 a = {kNone, kNone, kNone, kNone}, b = a;
  std::size_t i = from;
  for (; i + 4 <= to; i += 4) {
    V4 x, y;
    std::memcpy(&x, ops + i, sizeof x);
    std::memcpy(&y, ops + i + 2, sizeof y);
    a = pick(a, x);
    b = pick(b, y);
  }
  a = pick(a, b);
  std::int32_t out = Max ? std::max(a[1], a[3]) : std::min(a[1], a[3]);
  for (; i < to; ++i) out = Max ? std::max(out, ops[i].micro_batch) : std::min(out, ops[i].micro_batch);
  return out;
}

// What make_rank reads of a sparse rank's written ops (ArraySink: its head [0, left_begin),
// holding the base period [base, base + period), and its tail [left_end, n)).
struct RowScan {
  // 1 + the largest micro-batch of the head; the largest and the smallest of the base period;
  // the smallest of the tail (ScheduleRows::LeftOut).
  std::int32_t head_end = 0, base_max = 0, base_min = INT32_MAX, tail_min = INT32_MAX;
  // Every chunk's first F and first B lie in the head and its last B or W in the tail, so the
  // arrays hold find_generated_chunk_ops()'s figures.
  bool chunk_ops_found = false;
};

// The micro-batch bounds, and find_generated_chunk_ops()'s walks read straight from the ops
// written: each chunk's op of micro-batch 0 of each kind in the head (its first F and B in a
// generated list), and its last B or W in the tail (after every op of the middle, so the rank's
// last). The arrays hold v entries, -1 on entry.
RowScan scan_written(const ScheduleOp* ops, const ArraySink& sink, std::size_t n, std::size_t v, std::int64_t* first_f,
                     std::int64_t* first_b, std::int64_t* last_bwd) {
  RowScan out;
  const std::size_t base_end = std::min(sink.base + sink.period, sink.left_begin);
  out.base_max = std::max(0, micro_batch_bound<true>(ops, sink.base, base_end));
  out.base_min = micro_batch_bound<false>(ops, sink.base, base_end);
  out.head_end = std::max({micro_batch_bound<true>(ops, 0, sink.base), out.base_max,
                           micro_batch_bound<true>(ops, base_end, sink.left_begin)}) + 1;
  out.tail_min = micro_batch_bound<false>(ops, sink.left_end, n);
  std::size_t missing = 2 * v;
  for (std::size_t i = 0; i < sink.left_begin && missing > 0; ++i) {
    const ScheduleOp o = ops[i];
    if (o.micro_batch != 0 || o.kind == OpKind::weight_grad) [[likely]] continue;
    std::int64_t& first = (o.kind == OpKind::forward ? first_f : first_b)[static_cast<std::size_t>(o.chunk)];
    if (first < 0) first = static_cast<std::int64_t>(i), --missing;
  }
  std::size_t missing_last = v;
  for (std::size_t i = n; i-- > sink.left_end && missing_last > 0;) {
    const ScheduleOp o = ops[i];
    std::int64_t& last = last_bwd[static_cast<std::size_t>(o.chunk)];
    if (o.kind != OpKind::forward && last < 0) last = static_cast<std::int64_t>(i), --missing_last;
  }
  out.chunk_ops_found = missing == 0 && missing_last == 0;
  return out;
}

}  // namespace

// Builds a sparse table's rows (a friend of ScheduleRows).
class SparseRowsBuilder {
 public:
  static Result<SimulationTable> make(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                      std::int64_t group, const ScheduleOptions& options) {
    SimulationTable out;
    ScheduleTable& table = out.table;
    table = generators::empty_table(kind, p, v, m);
    ScheduleRows& rows = out.rows;
    rows.sparse_ = std::make_unique<ScheduleRows::Sparse>();
    auto& sparse = *rows.sparse_;
    const std::size_t n = generators::ops_per_rank(kind, v, m);
    const std::size_t stride = row_stride(n);
    std::tie(sparse.storage.ops, sparse.storage.capacity) = take_block(static_cast<std::size_t>(p) * stride);
    sparse.left_out.resize(static_cast<std::size_t>(p));
    sparse.written_to = std::make_unique<std::atomic<std::size_t>[]>(static_cast<std::size_t>(p));
    sparse.locks = std::make_unique<std::mutex[]>(static_cast<std::size_t>(p));
    rows.rows_.resize(static_cast<std::size_t>(p));
    for (auto* list : {&sparse.chunk_ops.first_f, &sparse.chunk_ops.first_b, &sparse.chunk_ops.last_bwd}) {
      list->assign(static_cast<std::size_t>(p * v), -1);
    }
    for (std::size_t r = 0; r < static_cast<std::size_t>(p); ++r) {
      // Not initialised (ScheduleOp is trivial; a block taken back holds an older table's ops):
      // the middle left out is written only where a simulation reads it.
      rows.rows_[r] = ScheduleRows::Row{sparse.storage.ops.get() + r * stride, n};
    }
    const std::vector<ScheduleOp> forwards =
        kind == PipelineSchedule::interleaved
            ? generators::interleaved_forwards(table.v, table.m, static_cast<std::int32_t>(group))
            : std::vector<ScheduleOp>{};
    const auto g = static_cast<std::int32_t>(group);
    generators::make_ranks(table.p, p * v * m, options.two_threads, [&](std::int32_t r) { make_rank(out, r, g, forwards); });
    // A table none of whose ranks left ops out (steady loops too short) is read as a whole one.
    rows.leaves_out_ = std::any_of(sparse.left_out.begin(), sparse.left_out.end(),
                                   [](const ScheduleRows::LeftOut& l) { return !l.holes.empty(); });
    return out;
  }

 private:
  static void make_rank(SimulationTable& out, std::int32_t r, std::int32_t group, const std::vector<ScheduleOp>& forwards) {
    ScheduleTable& table = out.table;
    const auto ri = static_cast<std::size_t>(r);
    ScheduleRows::Row& row = out.rows.rows_[ri];
    ArraySink sink;
    sink.out = row.ops;
    generators::write_rank(sink, table.kind, table.p, table.v, r, table.m, group, forwards);
    ScheduleRows::LeftOut& l = out.rows.sparse_->left_out[ri];
    const bool left_out = sink.left_end > sink.left_begin;
    if (left_out) {
      l = ScheduleRows::LeftOut{sink.base, sink.period, sink.left_begin, sink.left_end, sink.shift, 0, 0, 0, 0,
                                {{sink.left_begin, sink.left_end}}};
      row.left_begin = sink.left_begin;
      row.left_end = sink.left_end;
      out.rows.sparse_->written_to[ri].store(sink.left_begin, std::memory_order_relaxed);
    }
    // Its chunks' first and last ops, and the micro-batch bounds of its head, base period and
    // tail (LeftOut), read straight from the ops written (scan_written). Walked through at()'s
    // test for the middle, with a scalar loop for each bound, they were 56 % of the instructions
    // of making a 64 x 4 x 1024 interleaved sparse table, which took 200 us; 152-161 us this way
    // (BM_MakeSparseTable, bench/results/time-core-cpu.txt).
    auto& known = out.rows.sparse_->chunk_ops;
    const std::size_t v = static_cast<std::size_t>(table.v), at = ri * v;
    std::int64_t* const first_f = &known.first_f[at];
    std::int64_t* const first_b = &known.first_b[at];
    std::int64_t* const last_bwd = &known.last_bwd[at];
    const ScheduleOp* const ops = row.ops;
    const RowScan scan = left_out ? scan_written(ops, sink, row.size, v, first_f, first_b, last_bwd) : RowScan{};
    if (!scan.chunk_ops_found) {
      // Nothing left out, or a chunk whose first or last op lies in the middle: the walks, which
      // stop once every chunk has them (at()'s test with the row's bounds in registers: read
      // through at(), they were 40 % of the table's making).
      std::fill(first_f, first_f + v, -1);
      std::fill(first_b, first_b + v, -1);
      std::fill(last_bwd, last_bwd + v, -1);
      const std::size_t left_begin = row.left_begin, left_count = row.left_end - row.left_begin;
      find_generated_chunk_ops([&, ops, left_begin, left_count](std::size_t i) {
                                 return i - left_begin < left_count ? out.rows.derived(ri, i) : ops[i];
                               },
                               row.size, v, first_f, first_b, last_bwd);
    }
    const generators::RunPeriod run = generators::run_period(table, row.size, group);
    if (left_out) {
      if (sink.period == run.period && sink.shift == run.shift) {
        table.repeating[ri] = repeating_run_around(row.ops, row.size, run.period, run.shift, sink.base, sink.left_end);
      }
      if (table.repeating[ri].period != 0) {
        l.head_end = scan.head_end, l.base_max = scan.base_max, l.base_min = scan.base_min, l.tail_min = scan.tail_min;
        return;
      }
      // The run does not hold the middle: the whole list, as make_schedule's.
      out.rows.ensure_sparse(ri, 0, row.size);
      l = ScheduleRows::LeftOut{};
      row.left_begin = row.left_end = 0;
    }
    if (run.period > 0) table.repeating[ri] = repeating_run(row.ops, row.size, run.period, run.shift);
  }
};

Result<SimulationTable> make_simulation_table(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                              ScheduleOptions options, bool sparse) {
  const std::int64_t group = options.microbatch_group > 0 ? options.microbatch_group : p;
  if (!sparse || !may_be_sparse(kind) || !skippable(p, m)) {
    auto made = make_schedule(kind, p, v, m, options);
    if (!made) return made.errors();
    Result<SimulationTable> out{SimulationTable{std::move(*made), {}}};
    out->rows = ScheduleRows(out->table);
    return out;
  }
  if (auto errors = generators::validate_schedule(kind, p, v, m, group); !errors.empty()) return errors;
  return SparseRowsBuilder::make(kind, p, v, m, group, options);
}

Result<SimulationTable> make_dualpipe_lower_half_table(std::int64_t p, std::int64_t m, ScheduleOptions options, bool sparse) {
  if (auto errors = generators::validate_schedule(PipelineSchedule::dualpipe, p, 2, m, p); !errors.empty()) return errors;
  return make_simulation_table(PipelineSchedule::dualpipev, p / 2, 2, m / 2, options, sparse);
}

}  // namespace plansight::estimator
