#include "engine/report/text_table.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

namespace zsim::report {

size_t DisplayWidth(const std::string& text) {
  size_t n = 0;
  for (char ch : text) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::vector<bool> TextTable::Keep(size_t width, bool wide, size_t indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::vector<bool> keep(columns_.size(), true);
  auto total = [&] {
    size_t sum = indent, shown = 0;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (keep[c]) sum += widths[c], ++shown;
    }
    return sum + (shown > 0 ? shown - 1 : 0);
  };
  while (!wide && total() > width) {
    // The kept column of highest rank (the rightmost of equal ranks) goes.
    int drop = -1;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (!keep[c] || columns_[c].drop_rank == 0) continue;
      if (drop < 0 || columns_[c].drop_rank >= columns_[size_t(drop)].drop_rank) drop = int(c);
    }
    if (drop < 0) break;
    keep[size_t(drop)] = false;
  }
  return keep;
}

std::vector<std::string> TextTable::Kept(size_t width, bool wide) const {
  const std::vector<bool> keep = Keep(width, wide, 0);
  std::vector<std::string> out;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (keep[c]) out.push_back(columns_[c].header);
  }
  return out;
}

std::string TextTable::Render(size_t width, bool wide, const std::string& indent) const {
  const std::vector<bool> keep = Keep(width, wide, DisplayWidth(indent));
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    bool first = true;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (!keep[c]) continue;
      if (!first) text += ' ';
      first = false;
      const std::string pad(widths[c] - DisplayWidth(cells[c]), ' ');
      text += columns_[c].left ? cells[c] + pad : pad + cells[c];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& c : columns_) headers.push_back(c.header);
  line(headers);
  for (const auto& row : rows_) line(row);
  return out;
}

namespace {

// A unit the number before it is never parted from ("0.0 s", "293 KiB", "4 K"): a line that
// ended "..., 0.0" and a next one of "s" read as a number with no unit.
bool IsUnit(std::string_view word) {
  static constexpr std::string_view kUnits[] = {"B",   "K",   "M",   "G",   "T",   "P", "KiB",
                                                "MiB", "GiB", "TiB", "PiB", "EiB", "s", "ms",
                                                "us",  "ns",  "min", "h",   "x",   "%"};
  // Trailing punctuation stays with the unit ("12 s," "4.0 MiB.").
  while (!word.empty() && (word.back() == ',' || word.back() == '.' || word.back() == ';' ||
                           word.back() == ':' || word.back() == ')')) {
    word.remove_suffix(1);
  }
  return std::find(std::begin(kUnits), std::end(kUnits), word) != std::end(kUnits);
}

bool EndsWithDigit(const std::string& word) {
  return !word.empty() && word.back() >= '0' && word.back() <= '9';
}

}  // namespace

std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& rest) {
  // The words, a number and its unit as one.
  std::vector<std::string> words;
  for (size_t pos = 0; pos < text.size();) {
    const size_t space = text.find(' ', pos);
    std::string word =
        text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!words.empty() && EndsWithDigit(words.back()) && IsUnit(word)) {
      words.back() += ' ' + word;
    } else {
      words.push_back(std::move(word));
    }
  }
  std::string out, line = first;
  size_t line_width = DisplayWidth(first);
  bool empty = true;  // no word on the current line yet
  for (const std::string& word : words) {
    const size_t w = DisplayWidth(word);
    if (!empty && line_width + 1 + w > width) {
      out += line + "\n";
      line = rest;
      line_width = DisplayWidth(rest);
      empty = true;
    }
    if (!empty) line += ' ', ++line_width;
    line += word;
    line_width += w;
    empty = false;
  }
  return out + line + "\n";
}

}  // namespace zsim::report
