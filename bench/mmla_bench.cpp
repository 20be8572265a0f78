// mmla-bench: times mmla_sgemm on lists of shapes and reports GFLOPS, optionally checking the result
// against a double-precision reference. Uses only the public C API, so it measures exactly what a
// user of the shared library gets. Benchmarks, not tests: nothing here asserts on time.
#include <mmla/mmla.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#ifndef MMLA_BENCH_SHAPES_DIR
#define MMLA_BENCH_SHAPES_DIR "bench/shapes"
#endif

namespace {

constexpr int kExitFailure = 1;  // a GEMM call failed or a --check did not pass
constexpr int kExitUsage = 2;    // bad command line or shape file

constexpr double kDefaultMinTime = 0.3;
constexpr double kQuickMinTime = 0.05;
constexpr int kDefaultReps = 5;
// Far beyond any sane benchmark, small enough that M*K, K*N and M*N cannot overflow int64_t.
constexpr int64_t kMaxDim = int64_t{1} << 20;

const char kUsage[] =
    "usage: mmla-bench [--shapes FILE]... [--shape MxNxK]... [--quick] [--reps N]\n"
    "                  [--min-time SECONDS] [--check] [--json FILE|-] [--config] [--help]\n"
    "\n"
    "Times C = A * B (row-major, no transpose, alpha = 1, beta = 0) with mmla_sgemm.\n"
    "\n"
    "  --shapes FILE       read shapes from FILE ('M N K' per line, '#' starts a comment)\n"
    "  --shape MxNxK       add one shape, e.g. --shape 128x768x3072\n"
    "                      (default: " MMLA_BENCH_SHAPES_DIR
    "/squares.txt and inference.txt)\n"
    "  --quick             a few small shapes (unless shapes are given) and --min-time 0.05\n"
    "  --reps N            at least N timed runs per shape (default 5)\n"
    "  --min-time SECONDS  at least this much timed time per shape (default 0.3)\n"
    "  --check             compare C with a double-precision reference; exit 1 on failure\n"
    "  --json FILE|-       also write the results as JSON to FILE ('-': stdout; the table then\n"
    "                      goes to stderr so stdout stays valid JSON)\n"
    "  --config            print the whole mmla_get_config() report, not just the kernel lines\n"
    "  --help              print this help\n"
    "\n"
    "Each shape gets one warm-up call, then timed calls until both --reps and --min-time are met;\n"
    "GFLOPS = 2*M*N*K / median time.\n";

// An error in what the user gave us: the message is printed, plus the usage for command-line errors.
struct UsageError {
  std::string message;
  bool show_usage;
};

struct Shape {
  int64_t m, n, k;
};

struct Options {
  std::vector<Shape> shapes;
  bool shapes_given = false;
  bool quick = false;
  int reps = kDefaultReps;
  double min_time = -1;  // < 0: not given, use the default for the mode
  bool check = false;
  std::string json_path;  // empty: no JSON
  bool full_config = false;
};

struct CheckResult {
  double max_err;  // max over checked entries of |c - ref| / sum_p |a_ip * b_pj|
  double bound;
  bool pass;
};

struct Result {
  Shape shape;
  double median_s, min_s, max_s;
  int reps;
  bool checked;
  CheckResult check;
};

// Strict: the whole token must be a positive integer no larger than kMaxDim.
bool parse_dim(std::string_view s, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > kMaxDim) return false;
  *out = v;
  return true;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::strchr(" \t\r\v\f", s[i]) != nullptr) ++i;
    const std::size_t start = i;
    while (i < s.size() && std::strchr(" \t\r\v\f", s[i]) == nullptr) ++i;
    if (i > start) tokens.push_back(s.substr(start, i - start));
  }
  return tokens;
}

void read_shapes_file(const std::string& path, std::vector<Shape>* shapes) {
  std::ifstream in(path);
  if (!in) throw UsageError{"mmla-bench: cannot open shape file '" + path + "'", false};
  std::string line;
  int line_no = 0;
  std::size_t found = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view content(line);
    if (const std::size_t hash = content.find('#'); hash != std::string_view::npos)
      content = content.substr(0, hash);
    const std::vector<std::string_view> tokens = split_whitespace(content);
    if (tokens.empty()) continue;
    Shape s{};
    if (tokens.size() != 3 || !parse_dim(tokens[0], &s.m) || !parse_dim(tokens[1], &s.n) ||
        !parse_dim(tokens[2], &s.k)) {
      throw UsageError{path + ":" + std::to_string(line_no) + ": expected 'M N K' (three integers in 1.." +
                           std::to_string(kMaxDim) + "), got '" + line + "'",
                       false};
    }
    shapes->push_back(s);
    ++found;
  }
  if (in.bad()) throw UsageError{"mmla-bench: error reading '" + path + "'", false};
  if (found == 0) throw UsageError{path + ": no shapes in file", false};
}

