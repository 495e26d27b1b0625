// engine/estimate/codec_cost.h
//
// What codec work costs, nominally, before any of it is measured: one core's speed per codec
// and the speed of reading, fingerprinting and the dedup table. The codec budget uses them to cap
// a scan's codec work (codec_budget.h), the forecast to show the cost up front
// (pipeline/cost_forecast.h). They are constants, not this CPU's speeds, so that the budget's
// levels, and with them the figures, depend on the data and the options only; the report gives
// the speeds measured on this CPU (report/codec_speed.h). Taken from the bench on mixed data
// (bench/results/2026-12-01-stop14: lz4 0.65-3.5 GB/s, gzip-6 36-107 MB/s).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_CODEC_COST_H_
#define ZSIM_ENGINE_ESTIMATE_CODEC_COST_H_

#include <vector>

#include "zsim/scan_options.h"

namespace zsim::estimate {

// Reading from the page cache, fingerprinting (xxh128) and the dedup table, per core: the
// "rest" of the default scan's CPU time in the bench (0.88 s for 3.2 GB).
inline constexpr double kReadBytesPerSecond = 3.5e9;

// One core's nominal speed of a setting's codec, bytes per second (0 for off: no codec).
double NominalCodecBytesPerSecond(const Compression& c);

// The nominal CPU seconds one byte costs through the codecs of the settings `which` marks (each
// marked setting once): the sum of 1 / NominalCodecBytesPerSecond. 0 where none is marked.
double NominalSecondsPerByte(const std::vector<Compression>& settings,
                             const std::vector<bool>& which);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_CODEC_COST_H_
