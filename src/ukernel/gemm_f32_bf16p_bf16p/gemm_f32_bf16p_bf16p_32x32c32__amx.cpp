// 32x32 bf16 kernel for AMX-BF16: four 16x16 fp32 C tiles accumulate TDPBF16PS of two A tiles
// (16 rows x 32 depths) by two B tiles (32 depths x 16 columns, AMX's pair layout): per 32 depths
// four TDPBF16PS, 32 K multiply-adds, from 4 KiB of packed operands. Layouts: pack_bf16.hpp; the
// packers here are the vectorised forms of the baseline ones there, which remain for the
// strided cases.
#if !defined(__AMX_TILE__) || !defined(__AMX_BF16__) || !defined(__AVX512BF16__)
#error "this file must be compiled with the amx flags of cmake/kernels.cmake"
#endif

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "ukernel/pack/bf16_avx512bf16.inc"
#include "ukernel/pack/pack_bf16.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 32, kNr = 32, kChunk = 32;

// Palette 1: tiles 0-3 C (16 rows x 64 bytes of fp32), 4-5 A, 6-7 B (16 rows x 64 bytes of bf16).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// The tile configuration is per thread. Loading it (which also zeroes every tile) and releasing
// the tiles cost about 550 cycles a call, against 512 for the products of a call of depth 256
// (mmla-ukernel-bench, L1-resident panels: depth 64 580 -> 840 GFLOPS, 256 1600 -> 1740 without
// them). So the driver brackets its calls on a thread with enter() and leave(), and a call outside
// them (tests, one-off callers) configures and releases for itself.
//
// A tile product takes time in proportion to the rows of its A tile, so calls of fewer than 16 rows
// of C (M = 1-15) configure the A and C tiles with only those rows: 8x768x768 with a prepacked B,
// one thread, the same call repeated, 15.9 -> 13.1 us (oneDNN 10.5). Only for a whole run of calls
// (enter's max_rows), as reloading the configuration between the full panels of a call and its
// last, partial one would cost more than it saves.
thread_local bool t_entered = false;
thread_local unsigned t_rows = 0;      // rows of the A and C tiles in the loaded configuration
thread_local bool t_b_shared = false;  // enter(): each panel of B serves several calls (products())
// One configuration per row count, in static storage: GCC 12 drops the stores that fill a
// configuration built on the stack, as it does not see _tile_loadconfig read it (a #GP at run time).
constexpr std::array<TileConfig, 17> configs_by_rows() {
  std::array<TileConfig, 17> all{};
  for (unsigned r = 0; r < all.size(); ++r)
    for (int t = 0; t < 6; ++t) all[r].rows[t] = static_cast<std::uint8_t>(r);
  return all;
}
constexpr std::array<TileConfig, 17> kConfigs = configs_by_rows();
void configure(unsigned rows) {
  _tile_loadconfig(&kConfigs[rows]);  // zeroes every tile
  t_rows = rows;
}
unsigned tile_rows(std::size_t m) { return m != 0 && m < 16 ? static_cast<unsigned>(m) : 16u; }
void enter(std::size_t max_rows, std::size_t a_panels) {
  configure(tile_rows(max_rows));
  t_entered = true;
  t_b_shared = a_panels > 1;
}
void leave() {
  _tile_release();
  t_entered = false;
  t_b_shared = false;
}

// The products of a call: kRows x kCols of the 2 x 2 C tiles (C tile 2r + c from A tile 4 + r and
// B tile 6 + c). A tile of m <= 16 rows or n <= 16 columns multiplies only the C tiles that hold
// them, as the fp32 kernels do with partial panels: at M = 8 the padded rows had cost half of every
// call (the packed panels keep their layout; the rows past m are zero and not read).
//
// A load can hint that its operand streams (TILELOADDT1): no later call reads it from L1. That keeps
// the operand the calls share in L1: B's panel where it serves several MR panels of A (enter's
// a_panels > 1: A streams), else A's panel where L1 holds it (B streams). Kernel loop alone over
// L2-resident panels, us: 256 rows of A per panel of B at 384 depths 51.0 -> 47.5 (B streaming
// instead, 60.4); 32x768x768 29.3 -> 20.8; 8x768x768 10.4 -> 8.8. An A panel larger than L1 comes
// from L2 whatever the hint, and streaming B then lost (mmla-bench, prepacked 32x3072x1536 -5%).
enum class Stream { none, a, b };
constexpr std::size_t kL1dBytes = 48 << 10;  // every core with AMX so far (Sapphire Rapids on)

