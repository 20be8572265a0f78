// Prepacked weights (include/mmla/mmla.h): pack B once in the chosen kernel's layout, multiply any A.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "api/packed.hpp"
#include "api/problem.hpp"
#include "mmla/mmla.h"
#include "ukernel/registry.hpp"

using mmla::api::ArgError;

namespace {

constexpr std::uint64_t kAlive = mmla_packed_matrix::kAlive;

bool reject(ArgError* err, int position, std::string reason) {
  err->position = position;
  err->reason = std::move(reason);
  return false;
}

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

namespace {

// The kernel a prepacked B is laid out for: bf16 where the CPU has a bf16 kernel and either B comes
// as bf16 or fast math is in force when packing (no M threshold: B's conversion is paid once);
// the fp32 kernel otherwise (bf16 widened exactly).
const mmla::api::Selection& packed_selection(bool from_bf16) {
  const bool bf16 = mmla::api::bf16_hardware() && (from_bf16 || mmla::api::fpmath_mode() == MMLA_FPMATH_BF16);
  return mmla::api::selection(bf16 ? mmla::ukernel::Family::gemm_f32_bf16p_bf16p
                                   : mmla::ukernel::Family::gemm_f32_f32p_f32p);
}

mmla_status pack_b(const char* fname, mmla_layout layout, mmla_transpose trans_b, int64_t k, int64_t n,
                   const void* b, int64_t ldb, bool from_bf16, mmla_packed_matrix** packed) {
  mmla::api::clear_error();
  ArgError err;
  if (packed == nullptr) {
    reject(&err, 7, "the output handle pointer is null");
    return mmla::api::argument_error(fname, err);
  }
  *packed = nullptr;
  // op(B) is the k x n right operand of a row-major product; check it as mmla_sgemm would, with a
  // 1 x k A and 1 x n C standing in.
  const bool row = layout == MMLA_ROW_MAJOR;
  const float dummy = 0.0f;
  float dummy_c = 0.0f;
  mmla::driver::GemmProblem p;
  // Positions in mmla_sgemm's signature -> positions in mmla_pack_b's.
  const auto position = [](int sgemm_position) {
    switch (sgemm_position) {
      case 1: return 1;   // layout
      case 3: return 2;   // trans_b
      case 5: return 4;   // n
      case 6: return 3;   // k
      case 10: return 5;  // b
      case 11: return 6;  // ldb
      default: return 0;  // the stand-ins cannot be wrong
    }
  };
  if (!mmla::api::blas_to_problem(layout, MMLA_NO_TRANS, trans_b, 1, n, k, 1.0f, &dummy,
                                  row ? std::max<int64_t>(k, 1) : 1, b, ldb, 0.0f, &dummy_c,
                                  row ? std::max<int64_t>(n, 1) : 1, false, &p, &err)) {
    err.position = position(err.position);
    return mmla::api::argument_error(fname, err);
  }
  if (const std::string& e = mmla::api::environment_error(); !e.empty())
    return mmla::api::fail(MMLA_STATUS_INVALID_ENVIRONMENT, e);

  const mmla::api::Selection& sel = packed_selection(from_bf16);
  auto* h = new (std::nothrow) mmla_packed_matrix{};
  if (h == nullptr)
    return mmla::api::fail(MMLA_STATUS_OUT_OF_MEMORY, std::string(fname) + ": no memory for the handle");
  // The tile that pads n least (m is not known yet); any tile of the set may run it.
  const mmla::api::Selection::Tile& tile = sel.tile_for_columns(static_cast<std::size_t>(n));
  h->layout.kernel = tile.kernel;
  h->layout.k = static_cast<std::size_t>(k);
  h->layout.n = static_cast<std::size_t>(n);
  // The many-rows KC and NC (driver/blocking.cpp), K in blocks of equal depth.
  h->layout.kc =
      mmla::driver::balanced_depth(h->layout.k, tile.blocking.kc, mmla::driver::depth_round(*tile.kernel));
  h->layout.nc = tile.blocking.nc;
  if (k > 0 && n > 0) {
    h->bytes = h->layout.bytes();
    const std::size_t rounded = (h->bytes + 63) / 64 * 64;
    h->data = std::aligned_alloc(64, rounded);
    if (h->data == nullptr) {
      delete h;
      return mmla::api::fail(MMLA_STATUS_OUT_OF_MEMORY, std::string(fname) + ": could not allocate " +
                                                            std::to_string(rounded) + " bytes");
    }
    mmla::driver::pack_b_whole(h->layout, from_bf16 ? mmla::ukernel::Elem::bf16 : mmla::ukernel::Elem::f32,
                               p.b, p.b_rs, p.b_cs, h->data);
  }
  h->from_bf16 = from_bf16;
  h->magic = kAlive;
  *packed = h;
  return MMLA_STATUS_SUCCESS;
}

// One body for both A element types (B's is the handle's): check A and C, the handle and its shape, run.
mmla_status gemm_packed(const char* fname, mmla::ukernel::Elem src, mmla_layout layout,
                        mmla_transpose trans_a, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                        int64_t lda, const mmla_packed_matrix* b, float beta, float* c, int64_t ldc) {
  mmla::api::clear_error();
  ArgError err;
  if (b == nullptr || b->magic != kAlive) {
    reject(&err, 9, "B is not a live packed matrix (null, freed, or not made by mmla_pack_b)");
    return mmla::api::argument_error(fname, err);
  }
  // Check A and C as mmla_sgemm would, with the handle standing in for a plain B it never reads.
  const bool row = layout == MMLA_ROW_MAJOR;
  const int64_t ldb = std::max<int64_t>(1, row ? n : k);
  mmla::driver::GemmProblem p;
  const auto position = [](int sgemm_position) {
    switch (sgemm_position) {
      case 1: return 1;    // layout
      case 2: return 2;    // trans_a
      case 4: return 3;    // m
      case 5: return 4;    // n
      case 6: return 5;    // k
      case 8: return 7;    // a
      case 9: return 8;    // lda
      case 13: return 11;  // c
      case 14: return 12;  // ldc
      default: return 9;   // b
    }
  };
  if (!mmla::api::blas_to_problem(layout, trans_a, MMLA_NO_TRANS, m, n, k, alpha, a, lda,
                                  static_cast<const void*>(b), ldb, beta, c, ldc, false, &p, &err)) {
    err.position = position(err.position);
    return mmla::api::argument_error(fname, err);
  }
  if (static_cast<std::size_t>(k) != b->layout.k || static_cast<std::size_t>(n) != b->layout.n) {
    reject(&err, static_cast<std::size_t>(k) != b->layout.k ? 5 : 4,
           "B was packed as " + str(static_cast<int64_t>(b->layout.k)) + " x " +
               str(static_cast<int64_t>(b->layout.n)) + " (k x n), but the call has k = " + str(k) +
               ", n = " + str(n));
    return mmla::api::argument_error(fname, err);
  }
  if (const std::string& e = mmla::api::environment_error(); !e.empty())
    return mmla::api::fail(MMLA_STATUS_INVALID_ENVIRONMENT, e);
  const mmla::api::Selection& sel = packed_selection(b->from_bf16);
  if (std::none_of(sel.tiles.begin(), sel.tiles.end(),
                   [&](const mmla::api::Selection::Tile& t) { return t.kernel == b->layout.kernel; })) {
    reject(&err, 9,
           std::string("B was packed for kernel ") + b->layout.kernel->name +
               ", but this call uses the tiles of " + sel.kernel->name);
    return mmla::api::argument_error(fname, err);
  }
  p.b = nullptr;
  p.b_rs = p.b_cs = 0;
  p.b_packed = b->data;
  p.b_layout = &b->layout;
  p.src = src;
  return mmla::api::run_gemm(p);
}

}  // namespace

extern "C" {

MMLA_API mmla_status mmla_pack_b(mmla_layout layout, mmla_transpose trans_b, int64_t k, int64_t n,
                                 const float* b, int64_t ldb, mmla_packed_matrix** packed) {
  return pack_b("mmla_pack_b", layout, trans_b, k, n, b, ldb, false, packed);
}

MMLA_API mmla_status mmla_pack_b_bf16(mmla_layout layout, mmla_transpose trans_b, int64_t k, int64_t n,
                                      const mmla_bfloat16* b, int64_t ldb, mmla_packed_matrix** packed) {
  return pack_b("mmla_pack_b_bf16", layout, trans_b, k, n, b, ldb, true, packed);
}

MMLA_API mmla_status mmla_packed_size(const mmla_packed_matrix* packed, size_t* bytes) {
  mmla::api::clear_error();
  ArgError err;
  if (packed == nullptr || packed->magic != kAlive) {
    reject(&err, 1, "not a live packed matrix (null, freed, or not made by mmla_pack_b)");
    return mmla::api::argument_error("mmla_packed_size", err);
  }
  if (bytes == nullptr) {
    reject(&err, 2, "the output pointer is null");
    return mmla::api::argument_error("mmla_packed_size", err);
  }
  *bytes = packed->bytes;
  return MMLA_STATUS_SUCCESS;
}

MMLA_API mmla_status mmla_gemm_packed(mmla_layout layout, mmla_transpose trans_a, int64_t m, int64_t n,
                                      int64_t k, float alpha, const float* a, int64_t lda,
                                      const mmla_packed_matrix* b, float beta, float* c, int64_t ldc) {
  return gemm_packed("mmla_gemm_packed", mmla::ukernel::Elem::f32, layout, trans_a, m, n, k, alpha, a, lda, b,
                     beta, c, ldc);
}

MMLA_API mmla_status mmla_sbgemm_packed(mmla_layout layout, mmla_transpose trans_a, int64_t m, int64_t n,
                                        int64_t k, float alpha, const mmla_bfloat16* a, int64_t lda,
                                        const mmla_packed_matrix* b, float beta, float* c, int64_t ldc) {
  return gemm_packed("mmla_sbgemm_packed", mmla::ukernel::Elem::bf16, layout, trans_a, m, n, k, alpha, a, lda,
                     b, beta, c, ldc);
}

MMLA_API void mmla_packed_free(mmla_packed_matrix* packed) {
  if (packed == nullptr) return;
  packed->magic = 0;
  std::free(packed->data);
  delete packed;
}

}  // extern "C"
