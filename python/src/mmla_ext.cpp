// mmla._mmla: the Python binding of the C API. It only walks batch indices and hands strided views
// to mmla_sgemm_strided / mmla_sbgemm_strided (and BLAS-form views to mmla_gemm_packed /
// mmla_sbgemm_packed); shapes, dtypes, broadcasting and `out` are checked and prepared by
// python/mmla/_core.py. The GIL is released while mmla computes.
#include <mmla/mmla.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<float, nb::device::cpu>;

[[noreturn]] void raise(mmla_status s, const std::string& msg) {
  if (s == MMLA_STATUS_OUT_OF_MEMORY) throw std::bad_alloc();
  if (s == MMLA_STATUS_INVALID_ARGUMENT) throw nb::value_error(msg.c_str());
  throw std::runtime_error("mmla: " + std::string(mmla_status_string(s)) + ": " + msg);
}

void check(mmla_status s) {
  if (s != MMLA_STATUS_SUCCESS) raise(s, mmla_last_error());
}

// A call's status with its message, taken before anything else (restoring the fp-math override
// clears the thread's last error).
struct Outcome {
  mmla_status status = MMLA_STATUS_SUCCESS;
  std::string message;
  void set(mmla_status s) {
    status = s;
    if (s != MMLA_STATUS_SUCCESS) message = mmla_last_error();
  }
  void check() const {
    if (status != MMLA_STATUS_SUCCESS) raise(status, message);
  }
};

// Sets the calling thread's fp-math override for one call and restores the previous one.
class ThreadFpmath {
 public:
  explicit ThreadFpmath(int mode) : active_(mode >= 0) {
    if (!active_) return;
    prev_ = mmla_get_thread_fpmath_mode();
    check(mmla_set_thread_fpmath_mode(static_cast<mmla_fpmath_mode>(mode)));
  }
  ~ThreadFpmath() {
    if (active_) mmla_set_thread_fpmath_mode(prev_);
  }
  ThreadFpmath(const ThreadFpmath&) = delete;
  ThreadFpmath& operator=(const ThreadFpmath&) = delete;

 private:
  bool active_;
  mmla_fpmath_mode prev_ = MMLA_FPMATH_DEFAULT;
};

// A stride the C API accepts: any value is fine along a dimension of length 1, but it wants >= 1.
int64_t usable_stride(int64_t stride, int64_t extent) { return extent <= 1 ? 1 : stride; }

// Whether batch dims [0, nb) and the row dim (index nb) of x collapse into one row dimension of
// stride x.stride(nb): then a batch of GEMMs with a shared B is one GEMM with batch * m rows.
template <class Array>
bool rows_fold(const Array& x, std::size_t nb) {
  int64_t expect = x.stride(nb) * static_cast<int64_t>(x.shape(nb));
  for (std::size_t d = nb; d-- > 0;) {
    if (x.shape(d) == 1) continue;
    if (x.stride(d) != expect) return false;
    expect *= static_cast<int64_t>(x.shape(d));
  }
  return true;
}

// Calls fn(idx) for every batch index of out's dims [0, nb), last dim fastest, until fn returns false.
template <class Fn>
void for_each_batch(const OutArray& out, std::size_t nb, Fn fn) {
  std::size_t batch = 1;
  for (std::size_t d = 0; d < nb; ++d) batch *= out.shape(d);
  std::vector<std::size_t> idx(nb, 0);
  for (std::size_t t = 0; t < batch && fn(idx); ++t) {
    for (std::size_t d = nb; d-- > 0;) {
      if (++idx[d] < out.shape(d)) break;
      idx[d] = 0;
    }
  }
}

// Element offset of batch index idx in x.
template <class Array>
int64_t batch_offset(const Array& x, const std::vector<std::size_t>& idx) {
  int64_t o = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) o += static_cast<int64_t>(idx[d]) * x.stride(d);
  return o;
}

