// engine/report/text_table.h
//
// A plain-text table that fits a width: columns have a header, an alignment and a drop rank;
// when the rows are wider than the width, the columns with the highest rank are left out first
// (rank 0 is never dropped), unless `wide` asks for every column. And Wrap, which folds prose to
// a width. For the text report (text_report.h).
//
// Thread safety: a value; pure functions.

#ifndef ZSIM_ENGINE_REPORT_TEXT_TABLE_H_
#define ZSIM_ENGINE_REPORT_TEXT_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace zsim::report {

class TextTable {
 public:
  struct Column {
    std::string header;
    bool left = false;  // left-aligned (names); numbers are right-aligned
    int drop_rank = 0;  // 0: always shown; higher ranks are dropped first
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // REQUIRES: cells.size() == the number of columns.
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  // The table, one line per row after the header, each at most `width` columns unless even the
  // rank-0 columns need more; every column when `wide`. `indent` opens every line.
  std::string Render(size_t width, bool wide, const std::string& indent = "") const;

  // The headers of the columns Render(width, wide) keeps, in order.
  std::vector<std::string> Kept(size_t width, bool wide) const;

 private:
  std::vector<bool> Keep(size_t width, bool wide, size_t indent) const;
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// `text` folded at spaces so no line exceeds `width` (a word longer than that stays whole); the
// first line starts with `first`, the others with `rest`. Ends with a newline.
std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& rest);

// Display width of UTF-8 text: code points, not bytes (every character one column).
size_t DisplayWidth(const std::string& text);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_TEXT_TABLE_H_
