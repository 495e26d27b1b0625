#include "engine/state/serialize.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/base/byte_wire.h"

namespace zsim::state {
namespace {

constexpr char kTag[4] = {'Z', 'S', 'S', '1'};

using Writer = ByteWriter;
using Reader = ByteReader;

void PutSums(Writer& w, const estimate::RatioEstimator& r) {
  const estimate::RatioEstimator::Sums s = r.sums();
  w.Put(s.n);
  w.Put(s.sx);
  w.Put(s.sy);
  w.Put(s.sxx);
  w.Put(s.syy);
  w.Put(s.sxy);
}

estimate::RatioEstimator GetSums(Reader& r) {
  estimate::RatioEstimator::Sums s;
  s.n = r.Get<uint64_t>();
  s.sx = r.Get<double>();
  s.sy = r.Get<double>();
  s.sxx = r.Get<double>();
  s.syy = r.Get<double>();
  s.sxy = r.Get<double>();
  return estimate::RatioEstimator::FromSums(s);
}

void PutTable(Writer& w, const ddt::DedupTable& t) {
  w.Put<uint64_t>(t.layout().size());
  for (const ddt::SettingStorage& s : t.layout()) {
    w.Put<uint8_t>(static_cast<uint8_t>(s.kind));
    w.PutBool(s.zero_is_hole);
  }
  w.Put<uint32_t>(t.sample_shift());
  w.Put<uint64_t>(t.entries());
  t.ForEach([&](const ddt::EntryView& e) {
    w.Put(e.key.lo);
    w.Put(e.key.hi);
    w.Put(e.refcount);
    w.Put(e.lsize);
    w.PutBool(e.is_zero);
    for (ddt::PsizeCode c : e.codes) w.Put(c);
  });
}

std::unique_ptr<ddt::DedupTable> GetTable(Reader& r, size_t settings) {
  const uint64_t n = r.GetCount(2);
  if (n != settings) r.Fail();
  if (!r.ok()) return nullptr;
  std::vector<ddt::SettingStorage> layout(n);
  for (ddt::SettingStorage& s : layout) {
    const uint8_t kind = r.Get<uint8_t>();
    if (kind > static_cast<uint8_t>(ddt::SettingStorage::Kind::kSide)) r.Fail();
    s.kind = static_cast<ddt::SettingStorage::Kind>(kind);
    s.zero_is_hole = r.GetBool();
  }
  if (!r.ok()) return nullptr;
  auto table = std::make_unique<ddt::DedupTable>(std::move(layout));
  const uint32_t shift = r.Get<uint32_t>();
  if (shift > 63) r.Fail();
  table->RaiseSampleShift(shift);
  const uint64_t entries = r.GetCount(8 + 8 + 4 + 8 + 1 + 2 * settings);
  if (!r.ok()) return nullptr;
  std::vector<ddt::PsizeCode> codes(settings);
  table->MergeEntries([&](const std::function<void(const ddt::EntryView&)>& fn) {
    for (uint64_t i = 0; i < entries; ++i) {
      ddt::EntryView e{};
      e.key.lo = r.Get<uint64_t>();
      e.key.hi = r.Get<uint64_t>();
      e.refcount = r.Get<uint32_t>();
      e.lsize = r.Get<uint64_t>();
      e.is_zero = r.GetBool();
      for (ddt::PsizeCode& c : codes) c = r.Get<ddt::PsizeCode>();
      e.codes = codes;
      fn(e);
    }
  });
  return table;
}

void PutOccurrences(Writer& w, const estimate::OccurrenceSample& o) {
  w.Put<uint64_t>(o.sums.size());
  for (const estimate::OccurrenceSums& s : o.sums) {
    w.Put(s.ne);
    w.Put(s.lsize);
    w.Put(s.lsize_ne);
    w.Put(s.asize);
    w.Put(s.emb_bytes);
    PutSums(w, s.psize_per_u);
    PutSums(w, s.dsize_per_u);
  }
}

void GetOccurrences(Reader& r, estimate::OccurrenceSample& o) {
  o.sums.resize(r.GetCount(8 * 17));  // ne, 4 sums, 2 x 6 estimator sums
  for (estimate::OccurrenceSums& s : o.sums) {
    s.ne = r.Get<uint64_t>();
    s.lsize = r.Get<double>();
    s.lsize_ne = r.Get<double>();
    s.asize = r.Get<double>();
    s.emb_bytes = r.Get<double>();
    s.psize_per_u = GetSums(r);
    s.dsize_per_u = GetSums(r);
  }
}

void PutRow(Writer& w, const RowState& row) {
  w.Put(row.block_bytes);
  PutTable(w, *row.table);
  w.Put(row.distinct->full_lsize());
  for (const estimate::DistinctCounter* c : row.distinct->counters()) w.PutBytes(c->Registers());
  w.Put(row.sparse_holes);
  PutOccurrences(w, row.occurrences);
  for (const auto& shapes : row.files) {
    w.Put<uint64_t>(shapes.size());
    for (const auto& [shape, count] : shapes) {
      w.Put(shape.block_bytes);
      w.Put(shape.blocks);
      w.Put(shape.non_hole);
      w.Put(count);
    }
  }
  for (double s : row.codec_seconds) w.Put(s);
  for (uint64_t b : row.codec_bytes) w.Put(b);
}

void GetRow(Reader& r, RowState& row, size_t settings) {
  row.block_bytes = r.Get<uint64_t>();
  row.table = GetTable(r, settings);
  if (!r.ok()) return;
  row.distinct = std::make_unique<estimate::DistinctBlocks>(r.Get<uint64_t>());
  for (estimate::DistinctCounter* c : row.distinct->counters()) {
    const ByteView regs = r.GetBytes();
    if (regs.size() != (size_t{1} << c->precision())) r.Fail();
    if (!r.ok()) return;
    c->MergeRegisters(regs);
  }
  row.sparse_holes = r.Get<uint64_t>();
  GetOccurrences(r, row.occurrences);
  row.files.resize(settings);
  for (auto& shapes : row.files) {
    const uint64_t n = r.GetCount(32);
    for (uint64_t i = 0; i < n; ++i) {
      FileShape shape;
      shape.block_bytes = r.Get<uint64_t>();
      shape.blocks = r.Get<uint64_t>();
      shape.non_hole = r.Get<uint64_t>();
      shapes[shape] += r.Get<uint64_t>();
    }
  }
  row.codec_seconds.resize(settings);
  for (double& s : row.codec_seconds) s = r.Get<double>();
  row.codec_bytes.resize(settings);
  for (uint64_t& b : row.codec_bytes) b = r.Get<uint64_t>();
}

void PutBreakdown(Writer& w, const BreakdownState& b) {
  for (const auto* names : {&b.directory_names, &b.extension_names}) {
    w.Put<uint64_t>(names->size());
    for (const std::string& n : *names) w.PutString(n);
  }
  for (const auto* rows : {&b.directories, &b.extensions}) {
    w.Put<uint64_t>(rows->size());
    for (const BreakdownRowSums& r : *rows) {
      w.Put(r.files);
      w.Put(r.bytes);
      w.Put(r.lsize);
    }
  }
  w.Put(b.shift);
  w.Put<uint64_t>(b.references.size());
  for (const BreakdownState::Reference& r : b.references) {
    w.Put(r.key.lo);
    w.Put(r.key.hi);
    w.Put(r.directory);
    w.Put(r.extension);
  }
  w.Put<uint64_t>(b.contents.size());
  for (const auto& [c, copies] : b.contents) {
    w.Put(c.lo);
    w.Put(c.hi);
    w.Put(c.lsize);
    w.Put(copies);
  }
  w.Put(b.zero_blocks);
  w.Put(b.zero_bytes);
}

void GetBreakdown(Reader& r, BreakdownState& b) {
  for (auto* names : {&b.directory_names, &b.extension_names}) {
    names->resize(r.GetCount(8));
    for (std::string& n : *names) n = r.GetString();
  }
  for (auto* rows : {&b.directories, &b.extensions}) {
    rows->resize(r.GetCount(24));
    for (BreakdownRowSums& s : *rows) {
      s.files = r.Get<uint64_t>();
      s.bytes = r.Get<uint64_t>();
      s.lsize = r.Get<uint64_t>();
    }
  }
  if (b.directories.size() != b.directory_names.size() ||
      b.extensions.size() != b.extension_names.size()) {
    r.Fail();
  }
  b.shift = r.Get<uint32_t>();
  b.references.resize(r.GetCount(24));
  for (BreakdownState::Reference& ref : b.references) {
    ref.key.lo = r.Get<uint64_t>();
    ref.key.hi = r.Get<uint64_t>();
    ref.directory = r.Get<uint32_t>();
    ref.extension = r.Get<uint32_t>();
    if (ref.directory >= b.directories.size() || ref.extension >= b.extensions.size()) r.Fail();
  }
  const uint64_t contents = r.GetCount(32);
  for (uint64_t i = 0; i < contents; ++i) {
    BreakdownState::Content c;
    c.lo = r.Get<uint64_t>();
    c.hi = r.Get<uint64_t>();
    c.lsize = r.Get<uint64_t>();
    b.contents[c] += r.Get<uint64_t>();
  }
  b.zero_blocks = r.Get<uint64_t>();
  b.zero_bytes = r.Get<uint64_t>();
}

void PutInput(Writer& w, const InputSummary& in) {
  w.Put<uint64_t>(in.paths.size());
  for (const std::string& p : in.paths) w.PutString(p);
  w.Put(in.files);
  w.Put(in.directories);
  w.Put(in.bytes_logical);
  w.Put(in.bytes_read);
  w.Put<uint64_t>(in.skipped.size());
  for (const auto& [reason, count] : in.skipped) {
    w.PutString(reason);
    w.Put(count);
  }
  w.Put<uint64_t>(in.errors.size());
  for (const PathError& e : in.errors) {
    w.PutString(e.path);
    w.PutString(e.error);
  }
}

void GetInput(Reader& r, InputSummary& in) {
  in.paths.resize(r.GetCount(8));
  for (std::string& p : in.paths) p = r.GetString();
  in.files = r.Get<uint64_t>();
  in.directories = r.Get<uint64_t>();
  in.bytes_logical = r.Get<uint64_t>();
  in.bytes_read = r.Get<uint64_t>();
  const uint64_t skipped = r.GetCount(16);
  for (uint64_t i = 0; i < skipped; ++i) {
    std::string reason = r.GetString();
    in.skipped[reason] += r.Get<uint64_t>();
  }
  in.errors.resize(r.GetCount(16));
  for (PathError& e : in.errors) {
    e.path = r.GetString();
    e.error = r.GetString();
  }
}

}  // namespace

std::string SerializeState(const ScanState& state) {
  Writer w;
  w.out.append(kTag, sizeof(kTag));
  const SamplingState& s = state.sampling;
  w.Put<uint64_t>(s.sampled.size());
  for (bool b : s.sampled) w.PutBool(b);
  w.Put<int32_t>(s.complete_level);
  w.Put<int32_t>(s.occurrence_level);
  w.Put<uint64_t>(s.anchors.size());
  for (int a : s.anchors) w.Put<int32_t>(a);
  w.Put<uint64_t>(state.featured);
  w.Put<uint64_t>(state.rows.size());
  for (const RowState& row : state.rows) PutRow(w, row);
  w.Put<uint64_t>(state.directories.size());
  for (const auto& [dir, count] : state.directories) {
    w.Put(dir.entries);
    w.Put(dir.name_bytes);
    w.Put(dir.longest_name);
    w.Put(count);
  }
  PutBreakdown(w, state.breakdown);
  PutInput(w, state.input);
  w.PutBool(state.partial);
  w.Put(state.seconds);
  return std::move(w.out);
}

Result<ScanState> DeserializeState(ByteView bytes, const ScanOptions& options) {
  if (bytes.size() < sizeof(kTag) || std::memcmp(bytes.data(), kTag, sizeof(kTag)) != 0) {
    return Status::Corruption("not a serialized scan state (tag ZSS1 missing)");
  }
  Reader r(bytes.subspan(sizeof(kTag)));
  ScanState state;
  state.options = options;
  const size_t settings = options.compressions.size();
  SamplingState& s = state.sampling;
  s.sampled.resize(r.GetCount(1));
  for (size_t i = 0; i < s.sampled.size(); ++i) s.sampled[i] = r.GetBool();
  s.complete_level = r.Get<int32_t>();
  s.occurrence_level = r.Get<int32_t>();
  s.anchors.resize(r.GetCount(4));
  for (int& a : s.anchors) a = r.Get<int32_t>();
  state.featured = r.Get<uint64_t>();
  const size_t expected_rows = options.volblocksize ? 1 : options.recordsizes.size();
  state.rows.resize(r.GetCount(8));
  if (state.rows.size() != expected_rows || s.sampled.size() != settings ||
      state.featured >= std::max<size_t>(settings, 1)) {
    r.Fail();
  }
  for (RowState& row : state.rows) {
    if (!r.ok()) break;
    GetRow(r, row, settings);
  }
  const uint64_t dirs = r.GetCount(32);
  for (uint64_t i = 0; i < dirs; ++i) {
    DirectoryShape d;
    d.entries = r.Get<uint64_t>();
    d.name_bytes = r.Get<uint64_t>();
    d.longest_name = r.Get<uint64_t>();
    state.directories[d] += r.Get<uint64_t>();
  }
  GetBreakdown(r, state.breakdown);
  GetInput(r, state.input);
  state.partial = r.GetBool();
  state.seconds = r.Get<double>();
  if (!r.ok() || !r.done()) {
    return Status::Corruption(
        "a serialized scan state is cut short or does not fit the scan's "
        "options (rows, settings or table layout differ)");
  }
  return state;
}

}  // namespace zsim::state
