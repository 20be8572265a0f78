// The registry of compiled micro-kernels and the per-family choice.
#pragma once

#include <span>
#include <string>

#include "ukernel/ukernel.hpp"

namespace mmla::ukernel {

// Every kernel compiled into this build (whatever the CPU supports), in cmake/kernels.cmake order.
std::span<const GemmKernel* const> all_kernels();

// Kernels of a family the CPU supports and MMLA_ISA allows.
bool usable(const GemmKernel& k);

// The kernel dispatch uses for a family: the usable one whose ISA level is highest in
// cpu::levels() (the one central preference order). Chosen once; nullptr only if MMLA_ISA is
// invalid. `why` (optional) receives a sentence explaining the choice.
const GemmKernel* choose(Family family, std::string* why = nullptr);

// The same for matrix-vector kernels.
std::span<const GemvKernel* const> all_gemv_kernels();
bool usable(const GemvKernel& k);
const GemvKernel* choose_gemv(Family family, std::string* why = nullptr);

}  // namespace mmla::ukernel