// A rows x cols view (element strides rs, cs) as a row-major BLAS operand: itself (unit column
// stride, ld = rs) or its transpose (unit row stride, ld = cs); false when it has neither.
bool blas_form(int64_t rows, int64_t cols, int64_t rs, int64_t cs, mmla_transpose* trans, int64_t* ld) {
  const bool as_is = cols <= 1 || cs == 1;
  if (!as_is && !(rows <= 1 || rs == 1)) return false;
  *trans = as_is ? MMLA_NO_TRANS : MMLA_TRANS;
  *ld = as_is ? (rows <= 1 ? std::max<int64_t>(cols, 1) : rs) : (cols <= 1 ? std::max<int64_t>(rows, 1) : cs);
  return true;
}

// out[..., :, :] = alpha * a[...] @ b[...] + beta * out[...]; a, b and out have the same batch shape
// (broadcast dims have stride 0 in a and b). bf16: a and b hold bfloat16 bits as uint16.
void gemm(const InArray& a, const InArray& b, OutArray out, float alpha, float beta, bool bf16, int fpmath) {
  const std::size_t nd = a.ndim();
  if (nd < 2 || b.ndim() != nd || out.ndim() != nd)
    throw nb::value_error("mmla: operands must have equal ndim >= 2");
  const std::size_t nb_dims = nd - 2;
  const int64_t m = static_cast<int64_t>(a.shape(nd - 2)), k = static_cast<int64_t>(a.shape(nd - 1));
  const int64_t n = static_cast<int64_t>(b.shape(nd - 1));
  if (static_cast<int64_t>(b.shape(nd - 2)) != k || static_cast<int64_t>(out.shape(nd - 2)) != m ||
      static_cast<int64_t>(out.shape(nd - 1)) != n)
    throw nb::value_error("mmla: operand shapes do not match");
  std::size_t batch = 1;
  for (std::size_t d = 0; d < nb_dims; ++d) {
    if (a.shape(d) != out.shape(d) || b.shape(d) != out.shape(d))
      throw nb::value_error("mmla: batch shapes do not match");
    batch *= out.shape(d);
  }
  const nb::dlpack::dtype want = bf16 ? nb::dtype<std::uint16_t>() : nb::dtype<float>();
  if (a.dtype() != want || b.dtype() != want)
    throw nb::type_error("mmla: a and b must both be float32 or bfloat16");
  if (batch == 0 || m == 0 || n == 0) return;

  const std::size_t esize = bf16 ? 2 : 4;
  const auto* a0 = static_cast<const char*>(a.data());
  const auto* b0 = static_cast<const char*>(b.data());
  float* c0 = out.data();
  const int64_t a_rs = a.stride(nd - 2), a_cs = a.stride(nd - 1);
  const int64_t b_rs = b.stride(nd - 2), b_cs = b.stride(nd - 1);
  const int64_t c_rs = out.stride(nd - 2), c_cs = out.stride(nd - 1);

  bool b_shared = true;
  for (std::size_t d = 0; d < nb_dims; ++d) b_shared = b_shared && (b.shape(d) == 1 || b.stride(d) == 0);
  const bool fold = batch > 1 && b_shared && rows_fold(a, nb_dims) && rows_fold(out, nb_dims);

  const auto one = [&](const char* ap, const char* bp, float* cp, int64_t rows) {
    // k == 0: A and B hold no elements (C = beta * C); NumPy gives such arrays zero strides.
    const int64_t ars = k == 0 ? 1 : usable_stride(a_rs, rows), acs = k == 0 ? 1 : usable_stride(a_cs, k);
    const int64_t brs = k == 0 ? 1 : usable_stride(b_rs, k), bcs = k == 0 ? 1 : usable_stride(b_cs, n);
    const int64_t crs = usable_stride(c_rs, rows), ccs = usable_stride(c_cs, n);
    return bf16
               ? mmla_sbgemm_strided(rows, n, k, alpha, reinterpret_cast<const mmla_bfloat16*>(ap), ars, acs,
                                     reinterpret_cast<const mmla_bfloat16*>(bp), brs, bcs, beta, cp, crs, ccs)
               : mmla_sgemm_strided(rows, n, k, alpha, reinterpret_cast<const float*>(ap), ars, acs,
                                    reinterpret_cast<const float*>(bp), brs, bcs, beta, cp, crs, ccs);
  };

  Outcome outcome;
  {
    nb::gil_scoped_release unlocked;
    ThreadFpmath mode(fpmath);
    if (fold) {
      outcome.set(one(a0, b0, c0, m * static_cast<int64_t>(batch)));
    } else {
      const auto es = static_cast<int64_t>(esize);
      for_each_batch(out, nb_dims, [&](const std::vector<std::size_t>& idx) {
        outcome.set(one(a0 + batch_offset(a, idx) * es, b0 + batch_offset(b, idx) * es,
                        c0 + batch_offset(out, idx), m));
        return outcome.status == MMLA_STATUS_SUCCESS;
      });
    }
  }
  outcome.check();
}

