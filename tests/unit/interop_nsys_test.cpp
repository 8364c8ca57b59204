// nsys SQLite import on databases built from tests/data/traces/nsys_schema{3,2}.sql (the real
// export schema, hand-made rows): both schema generations, absent tables, NVTX, rank mapping,
// absolute time, and errors for files that are not exports.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/interop/nsys_importer.h"
#include "plansight/interop/trace_import.h"

namespace plansight::interop {
namespace {

using estimator::Lane;
using estimator::SpanKind;

const std::string kFixtures = PLANSIGHT_TRACE_FIXTURE_DIR;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Builds `<tmp>/<test>.<name>.sqlite` from a fixture SQL script; the test's name keeps tests
// that ctest runs in parallel processes off each other's files.
std::filesystem::path build_db(const std::string& sql_file) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto path = std::filesystem::path(::testing::TempDir()) /
                    (std::string(info->test_suite_name()) + "." + info->name() + "." + std::to_string(::getpid()) + "." + sql_file + ".sqlite");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const std::string sql = read_file(kFixtures + "/" + sql_file);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

const estimator::Track* find_track(const estimator::Timeline& t, int rank, Lane lane, int stream) {
  for (const auto& tr : t.tracks) {
    if (tr.rank == rank && tr.lane == lane && tr.stream == stream) return &tr;
  }
  return nullptr;
}

TEST(NsysImport, Schema3TwoGpusWithNvtx) {
  const auto path = build_db("nsys_schema3.sql");
  EXPECT_EQ(detect_trace_format(path), TraceFormat::nsys_sqlite);
  auto r = import_trace(path);
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_TRUE(r->warnings.empty()) << join_messages(r->warnings);
  constexpr std::int64_t kStart = 1'783'304'336'000'000'000;  // TARGET_INFO_SESSION_START_TIME
  ASSERT_EQ(r->ranks.size(), 2u);
  EXPECT_EQ(r->ranks[0].device_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(r->ranks[0].time_base, TimeBase::epoch);
  EXPECT_EQ(r->ranks[0].base_time_ns, kStart);
  const auto& t = r->timeline;
  const auto* gemm = find_track(t, 0, Lane::compute, 7);
  ASSERT_NE(gemm, nullptr);
  ASSERT_EQ(gemm->spans.size(), 1u);
  EXPECT_EQ(gemm->spans[0].start_ns, kStart + 1000);
  EXPECT_EQ(gemm->spans[0].duration_ns, 4000);
  EXPECT_TRUE(gemm->spans[0].tensor_core);
  EXPECT_EQ(t.name_of(gemm->spans[0]).substr(0, 18), "sm80_xmma_gemm_bf1");  // demangledName
  const auto* nccl = find_track(t, 0, Lane::communication, 13);
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->spans[0].kind, SpanKind::collective);
  const auto* copy = find_track(t, 0, Lane::copy, 7);
  ASSERT_NE(copy, nullptr);
  ASSERT_EQ(copy->spans.size(), 2u);
  EXPECT_EQ(t.name_of(copy->spans[0]), "Memcpy HtoD");
  EXPECT_DOUBLE_EQ(copy->spans[0].bytes, 1048576);
  EXPECT_EQ(copy->spans[1].kind, SpanKind::memset);
  ASSERT_NE(find_track(t, 1, Lane::compute, 7), nullptr);  // device 1 -> rank 1
  // NVTX: two closed ranges (one text, one registered string); the mark and the open range are not spans.
  const auto* nvtx = find_track(t, 0, Lane::host, 1234);
  ASSERT_NE(nvtx, nullptr);
  ASSERT_EQ(nvtx->spans.size(), 2u);
  EXPECT_EQ(t.name_of(nvtx->spans[0]), "forward");
  EXPECT_EQ(t.name_of(nvtx->spans[1]), "optimizer step");
  EXPECT_EQ(nvtx->spans[0].kind, SpanKind::annotation);
  ASSERT_EQ(r->collectives.size(), 2u);
  EXPECT_EQ(r->collectives[1].rank, 1);
  EXPECT_EQ(r->collectives[0].kind, estimator::CollectiveKind::all_reduce);
  // Rank 0: communication [3000,9000) ns, compute [1000,5000): HTA overlap 2000/6000.
  const auto hta = estimator::hta_comm_comp_overlap(t);
  EXPECT_DOUBLE_EQ(hta[0].ratio, 1.0 / 3.0);
}

TEST(NsysImport, Schema2WithoutMemsetAndNvtxTables) {
  const auto path = build_db("nsys_schema2.sql");
  auto r = import_nsys_sqlite(path);
  ASSERT_TRUE(r.ok()) << r.error_text();
  ASSERT_EQ(r->ranks.size(), 1u);
  EXPECT_EQ(r->ranks[0].base_time_ns, 1'684'406'205'000'000'000);
  const auto& t = r->timeline;
  const auto* k = find_track(t, 0, Lane::compute, 7);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(t.name_of(k->spans[0]), "add(int, float *, float *)");
  const auto* copy = find_track(t, 0, Lane::copy, 7);
  ASSERT_NE(copy, nullptr);
  ASSERT_EQ(copy->spans.size(), 2u);
  EXPECT_EQ(t.name_of(copy->spans[0]), "Memcpy HtoD (Unified)");
  EXPECT_EQ(t.name_of(copy->spans[1]), "Memcpy DtoH (Unified)");
  NsysImportOptions o;
  o.short_kernel_names = true;
  auto short_names = import_nsys_sqlite(path, o);
  ASSERT_TRUE(short_names.ok());
  EXPECT_EQ(short_names->timeline.name_of(find_track(short_names->timeline, 0, Lane::compute, 7)->spans[0]), "add");
}

TEST(NsysImport, FromBytesMatchesFromFile) {
  const auto path = build_db("nsys_schema3.sql");
  auto a = import_nsys_sqlite(path);
  auto b = import_nsys_sqlite_bytes(read_file(path), {}, "mem.sqlite");
  ASSERT_TRUE(a.ok() && b.ok()) << b.error_text();
  EXPECT_EQ(a->timeline.names, b->timeline.names);
  EXPECT_EQ(a->timeline.tracks.size(), b->timeline.tracks.size());
}

TEST(NsysImport, NotAnExport) {
  auto text = import_nsys_sqlite_bytes("{\"traceEvents\": []}");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error_text().find("not a SQLite database"), std::string::npos);

  const auto path = std::filesystem::path(::testing::TempDir()) / ("NsysImport.other." + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.string().c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE people (name TEXT);", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto other = import_nsys_sqlite(path);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error_text().find("not an Nsight Systems SQLite export"), std::string::npos) << other.error_text();

  const std::string bytes = read_file(build_db("nsys_schema2.sql"));
  auto cut = import_nsys_sqlite_bytes(std::string_view(bytes).substr(0, 1500), {}, "cut.sqlite");
  EXPECT_FALSE(cut.ok());
  auto missing = import_nsys_sqlite("/nonexistent/report.sqlite");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace plansight::interop
