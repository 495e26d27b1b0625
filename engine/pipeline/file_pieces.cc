#include "engine/pipeline/file_pieces.h"

#include <algorithm>

namespace zsim::pipeline {
namespace {

void AddEach(std::vector<uint64_t>& into, const std::vector<uint64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}

}  // namespace

void AddPiece(PieceSums& into, const PieceSums& from) {
  into.file = from.file;
  into.bytes += from.bytes;
  into.pieces += from.pieces;
  AddEach(into.non_hole, from.non_hole);
  AddEach(into.zero_blocks, from.zero_blocks);
  if (into.ranges.size() < from.ranges.size()) into.ranges.resize(from.ranges.size());
  for (size_t i = 0; i < from.ranges.size(); ++i) into.ranges[i].Merge(from.ranges[i]);
  into.bytes_read += from.bytes_read;
  into.content_lo += from.content_lo;  // wrapping sums: any order gives the same
  into.content_hi += from.content_hi;
  into.has_data = into.has_data || from.has_data;
  if (from.failed_at < into.failed_at) {
    into.failed_at = from.failed_at;
    into.failure = from.failure;
  }
}

}  // namespace zsim::pipeline
