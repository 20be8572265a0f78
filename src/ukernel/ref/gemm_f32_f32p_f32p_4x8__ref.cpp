// Portable scalar kernel: the fallback on any CPU. Plain C++, no ISA requirement.
#include "ukernel/pack/pack_f32.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 4, kNr = 8;

void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v,
         std::ptrdiff_t b_ks, float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const float* ap = static_cast<const float*>(ap_v);
  const float* bp = static_cast<const float*>(bp_v);
  float acc[kMr * kNr] = {};
  for (std::size_t kk = 0; kk < kp; ++kk) {
    for (int i = 0; i < kMr; ++i)
      for (int j = 0; j < kNr; ++j)
        acc[i * kNr + j] += ap[kk * kMr + i] * bp[static_cast<std::ptrdiff_t>(kk) * b_ks + j];
  }
  store_tile_scalar(m, n, acc, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_f32p_f32p_4x8__ref{"gemm_f32_f32p_f32p_4x8__ref",
                                                    Family::gemm_f32_f32p_f32p,
                                                    cpu::Isa::ref,
                                                    kMr,
                                                    kNr,
                                                    1,
                                                    sizeof(float),
                                                    {pack_f32_r4, pack_bf16_f32_r4},
                                                    {pack_f32_r8, pack_bf16_f32_r8},
                                                    run};

}  // namespace mmla::ukernel