bool parse_shape_arg(std::string_view s, Shape* out) {
  int64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    const std::size_t x = i < 2 ? s.find_first_of("xX") : s.size();
    if (x == std::string_view::npos || !parse_dim(s.substr(0, x), &dims[i])) return false;
    s = x < s.size() ? s.substr(x + 1) : std::string_view();
  }
  *out = Shape{dims[0], dims[1], dims[2]};
  return true;
}

Options parse_args(int argc, char** argv) {
  Options opt;
  std::vector<Shape> explicit_shapes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // Accept both "--opt value" and "--opt=value".
    std::string inline_value;
    bool has_inline = false;
    if (const std::size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
      has_inline = true;
    }
    const auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) throw UsageError{"mmla-bench: " + arg + " needs a value", true};
      return argv[++i];
    };
    const auto no_value = [&] {
      if (has_inline) throw UsageError{"mmla-bench: " + arg + " takes no value", true};
    };

    if (arg == "--help" || arg == "-h") {
      no_value();
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--shapes") {
      read_shapes_file(value(), &explicit_shapes);
      opt.shapes_given = true;
    } else if (arg == "--shape") {
      const std::string v = value();
      Shape s{};
      if (!parse_shape_arg(v, &s))
        throw UsageError{"mmla-bench: --shape: expected MxNxK with each size in 1.." +
                             std::to_string(kMaxDim) + ", got '" + v + "'",
                         true};
      explicit_shapes.push_back(s);
      opt.shapes_given = true;
    } else if (arg == "--quick") {
      no_value();
      opt.quick = true;
    } else if (arg == "--reps") {
      const std::string v = value();
      int reps = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), reps);
      if (ec != std::errc() || end != v.data() + v.size() || reps < 1)
        throw UsageError{"mmla-bench: --reps: expected a positive integer, got '" + v + "'", true};
      opt.reps = reps;
    } else if (arg == "--min-time") {
      const std::string v = value();
      char* end = nullptr;
      const double t = v.empty() ? -1 : std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(t >= 0) || !std::isfinite(t))
        throw UsageError{"mmla-bench: --min-time: expected seconds >= 0, got '" + v + "'", true};
      opt.min_time = t;
    } else if (arg == "--check") {
      no_value();
      opt.check = true;
    } else if (arg == "--json") {
      opt.json_path = value();
      if (opt.json_path.empty()) throw UsageError{"mmla-bench: --json: empty file name", true};
    } else if (arg == "--config") {
      no_value();
      opt.full_config = true;
    } else {
      throw UsageError{"mmla-bench: unknown option '" + std::string(argv[i]) + "'", true};
    }
  }

  if (opt.shapes_given) {
    opt.shapes = std::move(explicit_shapes);
  } else if (opt.quick) {
    // One of each regime: cache-resident square, mid square, decode (M=1), small and mid batches.
    opt.shapes = {{256, 256, 256}, {512, 512, 512}, {1, 768, 768}, {32, 3072, 768}, {128, 768, 3072}};
  } else {
    read_shapes_file(MMLA_BENCH_SHAPES_DIR "/squares.txt", &opt.shapes);
    read_shapes_file(MMLA_BENCH_SHAPES_DIR "/inference.txt", &opt.shapes);
  }
  if (opt.min_time < 0) opt.min_time = opt.quick ? kQuickMinTime : kDefaultMinTime;
  return opt;
}

// 64-byte aligned so every row start the kernels see is cache-line aligned, as in a real framework.
struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Matrix = std::unique_ptr<float[], FreeDeleter>;

Matrix allocate(int64_t elements) {
  constexpr std::size_t kAlign = 64;
  const std::size_t bytes =
      (static_cast<std::size_t>(elements) * sizeof(float) + kAlign - 1) / kAlign * kAlign;
  Matrix m(static_cast<float*>(std::aligned_alloc(kAlign, bytes)));
  if (!m) {
    std::fprintf(stderr, "mmla-bench: out of memory allocating %zu bytes\n", bytes);
    std::exit(kExitFailure);
  }
  return m;
}

