// mmla-bench: times mmla_sgemm (and mmla's prepacked-B path, mmla_sbgemm on bf16 inputs and fp32 in
// bf16 fast-math mode) on lists of shapes, interleaved in the same run with the other GEMM libraries
// installed beside it (OpenBLAS, BLIS, oneDNN; their bf16 GEMMs too), and reports GFLOPS, mmla's
// ratio to the best of them and the fraction of this machine's measured peak;
// optionally checks every library's result against a double-precision reference. mmla is used
// through its public C API only, so this measures exactly what a user of the shared library gets.
// Benchmarks, not tests: nothing here asserts on time.
#include <mmla/cblas.h>
#include <mmla/mmla.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gemm_libs.hpp"
#include "json.hpp"
#include "peak.hpp"

#ifndef MMLA_BENCH_SHAPES_DIR
#define MMLA_BENCH_SHAPES_DIR "bench/shapes"
#endif

namespace {

using mmla_bench::Arith;
using mmla_bench::BenchError;
using mmla_bench::GemmLib;
using mmla_bench::GemmRunner;
using mmla_bench::json_number;
using mmla_bench::json_string;
using mmla_bench::PeakReport;

constexpr int kExitFailure = 1;  // a GEMM call failed or a --check did not pass
constexpr int kExitUsage = 2;    // bad command line or shape file

constexpr double kDefaultMinTime = 0.3;
constexpr double kQuickMinTime = 0.05;
constexpr int kDefaultReps = 5;
// Far beyond any sane benchmark, small enough that M*K, K*N and M*N cannot overflow int64_t.
constexpr int64_t kMaxDim = int64_t{1} << 20;

const char kUsage[] =
    "usage: mmla-bench [--shapes FILE]... [--shape MxNxK]... [--quick] [--reps N]\n"
    "                  [--min-time SECONDS] [--burst K] [--settle MS] [--check] [--libs LIST]\n"
    "                  [--threads N]\n"
    "                  [--peak] [--peak-gflops X] [--json FILE|-] [--detail] [--config]\n"
    "                  [--openblas-lib PATH] [--blis-lib PATH] [--help]\n"
    "\n"
    "Times C = A * B (row-major, no transpose, alpha = 1, beta = 0) with mmla and the other GEMM\n"
    "libraries found on this machine, interleaved in one run, and prints per shape the GFLOPS of\n"
    "each, mmla's ratio to the best of the others and mmla's fraction of the machine's peak.\n"
    "\n"
    "  --shapes FILE       read shapes from FILE ('M N K' per line, '#' starts a comment)\n"
    "  --shape MxNxK       add one shape, e.g. --shape 128x768x3072\n"
    "                      (default: " MMLA_BENCH_SHAPES_DIR
    "/squares.txt and inference.txt)\n"
    "  --quick             a few small shapes (unless shapes are given) and --min-time 0.05;\n"
    "                      with --peak, shorter peak loops and a 128 MiB DRAM buffer\n"
    "  --reps N            at least N timed runs per shape and library (default 5)\n"
    "  --burst K           per round, each library makes one untimed call and then K timed ones\n"
    "                      back to back: steady state, as a model calling one GEMM in a loop sees\n"
    "                      it (default: one timed call per library per round, right after the\n"
    "                      other libraries' calls, so caches and thread pools start cold)\n"
    "  --settle MS         wait MS milliseconds after each library's turn, so that the worker\n"
    "                      threads of the library that just ran stop spinning (OpenBLAS's for\n"
    "                      ~1 ms: with --threads > 1 the bench sets OPENBLAS_THREAD_TIMEOUT=22\n"
    "                      unless it is set; libgomp's for over 12 ms after long calls: use 100)\n"
    "                      before the next one runs: with --threads > 1 on few cores, otherwise\n"
    "                      each library runs against the previous one's spinning threads;\n"
    "                      the bench spins on every CPU meanwhile, so that no CPU goes idle\n"
    "                      (a VM's idle vCPU is slow to wake) (default 0)\n"
    "  --min-time SECONDS  at least this much timed time per shape and library (default 0.3)\n"
    "  --check             compare every library's C with a double-precision reference;\n"
    "                      exit 1 on failure\n"
    "  --trans-b           B given transposed (column-major, ldb = k: the weights of x W^T,\n"
    "                      PyTorch's nn.Linear layout) to every library (default: row-major)\n"
    "  --libs LIST         comma-separated columns to run, from mmla, mmla:packed, openblas,\n"
    "                      blis, onednn, onednn:pb (fp32) and mmla:bf16, mmla:bf16pb, mmla:fastmath,\n"
    "                      openblas:sb, onednn:bf16, onednn:bf16pb (bf16); 'fp32' and 'bf16'\n"
    "                      stand for those groups (whatever of them is found), 'all' for both\n"
    "                      (default: all found)\n"
    "  --threads N         threads for every library, mmla included (default 1)\n"
    "  --peak              measure this core's fp32/bf16 peak and L2/L3/DRAM read bandwidth;\n"
    "                      alone it does only that, with shapes it also runs them and uses the\n"
    "                      measured fp32 peak for the %peak column (and its bf16 peak for\n"
    "                      %bf16pk, mmla:bf16's fraction of it)\n"
    "  --peak-gflops X     fp32 peak of one core for the %peak column (instead of measuring)\n"
    "  --json FILE|-       also write the results as JSON to FILE ('-': stdout; the table then\n"
    "                      goes to stderr so stdout stays valid JSON)\n"
    "  --detail            also print, per library, median ms, GFLOPS min..max, reps and error\n"
    "  --config            print the whole mmla_get_config() report, not just the kernel lines\n"
    "  --openblas-lib PATH load OpenBLAS from PATH (default: libopenblas.so.0, Debian paths)\n"
    "  --blis-lib PATH     load BLIS from PATH (default: libblis.so.4, Debian paths)\n"
    "  --help              print this help\n"
    "\n"
    "Per shape every library gets its untimed set-up (creating primitives, packing B for the\n"
    "prepacked columns) and one warm-up call; then rounds of one timed call per library, in a\n"
    "random order each round, until every library has both --reps runs and --min-time seconds.\n"
    "GFLOPS = 2*M*N*K / median time. mmla/best = mmla / best other plain-B fp32 column;\n"
    "packed/best = mmla:packed / best other fp32 column of any kind; bf16/best = mmla:bf16 / best\n"
    "other bf16 column; fast/strict = mmla:fastmath / mmla; %peak = mmla / (fp32 peak * threads);\n"
    "nT/1T = mmla / mmla:1t and bf16nT/1T = mmla:bf16 / mmla:bf16:1t (the same call on one thread).\n"
    "Compare numbers within one run only: see docs/benchmarking.md.\n";

// Waits `seconds` with every CPU busy: a thread per CPU spins until then. The other libraries'
// idle workers stop spinning and go to sleep meanwhile, as a plain sleep would let them, but no
// CPU goes idle: in a VM the host deschedules an idle vCPU, and a library thread woken on it then
// takes milliseconds to run, which a machine whose cores stay up does not see (docs/benchmarking.md).
void settle(double seconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto spin = [until] {
    while (Clock::now() < until) {
    }
  };
  std::vector<std::thread> others;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) others.emplace_back(spin);
  spin();
  for (std::thread& t : others) t.join();
}

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
  int burst = 0;         // > 0: per round, one untimed call then `burst` timed calls per library
  double settle_s = 0;   // idle time after each library's turn
  double min_time = -1;  // < 0: not given, use the default for the mode
  bool check = false;
  bool trans_b = false;   // B passed column-major (Problem::b_trans)
  std::string json_path;  // empty: no JSON
  bool full_config = false;
  bool detail = false;
  std::vector<std::string> libs;      // column names (GemmLib::name()); empty: all found
  std::vector<std::string> required;  // those named one by one (not through a group): must be found
  int threads = 1;
  bool peak = false;
  double peak_gflops = -1;  // > 0: given with --peak-gflops
  std::string openblas_lib, blis_lib;
};

