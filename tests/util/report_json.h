// tests/util/report_json.h
//
// Reading zsim's --json report in CLI-level tests: the parsed object (a test failure, not an
// exception, when stdout is not JSON) and the result row of one (recordsize, compression).

#ifndef ZSIM_TESTS_UTIL_REPORT_JSON_H_
#define ZSIM_TESTS_UTIL_REPORT_JSON_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/util/run_command.h"

namespace zsim::testing {

inline nlohmann::json ParseReportJson(const CommandResult& r) {
  EXPECT_FALSE(r.out.empty()) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out.substr(0, 500) << "\n" << r.err;
    return nlohmann::json::object();
  }
}

// The result for (recordsize, compression); an empty object and a test failure if absent.
inline const nlohmann::json& ResultFor(const nlohmann::json& report, uint64_t recordsize,
                                       const std::string& compression) {
  for (const nlohmann::json& r : report["results"]) {
    if (r["recordsize"] == recordsize && r["compression"] == compression) return r;
  }
  static const nlohmann::json kNone = nlohmann::json::object();
  ADD_FAILURE() << "no result for " << recordsize << " " << compression;
  return kNone;
}

// The report without what depends on time (speeds, seconds, the sentences quoting speeds) and
// on zsim's own memory, nor the keys named in `also` (e.g. "bytes_read": what a run read).
inline nlohmann::json Figures(const nlohmann::json& j, const std::set<std::string>& also = {}) {
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) {
      if (k.find("second") != std::string::npos || k.find("speed") != std::string::npos ||
          k == "timing" || k == "sentence" || k == "memory" || k == "codec_seconds" ||
          also.count(k) != 0) {
        continue;
      }
      out[k] = Figures(v, also);
    }
    return out;
  }
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& v : j) out.push_back(Figures(v, also));
    return out;
  }
  return j;
}

// Equal figures (Figures(.., also)), or a failure listing the differences (a JSON patch, cut
// short).
inline void ExpectSameFigures(const nlohmann::json& got, const nlohmann::json& want,
                              const std::set<std::string>& also = {}) {
  const nlohmann::json a = Figures(got, also), b = Figures(want, also);
  EXPECT_TRUE(a == b) << nlohmann::json::diff(b, a).dump().substr(0, 2000);
}

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_REPORT_JSON_H_