template <int kRows, int kCols, Stream kStream>
void products(const char* ap, const char* bp, std::size_t kp) {
  // (GCC's tile intrinsics are macros that paste the tile number: no helper taking it.)
  for (std::size_t kk = 0; kk < kp; kk += kChunk) {
    if constexpr (kStream == Stream::a) {
      _tile_stream_loadd(4, ap, 64);
      _tile_loadd(6, bp, 64);
      if constexpr (kRows == 2) _tile_stream_loadd(5, ap + 1024, 64);
      if constexpr (kCols == 2) _tile_loadd(7, bp + 1024, 64);
    } else if constexpr (kStream == Stream::b) {
      _tile_loadd(4, ap, 64);
      _tile_stream_loadd(6, bp, 64);
      if constexpr (kRows == 2) _tile_loadd(5, ap + 1024, 64);
      if constexpr (kCols == 2) _tile_stream_loadd(7, bp + 1024, 64);
    } else {
      _tile_loadd(4, ap, 64);
      _tile_loadd(6, bp, 64);
      if constexpr (kRows == 2) _tile_loadd(5, ap + 1024, 64);
      if constexpr (kCols == 2) _tile_loadd(7, bp + 1024, 64);
    }
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (kCols == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (kRows == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (kRows == 2 && kCols == 2) _tile_dpbf16ps(3, 5, 7);
    ap += 2048;
    bp += 2048;
  }
}
template <int kRows, int kCols>
void products(const char* ap, const char* bp, std::size_t kp, bool own_config) {
  const std::size_t a_bytes = kp * sizeof(std::uint16_t) * (kRows == 2 ? 32u : t_rows);
  if (own_config) {
    products<kRows, kCols, Stream::none>(ap, bp, kp);
  } else if (t_b_shared) {
    products<kRows, kCols, Stream::a>(ap, bp, kp);
  } else if (a_bytes <= kL1dBytes) {
    products<kRows, kCols, Stream::b>(ap, bp, kp);
  } else {
    products<kRows, kCols, Stream::none>(ap, bp, kp);
  }
}

// C tiles to and from memory (ld bytes between rows), the used ones only.
template <int kRows, int kCols>
void load_c(const float* c, std::ptrdiff_t rs, std::size_t ld) {
  _tile_loadd(0, c, ld);
  if constexpr (kCols == 2) _tile_loadd(1, c + 16, ld);
  if constexpr (kRows == 2) _tile_loadd(2, c + 16 * rs, ld);
  if constexpr (kRows == 2 && kCols == 2) _tile_loadd(3, c + 16 * rs + 16, ld);
}
template <int kRows, int kCols>
void store_c(float* c, std::ptrdiff_t rs, std::size_t ld) {
  _tile_stored(0, c, ld);
  if constexpr (kCols == 2) _tile_stored(1, c + 16, ld);
  if constexpr (kRows == 2) _tile_stored(2, c + 16 * rs, ld);
  if constexpr (kRows == 2 && kCols == 2) _tile_stored(3, c + 16 * rs + 16, ld);
}

template <int kRows, int kCols>
void run_tiles(std::size_t m, std::size_t n, std::size_t kp, const char* ap, const char* bp, float* c,
               std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  // Outside enter/leave the call configures tiles of its own rows; inside, it uses enter's, and
  // goes back to 16 rows if it has more rows than enter was told.
  const bool own_config = !t_entered;
  const unsigned rows = kRows == 2 ? 16u : tile_rows(m);
  const bool configured = own_config || rows > t_rows;
  if (configured) configure(own_config ? rows : 16u);
  // Whole C tiles (m of the configured tile rows, or 32; n of 16 or 32) with alpha = 1 and beta 0 or
  // 1 (the driver's calls after the first K block, and plain C = A B) go straight between C and the
  // tile registers: no buffer, no vector pass.
  const std::size_t whole_rows = kRows == 2 ? 32u : t_rows;
  const bool direct = m == whole_rows && n == 16 * static_cast<std::size_t>(kCols) && c_cs == 1 &&
                      alpha == 1.0f && (beta == 0.0f || beta == 1.0f);
  const std::size_t ldc = static_cast<std::size_t>(c_rs) * sizeof(float);
  if (direct && beta == 1.0f) {
    load_c<kRows, kCols>(c, c_rs, ldc);
  } else if (!configured) {  // configure() zeroed them
    _tile_zero(0);
    if constexpr (kCols == 2) _tile_zero(1);
    if constexpr (kRows == 2) _tile_zero(2);
    if constexpr (kRows == 2 && kCols == 2) _tile_zero(3);
  }
  products<kRows, kCols>(ap, bp, kp, own_config);
  if (direct) {
    store_c<kRows, kCols>(c, c_rs, ldc);
    if (own_config) _tile_release();
    return;
  }
  alignas(64) float tile[kMr * kNr];
  store_c<kRows, kCols>(tile, kNr, kNr * sizeof(float));
  if (own_config) _tile_release();
  if (n == static_cast<std::size_t>(kNr) && c_cs == 1) {
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (std::size_t i = 0; i < m; ++i) {
      float* ci = c + static_cast<std::ptrdiff_t>(i) * c_rs;
      for (int v = 0; v < 2; ++v) {
        __m512 r = _mm512_mul_ps(va, _mm512_load_ps(tile + i * kNr + 16 * v));
        if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * v), r);
        _mm512_storeu_ps(ci + 16 * v, r);
      }
    }
    return;
  }
  store_tile_scalar(m, n, tile, kNr, c, c_rs, c_cs, alpha, beta);
}

