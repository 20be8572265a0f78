// The C++ API: strided matrix views and mmla::gemm, over the C API (errors become mmla::Error).
#ifndef MMLA_MMLA_HPP
#define MMLA_MMLA_HPP

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "mmla/mmla.h"

namespace mmla {

// A bfloat16 value as its bits (the upper half of an IEEE fp32), layout-compatible with mmla_bfloat16.
struct bfloat16 {
  std::uint16_t bits;
};
static_assert(sizeof(bfloat16) == sizeof(mmla_bfloat16), "bfloat16 must be 16 bits");

// fp32 math mode (see mmla_fpmath_mode); for a per-call override pass it to gemm().
enum class FpMath {
  process_default = MMLA_FPMATH_DEFAULT,
  strict = MMLA_FPMATH_STRICT,
  bf16 = MMLA_FPMATH_BF16
};

// Thrown for every non-success status; status() says which.
class Error : public std::runtime_error {
 public:
  Error(mmla_status status, const std::string& what) : std::runtime_error(what), status_(status) {}
  mmla_status status() const noexcept { return status_; }

 private:
  mmla_status status_;
};

// A rows x cols matrix whose element (i, j) is data[i * row_stride + j * col_stride].
template <class T>
struct MatrixView {
  T* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 0;

  MatrixView() = default;
  MatrixView(T* d, std::int64_t r, std::int64_t c, std::int64_t rs, std::int64_t cs)
      : data(d), rows(r), cols(c), row_stride(rs), col_stride(cs) {}
  // A view of non-const data converts to a view of const data.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  MatrixView(const MatrixView<U>& o)  // NOLINT: implicit on purpose
      : data(o.data), rows(o.rows), cols(o.cols), row_stride(o.row_stride), col_stride(o.col_stride) {}

  // Row-major rows x cols with leading dimension ld (default: cols); ld < cols throws.
  static MatrixView row_major(T* d, std::int64_t rows, std::int64_t cols) {
    return row_major(d, rows, cols, cols);
  }
  static MatrixView row_major(T* d, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    check_ld("row_major", ld, cols);
    return {d, rows, cols, ld, 1};
  }
  // Column-major rows x cols with leading dimension ld (default: rows); ld < rows throws.
  static MatrixView col_major(T* d, std::int64_t rows, std::int64_t cols) {
    return col_major(d, rows, cols, rows);
  }
  static MatrixView col_major(T* d, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    check_ld("col_major", ld, rows);
    return {d, rows, cols, 1, ld};
  }
  // The transpose, without moving data.
  MatrixView t() const { return {data, cols, rows, col_stride, row_stride}; }
  T& operator()(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }

