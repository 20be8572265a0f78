#include "driver/gemm_driver.hpp"

#include <algorithm>
#include <cstdlib>

namespace mmla::driver {
namespace {

// A per-thread, grow-only, 64-byte aligned scratch buffer: packing needs no allocation per call
// once a thread has seen its largest block.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(data_); }
  void* get(std::size_t bytes) {
    if (bytes > size_) {
      const std::size_t rounded = (bytes + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, rounded);
      if (p == nullptr) return nullptr;
      std::free(data_);
      data_ = p;
      size_ = rounded;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

void scale_c(const GemmProblem& p) {
  for (std::size_t i = 0; i < p.m; ++i) {
    float* row = p.c + i * p.ldc;
    if (p.beta == 0.0f) {
      std::fill(row, row + p.n, 0.0f);
    } else if (p.beta != 1.0f) {
      for (std::size_t j = 0; j < p.n; ++j) row[j] *= p.beta;
    }
  }
}

}  // namespace

Status gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p) {
  if (p.k == 0 || p.alpha == 0.0f) {
    scale_c(p);
    return Status::ok;
  }
  const std::size_t mr = static_cast<std::size_t>(kernel.mr);
  const std::size_t nr = static_cast<std::size_t>(kernel.nr);
  const std::size_t kr = static_cast<std::size_t>(kernel.kr);
  const std::size_t elem = kernel.elem_size;
  const std::size_t mc_max = std::min(blocking.mc, p.m);
  const std::size_t nc_max = std::min(blocking.nc, p.n);
  const std::size_t kc_max = std::min(blocking.kc, p.k);
  const std::size_t a_bytes = round_up(mc_max, mr) * round_up(kc_max, kr) * elem;
  const std::size_t b_bytes = round_up(nc_max, nr) * round_up(kc_max, kr) * elem;

  static thread_local Scratch scratch;
  char* const buffer = static_cast<char*>(scratch.get(round_up(a_bytes, 64) + b_bytes));
  if (buffer == nullptr) return Status::out_of_memory;
  char* const a_packed = buffer;
  char* const b_packed = buffer + round_up(a_bytes, 64);

  const char* const a = static_cast<const char*>(p.a);
  const char* const b = static_cast<const char*>(p.b);
  const auto sz = [elem](std::size_t rows, std::ptrdiff_t stride) {
    return static_cast<std::ptrdiff_t>(rows) * stride * static_cast<std::ptrdiff_t>(elem);
  };

  for (std::size_t jc = 0; jc < p.n; jc += blocking.nc) {
    const std::size_t nc = std::min(blocking.nc, p.n - jc);
    for (std::size_t pc = 0; pc < p.k; pc += blocking.kc) {
      const std::size_t kc = std::min(blocking.kc, p.k - pc);
      const std::size_t kcp = round_up(kc, kr);
      // The first K block applies the caller's beta; later ones accumulate onto it.
      const float beta = pc == 0 ? p.beta : 1.0f;
      kernel.pack_b(b + sz(pc, p.b_rs) + sz(jc, p.b_cs), p.b_cs, p.b_rs, nc, kc, b_packed);
      for (std::size_t ic = 0; ic < p.m; ic += blocking.mc) {
        const std::size_t mc = std::min(blocking.mc, p.m - ic);
        kernel.pack_a(a + sz(ic, p.a_rs) + sz(pc, p.a_cs), p.a_rs, p.a_cs, mc, kc, a_packed);
        for (std::size_t jr = 0; jr < nc; jr += nr) {
          const std::size_t n_tile = std::min(nr, nc - jr);
          const char* const bp = b_packed + jr * kcp * elem;
          for (std::size_t ir = 0; ir < mc; ir += mr) {
            const std::size_t m_tile = std::min(mr, mc - ir);
            float* const c = p.c + (ic + ir) * p.ldc + jc + jr;
            kernel.run(m_tile, n_tile, kcp, a_packed + ir * kcp * elem, bp, c, p.ldc, p.alpha, beta);
          }
        }
      }
    }
  }
  return Status::ok;
}

}  // namespace mmla::driver
