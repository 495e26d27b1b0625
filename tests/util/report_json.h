// tests/util/report_json.h
//
// Reading zsim's --json report in CLI-level tests: the parsed object (a test failure, not an
// exception, when stdout is not JSON) and the result row of one (recordsize, compression).

#ifndef ZSIM_TESTS_UTIL_REPORT_JSON_H_
#define ZSIM_TESTS_UTIL_REPORT_JSON_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
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

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_REPORT_JSON_H_