// kp is a multiple of 32; B is always packed (KR > 1), so b_ks is not used.
void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v, std::ptrdiff_t,
         float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const auto* ap = static_cast<const char*>(ap_v);
  const auto* bp = static_cast<const char*>(bp_v);
  if (m > 16) {
    (n > 16 ? run_tiles<2, 2> : run_tiles<2, 1>)(m, n, kp, ap, bp, c, c_rs, c_cs, alpha, beta);
  } else {
    (n > 16 ? run_tiles<1, 2> : run_tiles<1, 1>)(m, n, kp, ap, bp, c, c_rs, c_cs, alpha, beta);
  }
}

// ---- Few rows, B read in place ---------------------------------------------------------------
//
// At M <= 16 a call reads every byte of B once, and packing B into the pair layout first reads B
// and writes as much again (docs/kernels.md, "B read in place at few rows"). Instead a B tile is
// 16 rows of B as they lie (32 columns, row stride ldb), and A is widened: with A's 16 depths
// zero-interleaved, (a, 0) pairs, a product takes B's even columns; with (0, a) pairs, the odd
// ones. Two products per B tile of 16 depths (twice the products of the pair layout, which
// few rows leave to spare) into C tiles of even and odd columns, interleaved at the end.
// Rows: one row of tiles up to 16; two (products of 16 rows x 16 depths, four per KiB of B, 64
// cycles against ~110 to fetch it from L3) only where B streams from memory: mmla-bench, 1 thread,
// GFLOPS, packed -> in place: 32x4096x4096 279-287 -> 331, 32x3072x768 313-323 -> 341-343, but
// 32x768x768 479-495 -> 387, 24x768x768 390-411 -> 312-317, 32x768x3072 373-375 -> 359-360.
constexpr std::size_t kBRowsMaxM = 16, kBRowsMaxMFromMemory = 32;
constexpr std::size_t kStep = 16;        // depths per B tile read in place
constexpr std::size_t kVisit = 2;        // steps per visit of a group of columns
constexpr std::size_t kHalf = 32;        // columns per B tile read in place
constexpr std::size_t kGroup = 64;       // columns per group: two B tiles, four C tiles
constexpr std::size_t kWideTile = 1024;  // bytes of a widened A tile (16 rows x 64)
// (Not std::min: a debug build would emit it as a weak symbol compiled with this file's AMX flags,
// which the linker may pick for baseline code; tests/check_kernel_symbols.cmake.)
std::size_t least(std::size_t a, std::size_t b) { return a < b ? a : b; }

