// Portable bf16 kernel on the c4 layout (pack_bf16.hpp): the reference the BFMMLA kernels are
// tested against and the executable specification of the layout. Products of bf16 values are exact
// in fp32; accumulation is sequential fp32. Never chosen for speed: without bf16 hardware the fp32
// kernels run (docs/kernels.md).
#include <cstdint>

#include "ukernel/bf16.hpp"
#include "ukernel/pack/pack_bf16.hpp"
#include "ukernel/tile_store.hpp"
#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {
namespace {

constexpr int kMr = 4, kNr = 4;

void run(std::size_t m, std::size_t n, std::size_t kp, const void* ap_v, const void* bp_v, std::ptrdiff_t,
         float* c, std::ptrdiff_t c_rs, std::ptrdiff_t c_cs, float alpha, float beta) {
  const auto* ap = static_cast<const std::uint16_t*>(ap_v);
  const auto* bp = static_cast<const std::uint16_t*>(bp_v);
  float acc[kMr * kNr] = {};
  for (std::size_t kk = 0; kk < kp; ++kk) {
    const std::size_t chunk = (kk / 4), lane = kk % 4;
    for (int i = 0; i < kMr; ++i) {
      const float a = bf16_to_f32(ap[chunk * kMr * 4 + (i / 2) * 8 + (i % 2) * 4 + lane]);
      for (int j = 0; j < kNr; ++j)
        acc[i * kNr + j] += a * bf16_to_f32(bp[chunk * kNr * 4 + (j / 2) * 8 + (j % 2) * 4 + lane]);
    }
  }
  store_tile_scalar(m, n, acc, kNr, c, c_rs, c_cs, alpha, beta);
}

}  // namespace

extern const GemmKernel gemm_f32_bf16p_bf16p_4x4c4__ref{"gemm_f32_bf16p_bf16p_4x4c4__ref",
                                                        Family::gemm_f32_bf16p_bf16p,
                                                        cpu::Isa::ref,
                                                        kMr,
                                                        kNr,
                                                        4,
                                                        sizeof(std::uint16_t),
                                                        {pack_f32_bf16c4_r4, pack_bf16_bf16c4_r4},
                                                        {pack_f32_bf16c4_r4, pack_bf16_bf16c4_r4},
                                                        run};

}  // namespace mmla::ukernel
