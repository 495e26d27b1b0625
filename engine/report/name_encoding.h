// engine/report/name_encoding.h
//
// File names as the reports write them. A Linux file name is any bytes but '/' and NUL; a report
// is text. Two encodings:
//
// - EncodeName (JSON, docs/names.md): lossless and always valid UTF-8. A byte that is not part
//   of a valid UTF-8 sequence, 0xNN (0x80..0xFF), becomes the private-use code point U+EF00+NN
//   (U+EF80..U+EFFF, the range MirBSD's OPTU-8 uses for the same purpose); a name that really
//   holds one of those code points has each of its three bytes encoded the same way, so every
//   code point in U+EF80..U+EFFF of the output stands for one byte and DecodeName restores the
//   name exactly. A name that is valid UTF-8 without such code points is unchanged, and a real
//   U+FFFD stays U+FFFD, so `a\xff`, `a\xfe` and `a\xef\xbf\xbd` stay three names.
// - TerminalName (text report): one line that cannot drive a terminal. C0 controls, DEL, the C1
//   controls U+0080..U+009F, and stray bytes 0x80..0x9F (which 8-bit terminals read as C1, 0x9b
//   being CSI) become '?'; other text, and other stray bytes, are kept.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_NAME_ENCODING_H_
#define ZSIM_ENGINE_REPORT_NAME_ENCODING_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace zsim::report {

// Length (2..4) of the valid UTF-8 sequence of a code point >= U+0080 starting at s[i] (no
// overlong form, no surrogate, nothing above U+10FFFF), or 0 if there is none.
size_t ValidUtf8Length(std::string_view s, size_t i);

std::string EncodeName(std::string_view name);
// The inverse of EncodeName on its output.
std::string DecodeName(std::string_view encoded);

std::string TerminalName(std::string_view name);

// EncodeName on every string of a JSON document (nlohmann::json or alike), in place: paths,
// breakdown names and error messages that quote paths alike (identity on ordinary text).
template <typename Json>
void EncodeNamesIn(Json& j) {
  if (j.is_string()) {
    j = EncodeName(j.template get_ref<const std::string&>());
  } else if (j.is_structured()) {
    for (auto& v : j) EncodeNamesIn(v);
  }
}

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_NAME_ENCODING_H_
