// An MPI program run by ctest under `mpirun -np 3`: the MPI communicator's operations against
// values worked out by hand (sums of rank-dependent data, counts the group size does not
// divide, an in-place all-gather, a broadcast from rank 1, a 4 MiB ring exchange whose sends
// all start before any receive, a split), its error paths (a peer outside the group, a tag
// beyond MPI_TAG_UB, a receive shorter than the message), and abort: rank 2's reason reaches
// every other rank's next call. Rank 0 prints PASS when every check held on every rank.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include "plansight/runtime/launch.h"
#include "plansight/runtime/mpi/mpi_world.h"

namespace {

namespace rt = plansight::runtime;

std::vector<std::string> g_failures;
void expect(bool ok, const std::string& what) {
  if (!ok) g_failures.push_back(what);
}

}  // namespace

int main(int argc, char** argv) {
  auto launch = rt::detect_launch();
  if (!launch || launch->size != 3) {
    std::fprintf(stderr, "mpi_communicator_check: start it with mpirun -np 3\n");
    return 2;
  }
  auto world_or = rt::mpi::MpiWorld::initialize(argc, argv);
  if (!world_or) {
    std::fprintf(stderr, "mpi_communicator_check: %s\n", world_or.error_text().c_str());
    return 1;
  }
  auto& mpi = **world_or;
  const int r = mpi.rank(), n = mpi.size();
  auto comm_or = mpi.world();
  if (!comm_or) mpi.abort_job(1);
  rt::Communicator& c = **comm_or;

  // all-reduce of 7 values (7 = 2 * 3 + 1): element i sums (rank + 1) * (i + 1) over ranks = 6 (i + 1).
  std::vector<float> v(7);
  for (int i = 0; i < 7; ++i) v[i] = static_cast<float>((r + 1) * (i + 1));
  expect(c.all_reduce(v.data(), v.size()).ok(), "all_reduce ok");
  for (int i = 0; i < 7; ++i) expect(v[i] == 6.0f * static_cast<float>(i + 1), "all_reduce value " + std::to_string(i));

  // reduce-scatter of 3 blocks of 5: block b of rank q holds 100 q + 10 b + i; rank r gets the
  // sum over q of 100 q + 10 r + i = 300 + 30 r + 3 i.
  std::vector<float> in(15), out(5);
  for (int b = 0; b < 3; ++b) for (int i = 0; i < 5; ++i) in[b * 5 + i] = static_cast<float>(100 * r + 10 * b + i);
  expect(c.reduce_scatter(in.data(), out.data(), 5).ok(), "reduce_scatter ok");
  for (int i = 0; i < 5; ++i) expect(out[i] == static_cast<float>(300 + 30 * r + 3 * i), "reduce_scatter value");

  // all-gather in place: this rank's block already sits in the output.
  std::vector<float> gathered(3 * 4, -1.0f);
  for (int i = 0; i < 4; ++i) gathered[r * 4 + i] = static_cast<float>(r * 10 + i);
  expect(c.all_gather(gathered.data() + r * 4, gathered.data(), 4).ok(), "all_gather in place ok");
  for (int q = 0; q < 3; ++q) for (int i = 0; i < 4; ++i) expect(gathered[q * 4 + i] == static_cast<float>(q * 10 + i), "all_gather value");

  // broadcast from rank 1.
  std::vector<float> b(3, static_cast<float>(r));
  expect(c.broadcast(b.data(), b.size(), 1).ok(), "broadcast ok");
  for (float x : b) expect(x == 1.0f, "broadcast value");

  // A ring of 4 MiB messages: every rank sends to its right before receiving from its left, so
  // only sends that return at once (and move while their sender waits) avoid a deadlock.
  const std::size_t big = (4u << 20) / sizeof(float);
  std::vector<float> mine(big, static_cast<float>(r)), theirs(big, -1.0f);
  expect(c.send(mine.data(), big, (r + 1) % n, 7).ok(), "ring send ok");
  expect(c.recv(theirs.data(), big, (r + n - 1) % n, 7).ok(), "ring recv ok");
  expect(theirs.front() == static_cast<float>((r + n - 1) % n) && theirs.back() == theirs.front(), "ring values");

  // split by parity: ranks 0 and 2 form a group of two, rank 1 is alone.
  auto half = mpi.split(c, r % 2, r, "parity");
  expect(half.ok() && *half && (*half)->size() == (r % 2 == 0 ? 2 : 1), "split sizes");
  if (half && *half) {
    float x = static_cast<float>(r);
    expect((*half)->all_reduce(&x, 1).ok() && x == (r % 2 == 0 ? 2.0f : 1.0f), "split all_reduce");
  }
  auto none = mpi.split(c, r == 1 ? -1 : 0, r, "without-1");
  expect(none.ok() && ((r == 1) == !*none), "a negative colour gets no communicator");

  // Error paths name what is wrong, and the communicator stays usable.
  auto self = c.send(v.data(), 1, r, 0);
  expect(!self && self.error_text().find("peer " + std::to_string(r)) != std::string::npos, "send to self is refused: " + self.error_text());
  auto tag = c.send(v.data(), 1, (r + 1) % n, -3);
  expect(!tag && tag.error_text().find("tag -3") != std::string::npos, "a negative tag is refused: " + tag.error_text());
  // A receive shorter than its message: 8 floats arrive where 2 fit.
  expect(c.send(v.data(), 7, (r + 1) % n, 9).ok(), "send for truncation");
  std::vector<float> small(2);
  auto truncated = c.recv(small.data(), small.size(), (r + n - 1) % n, 9);
  expect(!truncated && truncated.error_text().find("failed") != std::string::npos, "a truncated receive fails: " + truncated.error_text());
  float token = 1;
  expect(c.all_reduce(&token, 1).ok() && token == 3.0f, "usable after errors");

  // Everyone reports to rank 0 before the abort test.
  std::string report;
  for (const auto& f : g_failures) report += "rank " + std::to_string(r) + ": " + f + "\n";
  auto reports = mpi.gather_text(report);
  std::string all;
  if (reports) for (const auto& t : *reports) all += t;

  // Abort: rank 2 fails with a reason; the others' next call fails with it, naming rank 2.
  if (r == 2) {
    mpi.abort("rank 2: a test failure");
  } else {
    float x = 0;
    auto s = c.all_reduce(&x, 1);
    if (s || s.error_text().find("rank 2: a test failure") == std::string::npos) {
      all += "rank " + std::to_string(r) + ": the abort did not reach it: " + s.error_text() + "\n";
    }
    expect(mpi.failure() == "rank 2: a test failure", "failure() is the first process's reason");
  }
  if (r == 0) {
    if (all.empty()) std::printf("PASS every check on every rank\n");
    else std::printf("FAIL\n%s", all.c_str());
    std::fflush(stdout);
    mpi.abort_job(all.empty() ? 0 : 1);
  }
  // The other ranks wait to be ended by rank 0's abort.
  for (;;) pause();
}
