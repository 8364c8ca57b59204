// A forward-only reader of tar archives (POSIX.1-1988 ustar, with the pax and GNU long-name
// extensions that GNU tar and Python's tarfile write), so that `plansight import run.tar.gz`
// reads the per-rank traces of a job as one would from the unpacked directory. Members are
// streamed: each is a ByteSource over the archive that ends with the member, so no trace has to
// fit in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "plansight/interop/byte_source.h"

namespace plansight::interop::detail {

// True when a 512-byte block is a ustar header ("ustar" magic at offset 257).
bool looks_like_tar(std::string_view first_block);

// Calls `member(name, size_bytes, contents)` for each regular file of the archive, in order;
// `contents` may be read partly or not at all (the rest is skipped). Throws TraceError on a
// truncated archive or a header whose checksum does not match.
void for_each_tar_member(ByteSource& archive,
                         const std::function<void(const std::string& name, std::uint64_t size_bytes, ByteSource& contents)>& member);

}  // namespace plansight::interop::detail