// Scratch: the widened A (per step, even and odd tiles of each row of tiles), C's accumulators
// (per half of 32 columns, acc_rows rows of 16 even then 16 odd columns), the zero-padded copies.
struct BRowsScratch {
  std::size_t steps, n_pad, row_tiles, acc_rows, a_bytes, acc_bytes, k_tail_bytes, n_tail_bytes;
  explicit BRowsScratch(std::size_t m, std::size_t n, std::size_t k)
      : steps((k + kStep - 1) / kStep),
        n_pad((n + kGroup - 1) / kGroup * kGroup),
        row_tiles(m <= 16 ? 1 : 2),  // rows of tiles, each of up to 16 rows
        acc_rows(m <= 16 ? m : 32),
        a_bytes(steps * 2 * row_tiles * kWideTile),
        acc_bytes(n_pad / kHalf * acc_rows * kHalf * sizeof(float)),
        k_tail_bytes(k % kStep != 0 ? kStep * n_pad * sizeof(std::uint16_t) : 0),
        n_tail_bytes(n % kHalf != 0 ? steps * kStep * kHalf * sizeof(std::uint16_t) : 0) {}
  std::size_t total() const { return a_bytes + acc_bytes + k_tail_bytes + n_tail_bytes; }
};

std::size_t b_rows_scratch(std::size_t m, std::size_t n, std::size_t k) {
  return BRowsScratch(m, n, k).total();
}

// Where B's tile for half h (32 columns) at step s lies, and its row stride in bytes: B itself;
// for a last step short of 16 depths a zero-padded copy of it (k_tail); for a last half short of
// 32 columns a zero-padded copy of its columns (n_tail).
struct BSource {
  const std::uint16_t* b;
  std::size_t ldb, full_steps, n_full;  // n_full: columns in whole halves
  const std::uint16_t* k_tail;          // kStep rows, n_pad columns
  std::size_t n_pad;
  const std::uint16_t* n_tail;  // steps x kStep rows of kHalf columns
  const std::uint16_t* at(std::size_t h, std::size_t s, std::size_t& ld_bytes) const {
    const std::size_t col = h * kHalf;
    if (col >= n_full) {
      ld_bytes = kHalf * sizeof(std::uint16_t);
      return n_tail + s * kStep * kHalf;
    }
    if (s < full_steps) {
      ld_bytes = ldb * sizeof(std::uint16_t);
      return b + s * kStep * ldb + col;
    }
    ld_bytes = n_pad * sizeof(std::uint16_t);
    return k_tail + col;
  }
};

// C tiles 0-3 of a group from its accumulators c[0..3] (kHalf floats between rows), or zero on its
// first visit; then back. Tiles 2 and 3 only where `four`.
constexpr std::size_t kAccLd = kHalf * sizeof(float);
void tiles_from_acc(bool first, bool four, float* const c[4]) {
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    return;
  }
  _tile_loadd(0, c[0], kAccLd);
  _tile_loadd(1, c[1], kAccLd);
  if (four) {
    _tile_loadd(2, c[2], kAccLd);
    _tile_loadd(3, c[3], kAccLd);
  }
}
void tiles_to_acc(bool four, float* const c[4]) {
  _tile_stored(0, c[0], kAccLd);
  _tile_stored(1, c[1], kAccLd);
  if (four) {
    _tile_stored(2, c[2], kAccLd);
    _tile_stored(3, c[3], kAccLd);
  }
}