struct CheckResult {
  double max_err;  // max over checked entries of |c - ref| / sum_p |a_ip * b_pj|
  double bound;
  bool pass;
};

// One library's numbers for one shape.
struct LibResult {
  std::string name;
  bool prepacked = false;
  Arith arith = Arith::kFp32;
  std::string impl;
  double median_s = 0, min_s = 0, max_s = 0;
  int reps = 0;
  bool checked = false;
  CheckResult check{};
};

struct Result {
  Shape shape;
  std::vector<LibResult> libs;      // in column order
  mmla_bench::Bandwidth m1_memory;  // M = 1 with --peak: reading B's bytes (else no samples)
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

// The column groups --libs accepts by name: fp32 (the fp32 columns) and bf16 (the bf16 ones).
const char* const kFp32Group[] = {"mmla", "mmla:packed", "OpenBLAS", "BLIS", "oneDNN", "oneDNN:pB"};
const char* const kBf16Group[] = {"mmla:bf16",   "mmla:bf16pB", "mmla:fastmath",
                                  "OpenBLAS:sb", "oneDNN:bf16", "oneDNN:bf16pB"};

// --libs names, case-insensitive, to column names; '-' may stand for ':'. Groups add their columns
// to opt->libs only; names given one by one also go to opt->required.
void parse_libs(const std::string& list, Options* opt) {
  static const std::pair<const char*, const char*> kNames[] = {{"mmla", "mmla"},
                                                               {"mmla:packed", "mmla:packed"},
                                                               {"mmla:pk", "mmla:packed"},
                                                               {"mmla:bf16", "mmla:bf16"},
                                                               {"mmla:sb", "mmla:bf16"},
                                                               {"mmla:bf16pb", "mmla:bf16pB"},
                                                               {"mmla:fastmath", "mmla:fastmath"},
                                                               {"mmla:fast", "mmla:fastmath"},
                                                               {"mmla:1t", "mmla:1t"},
                                                               {"mmla:bf16:1t", "mmla:bf16:1t"},
                                                               {"openblas", "OpenBLAS"},
                                                               {"openblas:sb", "OpenBLAS:sb"},
                                                               {"openblas:bf16", "OpenBLAS:sb"},
                                                               {"blis", "BLIS"},
                                                               {"onednn", "oneDNN"},
                                                               {"dnnl", "oneDNN"},
                                                               {"onednn:pb", "oneDNN:pB"},
                                                               {"dnnl:pb", "oneDNN:pB"},
                                                               {"onednn:bf16", "oneDNN:bf16"},
                                                               {"dnnl:bf16", "oneDNN:bf16"},
                                                               {"onednn:bf16pb", "oneDNN:bf16pB"},
                                                               {"dnnl:bf16pb", "oneDNN:bf16pB"}};
  std::vector<std::string> out, required;
  const auto add = [&](const std::string& column) {
    if (std::find(out.begin(), out.end(), column) == out.end()) out.push_back(column);
  };
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(pos, end - pos);
    for (char& ch : name)
      ch = ch == '-' ? ':' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    pos = end + 1;
    if (name.empty()) continue;
    if (name == "all") {
      opt->libs.clear();
      opt->required.clear();
      return;
    }
    if (name == "fp32") {
      for (const char* column : kFp32Group) add(column);
      continue;
    }
    if (name == "bf16") {
      for (const char* column : kBf16Group) add(column);
      continue;
    }
    const auto* it =
        std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& kv) { return name == kv.first; });
    if (it == std::end(kNames))
      throw UsageError{
          "mmla-bench: --libs: unknown library '" + name +
              "' (known: mmla, mmla:packed, openblas, blis, onednn, onednn:pb, mmla:bf16, mmla:bf16pb, "
              "mmla:fastmath, mmla:1t, mmla:bf16:1t, openblas:sb, onednn:bf16, onednn:bf16pb, "
              "fp32, bf16, all)",
          true};
    add(it->second);
    if (std::find(required.begin(), required.end(), it->second) == required.end())
      required.push_back(it->second);
  }
  if (out.empty()) throw UsageError{"mmla-bench: --libs: empty list", true};
  opt->libs = std::move(out);
  opt->required = std::move(required);
}