// A fixed 64-bit LCG: the same inputs on every machine and run, so results are comparable.
struct Lcg {
  uint64_t state;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state;
  }
  // k / 2^23 - 1 for a 24-bit k: exactly representable in float, in [-1, 1).
  float uniform() { return static_cast<float>(static_cast<double>(next() >> 40) / 8388608.0 - 1.0); }
};

void fill(float* p, int64_t count, uint64_t seed) {
  Lcg rng{seed};
  for (int64_t i = 0; i < count; ++i) p[i] = rng.uniform();
}

void sgemm_or_die(const Shape& s, const float* a, const float* b, float* c) {
  const mmla_status st = mmla_sgemm(MMLA_ROW_MAJOR, MMLA_NO_TRANS, MMLA_NO_TRANS, s.m, s.n, s.k, 1.0f, a, s.k,
                                    b, s.n, 0.0f, c, s.n);
  if (st != MMLA_STATUS_SUCCESS) {
    std::fprintf(stderr, "mmla-bench: mmla_sgemm(%lldx%lldx%lld) failed: %s: %s\n",
                 static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                 mmla_status_string(st), mmla_last_error());
    std::exit(kExitFailure);
  }
}

// Error of one entry relative to the magnitude of its terms: a perfectly ordinary fp32 dot product
// of length K stays within K * 2^-24 of this, whatever the summation order.
double entry_error(const Shape& s, const float* a, const float* b, const float* c, int64_t i, int64_t j) {
  double ref = 0, magnitude = 0;
  for (int64_t p = 0; p < s.k; ++p) {
    const double term = static_cast<double>(a[i * s.k + p]) * static_cast<double>(b[p * s.n + j]);
    ref += term;
    magnitude += std::fabs(term);
  }
  const double diff = std::fabs(static_cast<double>(c[i * s.n + j]) - ref);
  if (magnitude == 0) return diff == 0 ? 0 : std::numeric_limits<double>::infinity();
  return diff / magnitude;  // NaN if c is NaN: caught by the !(err <= bound) test
}

CheckResult check_result(const Shape& s, const float* a, const float* b, const float* c) {
  CheckResult r{0, 2.0 * static_cast<double>(s.k) * std::ldexp(1.0, -24), true};
  const auto account = [&](int64_t i, int64_t j) {
    const double e = entry_error(s, a, b, c, i, j);
    if (!(e <= r.bound)) r.pass = false;
    if (std::isnan(e) || (!std::isnan(r.max_err) && e > r.max_err)) r.max_err = e;  // NaN sticks
  };
  // Up to 2^24 multiply-adds the full check is instant (even under qemu); beyond, sample entries,
  // always including the four corners, where edge tiles live.
  constexpr int64_t kFullCheckMacs = int64_t{1} << 24;
  constexpr int kSamples = 2000;
  if (s.m * s.n * s.k <= kFullCheckMacs) {
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) account(i, j);
  } else {
    account(0, 0), account(0, s.n - 1), account(s.m - 1, 0), account(s.m - 1, s.n - 1);
    Lcg rng{0x5eed5eedull};
    const uint64_t entries = static_cast<uint64_t>(s.m * s.n);
    for (int t = 0; t < kSamples; ++t) {
      const int64_t idx = static_cast<int64_t>((rng.next() >> 16) % entries);
      account(idx / s.n, idx % s.n);
    }
  }
  return r;
}

Result run_shape(const Shape& s, const Options& opt) {
  Matrix a = allocate(s.m * s.k), b = allocate(s.k * s.n), c = allocate(s.m * s.n);
  fill(a.get(), s.m * s.k, 1);
  fill(b.get(), s.k * s.n, 2);
  // beta = 0 must not read C, and every entry must be written: NaN here makes --check catch both.
  std::fill_n(c.get(), s.m * s.n, std::numeric_limits<float>::quiet_NaN());

  sgemm_or_die(s, a.get(), b.get(), c.get());  // warm-up: page faults, packing buffers, thread pool

  using Clock = std::chrono::steady_clock;
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < opt.reps || total < opt.min_time) {
    const Clock::time_point t0 = Clock::now();
    sgemm_or_die(s, a.get(), b.get(), c.get());
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    times.push_back(dt);
    total += dt;
  }

  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  Result r{};
  r.shape = s;
  r.median_s = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  r.min_s = times.front();
  r.max_s = times.back();
  r.reps = static_cast<int>(n);
  r.checked = opt.check;
  if (opt.check) r.check = check_result(s, a.get(), b.get(), c.get());
  return r;
}

