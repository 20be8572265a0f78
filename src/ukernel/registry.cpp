#include "ukernel/registry.hpp"

#include <array>

namespace mmla::ukernel {

// Descriptors live in the kernel files; the list of them is generated from cmake/kernels.cmake.
#define MMLA_KERNEL(name) extern const GemmKernel name;
#include "mmla_kernel_list.inc"
#undef MMLA_KERNEL

namespace {
#define MMLA_KERNEL(name) &name,
constexpr std::array kKernels = {
#include "mmla_kernel_list.inc"
};
#undef MMLA_KERNEL
}  // namespace

const char* family_name(Family family) {
  switch (family) {
    case Family::gemm_f32_f32p_f32p: return "gemm_f32_f32p_f32p";
  }
  return "?";
}

std::span<const GemmKernel* const> all_kernels() { return kKernels; }

bool usable(const GemmKernel& k) { return cpu::usable(k.isa); }

const GemmKernel* choose(Family family, std::string* why) {
  const GemmKernel* best = nullptr;
  std::string skipped;
  for (const GemmKernel* k : kKernels) {
    if (k->family != family) continue;
    if (!usable(*k)) {
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

}  // namespace mmla::ukernel