// Visits of kVisit steps sweep the groups of columns, so that B is read kVisit x 16 whole rows at a
// time (a group's full depth at once read each row in 128-byte pieces a pass apart: 8x3072x768 from
// L3 264 -> 196 us). C accumulates in acc between visits.
//
// One row of tiles (m <= 16): a group is two halves, two B tiles, four C tiles (even and odd columns
// of each half), A and C tiles of m rows.
void visits_one_row(const BRowsScratch& sz, const BSource& src, std::size_t halves, const char* wide,
                    float* acc, std::size_t m) {
  configure(tile_rows(m));  // A (4, 5) and C (0-3) tiles of m rows; B (6, 7) of 16
  for (std::size_t s0 = 0; s0 < sz.steps; s0 += kVisit) {
    const std::size_t s1 = least(sz.steps, s0 + kVisit);
    for (std::size_t h = 0; h < halves; h += 2) {
      const bool two = h + 1 < halves;
      float* const c0 = acc + h * sz.acc_rows * kHalf;
      float* const c1 = c0 + sz.acc_rows * kHalf;
      float* const c[4] = {c0, c0 + 16, c1, c1 + 16};
      tiles_from_acc(s0 == 0, two, c);
      for (std::size_t s = s0; s < s1; ++s) {
        std::size_t ld0 = 0, ld1 = 0;
        _tile_loadd(6, src.at(h, s, ld0), ld0);
        if (two) _tile_loadd(7, src.at(h + 1, s, ld1), ld1);
        _tile_loadd(4, wide + s * 2 * kWideTile, 64);
        _tile_loadd(5, wide + s * 2 * kWideTile + kWideTile, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        if (two) {
          _tile_dpbf16ps(2, 4, 7);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      tiles_to_acc(two, c);
    }
  }
  _tile_release();
  t_rows = 0;
}

// Two rows of tiles (17-32 rows, each row of tiles 16 rows): a group is one half, one B tile, four C
// tiles (even and odd columns of the top and bottom 16 rows); the four widened A tiles of a step take
// tiles 4, 5, 7 and then 4 again.
void visits_two_rows(const BRowsScratch& sz, const BSource& src, std::size_t halves, const char* wide,
                     float* acc) {
  configure(16);
  for (std::size_t s0 = 0; s0 < sz.steps; s0 += kVisit) {
    const std::size_t s1 = least(sz.steps, s0 + kVisit);
    for (std::size_t h = 0; h < halves; ++h) {
      float* const top = acc + h * sz.acc_rows * kHalf;
      float* const bottom = top + 16 * kHalf;
      float* const c[4] = {top, top + 16, bottom, bottom + 16};
      tiles_from_acc(s0 == 0, true, c);
      for (std::size_t s = s0; s < s1; ++s) {
        std::size_t ldb = 0;
        const char* const w = wide + s * 4 * kWideTile;
        _tile_loadd(6, src.at(h, s, ldb), ldb);
        _tile_loadd(4, w, 64);
        _tile_loadd(5, w + kWideTile, 64);
        _tile_loadd(7, w + 2 * kWideTile, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        _tile_dpbf16ps(2, 7, 6);
        _tile_loadd(4, w + 3 * kWideTile, 64);
        _tile_dpbf16ps(3, 4, 6);
      }
      tiles_to_acc(true, c);
    }
  }
  _tile_release();
  t_rows = 0;
}

void gemm_b_rows(std::size_t m, std::size_t n, std::size_t k, const void* a_v, std::ptrdiff_t a_rs,
                 std::ptrdiff_t a_cs, const void* b_v, std::ptrdiff_t b_rs, float* c, std::ptrdiff_t c_rs,
                 std::ptrdiff_t c_cs, float alpha, float beta, void* scratch) {
  const auto* a = static_cast<const std::uint16_t*>(a_v);
  const auto* b = static_cast<const std::uint16_t*>(b_v);
  const BRowsScratch sz(m, n, k);
  char* const wide = static_cast<char*>(scratch);
  float* const acc = reinterpret_cast<float*>(wide + sz.a_bytes);
  auto* const k_tail = reinterpret_cast<std::uint16_t*>(wide + sz.a_bytes + sz.acc_bytes);
  auto* const n_tail = reinterpret_cast<std::uint16_t*>(wide + sz.a_bytes + sz.acc_bytes + sz.k_tail_bytes);
  const std::size_t full_steps = k / kStep, n_full = n / kHalf * kHalf, halves = (n + kHalf - 1) / kHalf;
  const auto ldb = static_cast<std::size_t>(b_rs);

  // Row i of step s's even widened tile; the odd one's is kWideTile further.
  const auto wide_row = [&](std::size_t s, std::size_t i) {
    return wide + (s * 2 * sz.row_tiles + i / 16 * 2) * kWideTile + i % 16 * 64;
  };
  // A widened, step by step: the even tile's row i is (a, 0) pairs of its 16 depths, the odd one's
  // (0, a); depths past k are zero.
  for (std::size_t s = 0; s < sz.steps; ++s) {
    const std::size_t k0 = s * kStep, depths = least(kStep, k - k0);
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint16_t* row =
          a + static_cast<std::ptrdiff_t>(i) * a_rs + static_cast<std::ptrdiff_t>(k0) * a_cs;
      __m256i v;
      if (a_cs == 1) {
        v = _mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << depths) - 1), row);
      } else {
        alignas(32) std::uint16_t tmp[kStep] = {};
        for (std::size_t d = 0; d < depths; ++d) tmp[d] = row[static_cast<std::ptrdiff_t>(d) * a_cs];
        v = _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
      }
      // (maskz_ forms: the plain ones use _mm512_undefined_*, which GCC 12 flags as uninitialised.)
      const __m512i even = _mm512_maskz_cvtepu16_epi32(0xffff, v);
      char* const tile = wide_row(s, i);
      _mm512_store_si512(tile, even);
      _mm512_store_si512(tile + kWideTile, _mm512_maskz_slli_epi32(0xffff, even, 16));
    }
    // Two rows of tiles take 16 rows each: the rows past m multiply zeros.
    for (std::size_t i = m; i < 16 * sz.row_tiles; ++i) {
      char* const tile = wide_row(s, i);
      _mm512_store_si512(tile, _mm512_setzero_si512());
      _mm512_store_si512(tile + kWideTile, _mm512_setzero_si512());
    }
  }
  // Zero-padded copies: the depths of a last short step (whole halves only), the columns of a last
  // short half (every depth).
  if (sz.k_tail_bytes != 0) {
    std::memset(k_tail, 0, sz.k_tail_bytes);
    for (std::size_t d = 0; d < k - full_steps * kStep; ++d)
      std::memcpy(k_tail + d * sz.n_pad, b + (full_steps * kStep + d) * ldb, n_full * sizeof(std::uint16_t));
  }
  if (sz.n_tail_bytes != 0) {
    std::memset(n_tail, 0, sz.n_tail_bytes);
    for (std::size_t d = 0; d < k; ++d)
      std::memcpy(n_tail + d * kHalf, b + d * ldb + n_full, (n - n_full) * sizeof(std::uint16_t));
  }
  const BSource src{b, ldb, full_steps, n_full, k_tail, sz.n_pad, n_tail};

  if (sz.row_tiles == 1) {
    visits_one_row(sz, src, halves, wide, acc, m);
  } else {
    visits_two_rows(sz, src, halves, wide, acc);
  }

  // Even and odd columns interleaved into C, with alpha and beta (beta 0: C not read).
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (std::size_t h = 0; h < halves; ++h) {
    const std::size_t j0 = h * kHalf, cols = least(kHalf, n - j0);
    for (std::size_t i = 0; i < m; ++i) {
      const float* e = acc + (h * sz.acc_rows + i) * kHalf;
      const __m512 ve = _mm512_load_ps(e), vo = _mm512_load_ps(e + 16);
      alignas(64) float row[kHalf];
      _mm512_store_ps(row, _mm512_permutex2var_ps(ve, lo, vo));
      _mm512_store_ps(row + 16, _mm512_permutex2var_ps(ve, hi, vo));
      float* ci = c + static_cast<std::ptrdiff_t>(i) * c_rs + static_cast<std::ptrdiff_t>(j0) * c_cs;
      if (c_cs != 1) {
        store_tile_scalar(1, cols, row, kHalf, ci, c_rs, c_cs, alpha, beta);
        continue;
      }
      for (std::size_t v = 0; v < 2; ++v) {
        const __mmask16 mask = lanes(cols > 16 * v ? cols - 16 * v : 0);
        __m512 r = _mm512_mul_ps(va, _mm512_load_ps(row + 16 * v));
        if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, ci + 16 * v), r);
        _mm512_mask_storeu_ps(ci + 16 * v, mask, r);
      }
    }
  }
}