 private:
  static void check_ld(const char* what, std::int64_t ld, std::int64_t extent) {
    if (ld < 1 || ld < extent)
      throw Error(MMLA_STATUS_INVALID_ARGUMENT,
                  std::string("mmla::MatrixView::") + what + ": leading dimension " + std::to_string(ld) +
                      " is smaller than " + std::to_string(extent < 1 ? 1 : extent));
  }
};

namespace detail {
inline void check(mmla_status s) {
  if (s != MMLA_STATUS_SUCCESS) throw Error(s, mmla_last_error());
}

// a (m x k) times b (k x n) into c (m x n), or the error naming all three shapes.
inline void check_shapes(std::int64_t a_rows, std::int64_t a_cols, const char* b_name, std::int64_t b_rows,
                         std::int64_t b_cols, std::int64_t c_rows, std::int64_t c_cols) {
  if (a_rows != c_rows || b_cols != c_cols || a_cols != b_rows)
    throw Error(MMLA_STATUS_INVALID_ARGUMENT, "mmla::gemm: shapes do not match: a is " +
                                                  std::to_string(a_rows) + " x " + std::to_string(a_cols) +
                                                  ", " + b_name + " is " + std::to_string(b_rows) + " x " +
                                                  std::to_string(b_cols) + ", c is " +
                                                  std::to_string(c_rows) + " x " + std::to_string(c_cols));
}
}  // namespace detail

// c = alpha * a * b + beta * c. a is m x k, b is k x n, c is m x n (views may be transposed with
// .t()). beta == 0 writes c without reading it. Throws mmla::Error on mismatched shapes or invalid
// views, leaving c untouched.
inline void gemm(float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                 MatrixView<float> c) {
  detail::check_shapes(a.rows, a.cols, "b", b.rows, b.cols, c.rows, c.cols);
  detail::check(mmla_sgemm_strided(c.rows, c.cols, a.cols, alpha, a.data, a.row_stride, a.col_stride, b.data,
                                   b.row_stride, b.col_stride, beta, c.data, c.row_stride, c.col_stride));
}

// c = a * b
inline void gemm(MatrixView<const float> a, MatrixView<const float> b, MatrixView<float> c) {
  gemm(1.0f, a, b, 0.0f, c);
}

// Sets this thread's fp-math mode for its lifetime and restores the previous one (RAII).
class ScopedFpMath {
 public:
  explicit ScopedFpMath(FpMath mode) : previous_(mmla_get_thread_fpmath_mode()) {
    detail::check(mmla_set_thread_fpmath_mode(static_cast<mmla_fpmath_mode>(mode)));
  }
  ScopedFpMath(const ScopedFpMath&) = delete;
  ScopedFpMath& operator=(const ScopedFpMath&) = delete;
  ~ScopedFpMath() { mmla_set_thread_fpmath_mode(previous_); }

 private:
  mmla_fpmath_mode previous_;
};

// gemm with this call's fp-math mode overriding the thread's and the process's.
inline void gemm(float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                 MatrixView<float> c, FpMath mode) {
  const ScopedFpMath scope(mode);
  gemm(alpha, a, b, beta, c);
}

// c = alpha * a * b + beta * c with bf16 a and b, fp32 accumulation and c (mmla_sbgemm).
inline void gemm(float alpha, MatrixView<const bfloat16> a, MatrixView<const bfloat16> b, float beta,
                 MatrixView<float> c) {
  detail::check_shapes(a.rows, a.cols, "b", b.rows, b.cols, c.rows, c.cols);
  detail::check(mmla_sbgemm_strided(c.rows, c.cols, a.cols, alpha,
                                    reinterpret_cast<const mmla_bfloat16*>(a.data), a.row_stride,
                                    a.col_stride, reinterpret_cast<const mmla_bfloat16*>(b.data),
                                    b.row_stride, b.col_stride, beta, c.data, c.row_stride, c.col_stride));
}

namespace detail {
// Expresses a view as a BLAS operand in row-major layout: (transposed?, leading dimension). A view
// without a unit stride has no such form.
template <class T>
void blas_form(const MatrixView<T>& v, const char* what, mmla_transpose* trans, std::int64_t* ld) {
  const std::int64_t rs = v.rows <= 1 ? (v.cols > 1 ? v.cols : 1) * v.col_stride : v.row_stride;
  const std::int64_t cs = v.cols <= 1 ? 1 : v.col_stride;
  if (cs == 1) {
    *trans = MMLA_NO_TRANS, *ld = rs > 0 ? rs : 1;
  } else if (rs == 1 || v.rows <= 1) {
    *trans = MMLA_TRANS, *ld = cs;
  } else {
    throw Error(MMLA_STATUS_INVALID_ARGUMENT,
                std::string("mmla: ") + what + " needs a unit stride in one dimension for this call");
  }
}
}  // namespace detail

// Weights packed once into the layout of the kernel chosen at run time (see mmla_pack_b), for any
// number of gemm() calls with different A. Move-only; frees the packed data when destroyed.
class PackedMatrix {
 public:
  // Packs b (k x n); b needs a unit stride in one dimension.
  explicit PackedMatrix(MatrixView<const float> b) : rows_(b.rows), cols_(b.cols) {
    mmla_transpose trans;
    std::int64_t ld;
    detail::blas_form(b, "PackedMatrix: b", &trans, &ld);
    detail::check(mmla_pack_b(MMLA_ROW_MAJOR, trans, b.rows, b.cols, b.data, ld, &handle_));
  }
  // Packs bf16 weights (mmla_pack_b_bf16: kept as bf16 where the CPU has a bf16 kernel).
  explicit PackedMatrix(MatrixView<const bfloat16> b) : rows_(b.rows), cols_(b.cols) {
    mmla_transpose trans;
    std::int64_t ld;
    detail::blas_form(b, "PackedMatrix: b", &trans, &ld);
    detail::check(mmla_pack_b_bf16(MMLA_ROW_MAJOR, trans, b.rows, b.cols,
                                   reinterpret_cast<const mmla_bfloat16*>(b.data), ld, &handle_));
  }
  PackedMatrix(const PackedMatrix&) = delete;
  PackedMatrix& operator=(const PackedMatrix&) = delete;
  PackedMatrix(PackedMatrix&& o) noexcept : handle_(o.handle_), rows_(o.rows_), cols_(o.cols_) {
    o.handle_ = nullptr;
  }
  PackedMatrix& operator=(PackedMatrix&& o) noexcept {
    if (this != &o) {
      mmla_packed_free(handle_);
      handle_ = o.handle_, rows_ = o.rows_, cols_ = o.cols_;
      o.handle_ = nullptr;
    }
    return *this;
  }
  ~PackedMatrix() { mmla_packed_free(handle_); }