// Weights packed once (mmla_pack_b / mmla_pack_b_bf16), freed with the object. b is 2-D with a unit
// stride in one dimension (_core.py copies it otherwise).
class Packed {
 public:
  Packed(const InArray& b, bool bf16, int fpmath) {
    if (b.ndim() != 2) throw nb::value_error("mmla: packed weights must be 2-D");
    const nb::dlpack::dtype want = bf16 ? nb::dtype<std::uint16_t>() : nb::dtype<float>();
    if (b.dtype() != want) throw nb::type_error("mmla: b must be float32 or bfloat16");
    k_ = static_cast<int64_t>(b.shape(0)), n_ = static_cast<int64_t>(b.shape(1));
    mmla_transpose trans;
    int64_t ld;
    if (!blas_form(k_, n_, b.stride(0), b.stride(1), &trans, &ld))
      throw nb::value_error("mmla: b needs a unit stride in one dimension");
    Outcome outcome;
    {
      nb::gil_scoped_release unlocked;
      ThreadFpmath mode(fpmath);
      outcome.set(
          bf16 ? mmla_pack_b_bf16(MMLA_ROW_MAJOR, trans, k_, n_, static_cast<const mmla_bfloat16*>(b.data()),
                                  ld, &h_)
               : mmla_pack_b(MMLA_ROW_MAJOR, trans, k_, n_, static_cast<const float*>(b.data()), ld, &h_));
    }
    outcome.check();
  }
  ~Packed() { mmla_packed_free(h_); }
  Packed(const Packed&) = delete;
  Packed& operator=(const Packed&) = delete;

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  std::size_t nbytes() const {
    std::size_t b = 0;
    check(mmla_packed_size(h_, &b));
    return b;
  }
  const mmla_packed_matrix* get() const { return h_; }

 private:
  mmla_packed_matrix* h_ = nullptr;
  int64_t k_ = 0, n_ = 0;
};