// ---- Packers -----------------------------------------------------------------------------------

// 32 consecutive values from p (count of them, the rest zero) as 32 bf16.
__m512i load_row32(const float* p, std::size_t count) {
  return to_bf16x32(_mm512_maskz_loadu_ps(lanes(count), p),
                    _mm512_maskz_loadu_ps(lanes(count > 16 ? count - 16 : 0), p + 16));
}
__m512i load_row32(const std::uint16_t* p, std::size_t count) {
  return _mm512_maskz_loadu_epi16(count >= 32 ? __mmask32(0xffffffffu) : __mmask32((1u << count) - 1), p);
}

// A ("rows"): with the source's rows along k (a row-major A, a transposed B^T), each 64-byte line
// of a tile is 32 consecutive depths of one row: one conversion, one store. Chunk by chunk, so the
// panel is written in address order; rows past mn are zero lines.
template <class Src>
void pack_rows(const void* src_v, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
               void* dst_v, PackFn fallback) {
  if (s_k != 1) return fallback(src_v, s_mn, s_k, mn, k, dst_v);
  const Src* src = static_cast<const Src*>(src_v);
  auto* dst = static_cast<std::uint16_t*>(dst_v);
  const std::size_t kp = (k + kChunk - 1) / kChunk * kChunk;
  for (std::size_t p = 0; p < mn; p += kMr) {
    const std::size_t rows = mn - p < static_cast<std::size_t>(kMr) ? mn - p : kMr;
    const Src* base = src + static_cast<std::ptrdiff_t>(p) * s_mn;
    std::uint16_t* panel = dst + p * kp;
    for (std::size_t kk = 0; kk < kp; kk += kChunk) {
      std::uint16_t* d = panel + kk * kMr;
      for (std::size_t r = 0; r < static_cast<std::size_t>(kMr); ++r) {
        const __m512i v = r < rows ? load_row32(base + static_cast<std::ptrdiff_t>(r) * s_mn + kk, k - kk)
                                   : _mm512_setzero_si512();
        _mm512_storeu_si512(d + r * kChunk, v);
      }
    }
  }
}

