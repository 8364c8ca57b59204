// `plansight import run.tar.gz`: per-rank Kineto traces in a tar archive (plain, gzip, with
// gzip members, long names in GNU and ustar-prefix form) import exactly as the unpacked
// directory does; damaged archives are errors naming the archive, never a crash. The archives
// are built here, block by block after POSIX.1-2017 'pax' (ustar headers), so every header
// field the reader uses is exercised on purpose.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plansight/interop/kineto_importer.h"
#include "plansight/interop/trace_import.h"

namespace plansight::interop {
namespace {

namespace fs = std::filesystem;
const std::string kFixtures = PLANSIGHT_TRACE_FIXTURE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Member {
  std::string name;
  std::string bytes;
  char type = '0';
};

// One ustar header: name (or prefix/name for paths up to 255 characters), size, checksum.
std::string header(const std::string& name, std::size_t size, char type) {
  std::string h(512, '\0');
  std::string base = name, prefix;
  if (name.size() > 100) {
    const std::size_t slash = name.rfind('/', 155);
    prefix = name.substr(0, slash);
    base = name.substr(slash + 1);
  }
  h.replace(0, std::min<std::size_t>(base.size(), 100), base.substr(0, 100));
  std::snprintf(&h[100], 8, "%07o", 0644);
  std::snprintf(&h[124], 12, "%011zo", size);
  h[156] = type;
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(345, prefix.size(), prefix);
  h.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(&h[148], 8, "%06o", sum);
  return h;
}

std::string tar_of(const std::vector<Member>& members) {
  std::string out;
  for (const auto& m : members) {
    out += header(m.name, m.bytes.size(), m.type);
    out += m.bytes;
    out.append((512 - m.bytes.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

std::string gzip_of(const std::string& bytes) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class TarImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("tar_import_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    rank0_ = read_file(kFixtures + "/kineto_multirank/rank0.json");
    rank1_ = read_file(kFixtures + "/kineto_multirank/rank1.json");
    auto d = import_kineto_directory(kFixtures + "/kineto_multirank");
    ASSERT_TRUE(d.ok()) << d.error_text();
    directory_ = std::move(*d);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  // The archive's import equals the directory's, span for span.
  void expect_same_as_directory(const ImportedTrace& t) {
    ASSERT_EQ(t.ranks.size(), directory_.ranks.size());
    ASSERT_EQ(t.timeline.tracks.size(), directory_.timeline.tracks.size());
    for (std::size_t i = 0; i < t.timeline.tracks.size(); ++i) {
      EXPECT_EQ(t.timeline.tracks[i].spans.size(), directory_.timeline.tracks[i].spans.size()) << i;
    }
    EXPECT_EQ(t.collectives.size(), directory_.collectives.size());
  }
  fs::path dir_;
  std::string rank0_, rank1_;
  ImportedTrace directory_;
};

TEST_F(TarImport, TarAndTarGzImportAsTheUnpackedDirectory) {
  const std::string tar = tar_of({{"job", "", '5'}, {"job/rank0.json", rank0_}, {"job/rank1.json", rank1_},
                                  {"job/README.txt", "notes"}, {"job/._rank0.json", "\x00\x05\x16\x07"}});
  const std::string plain = write("job.tar", tar);
  const std::string packed = write("job.tar.gz", gzip_of(tar));
  EXPECT_EQ(detect_trace_format(plain), TraceFormat::kineto_archive);
  EXPECT_EQ(detect_trace_format(packed), TraceFormat::kineto_archive);
  for (const auto& path : {plain, packed}) {
    auto r = import_trace(path);
    ASSERT_TRUE(r.ok()) << path << ": " << r.error_text();
    expect_same_as_directory(*r);
    EXPECT_EQ(r->timeline.title.find("job.tar"), std::string::npos) << "named after the archive's stem";
  }
}

TEST_F(TarImport, GzipMembersAndLongNames) {
  const std::string deep(120, 'd');  // a path past ustar's 100-character name field
  const std::string long_name(150, 'n');
  const std::string tar = tar_of({{deep + "/rank0.json.gz", gzip_of(rank0_)},
                                  {"././@LongLink", long_name + "/rank1.json", 'L'},
                                  {"truncated-by-ustar", rank1_}});
  auto r = import_trace(write("nested.tgz", gzip_of(tar)));
  ASSERT_TRUE(r.ok()) << r.error_text();
  expect_same_as_directory(*r);
}

TEST_F(TarImport, DamagedArchivesAreErrorsNamingTheArchive) {
  const std::string tar = tar_of({{"rank0.json", rank0_}, {"rank1.json", rank1_}});
  const std::string cut = write("cut.tar", tar.substr(0, 512 + rank0_.size() / 2));
  auto r = import_trace(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error_text().find(cut), std::string::npos) << r.error_text();
  EXPECT_NE(r.error_text().find("truncated"), std::string::npos) << r.error_text();

  std::string bad = tar;
  bad[512 + ((rank0_.size() + 511) / 512) * 512 + 10] ^= 0x20;  // the second header's name
  auto damaged = import_trace(write("damaged.tar", bad));
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error_text().find("checksum does not match"), std::string::npos) << damaged.error_text();

  auto none = import_trace(write("notes.tar", tar_of({{"README.txt", "no traces here"}})));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error_text().find("the archive holds no *.json or *.json.gz trace file"), std::string::npos)
      << none.error_text();

  // A member that is not JSON names the member.
  auto junk = import_trace(write("junk.tar", tar_of({{"rank0.json", "not json"}})));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error_text().find("junk.tar: rank0.json: invalid JSON at byte 0"), std::string::npos) << junk.error_text();
}

}  // namespace
}  // namespace plansight::interop
