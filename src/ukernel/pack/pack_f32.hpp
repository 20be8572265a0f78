// fp32 panel packers (baseline ISA), one per panel width R and source type, with the PackFn
// signature of ukernel/ukernel.hpp (KR = 1). pack_f32_rR copies fp32; pack_bf16_f32_rR widens bf16
// (exactly) while packing, which is how an fp32 kernel runs a bf16 GEMM on a CPU without bf16
// instructions. Kernel descriptors refer to them by name.
#pragma once

#include <cstddef>

namespace mmla::ukernel {

#define MMLA_DECLARE_PACK_F32(R)                                                                    \
  void pack_f32_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn,      \
                     std::size_t k, void* dst);                                                     \
  void pack_bf16_f32_r##R(const void* src, std::ptrdiff_t s_mn, std::ptrdiff_t s_k, std::size_t mn, \
                          std::size_t k, void* dst);
MMLA_DECLARE_PACK_F32(4)
MMLA_DECLARE_PACK_F32(6)
MMLA_DECLARE_PACK_F32(8)
MMLA_DECLARE_PACK_F32(12)
MMLA_DECLARE_PACK_F32(16)
MMLA_DECLARE_PACK_F32(32)
MMLA_DECLARE_PACK_F32(48)
#undef MMLA_DECLARE_PACK_F32

}  // namespace mmla::ukernel