// 16 x 16 dwords transposed in registers: r[i] holds row i before and column i after. Unpacks of
// dwords and of qwords within 128-bit lanes, then two rounds of lane shuffles (maskz_ forms, as
// GCC 12 flags the plain ones' _mm512_undefined_* as uninitialised).
void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_epi32(0xffff, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_epi32(0xffff, r[i], r[i + 1]);
  }
  // u[4 g + c]: lane L holds column 4 L + c of rows 4 g .. 4 g + 3.
  __m512i u[16];
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_maskz_unpacklo_epi64(0xff, t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_maskz_unpackhi_epi64(0xff, t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_maskz_unpacklo_epi64(0xff, t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_maskz_unpackhi_epi64(0xff, t[4 * g + 1], t[4 * g + 3]);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512i s0 = _mm512_maskz_shuffle_i32x4(0xffff, u[c], u[4 + c], 0x44);
    const __m512i s1 = _mm512_maskz_shuffle_i32x4(0xffff, u[c], u[4 + c], 0xee);
    const __m512i s2 = _mm512_maskz_shuffle_i32x4(0xffff, u[8 + c], u[12 + c], 0x44);
    const __m512i s3 = _mm512_maskz_shuffle_i32x4(0xffff, u[8 + c], u[12 + c], 0xee);
    r[c] = _mm512_maskz_shuffle_i32x4(0xffff, s0, s2, 0x88);
    r[4 + c] = _mm512_maskz_shuffle_i32x4(0xffff, s0, s2, 0xdd);
    r[8 + c] = _mm512_maskz_shuffle_i32x4(0xffff, s1, s3, 0x88);
    r[12 + c] = _mm512_maskz_shuffle_i32x4(0xffff, s1, s3, 0xdd);
  }
}

// B ("pairs") with the source's rows along k (a column-major B, the weights of x W^T): the 32 depths
// of one column are 16 depth pairs in a row of the source, and a tile line is one pair of 16
// columns, so each tile is a 16 x 16 transpose of dwords (pairs). Before it, the scalar baseline
// packer took 0.4 ms of the 0.5 of a 8x768x768 sbgemm with B transposed.
template <class Src>
void pack_pairs_transposed(const Src* src, std::ptrdiff_t s_mn, std::size_t mn, std::size_t k,
                           std::uint16_t* dst) {
  const std::size_t kp = (k + kChunk - 1) / kChunk * kChunk;
  for (std::size_t p = 0; p < mn; p += kNr) {
    for (std::size_t k0 = 0; k0 < kp; k0 += kChunk) {
      std::uint16_t* d = dst + p * kp + k0 * kNr;
      for (std::size_t h = 0; h < 2; ++h) {
        __m512i r[16];
        for (std::size_t j = 0; j < 16; ++j) {
          const std::size_t col = p + 16 * h + j;
          r[j] = col < mn ? load_row32(src + static_cast<std::ptrdiff_t>(col) * s_mn + k0, k - k0)
                          : _mm512_setzero_si512();
        }
        transpose16(r);
        for (int i = 0; i < 16; ++i) _mm512_storeu_si512(d + 512 * h + 32 * i, r[i]);
      }
    }
  }
}

// B ("pairs"): with the source's rows along n (a row-major B), a 64-byte tile line is one depth
// pair of 16 columns, interleaved from two rows (load_pairs). Chunk by chunk of 32 depths, panel by
// panel: B is read 32 whole rows at a time in address order, and each panel's 2 KiB of the chunk is
// written at once. (Depth pair by depth pair across all panels, the first order, wrote 64 bytes to
// each panel in turn, panels kp x 64 bytes apart: a multiple of 4 KiB, so every store of a pair
// fell in one L1 set. 768x768 bf16: 87 -> 33 us.)
template <class Src>
void pack_pairs(const void* src_v, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
                void* dst_v, PackFn fallback) {
  if (s_mn != 1 && s_k == 1)
    return pack_pairs_transposed(static_cast<const Src*>(src_v), s_mn, mn, k,
                                 static_cast<std::uint16_t*>(dst_v));
  if (s_mn != 1) return fallback(src_v, s_mn, s_k, mn, k, dst_v);
  const Src* src = static_cast<const Src*>(src_v);
  auto* dst = static_cast<std::uint16_t*>(dst_v);
  const std::size_t kp = (k + kChunk - 1) / kChunk * kChunk;
  for (std::size_t k0 = 0; k0 < kp; k0 += kChunk) {
    for (std::size_t p = 0; p < mn; p += kNr) {
      const std::size_t cols = mn - p < static_cast<std::size_t>(kNr) ? mn - p : kNr;
      const __mmask16 lo = lanes(cols), hi = lanes(cols > 16 ? cols - 16 : 0);
      std::uint16_t* d = dst + p * kp + k0 * kNr;
      for (std::size_t kk = k0; kk < k0 + kChunk; kk += 2, d += 32) {
        if (kk >= k) {
          _mm512_storeu_si512(d, _mm512_setzero_si512());
          _mm512_storeu_si512(d + 512, _mm512_setzero_si512());
          continue;
        }
        const Src* r0 = src + static_cast<std::ptrdiff_t>(kk) * s_k + p;
        const Src* r1 = kk + 1 < k ? r0 + s_k : nullptr;
        _mm512_storeu_si512(d, load_pairs(r0, r1, lo));
        _mm512_storeu_si512(d + 512, load_pairs(r0 + 16, r1 == nullptr ? nullptr : r1 + 16, hi));
      }
    }
  }
}

void pack_a_f32(const void* s, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
                void* d) {
  pack_rows<float>(s, s_mn, s_k, mn, k, d, pack_f32_amx_rows_r32);
}
void pack_a_bf16(const void* s, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
                 void* d) {
  pack_rows<std::uint16_t>(s, s_mn, s_k, mn, k, d, pack_bf16_amx_rows_r32);
}
void pack_b_f32(const void* s, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
                void* d) {
  pack_pairs<float>(s, s_mn, s_k, mn, k, d, pack_f32_amx_pairs_r32);
}
void pack_b_bf16(const void* s, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, std::size_t k,
                 void* d) {
  pack_pairs<std::uint16_t>(s, s_mn, s_k, mn, k, d, pack_bf16_amx_pairs_r32);
}

}  // namespace

extern const GemmKernel gemm_f32_bf16p_bf16p_32x32c32__amx{"gemm_f32_bf16p_bf16p_32x32c32__amx",
                                                           Family::gemm_f32_bf16p_bf16p,
                                                           cpu::Isa::amx,
                                                           kMr,
                                                           kNr,
                                                           kChunk,
                                                           sizeof(std::uint16_t),
                                                           {pack_a_f32, pack_a_bf16},
                                                           {pack_b_f32, pack_b_bf16},
                                                           run,
                                                           enter,
                                                           leave,
                                                           nullptr,
                                                           nullptr,
                                                           0,
                                                           gemm_b_rows,
                                                           b_rows_scratch,
                                                           kBRowsMaxM,
                                                           kBRowsMaxMFromMemory};

}  // namespace mmla::ukernel