int parse_positive_int(const std::string& opt, const std::string& v) {
  int x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x < 1)
    throw UsageError{"mmla-bench: " + opt + ": expected a positive integer, got '" + v + "'", true};
  return x;
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
      opt.reps = parse_positive_int(arg, value());
    } else if (arg == "--burst") {
      opt.burst = parse_positive_int(arg, value());
    } else if (arg == "--settle") {
      const std::string v = value();
      char* end = nullptr;
      opt.settle_s = std::strtod(v.c_str(), &end) * 1e-3;
      if (v.empty() || *end != '\0' || !(opt.settle_s >= 0) || opt.settle_s > 10)
        throw UsageError{"mmla-bench: --settle: expected milliseconds in 0..10000, got '" + v + "'", true};
    } else if (arg == "--threads") {
      opt.threads = parse_positive_int(arg, value());
    } else if (arg == "--libs") {
      parse_libs(value(), &opt);
    } else if (arg == "--peak") {
      no_value();
      opt.peak = true;
    } else if (arg == "--peak-gflops") {
      const std::string v = value();
      char* end = nullptr;
      const double g = v.empty() ? -1 : std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(g > 0) || !std::isfinite(g))
        throw UsageError{"mmla-bench: --peak-gflops: expected GFLOPS > 0, got '" + v + "'", true};
      opt.peak_gflops = g;
    } else if (arg == "--detail") {
      no_value();
      opt.detail = true;
    } else if (arg == "--openblas-lib") {
      opt.openblas_lib = value();
      if (opt.openblas_lib.empty()) throw UsageError{"mmla-bench: --openblas-lib: empty path", true};
    } else if (arg == "--blis-lib") {
      opt.blis_lib = value();
      if (opt.blis_lib.empty()) throw UsageError{"mmla-bench: --blis-lib: empty path", true};
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
    } else if (arg == "--trans-b") {
      no_value();
      opt.trans_b = true;
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
  } else if (opt.peak) {
    // --peak alone measures the machine only.
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

// The double-precision value of one entry of C and the magnitude of its terms.
struct Reference {
  double value, magnitude;
};

Reference reference_entry(const Shape& s, const float* a, const float* b, int64_t i, int64_t j) {
  Reference r{0, 0};
  for (int64_t p = 0; p < s.k; ++p) {
    const double term = static_cast<double>(a[i * s.k + p]) * static_cast<double>(b[p * s.n + j]);
    r.value += term;
    r.magnitude += std::fabs(term);
  }
  return r;
}

// Error of one entry relative to the magnitude of its terms: a perfectly ordinary fp32 dot product
// of length K stays within K * 2^-24 of this, whatever the summation order.
double entry_error(const Reference& r, float c) {
  const double diff = std::fabs(static_cast<double>(c) - r.value);
  if (r.magnitude == 0) return diff == 0 ? 0 : std::numeric_limits<double>::infinity();
  return diff / r.magnitude;  // NaN if c is NaN: caught by the !(err <= bound) test
}

// The bound of --check for one column, relative to sum_p |a_ip b_pj| (of the inputs the reference
// uses): 2 K u for a dot product in fp32 arithmetic (u = 2^-24; twice the classic K u, for blocked
// sums and BFMMLA's two roundings per step), plus, for fast math, the rounding of both inputs to
// bf16: (1 + 2^-8)^2 - 1 = 2 * 2^-8 + 2^-16 (docs/numerics.md).
double check_bound(const Shape& s, Arith arith) {
  const double fp32 = 2.0 * static_cast<double>(s.k) * std::ldexp(1.0, -24);
  return arith == Arith::kFastMath ? 2 * std::ldexp(1.0, -8) + std::ldexp(1.0, -16) + fp32 : fp32;
}

// Every library's C against a double-precision reference, computed once per checked entry: from
// the fp32 inputs (a, b) for fp32 and fast-math columns, from the bf16-rounded inputs (a_r, b_r,
// bf16 values widened to float; null when no column takes bf16 inputs) for the bf16 columns.
std::vector<CheckResult> check_results(const Shape& s, const float* a, const float* b, const float* a_r,
                                       const float* b_r, const std::vector<const float*>& cs,
                                       const std::vector<Arith>& ariths) {
  std::vector<CheckResult> r;
  bool need_fp32 = false, need_bf16 = false;
  for (const Arith arith : ariths) {
    r.push_back(CheckResult{0, check_bound(s, arith), true});
    (arith == Arith::kBf16 ? need_bf16 : need_fp32) = true;
  }
  const auto account = [&](int64_t i, int64_t j) {
    const Reference ref = need_fp32 ? reference_entry(s, a, b, i, j) : Reference{0, 0};
    const Reference ref_bf16 = need_bf16 ? reference_entry(s, a_r, b_r, i, j) : Reference{0, 0};
    for (std::size_t l = 0; l < cs.size(); ++l) {
      const double e = entry_error(ariths[l] == Arith::kBf16 ? ref_bf16 : ref, cs[l][i * s.n + j]);
      if (!(e <= r[l].bound)) r[l].pass = false;
      if (std::isnan(e) || (!std::isnan(r[l].max_err) && e > r[l].max_err)) r[l].max_err = e;  // NaN sticks
    }
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

// bf16 copies of A and B, made once per shape (not timed) with mmla's cblas_sbstobf16, the
// conversion a user of mmla_sbgemm would call.
struct U16Deleter {
  void operator()(uint16_t* p) const { std::free(p); }
};
using Bf16Matrix = std::unique_ptr<uint16_t[], U16Deleter>;

Bf16Matrix to_bf16(const float* in, int64_t count) {
  constexpr std::size_t kAlign = 64;
  const std::size_t bytes =
      (static_cast<std::size_t>(count) * sizeof(uint16_t) + kAlign - 1) / kAlign * kAlign;
  Bf16Matrix out(static_cast<uint16_t*>(std::aligned_alloc(kAlign, bytes)));
  if (!out) {
    std::fprintf(stderr, "mmla-bench: out of memory allocating %zu bytes\n", bytes);
    std::exit(kExitFailure);
  }
  // cblas_sbstobf16 counts in int: convert in chunks.
  constexpr int64_t kChunk = int64_t{1} << 30;
  for (int64_t i = 0; i < count; i += kChunk)
    cblas_sbstobf16(static_cast<int>(std::min(kChunk, count - i)), in + i, 1, out.get() + i, 1);
  return out;
}

// The bf16 values as floats (exact), for the reference of the bf16 columns.
Matrix widen(const uint16_t* in, int64_t count) {
  Matrix out = allocate(count);
  constexpr int64_t kChunk = int64_t{1} << 30;
  for (int64_t i = 0; i < count; i += kChunk)
    cblas_sbf16tos(static_cast<int>(std::min(kChunk, count - i)), in + i, 1, out.get() + i, 1);
  return out;
}

Result run_shape(const Shape& s, const std::vector<std::unique_ptr<GemmLib>>& libs, const Options& opt) {
  Matrix a = allocate(s.m * s.k), b = allocate(s.k * s.n);
  fill(a.get(), s.m * s.k, 1);
  fill(b.get(), s.k * s.n, 2);

  // The bf16 columns' inputs: A and B rounded to bf16 once, shared by all of them.
  const bool any_bf16 =
      std::any_of(libs.begin(), libs.end(), [](const auto& l) { return l->arith() == Arith::kBf16; });
  Bf16Matrix a_bf16, b_bf16;
  if (any_bf16) a_bf16 = to_bf16(a.get(), s.m * s.k), b_bf16 = to_bf16(b.get(), s.k * s.n);

  // --trans-b: the libraries get B transposed, n x k row-major (the reference keeps b).
  Matrix bt;
  Bf16Matrix bt_bf16;
  if (opt.trans_b) {
    bt = allocate(s.k * s.n);
    for (int64_t p = 0; p < s.k; ++p)
      for (int64_t j = 0; j < s.n; ++j) bt[j * s.k + p] = b[p * s.n + j];
    if (any_bf16) bt_bf16 = to_bf16(bt.get(), s.k * s.n);
  }

  // Untimed set-up, then one warm-up call each (page faults, packing buffers, thread pools).
  const mmla_bench::Problem problem{s.m,
                                    s.n,
                                    s.k,
                                    a.get(),
                                    opt.trans_b ? bt.get() : b.get(),
                                    a_bf16.get(),
                                    opt.trans_b ? bt_bf16.get() : b_bf16.get(),
                                    opt.trans_b};
  const std::size_t count = libs.size();
  std::vector<Matrix> c;
  std::vector<std::unique_ptr<GemmRunner>> runners;
  for (const auto& lib : libs) {
    c.push_back(allocate(s.m * s.n));
    // beta = 0 must not read C, and every entry must be written: NaN here makes --check catch both.
    std::fill_n(c.back().get(), s.m * s.n, std::numeric_limits<float>::quiet_NaN());
    runners.push_back(lib->prepare(problem, c.back().get()));
  }
  for (const auto& r : runners) r->run();

  // Rounds of one call per library, so that whatever else the machine does hits all of them alike,
  // each round in a fresh random order (fixed seed): a call finds the caches as the previous
  // library left them, so no library may always follow the same one (docs/benchmarking.md).
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> times(count);
  std::vector<double> total(count, 0);
  const auto done = [&] {
    for (std::size_t l = 0; l < count; ++l)
      if (static_cast<int>(times[l].size()) < opt.reps || total[l] < opt.min_time) return false;
    return true;
  };
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 rng(20261206);
  while (!done()) {
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::size_t l : order) {
      if (opt.burst > 0) runners[l]->run();
      for (int b = 0; b < std::max(opt.burst, 1); ++b) {
        const Clock::time_point t0 = Clock::now();
        runners[l]->run();
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        times[l].push_back(dt);
        total[l] += dt;
      }
      if (opt.settle_s > 0) settle(opt.settle_s);
    }
  }

  std::vector<CheckResult> checks;
  if (opt.check) {
    std::vector<const float*> cs;
    std::vector<Arith> ariths;
    for (const Matrix& m : c) cs.push_back(m.get());
    for (const auto& l : libs) ariths.push_back(l->arith());
    Matrix a_r, b_r;
    if (any_bf16) a_r = widen(a_bf16.get(), s.m * s.k), b_r = widen(b_bf16.get(), s.k * s.n);
    checks = check_results(s, a.get(), b.get(), a_r.get(), b_r.get(), cs, ariths);
  }
  Result res{s, {}, {}};
  for (std::size_t l = 0; l < count; ++l) {
    std::vector<double>& t = times[l];
    std::sort(t.begin(), t.end());
    const std::size_t n = t.size();
    LibResult r;
    r.name = libs[l]->name();
    r.prepacked = libs[l]->prepacked();
    r.arith = libs[l]->arith();
    r.impl = runners[l]->impl();
    r.median_s = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    r.min_s = t.front();
    r.max_s = t.back();
    r.reps = static_cast<int>(n);
    r.checked = opt.check;
    if (opt.check) r.check = checks[l];
    res.libs.push_back(std::move(r));
  }
  return res;
}

double gflops(const Shape& s, double seconds) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / seconds *
         1e-9;
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

bool is_mmla(const std::string& name) { return name == "mmla" || name.rfind("mmla:", 0) == 0; }

const char* arith_name(Arith a) {
  switch (a) {
    case Arith::kFp32: return "fp32";
    case Arith::kBf16: return "bf16";
    case Arith::kFastMath: return "fp32-fastmath";
  }
  return "?";
}

// What one shape's row says beyond each library's GFLOPS.
struct Derived {
  const LibResult* mmla = nullptr;
  const LibResult* packed = nullptr;
  const LibResult* bf16 = nullptr;             // mmla:bf16
  const LibResult* fastmath = nullptr;         // mmla:fastmath
  const LibResult* one_thread = nullptr;       // mmla:1t
  const LibResult* bf16_one_thread = nullptr;  // mmla:bf16:1t
  const LibResult* best_plain = nullptr;       // fastest other fp32 library with B given plain
  const LibResult* best_any = nullptr;         // fastest other fp32 library of any kind (prepacked too)
  const LibResult* best_bf16 = nullptr;        // fastest other bf16 library of any kind
  double mmla_over_best = NAN, packed_over_best = NAN, bf16_over_best = NAN, fast_over_strict = NAN;
  double pct_peak = NAN, pct_peak_packed = NAN, pct_bf16_peak = NAN;
  double scaling = NAN, bf16_scaling = NAN;  // mmla / mmla:1t, mmla:bf16 / mmla:bf16:1t
  double m1_bound = NAN;                     // M = 1: the GFLOPS that reading B allows
  double pct_m1_bound = NAN;
};

// peak_gflops, bf16_peak_gflops: for all threads; 0 when unknown.
Derived derive(const Result& r, double peak_gflops, double bf16_peak_gflops) {
  Derived d;
  const auto faster = [](const LibResult* best, const LibResult& l) {
    return best == nullptr || l.median_s < best->median_s;
  };
  for (const LibResult& l : r.libs) {
    if (l.name == "mmla") d.mmla = &l;
    if (l.name == "mmla:packed") d.packed = &l;
    if (l.name == "mmla:bf16") d.bf16 = &l;
    if (l.name == "mmla:fastmath") d.fastmath = &l;
    if (l.name == "mmla:1t") d.one_thread = &l;
    if (l.name == "mmla:bf16:1t") d.bf16_one_thread = &l;
    if (is_mmla(l.name)) continue;
    if (l.arith == Arith::kFp32) {
      if (!l.prepacked && faster(d.best_plain, l)) d.best_plain = &l;
      if (faster(d.best_any, l)) d.best_any = &l;
    } else if (l.arith == Arith::kBf16 && faster(d.best_bf16, l)) {
      d.best_bf16 = &l;
    }
  }
  const Shape& s = r.shape;
  if (d.mmla && d.best_plain) d.mmla_over_best = d.best_plain->median_s / d.mmla->median_s;
  if (d.packed && d.best_any) d.packed_over_best = d.best_any->median_s / d.packed->median_s;
  if (d.bf16 && d.best_bf16) d.bf16_over_best = d.best_bf16->median_s / d.bf16->median_s;
  if (d.fastmath && d.mmla) d.fast_over_strict = d.mmla->median_s / d.fastmath->median_s;
  if (d.one_thread && d.mmla) d.scaling = d.one_thread->median_s / d.mmla->median_s;
  if (d.bf16_one_thread && d.bf16) d.bf16_scaling = d.bf16_one_thread->median_s / d.bf16->median_s;
  if (peak_gflops > 0) {
    if (d.mmla) d.pct_peak = 100 * gflops(s, d.mmla->median_s) / peak_gflops;
    if (d.packed) d.pct_peak_packed = 100 * gflops(s, d.packed->median_s) / peak_gflops;
  }
  if (bf16_peak_gflops > 0 && d.bf16) d.pct_bf16_peak = 100 * gflops(s, d.bf16->median_s) / bf16_peak_gflops;
  if (r.m1_memory.gbps.samples > 0) {
    // Every byte of B is used once per call: 2 flops per 4-byte float of B read.
    d.m1_bound = r.m1_memory.gbps.median / 2;
    if (d.mmla) d.pct_m1_bound = 100 * gflops(s, d.mmla->median_s) / d.m1_bound;
  }
  return d;
}

// Which of the optional columns the table has; the same for every row.
struct Columns {
  std::vector<std::string> libs;
  std::vector<int> widths;
  bool mmla_over_best = false, packed_over_best = false, bf16_over_best = false, fast_over_strict = false;
  bool scaling = false, bf16_scaling = false;
  bool pct_peak = false, pct_bf16_peak = false, m1_bound = false, check = false;
};

Columns table_columns(const std::vector<std::unique_ptr<GemmLib>>& libs, const Options& opt,
                      double peak_gflops, double bf16_peak_gflops, const PeakReport* peak) {
  Columns c;
  bool mmla = false, packed = false, bf16 = false, fastmath = false, one = false, bf16_one = false;
  bool other_plain = false, other = false, other_bf16 = false;
  for (const auto& l : libs) {
    const std::string name = l->name();
    c.libs.push_back(name);
    c.widths.push_back(std::max<int>(7, static_cast<int>(name.size())));
    mmla |= name == "mmla";
    packed |= name == "mmla:packed";
    bf16 |= name == "mmla:bf16";
    fastmath |= name == "mmla:fastmath";
    one |= name == "mmla:1t";
    bf16_one |= name == "mmla:bf16:1t";
    if (is_mmla(name)) continue;
    if (l->arith() == Arith::kFp32) other = true, other_plain |= !l->prepacked();
    if (l->arith() == Arith::kBf16) other_bf16 = true;
  }
  c.mmla_over_best = mmla && other_plain;
  c.packed_over_best = packed && other;
  c.bf16_over_best = bf16 && other_bf16;
  c.fast_over_strict = fastmath && mmla;
  c.scaling = one && mmla;
  c.bf16_scaling = bf16_one && bf16;
  c.pct_peak = (mmla || packed) && peak_gflops > 0;
  c.pct_bf16_peak = bf16 && bf16_peak_gflops > 0;
  bool any_m1 = false;
  for (const Shape& s : opt.shapes) any_m1 |= s.m == 1;
  c.m1_bound = peak != nullptr && any_m1 && opt.threads == 1;
  c.check = opt.check;
  return c;
}

void print_header(std::FILE* out, const Columns& c) {
  std::fprintf(out, "%-16s", "shape");
  for (std::size_t i = 0; i < c.libs.size(); ++i) std::fprintf(out, " %*s", c.widths[i], c.libs[i].c_str());
  if (c.mmla_over_best) std::fprintf(out, " %9s", "mmla/best");
  if (c.packed_over_best) std::fprintf(out, " %11s", "packed/best");
  if (c.bf16_over_best) std::fprintf(out, " %9s", "bf16/best");
  if (c.fast_over_strict) std::fprintf(out, " %11s", "fast/strict");
  if (c.scaling) std::fprintf(out, " %7s", "nT/1T");
  if (c.bf16_scaling) std::fprintf(out, " %9s", "bf16nT/1T");
  if (c.pct_peak) std::fprintf(out, " %6s", "%peak");
  if (c.pct_bf16_peak) std::fprintf(out, " %7s", "%bf16pk");
  if (c.m1_bound) std::fprintf(out, " %12s", "M=1 bound");
  if (c.check) std::fprintf(out, "  %s", "check");
  std::fputc('\n', out);
}

std::string fixed(double v, const char* format) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void print_row(std::FILE* out, const Columns& c, const Result& r, const Derived& d, bool detail) {
  std::fprintf(out, "%-16s", shape_name(r.shape).c_str());
  for (std::size_t i = 0; i < r.libs.size(); ++i)
    std::fprintf(out, " %*.1f", c.widths[i], gflops(r.shape, r.libs[i].median_s));
  if (c.mmla_over_best) std::fprintf(out, " %9s", fixed(d.mmla_over_best, "%.2f").c_str());
  if (c.packed_over_best) std::fprintf(out, " %11s", fixed(d.packed_over_best, "%.2f").c_str());
  if (c.bf16_over_best) std::fprintf(out, " %9s", fixed(d.bf16_over_best, "%.2f").c_str());
  if (c.fast_over_strict) std::fprintf(out, " %11s", fixed(d.fast_over_strict, "%.2f").c_str());
  if (c.scaling) std::fprintf(out, " %7s", fixed(d.scaling, "%.2f").c_str());
  if (c.bf16_scaling) std::fprintf(out, " %9s", fixed(d.bf16_scaling, "%.2f").c_str());
  if (c.pct_peak) std::fprintf(out, " %6s", fixed(d.pct_peak, "%.1f%%").c_str());
  if (c.pct_bf16_peak) std::fprintf(out, " %7s", fixed(d.pct_bf16_peak, "%.1f%%").c_str());
  if (c.m1_bound)
    std::fprintf(
        out, " %12s",
        std::isnan(d.m1_bound) ? "" : (fixed(d.m1_bound, "%.1f") + " (" + r.m1_memory.level + ")").c_str());
  if (c.check) {
    std::string failed;
    for (const LibResult& l : r.libs)
      if (!l.check.pass) failed += (failed.empty() ? "" : ",") + l.name;
    std::fprintf(out, "  %s", failed.empty() ? "PASS" : ("FAIL(" + failed + ")").c_str());
  }
  std::fputc('\n', out);
  if (detail) {
    for (const LibResult& l : r.libs) {
      std::fprintf(out, "    %-13s %9.3f ms %8.1f GFLOPS  min..max %.1f..%.1f  reps %d", l.name.c_str(),
                   l.median_s * 1e3, gflops(r.shape, l.median_s), gflops(r.shape, l.max_s),
                   gflops(r.shape, l.min_s), l.reps);
      if (l.checked)
        std::fprintf(out, "  err %.2e / %.2e %s", l.check.max_err, l.check.bound,
                     l.check.pass ? "PASS" : "FAIL");
      if (!l.impl.empty()) std::fprintf(out, "  [%s]", l.impl.c_str());
      std::fputc('\n', out);
    }
    if (!std::isnan(d.m1_bound))
      std::fprintf(
          out, "    M=1: reading B's %.2f MiB runs at %.1f GB/s (%s): bound %.1f GFLOPS, mmla at %.0f%%\n",
          static_cast<double>(r.m1_memory.bytes) / (1 << 20), r.m1_memory.gbps.median,
          r.m1_memory.level.c_str(), d.m1_bound, d.pct_m1_bound);
  }
  std::fflush(out);
}

std::string timing_json(const Shape& s, const LibResult& r) {
  std::string j = "\"median_s\": " + json_number(r.median_s);
  j += ", \"gflops\": " + json_number(gflops(s, r.median_s));
  j += ", \"gflops_min\": " + json_number(gflops(s, r.max_s));
  j += ", \"gflops_max\": " + json_number(gflops(s, r.min_s));
  j += ", \"reps\": " + std::to_string(r.reps);
  if (r.checked)
    j += ", \"check\": {\"max_err\": " + json_number(r.check.max_err) +
         ", \"bound\": " + json_number(r.check.bound) + ", \"pass\": " + (r.check.pass ? "true" : "false") +
         "}";
  return j;
}

struct RunInfo {
  int threads = 1;
  std::vector<std::pair<std::string, std::string>> libraries;  // name, info
  std::vector<std::string> notes;
  const PeakReport* peak = nullptr;
  double peak_gflops = 0;  // per core; 0: none
  const char* peak_source = nullptr;
  double bf16_peak_gflops = 0;  // per core, measured; 0: none
};

std::string to_json(const RunInfo& info, const std::vector<Result>& results) {
  std::string j = "{\n  \"version\": " + json_string(mmla_version()) +
                  ",\n  \"config\": " + json_string(mmla_get_config()) +
                  ",\n  \"threads\": " + std::to_string(info.threads) + ",\n  \"libraries\": [";
  for (std::size_t i = 0; i < info.libraries.size(); ++i)
    j += std::string(i ? "," : "") + "\n    {\"name\": " + json_string(info.libraries[i].first) +
         ", \"info\": " + json_string(info.libraries[i].second) + "}";
  j += std::string(info.libraries.empty() ? "" : "\n  ") + "],\n  \"notes\": [";
  for (std::size_t i = 0; i < info.notes.size(); ++i) j += (i ? ", " : "") + json_string(info.notes[i]);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  j += "],\n  \"openblas_coretype\": " + (coretype ? json_string(coretype) : std::string("null"));
  j += ",\n  \"peak\": " + (info.peak ? mmla_bench::peak_json(*info.peak, 2) : std::string("null"));
  j += ",\n  \"peak_gflops\": " + (info.peak_gflops > 0 ? json_number(info.peak_gflops) : "null");
  j += ",\n  \"peak_source\": " + (info.peak_source ? json_string(info.peak_source) : std::string("null"));
  j += ",\n  \"bf16_peak_gflops\": " +
       (info.bf16_peak_gflops > 0 ? json_number(info.bf16_peak_gflops) : "null");
  j += ",\n  \"results\": [";
  const double peak_total = info.peak_gflops * info.threads;
  const double bf16_peak_total = info.bf16_peak_gflops * info.threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Derived d = derive(r, peak_total, bf16_peak_total);
    j += i ? ",\n    {" : "\n    {";
    j += "\"m\": " + std::to_string(r.shape.m) + ", \"n\": " + std::to_string(r.shape.n) +
         ", \"k\": " + std::to_string(r.shape.k);
    if (d.mmla) j += ", " + timing_json(r.shape, *d.mmla);  // mmla's numbers, as before there were others
    j += ",\n     \"libs\": {";
    for (std::size_t l = 0; l < r.libs.size(); ++l) {
      const LibResult& lr = r.libs[l];
      j += std::string(l ? ",\n              " : "") + json_string(lr.name) + ": {" +
           timing_json(r.shape, lr) + ", \"prepacked\": " + (lr.prepacked ? "true" : "false") +
           ", \"arith\": " + json_string(arith_name(lr.arith));
      if (!lr.impl.empty()) j += ", \"impl\": " + json_string(lr.impl);
      j += "}";
    }
    j += "},\n     \"best_other\": " + (d.best_plain ? json_string(d.best_plain->name) : "null");
    j += ", \"best_other_any\": " + (d.best_any ? json_string(d.best_any->name) : "null");
    j += ", \"mmla_over_best\": " + json_number(d.mmla_over_best);
    j += ", \"packed_over_best\": " + json_number(d.packed_over_best);
    j += ", \"pct_peak\": " + json_number(d.pct_peak);
    j += ", \"pct_peak_packed\": " + json_number(d.pct_peak_packed);
    j += ",\n     \"best_other_bf16\": " + (d.best_bf16 ? json_string(d.best_bf16->name) : "null");
    j += ", \"bf16_over_best\": " + json_number(d.bf16_over_best);
    j += ", \"fast_over_strict\": " + json_number(d.fast_over_strict);
    j += ", \"threads_over_one\": " + json_number(d.scaling);
    j += ", \"bf16_threads_over_one\": " + json_number(d.bf16_scaling);
    j += ", \"pct_bf16_peak\": " + json_number(d.pct_bf16_peak);
    if (!std::isnan(d.m1_bound))
      j += ", \"m1_bound_gflops\": " + json_number(d.m1_bound) +
           ", \"m1_bound_level\": " + json_string(r.m1_memory.level) +
           ", \"m1_read_bytes\": " + std::to_string(r.m1_memory.bytes) +
           ", \"m1_read_gbps\": " + json_number(r.m1_memory.gbps.median) +
           ", \"pct_m1_bound\": " + json_number(d.pct_m1_bound);
    j += "}";
  }
  return j + (results.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void print_mmla_config(std::FILE* out, bool full) {
  const std::string config = mmla_get_config();
  if (full) {
    std::fputs(config.c_str(), out);
    return;
  }
  std::fprintf(out, "mmla %s\n", mmla_version());
  for (std::size_t pos = 0; pos < config.size();) {
    std::size_t end = config.find('\n', pos);
    if (end == std::string::npos) end = config.size();
    if (config.compare(pos, 7, "kernel ") == 0) std::fprintf(out, "%.*s\n", int(end - pos), &config[pos]);
    pos = end + 1;
  }
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

  RunInfo info;
  info.threads = opt.threads;
  print_mmla_config(out, opt.full_config);

  // The machine first, while nothing else of ours runs.
  PeakReport peak;
  if (opt.peak) {
    std::fputc('\n', out);
    peak = mmla_bench::measure_peak(opt.quick);
    mmla_bench::print_peak(out, peak);
    info.peak = &peak;
  }
  if (opt.peak_gflops > 0) {
    info.peak_gflops = opt.peak_gflops;
    info.peak_source = "given";
  } else if (opt.peak && peak.fp32_gflops() > 0) {
    info.peak_gflops = peak.fp32_gflops();
    info.peak_source = "measured";
  }
  if (opt.peak) info.bf16_peak_gflops = peak.bf16_gflops();

  std::vector<Result> results;
  bool all_pass = true;
  if (!opt.shapes.empty()) {
    mmla_bench::LibSearch search;
    search.threads = opt.threads;
    search.openblas_path = opt.openblas_lib;
    search.blis_path = opt.blis_lib;
    search.only = opt.libs;
    std::vector<std::unique_ptr<GemmLib>> libs;
    mmla_bench::add_mmla_libs(&libs, &search);
    mmla_bench::add_dlopen_libs(&libs, &search);
    mmla_bench::add_onednn_libs(&libs, &search);
    // fp32 columns first, then the bf16 ones (each group in the order above).
    std::stable_partition(libs.begin(), libs.end(), [](const auto& l) { return l->arith() == Arith::kFp32; });
    info.notes = search.notes;

    std::fprintf(out, "\nlibraries (%d thread%s each):\n", opt.threads, opt.threads == 1 ? "" : "s");
    for (const auto& l : libs) {
      info.libraries.emplace_back(l->name(), l->info());
      std::fprintf(out, "  %-13s %s\n", l->name().c_str(), l->info().c_str());
    }
    for (const std::string& n : search.notes) std::fprintf(out, "  (%s)\n", n.c_str());
    if (const char* coretype = std::getenv("OPENBLAS_CORETYPE"))
      std::fprintf(out, "  OPENBLAS_CORETYPE=%s (from the environment)\n", coretype);
    if (const char* mode = std::getenv("MMLA_FPMATH_MODE"))
      std::fprintf(out, "  MMLA_FPMATH_MODE=%s (from the environment): the mmla fp32 columns compute in it\n",
                   mode);
    // A library asked for by name must be there: a silently missing column reads as a result. (One
    // that came with a group, --libs bf16, may be missing: the notes above say why.)
    for (const std::string& want : opt.required) {
      const bool found =
          std::any_of(libs.begin(), libs.end(), [&](const auto& l) { return l->name() == want; });
      if (!found) {
        std::fprintf(stderr, "mmla-bench: --libs: %s is not available on this machine\n", want.c_str());
        return kExitUsage;
      }
    }

    const double peak_total = info.peak_gflops * opt.threads;
    const double bf16_peak_total = info.bf16_peak_gflops * opt.threads;
    const Columns columns = table_columns(libs, opt, peak_total, bf16_peak_total, info.peak);
    std::fprintf(out,
                 "\nrow-major %s, alpha=1, beta=0; GFLOPS of the median of >= %d runs and >= %g s per shape "
                 "and library, interleaved\n",
                 opt.trans_b ? "NT (B transposed)" : "NN", opt.reps, opt.min_time);
    if (columns.pct_peak)
      std::fprintf(out, "%%peak: of %.1f GFLOPS (%s fp32 peak of one core x %d thread%s)\n", peak_total,
                   info.peak_source, opt.threads, opt.threads == 1 ? "" : "s");
    if (columns.pct_bf16_peak)
      std::fprintf(out,
                   "%%bf16pk: mmla:bf16 of %.1f GFLOPS (measured bf16 peak, %s, of one core x %d thread%s)\n",
                   bf16_peak_total, peak.bf16_isa().c_str(), opt.threads, opt.threads == 1 ? "" : "s");
    if (opt.check &&
        std::any_of(libs.begin(), libs.end(), [](const auto& l) { return l->arith() != Arith::kFp32; }))
      std::fprintf(out,
                   "check: bf16 columns against the reference of the bf16-rounded inputs; mmla:fastmath "
                   "against the fp32 one with 2^-7 + 2^-16 more\n");
    std::fputc('\n', out);
    print_header(out, columns);
    for (const Shape& s : opt.shapes) {
      results.push_back(run_shape(s, libs, opt));
      if (columns.m1_bound && s.m == 1)
        results.back().m1_memory =
            mmla_bench::measure_bandwidth_at(static_cast<std::size_t>(s.k * s.n) * sizeof(float), peak);
      print_row(out, columns, results.back(), derive(results.back(), peak_total, bf16_peak_total),
                opt.detail);
      for (const LibResult& l : results.back().libs)
        if (opt.check && !l.check.pass) {
          all_pass = false;
          std::fprintf(stderr, "mmla-bench: %s %s: max error %.2e exceeds the bound %.2e\n",
                       shape_name(s).c_str(), l.name.c_str(), l.check.max_err, l.check.bound);
        }
    }
  }

  if (!opt.json_path.empty()) {
    const std::string j = to_json(info, results);
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
    const Options opt = parse_args(argc, argv);
    // Before any library reads it (libraries loaded later read it when they load).
    mmla_bench::set_thread_environment(opt.threads);
    return run(opt);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.message.c_str());
    if (e.show_usage) std::fprintf(stderr, "\n%s", kUsage);
    return kExitUsage;
  } catch (const BenchError& e) {
    std::fprintf(stderr, "mmla-bench: %s\n", e.what());
    return kExitFailure;
  }
}
