#include "ukernel/registry.hpp"

#include <array>
#include <string>

namespace mmla::ukernel {

// Descriptors live in the kernel files; the list of them is generated from cmake/kernels.cmake.
#define MMLA_GEMM_KERNEL(name) extern const GemmKernel name;
#define MMLA_GEMV_KERNEL(name) extern const GemvKernel name;
#include "mmla_kernel_list.inc"
#undef MMLA_GEMM_KERNEL
#undef MMLA_GEMV_KERNEL

namespace {
#define MMLA_GEMM_KERNEL(name) &name,
#define MMLA_GEMV_KERNEL(name)
constexpr std::array kKernels = {
#include "mmla_kernel_list.inc"
};
#undef MMLA_GEMM_KERNEL
#undef MMLA_GEMV_KERNEL
#define MMLA_GEMM_KERNEL(name)
#define MMLA_GEMV_KERNEL(name) &name,
constexpr std::array kGemvKernels = {
#include "mmla_kernel_list.inc"
};
#undef MMLA_GEMM_KERNEL
#undef MMLA_GEMV_KERNEL

// The usable kernel of the highest ISA level among `kernels` of `family` (the one central
// preference order is cpu::levels()), and why.
template <class Kernel, std::size_t N>
const Kernel* choose_from(const std::array<const Kernel*, N>& kernels, Family family, std::string* why) {
  const Kernel* best = nullptr;
  std::string skipped;
  for (const Kernel* k : kernels) {
    if (k->family != family) continue;
    if (!cpu::usable(k->isa)) {
      const char* reason = !cpu::cap().error.empty() ? "MMLA_ISA is invalid"
                           : !cpu::detected(k->isa)  ? "CPU lacks it"
                                                     : "above the MMLA_ISA cap";
      skipped += std::string(skipped.empty() ? "" : "; ") + k->name + ": " + reason;
      continue;
    }
    if (best == nullptr || cpu::rank(k->isa) > cpu::rank(best->isa)) best = k;
  }
  if (why != nullptr) {
    if (best == nullptr) {
      *why = cpu::cap().error;
    } else {
      *why = std::string("highest usable ISA level (") + cpu::name(best->isa) + ")";
      if (!skipped.empty()) *why += "; passed over: " + skipped;
    }
  }
  return best;
}
}  // namespace

const char* family_name(Family family) {
  switch (family) {
    case Family::gemm_f32_f32p_f32p: return "gemm_f32_f32p_f32p";
    case Family::gemv_f32_f32_f32: return "gemv_f32_f32_f32";
    case Family::gemm_f32_bf16p_bf16p: return "gemm_f32_bf16p_bf16p";
  }
  return "?";
}

std::span<const GemmKernel* const> all_kernels() { return kKernels; }

bool usable(const GemmKernel& k) { return cpu::usable(k.isa); }

const GemmKernel* choose(Family family, std::string* why) { return choose_from(kKernels, family, why); }

std::span<const GemvKernel* const> all_gemv_kernels() { return kGemvKernels; }

bool usable(const GemvKernel& k) { return cpu::usable(k.isa); }

const GemvKernel* choose_gemv(Family family, std::string* why) {
  return choose_from(kGemvKernels, family, why);
}

}  // namespace mmla::ukernel