// out[...] = alpha * a[...] @ packed + beta * out[...]; a and out have the same batch shape; out's
// last dim has unit stride (or n == 1) and a has a unit stride in one of its last two dims
// (_core.py arranges both). bf16: a holds bfloat16 bits as uint16.
void gemm_packed(const InArray& a, const Packed& b, OutArray out, float alpha, float beta, bool bf16,
                 int fpmath) {
  const std::size_t nd = a.ndim();
  if (nd < 2 || out.ndim() != nd) throw nb::value_error("mmla: operands must have equal ndim >= 2");
  const std::size_t nb_dims = nd - 2;
  const int64_t m = static_cast<int64_t>(a.shape(nd - 2)), k = static_cast<int64_t>(a.shape(nd - 1));
  const int64_t n = b.n();
  if (k != b.k() || static_cast<int64_t>(out.shape(nd - 2)) != m ||
      static_cast<int64_t>(out.shape(nd - 1)) != n)
    throw nb::value_error("mmla: operand shapes do not match");
  std::size_t batch = 1;
  for (std::size_t d = 0; d < nb_dims; ++d) {
    if (a.shape(d) != out.shape(d)) throw nb::value_error("mmla: batch shapes do not match");
    batch *= out.shape(d);
  }
  const nb::dlpack::dtype want = bf16 ? nb::dtype<std::uint16_t>() : nb::dtype<float>();
  if (a.dtype() != want) throw nb::type_error("mmla: a must be float32 or bfloat16");
  if (batch == 0 || m == 0 || n == 0) return;
  const int64_t a_rs = a.stride(nd - 2), a_cs = a.stride(nd - 1);
  const int64_t c_rs = out.stride(nd - 2), c_cs = out.stride(nd - 1);
  if (n > 1 && c_cs != 1) throw nb::value_error("mmla: out needs unit stride along its last dim");
  const bool fold = batch > 1 && rows_fold(a, nb_dims) && rows_fold(out, nb_dims);
  const std::size_t esize = bf16 ? 2 : 4;

  // One call per batch entry, or one for the whole folded batch; A in BLAS form for that many rows.
  const int64_t rows = fold ? m * static_cast<int64_t>(batch) : m;
  mmla_transpose ta;
  int64_t lda;
  if (!blas_form(rows, k, a_rs, a_cs, &ta, &lda))
    throw nb::value_error("mmla: a needs a unit stride in one dimension");
  const int64_t ldc = rows <= 1 ? n : c_rs;
  const auto one = [&](const char* ap, float* cp) {
    return bf16 ? mmla_sbgemm_packed(MMLA_ROW_MAJOR, ta, rows, n, k, alpha,
                                     reinterpret_cast<const mmla_bfloat16*>(ap), lda, b.get(), beta, cp, ldc)
                : mmla_gemm_packed(MMLA_ROW_MAJOR, ta, rows, n, k, alpha, reinterpret_cast<const float*>(ap),
                                   lda, b.get(), beta, cp, ldc);
  };

  const auto* a0 = static_cast<const char*>(a.data());
  float* c0 = out.data();
  Outcome outcome;
  {
    nb::gil_scoped_release unlocked;
    ThreadFpmath mode(fpmath);
    if (fold) {
      outcome.set(one(a0, c0));
    } else {
      for_each_batch(out, nb_dims, [&](const std::vector<std::size_t>& idx) {
        outcome.set(
            one(a0 + batch_offset(a, idx) * static_cast<int64_t>(esize), c0 + batch_offset(out, idx)));
        return outcome.status == MMLA_STATUS_SUCCESS;
      });
    }
  }
  outcome.check();
}

}  // namespace

NB_MODULE(_mmla, m) {
  m.doc() = "mmla's C API (use the mmla package, not this module)";
  m.def("gemm", &gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("bf16"), nb::arg("fpmath"));
  nb::class_<Packed>(m, "Packed")
      .def(nb::init<const InArray&, bool, int>(), nb::arg("b"), nb::arg("bf16"), nb::arg("fpmath"))
      .def_prop_ro("k", &Packed::k)
      .def_prop_ro("n", &Packed::n)
      .def_prop_ro("nbytes", &Packed::nbytes);
  m.def("gemm_packed", &gemm_packed, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"),
        nb::arg("beta"), nb::arg("bf16"), nb::arg("fpmath"));
  m.def("set_num_threads", [](int n) { check(mmla_set_num_threads(n)); });
  m.def("get_num_threads", &mmla_get_num_threads);
  m.def("set_fpmath_mode",
        [](int mode) { check(mmla_set_fpmath_mode(static_cast<mmla_fpmath_mode>(mode))); });
  m.def("get_fpmath_mode", [] { return static_cast<int>(mmla_get_fpmath_mode()); });
  m.def("set_thread_fpmath_mode",
        [](int mode) { check(mmla_set_thread_fpmath_mode(static_cast<mmla_fpmath_mode>(mode))); });
  m.def("get_thread_fpmath_mode", [] { return static_cast<int>(mmla_get_thread_fpmath_mode()); });
  m.def("config", [] { return std::string(mmla_get_config()); });
  m.def("version", [] { return std::string(mmla_version()); });
  m.attr("FPMATH_DEFAULT") = static_cast<int>(MMLA_FPMATH_DEFAULT);
  m.attr("FPMATH_STRICT") = static_cast<int>(MMLA_FPMATH_STRICT);
  m.attr("FPMATH_BF16") = static_cast<int>(MMLA_FPMATH_BF16);
}