  std::int64_t rows() const noexcept { return rows_; }  // k
  std::int64_t cols() const noexcept { return cols_; }  // n
  std::size_t bytes() const {
    std::size_t b = 0;
    detail::check(mmla_packed_size(handle_, &b));
    return b;
  }
  const mmla_packed_matrix* get() const noexcept { return handle_; }

 private:
  mmla_packed_matrix* handle_ = nullptr;
  std::int64_t rows_ = 0, cols_ = 0;
};

namespace detail {
// a (fp32 or bf16) times a prepacked b in BLAS form: a row-major C as is; a column-major C is the
// row-major C^T, so everything is described transposed.
template <class T, class Call>
void gemm_packed(MatrixView<const T> a, const PackedMatrix& b, MatrixView<float> c, Call call) {
  check_shapes(a.rows, a.cols, "packed b", b.rows(), b.cols(), c.rows, c.cols);
  mmla_transpose tc, ta;
  std::int64_t ldc, lda;
  blas_form(c, "c", &tc, &ldc);
  const bool row = tc == MMLA_NO_TRANS;
  blas_form(row ? a : a.t(), "a", &ta, &lda);
  check(call(row ? MMLA_ROW_MAJOR : MMLA_COL_MAJOR, ta, lda, ldc));
}
}  // namespace detail

// c = alpha * a * b + beta * c with prepacked b. a and c need a unit stride in one dimension.
inline void gemm(float alpha, MatrixView<const float> a, const PackedMatrix& b, float beta,
                 MatrixView<float> c) {
  detail::gemm_packed(a, b, c,
                      [&](mmla_layout layout, mmla_transpose ta, std::int64_t lda, std::int64_t ldc) {
                        return mmla_gemm_packed(layout, ta, a.rows, c.cols, a.cols, alpha, a.data, lda,
                                                b.get(), beta, c.data, ldc);
                      });
}

// The same with bf16 a (mmla_sbgemm_packed).
inline void gemm(float alpha, MatrixView<const bfloat16> a, const PackedMatrix& b, float beta,
                 MatrixView<float> c) {
  detail::gemm_packed(a, b, c,
                      [&](mmla_layout layout, mmla_transpose ta, std::int64_t lda, std::int64_t ldc) {
                        return mmla_sbgemm_packed(layout, ta, a.rows, c.cols, a.cols, alpha,
                                                  reinterpret_cast<const mmla_bfloat16*>(a.data), lda,
                                                  b.get(), beta, c.data, ldc);
                      });
}

inline std::string config() { return mmla_get_config(); }
inline std::string version() { return mmla_version(); }

}  // namespace mmla

#endif  // MMLA_MMLA_HPP
