// The two JSON helpers mmla-bench needs (it writes JSON, never reads it).
#ifndef MMLA_BENCH_JSON_HPP
#define MMLA_BENCH_JSON_HPP

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace mmla_bench {

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// JSON has no NaN or infinity: those become null.
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace mmla_bench

#endif  // MMLA_BENCH_JSON_HPP
