#include "api/problem.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "cpu/cpu.hpp"
#include "ukernel/registry.hpp"

namespace mmla::api {
namespace {

thread_local std::string t_last_error;

std::string str(std::int64_t v) { return std::to_string(v); }

bool reject(ArgError* err, int position, std::string reason) {
  err->position = position;
  err->reason = std::move(reason);
  return false;
}

// The largest element offset of a rows x cols view must fit in ptrdiff_t.
bool extent_fits(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  std::int64_t r = 0, c = 0, sum = 0;
  if (rows == 0 || cols == 0) return true;
  return !__builtin_mul_overflow(rows - 1, rs, &r) && !__builtin_mul_overflow(cols - 1, cs, &c) &&
         !__builtin_add_overflow(r, c, &sum);
}

// The problem of valid operands (checked by the callers).
void fill_problem(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const void* a,
                  std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs, std::int64_t b_cs,
                  float beta, float* c, std::int64_t c_rs, std::int64_t c_cs, bool allow_transpose,
                  driver::GemmProblem* out) {
  // A dimension of extent <= 1 is never stepped along: its stride is irrelevant.
  if (n <= 1) c_cs = 1;
  if (m <= 1) c_rs = 1;
  driver::GemmProblem& p = *out;
  p = {};
  p.alpha = alpha;
  p.beta = beta;
  p.k = static_cast<std::size_t>(k);
  p.c = c;
  // Kernels store rows of C with vector stores when C's column stride is 1. A C with unit row stride
  // is the transpose of such a one: C^T = B^T A^T, i.e. swap the operands and their strides. Other
  // strides work too, through the kernels' tile buffer.
  if (c_cs != 1 && c_rs == 1 && allow_transpose) {
    p.m = static_cast<std::size_t>(n), p.n = static_cast<std::size_t>(m);
    p.a = b, p.a_rs = b_cs, p.a_cs = b_rs;
    p.b = a, p.b_rs = a_cs, p.b_cs = a_rs;
    p.c_rs = c_cs, p.c_cs = c_rs;
  } else {
    p.m = static_cast<std::size_t>(m), p.n = static_cast<std::size_t>(n);
    p.a = a, p.a_rs = a_rs, p.a_cs = a_cs;
    p.b = b, p.b_rs = b_rs, p.b_cs = b_cs;
    p.c_rs = c_rs, p.c_cs = c_cs;
  }
}

}  // namespace

mmla_status fail(mmla_status status, std::string reason) {
  t_last_error = std::move(reason);
  return status;
}
mmla_status argument_error(const char* function, const ArgError& err) {
  return fail(MMLA_STATUS_INVALID_ARGUMENT,
              std::string(function) + ": argument " + std::to_string(err.position) + ": " + err.reason);
}

void clear_error() { t_last_error.clear(); }
const char* last_error() { return t_last_error.c_str(); }

bool blas_to_problem(int layout, int trans_a, int trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                     float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb,
                     float beta, float* c, std::int64_t ldc, bool allow_transpose, driver::GemmProblem* out,
                     ArgError* err) {
  const bool row = layout == MMLA_ROW_MAJOR;
  if (!row && layout != MMLA_COL_MAJOR)
    return reject(err, 1, "layout = " + str(layout) + " is neither row major (101) nor column major (102)");
  const auto valid_trans = [](int t) {
    return t == MMLA_NO_TRANS || t == MMLA_TRANS || t == MMLA_CONJ_TRANS;
  };
  if (!valid_trans(trans_a)) return reject(err, 2, "trans_a = " + str(trans_a) + " is not 111, 112 or 113");
  if (!valid_trans(trans_b)) return reject(err, 3, "trans_b = " + str(trans_b) + " is not 111, 112 or 113");
  if (m < 0) return reject(err, 4, "M = " + str(m) + " is negative");
  if (n < 0) return reject(err, 5, "N = " + str(n) + " is negative");
  if (k < 0) return reject(err, 6, "K = " + str(k) + " is negative");
  const bool ta = trans_a != MMLA_NO_TRANS, tb = trans_b != MMLA_NO_TRANS;
  // The stored shape of each operand and the minimum leading dimension that follows from it.
  const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const std::int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  const std::int64_t min_lda = std::max<std::int64_t>(1, row ? a_cols : a_rows);
  const std::int64_t min_ldb = std::max<std::int64_t>(1, row ? b_cols : b_rows);
  const std::int64_t min_ldc = std::max<std::int64_t>(1, row ? n : m);
  if (a == nullptr && m > 0 && k > 0)
    return reject(err, 8, "A is null but op(A) is " + str(m) + " x " + str(k));
  if (lda < min_lda) return reject(err, 9, "lda = " + str(lda) + " is smaller than " + str(min_lda));
  if (b == nullptr && k > 0 && n > 0)
    return reject(err, 10, "B is null but op(B) is " + str(k) + " x " + str(n));
  if (ldb < min_ldb) return reject(err, 11, "ldb = " + str(ldb) + " is smaller than " + str(min_ldb));
  if (c == nullptr && m > 0 && n > 0) return reject(err, 13, "C is null but C is " + str(m) + " x " + str(n));
  if (ldc < min_ldc) return reject(err, 14, "ldc = " + str(ldc) + " is smaller than " + str(min_ldc));
  // Element (i, j) of a stored row-major matrix is at i * ld + j, of a column-major one at
  // i + j * ld; a transpose swaps the roles of i and j.
  const auto strides = [row](bool trans, std::int64_t ld, std::int64_t* rs, std::int64_t* cs) {
    const bool unit_col = row != trans;
    *rs = unit_col ? ld : 1;
    *cs = unit_col ? 1 : ld;
  };
  std::int64_t a_rs, a_cs, b_rs, b_cs;
  strides(ta, lda, &a_rs, &a_cs);
  strides(tb, ldb, &b_rs, &b_cs);
  if (!extent_fits(a_rows, a_cols, row ? lda : 1, row ? 1 : lda))
    return reject(err, 9, "A's extent overflows the address space");
  if (!extent_fits(b_rows, b_cols, row ? ldb : 1, row ? 1 : ldb))
    return reject(err, 11, "B's extent overflows the address space");
  if (!extent_fits(m, n, row ? ldc : 1, row ? 1 : ldc))
    return reject(err, 14, "C's extent overflows the address space");
  // Strides made from valid leading dimensions are valid, and C's rows (columns) ldc apart do not
  // overlap: strided_to_problem's checks hold.
  fill_problem(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, row ? ldc : 1, row ? 1 : ldc,
               allow_transpose, out);
  return true;
}

bool strided_to_problem(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const void* a,
                        std::int64_t a_rs, std::int64_t a_cs, const void* b, std::int64_t b_rs,
                        std::int64_t b_cs, float beta, float* c, std::int64_t c_rs, std::int64_t c_cs,
                        bool allow_transpose, driver::GemmProblem* out, ArgError* err) {
  if (m < 0) return reject(err, 1, "m = " + str(m) + " is negative");
  if (n < 0) return reject(err, 2, "n = " + str(n) + " is negative");
  if (k < 0) return reject(err, 3, "k = " + str(k) + " is negative");
  // A stride only matters along a dimension longer than 1.
  const auto bad_stride = [](std::int64_t extent, std::int64_t stride) { return extent > 1 && stride < 1; };
  if (a == nullptr && m > 0 && k > 0) return reject(err, 5, "A is null but A is " + str(m) + " x " + str(k));
  if (bad_stride(m, a_rs) || bad_stride(k, a_cs) || !extent_fits(m, k, a_rs, a_cs))
    return reject(
        err, 6,
        "A's strides (" + str(a_rs) + ", " + str(a_cs) + ") are not valid for " + str(m) + " x " + str(k));
  if (b == nullptr && k > 0 && n > 0) return reject(err, 8, "B is null but B is " + str(k) + " x " + str(n));
  if (bad_stride(k, b_rs) || bad_stride(n, b_cs) || !extent_fits(k, n, b_rs, b_cs))
    return reject(
        err, 9,
        "B's strides (" + str(b_rs) + ", " + str(b_cs) + ") are not valid for " + str(k) + " x " + str(n));
  if (c == nullptr && m > 0 && n > 0) return reject(err, 12, "C is null but C is " + str(m) + " x " + str(n));
  if (bad_stride(m, c_rs) || bad_stride(n, c_cs) || !extent_fits(m, n, c_rs, c_cs))
    return reject(
        err, 13,
        "C's strides (" + str(c_rs) + ", " + str(c_cs) + ") are not valid for " + str(m) + " x " + str(n));

  // Distinct (i, j) must be distinct elements: rows (or columns) must not interleave.
  const auto no_overlap = [](std::int64_t outer_stride, std::int64_t inner_extent,
                             std::int64_t inner_stride) {
    std::int64_t span = 0;
    return !__builtin_mul_overflow(inner_extent, inner_stride, &span) && outer_stride >= span;
  };
  if (m > 1 && n > 1 && !no_overlap(c_rs, n, c_cs) && !no_overlap(c_cs, m, c_rs))
    return reject(err, 13,
                  "C's strides (" + str(c_rs) + ", " + str(c_cs) + ") make elements of the " + str(m) +
                      " x " + str(n) + " result overlap");

  fill_problem(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs, allow_transpose, out);
  return true;
}

namespace {
double padded(std::size_t v, int r) {
  const auto u = static_cast<std::size_t>(r);
  return static_cast<double>((v + u - 1) / u * u);
}
}  // namespace

const Selection::Tile& Selection::tile_for(std::size_t m, std::size_t n) const {
  // The least padded area of C; of equal areas, the fewest padded columns: a partial panel of B is
  // packed where whole ones are read in place, and stored through masks (8x64x64: 12x32 0.50-0.57
  // us a call, 8x48 0.69).
  const Tile* best = &tiles.front();
  double best_area = std::numeric_limits<double>::infinity(), best_width = best_area;
  for (const Tile& t : tiles) {
    const double width = padded(n, t.kernel->nr), area = padded(m, t.kernel->mr) * width;
    if (area < best_area || (area == best_area && width < best_width))
      best = &t, best_area = area, best_width = width;
  }
  return *best;
}

const Selection::Tile& Selection::tile_for_columns(std::size_t n) const {
  const Tile* best = &tiles.front();
  double best_width = std::numeric_limits<double>::infinity();
  for (const Tile& t : tiles) {
    const double width = padded(n, t.kernel->nr);
    if (width < best_width) best = &t, best_width = width;
  }
  return *best;
}

namespace {
Selection make_selection(ukernel::Family family) {
  Selection s;
  s.kernel = ukernel::choose(family, &s.why);
  if (s.kernel == nullptr) return s;
  for (const ukernel::GemmKernel* k : ukernel::all_kernels())
    if (k->family == family && k->isa == s.kernel->isa && ukernel::usable(*k))
      s.tiles.push_back({k, driver::blocking_for(*k, cpu::info())});
  s.blocking = s.tiles.front().blocking;
  return s;
}
}  // namespace

const Selection& selection(ukernel::Family family) {
  static const Selection kF32 = make_selection(ukernel::Family::gemm_f32_f32p_f32p);
  static const Selection kBf16 = make_selection(ukernel::Family::gemm_f32_bf16p_bf16p);
  return family == ukernel::Family::gemm_f32_bf16p_bf16p ? kBf16 : kF32;
}

// The M from which a bf16 kernel beats the fp32 one, B converted per call included (docs/numerics.md
// has the measurements). AMX (32-row tiles, vectorised packers; Golden Cove VM): bf16 inputs M = 2
// 0.9-1.1x, M = 4 1.0-1.3x; fp32 inputs (fast math) M = 8 0.5-1.1x, M = 16 1.0-1.4x. AVX512_BF16
// (Zen 4): with bf16 inputs it is faster at every M (copying bf16 B costs less than widening it);
// with fp32 inputs M = 8 loses to the fp32 kernel reading B in place (0.6-0.8x), M = 16 wins
// (1.4-1.9x); with fp32 inputs and a B from memory, which the fp32 kernel reads in place in
// shallow K blocks, M = 16 loses (16x4096x4096 0.87-0.91x) and M = 24 wins (1.08x). Arm BFMMLA:
// the first AMX figures (scalar packers then) until measured on hardware. AMX wins from M = 2 with
// a bf16 B whose rows it reads in place (GemmKernel::gemm_b_rows: 2x768x768 23 -> 92 GFLOPS,
// 2x4096x4096 12 -> 48) or whose columns are contiguous (x W^T, its transposing packer; the fp32
// kernel's packer takes such a B at 5-6 GB/s: mmla-bench --trans-b 2x768x768 8.0 -> 34-36,
// 3x4096x4096 4.5 -> 30-31). Likewise fast math with a column-major B, which the fp32 kernel packs
// slowly: AMX from M = 2 (mmla-bench --trans-b, 8x768x768 40-41 -> 69-76, 15x768x768 62-63 -> 129-147,
// 8x4096x4096 14-15 -> 27; 8x64x64 1.09x), not at depths that AMX's chunks of 32 pad (2x100x33
// and 15x65x7 ran at 0.57x).
struct Bf16MinRows {
  std::size_t bf16_in, f32_in, f32_in_b_from_memory;
  std::size_t bf16_in_unit_stride_b = 0;        // bf16 inputs, B row- or column-major (0: bf16_in)
  std::size_t f32_in_column_major_b = 0;        // fp32 inputs, B column-major (0: f32_in*) ...
  std::size_t f32_in_column_major_b_min_k = 0;  // ... from this depth
};
Bf16MinRows bf16_min_rows() {
  const Selection& bf = selection(ukernel::Family::gemm_f32_bf16p_bf16p);
  if (bf.kernel != nullptr && bf.kernel->isa == cpu::Isa::avx512bf16) return {1, 16, 24};
  if (bf.kernel != nullptr && bf.kernel->isa == cpu::Isa::amx) return {4, 16, 16, 2, 2, 64};
  return {64, 256, 256};
}

bool bf16_hardware() {
  const Selection& bf = selection(ukernel::Family::gemm_f32_bf16p_bf16p);
  return bf.kernel != nullptr && bf.kernel->isa != cpu::Isa::ref;
}

const GemvSelection& gemv_selection() {
  static const GemvSelection kSel = [] {
    GemvSelection s;
    s.kernel = ukernel::choose_gemv(ukernel::Family::gemv_f32_f32_f32, &s.why);
    return s;
  }();
  return kSel;
}

const std::string& environment_error() {
  if (!cpu::cap().error.empty()) return cpu::cap().error;
  if (!fpmath_env_error().empty()) return fpmath_env_error();
  return num_threads_env_error();
}

mmla_status run_gemm(const driver::GemmProblem& p) {
  // An invalid MMLA_ISA or MMLA_FPMATH_MODE fails every call, even one with nothing to compute.
  if (const std::string& e = environment_error(); !e.empty()) return fail(MMLA_STATUS_INVALID_ENVIRONMENT, e);
  // bf16 inputs, or fp32 in fast-math mode, go to a bf16 kernel where the CPU has BF16 instructions
  // and M is large enough for the faster products to pay for converting B while packing it (each
  // call converts all of B: K x N work against M x N x K). Elsewhere the fp32 kernels run: widening
  // bf16 is exact and costs nothing, and fast math computes as strict (the portable bf16 kernel is
  // a test reference, never faster than fp32). A prepacked B keeps the kernel it was packed for.
  const bool bf16_in = p.src == ukernel::Elem::bf16;
  const Bf16MinRows min_rows = bf16_min_rows();
  const std::size_t bf16_in_min_rows = min_rows.bf16_in_unit_stride_b != 0 && (p.b_cs == 1 || p.b_rs == 1)
                                           ? min_rows.bf16_in_unit_stride_b
                                           : min_rows.bf16_in;
  const bool bf16 = p.b_packed == nullptr && bf16_hardware() &&
                    (bf16_in ? p.m >= bf16_in_min_rows
                             : fpmath_mode() == MMLA_FPMATH_BF16 &&
                                   p.m >= (min_rows.f32_in_column_major_b != 0 && p.b_rs == 1 &&
                                                   p.b_cs != 1 && p.k >= min_rows.f32_in_column_major_b_min_k
                                               ? min_rows.f32_in_column_major_b
                                           : driver::b_from_memory(p) ? min_rows.f32_in_b_from_memory
                                                                      : min_rows.f32_in));
  const Selection& s =
      selection(bf16 ? ukernel::Family::gemm_f32_bf16p_bf16p : ukernel::Family::gemm_f32_f32p_f32p);
  if (p.m == 0 || p.n == 0) return MMLA_STATUS_SUCCESS;
  // bf16 inputs take the GEMV when no bf16 kernel would run (no bf16 hardware, or an M below the
  // kernel's gate, as with AMX: there the fp32 kernel would widen B while packing it, 1x3072x768
  // 7.8 GFLOPS) or when its matrix streams from beyond the L3 share. With it in cache the AVX512_BF16
  // kernel reading B in place was faster at M = 1 (mmla-bench, 1 thread, GFLOPS, GEMV vs kernel:
  // 1x768x768 37 vs 53-67, 1x768x3072 36 vs 50-57, 1x3072x768 37 vs 31-39), from DRAM slower
  // (1x4096x4096 19 vs 8-11). The GEMV also takes a prepacked B in the layouts it streams (fp32
  // panels, and the bf16 depth pairs of the AVX512_BF16 kernels), with fp32 or bf16 A.
  constexpr std::size_t kBf16GemvMinBytes = 16u << 20;
  const bool gemv_pays = !bf16_in || !bf16 || p.b_packed != nullptr ||
                         p.k * (p.m == 1 ? p.n : p.m) * sizeof(std::uint16_t) >= kBf16GemvMinBytes;
  // The dots (few rows or columns whose lines lie along K, driver::dots_applicable) give way to a
  // bf16 kernel past a few lines. AMX, mmla-bench --trans-b, 1 thread, GFLOPS, bf16 kernel vs dots:
  // in fast math past 8 (8x768x768 61-66 vs 87-88, 8x3072x768 53-59 vs 77-81, 16x768x768 89-118 vs
  // 89-91, 32x768x768 158-218 vs 100-105); with bf16 inputs, which the AMX kernel takes without
  // converting them, past 4 (2x768x768 40-41 vs 84-85, 4x768x768 80-81 vs 108-110, 8x768x768
  // 155-158 vs 122-124), or past 8 where the streamed operand outgrows the L2 (8x768x3072 93-94 vs
  // 116, 8x4096x4096 80 vs 104-107, 8x3072x768 109-110 vs 111).
  const std::size_t dots_lines = driver::dots_x_is_b(p) ? p.m : p.n;
  const std::size_t dots_x_bytes =
      p.k * (driver::dots_x_is_b(p) ? p.n : p.m) * ukernel::kElemBytes[static_cast<int>(p.src)];
  const std::size_t dots_max_lines_over_bf16 = !bf16_in || dots_x_bytes > cpu::info().caches.l2 ? 8 : 4;
  const bool dots = driver::dots_applicable(p) && (!bf16 || dots_lines <= dots_max_lines_over_bf16);
  if ((((p.m == 1 || p.n == 1) && gemv_pays) || dots) && gemv_selection().kernel != nullptr) {
    switch (driver::gemv_threaded(*gemv_selection().kernel, p, num_threads())) {
      case driver::Status::ok: return MMLA_STATUS_SUCCESS;
      case driver::Status::out_of_memory:
        return fail(MMLA_STATUS_OUT_OF_MEMORY, "could not allocate GEMV scratch");
      case driver::Status::not_applicable: break;  // no unit stride to stream along: the GEMM path
    }
  }
  // A prepacked B fixes the kernel (its family's tile with that kernel, and that tile's blocking).
  const Selection& ps = p.b_packed != nullptr ? selection(p.b_layout->kernel->family) : s;
  const Selection::Tile* packed_tile = nullptr;
  if (p.b_packed != nullptr)
    for (const Selection::Tile& t : ps.tiles)
      if (t.kernel == p.b_layout->kernel) packed_tile = &t;
  if (p.b_packed != nullptr && packed_tile == nullptr)
    return fail(MMLA_STATUS_INTERNAL_ERROR, "the packed kernel is not in its family's tile set");
  const Selection::Tile& tile = p.b_packed != nullptr ? *packed_tile : s.tile_for(p.m, p.n);
  if (driver::gemm_threaded(*tile.kernel, tile.blocking, p, num_threads()) != driver::Status::ok)
    return fail(MMLA_STATUS_OUT_OF_MEMORY, "could not allocate the packing buffers");
  return MMLA_STATUS_SUCCESS;
}

}  // namespace mmla::api
