// The GEMM driver: BLIS-style loops over cache blocks with packing, ISA-free; it sees kernels only
// through their descriptors.
#pragma once

#include <cstddef>

#include "cpu/cpu.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::driver {

// The one internal problem form every API call is normalised to: C (m x n) is row-major with row
// stride ldc; A (m x k) and B (k x n) are strided views, any transpose already folded into the
// strides. beta == 0 means C is written without being read.
struct GemmProblem {
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  std::ptrdiff_t a_rs = 0, a_cs = 0;
  const void* b = nullptr;
  std::ptrdiff_t b_rs = 0, b_cs = 0;
  float* c = nullptr;
  std::size_t ldc = 0;
};

// Cache blocks: MC rows of A x KC depth stay in L2, KC x NC of B in L3, a KC x NR micro-panel of B
// in L1 (see docs/blocking.md). Any positive values are correct; tests force tiny ones.
struct Blocking {
  std::size_t mc = 0, kc = 0, nc = 0;
};

Blocking blocking_for(const ukernel::GemmKernel& kernel, const cpu::CacheSizes& caches);

enum class Status { ok, out_of_memory };

// Computes the problem with the given kernel and blocking. Requires m, n > 0; k == 0 or
// alpha == 0 only scale C.
Status gemm(const ukernel::GemmKernel& kernel, const Blocking& blocking, const GemmProblem& p);

}  // namespace mmla::driver
