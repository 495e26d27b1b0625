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
  AddEach(into.holes, from.holes);
  if (into.ranges.size() < from.ranges.size()) into.ranges.resize(from.ranges.size());
  for (size_t i = 0; i < from.ranges.size(); ++i) into.ranges[i].Merge(from.ranges[i]);
  into.bytes_read += from.bytes_read;
  into.content_lo += from.content_lo;  // wrapping sums: any order gives the same
  into.content_hi += from.content_hi;
  into.has_data = into.has_data || from.has_data;
  if (into.keys.size() < from.keys.size()) into.keys.resize(from.keys.size());
  for (size_t r = 0; r < from.keys.size(); ++r) {
    into.keys[r].insert(into.keys[r].end(), from.keys[r].begin(), from.keys[r].end());
  }
  into.stamp_floor_ns = std::min(into.stamp_floor_ns, from.stamp_floor_ns);
  if (into.occurrences.size() < from.occurrences.size()) {
    into.occurrences.resize(from.occurrences.size());
  }
  for (size_t r = 0; r < from.occurrences.size(); ++r) {
    auto& cells = into.occurrences[r];
    for (const auto& [index, sums] : from.occurrences[r]) {
      const auto it = std::find_if(cells.begin(), cells.end(),
                                   [i = index](const auto& cell) { return cell.first == i; });
      if (it != cells.end()) {
        it->second.Merge(sums);
      } else {
        cells.emplace_back(index, sums);
      }
    }
  }
  if (from.failed_at < into.failed_at) {
    into.failed_at = from.failed_at;
    into.failure = from.failure;
  }
}

}  // namespace zsim::pipeline
