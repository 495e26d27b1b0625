#include "engine/report/text_table.h"

#include <algorithm>

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

std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& rest) {
  std::string out, line = first;
  size_t line_width = DisplayWidth(first);
  bool empty = true;  // no word on the current line yet
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    const std::string word =
        text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
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
