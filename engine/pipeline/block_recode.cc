#include "engine/pipeline/block_recode.h"

#include <algorithm>
#include <utility>

#include "engine/base/byte_view.h"
#include "engine/base/thread_cpu.h"
#include "engine/ddt/fingerprint.h"
#include "engine/ddt/written_key.h"
#include "engine/pipeline/block_code.h"

namespace zsim::pipeline {

BlockRecoder::BlockRecoder(const ScanOptions& options, io::FileSystem* fs, RecodeSpec spec)
    : options_(options), fs_(fs), policy_(ScanWritePolicy(options)), spec_(std::move(spec)) {}

Status BlockRecoder::Recode(const std::string& path, bool follow, uint64_t offset, uint64_t lsize,
                            const ddt::Fingerprint& key, const std::vector<bool>& code,
                            std::span<ddt::PsizeCode> codes, std::span<uint64_t> codec_ns) {
  block_.assign(lsize, 0);
  Status read = Read(path, follow, offset);
  if (!read.ok()) return read;
  if (!(ddt::TableKey(ddt::ComputeFingerprint(options_.checksum, block_)) == ddt::TableKey(key))) {
    return Status::Changed("its content changed after it was read (a block read again at offset " +
                           std::to_string(offset) + " had other data)");
  }
  scratch_.resize(std::max<size_t>(scratch_.size(), lsize));
  const MutableByteView scratch(scratch_.data(), lsize);
  const bool is_zero = IsAllZero(block_);
  codec::EarlyAbortProbes probes;  // the block's, shared by its zstd settings
  for (size_t c = 0; c < options_.compressions.size() && c < code.size(); ++c) {
    if (!code[c]) continue;
    const Compression comp = options_.compressions[c];
    const uint64_t t0 = ThreadCpuNanos();
    const BlockCodes got =
        CodeBlockOfKind(policy_, comp, block_, is_zero, compressor_, scratch, spec_.kind);
    if (c < codec_ns.size()) codec_ns[c] += ThreadCpuNanos() - t0;
    codes[c] = got.code;
    SeedLz4Probe(comp, got, &probes);
    // As the scan's first sightings: the written key from the output still in scratch
    // (ddt/written_key.h), then the early-abort code, which overwrites it.
    const size_t k = c < spec_.key_columns.size() ? spec_.key_columns[c] : state::kNoKey;
    if (k != state::kNoKey && k + ddt::kWrittenKeyColumns <= spec_.columns &&
        WritesZfsBytes(comp)) {
      ddt::EncodeWrittenKey(WrittenKeyWord(policy_, lsize, got, scratch),
                            codes.subspan(k, ddt::kWrittenKeyColumns));
    }
    const size_t p = c < spec_.probe_columns.size() ? spec_.probe_columns[c] : state::kNoProbe;
    if (p != state::kNoProbe && p < spec_.columns) {
      codes[p] = EarlyAbortCode(block_, got.code, compressor_, scratch, &probes);
    }
  }
  return Status::Ok();
}

Status BlockRecoder::Read(const std::string& path, bool follow, uint64_t offset) {
  if (!file_ || open_path_ != path) {
    file_.reset();
    open_path_ = path;
    Result<std::unique_ptr<io::File>> f = fs_->Open(path, follow);
    if (!f.ok()) {
      open_path_.clear();
      return Status(f.status().code(), "could not be opened again: " + f.status().ToString());
    }
    file_ = std::move(*f);
  }
  const MutableByteView dst(block_.data(), block_.size());
  size_t done = 0;
  while (done < dst.size()) {
    Result<size_t> n = file_->ReadAt(offset + done, dst.subspan(done));
    if (!n.ok())
      return Status(n.status().code(), "could not be read again: " + n.status().ToString());
    if (*n == 0) break;  // the end of the file: zeros past it
    done += *n;
  }
  return Status::Ok();
}

}  // namespace zsim::pipeline