double gflops(const Shape& s, double seconds) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / seconds *
         1e-9;
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

void print_header(std::FILE* out, bool check) {
  std::fprintf(out, "%-16s %10s %9s %19s %6s", "shape", "median ms", "GFLOPS", "GFLOPS min..max", "reps");
  if (check) std::fprintf(out, "   %-19s %s", "max err / bound", "check");
  std::fputc('\n', out);
}

void print_row(std::FILE* out, const Result& r) {
  const std::string range = [&] {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f..%.1f", gflops(r.shape, r.max_s), gflops(r.shape, r.min_s));
    return std::string(buf);
  }();
  std::fprintf(out, "%-16s %10.3f %9.1f %19s %6d", shape_name(r.shape).c_str(), r.median_s * 1e3,
               gflops(r.shape, r.median_s), range.c_str(), r.reps);
  if (r.checked)
    std::fprintf(out, "   %.2e / %.2e  %s", r.check.max_err, r.check.bound, r.check.pass ? "PASS" : "FAIL");
  std::fputc('\n', out);
  std::fflush(out);
}

std::string json_string(std::string_view s) {
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
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string to_json(const std::vector<Result>& results) {
  std::string j = "{\n  \"version\": " + json_string(mmla_version()) +
                  ",\n  \"config\": " + json_string(mmla_get_config()) + ",\n  \"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    j += i ? ",\n    {" : "\n    {";
    j += "\"m\": " + std::to_string(r.shape.m) + ", \"n\": " + std::to_string(r.shape.n) +
         ", \"k\": " + std::to_string(r.shape.k);
    j += ", \"median_s\": " + json_number(r.median_s);
    j += ", \"gflops\": " + json_number(gflops(r.shape, r.median_s));
    j += ", \"gflops_min\": " + json_number(gflops(r.shape, r.max_s));
    j += ", \"gflops_max\": " + json_number(gflops(r.shape, r.min_s));
    j += ", \"reps\": " + std::to_string(r.reps);
    if (r.checked)
      j += ", \"check\": {\"max_err\": " + json_number(r.check.max_err) +
           ", \"bound\": " + json_number(r.check.bound) + ", \"pass\": " + (r.check.pass ? "true" : "false") +
           "}";
    j += "}";
  }
  return j + (results.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

int run(const Options& opt) {
  // With --json - stdout carries the JSON alone.
  const bool json_stdout = opt.json_path == "-";
  std::FILE* out = json_stdout ? stderr : stdout;

  // Open the JSON file before the (long) run so a bad path fails immediately.
  std::ofstream json_file;
  if (!opt.json_path.empty() && !json_stdout) {
    json_file.open(opt.json_path);
    if (!json_file) {
      std::fprintf(stderr, "mmla-bench: cannot open '%s' for writing\n", opt.json_path.c_str());
      return kExitUsage;
    }
  }

  const std::string config = mmla_get_config();
  if (opt.full_config) {
    std::fputs(config.c_str(), out);
  } else {
    std::fprintf(out, "mmla %s\n", mmla_version());
    for (std::size_t pos = 0; pos < config.size();) {
      std::size_t end = config.find('\n', pos);
      if (end == std::string::npos) end = config.size();
      if (config.compare(pos, 7, "kernel ") == 0) std::fprintf(out, "%.*s\n", int(end - pos), &config[pos]);
      pos = end + 1;
    }
  }
  std::fprintf(out, "\nrow-major NN, alpha=1, beta=0; median of >= %d runs and >= %g s per shape\n\n",
               opt.reps, opt.min_time);
  print_header(out, opt.check);

  std::vector<Result> results;
  bool all_pass = true;
  for (const Shape& s : opt.shapes) {
    results.push_back(run_shape(s, opt));
    print_row(out, results.back());
    if (opt.check && !results.back().check.pass) all_pass = false;
  }

  if (!opt.json_path.empty()) {
    const std::string j = to_json(results);
    if (json_stdout) {
      std::fputs(j.c_str(), stdout);
      std::fflush(stdout);
    } else {
      json_file << j;
      json_file.close();
      if (!json_file) {
        std::fprintf(stderr, "mmla-bench: error writing '%s'\n", opt.json_path.c_str());
        return kExitFailure;
      }
    }
  }
  if (!all_pass) {
    std::fprintf(stderr, "mmla-bench: accuracy check FAILED for at least one shape\n");
    return kExitFailure;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.message.c_str());
    if (e.show_usage) std::fprintf(stderr, "\n%s", kUsage);
    return kExitUsage;
  }
}
