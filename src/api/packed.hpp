// The packed-matrix handle behind the opaque mmla_packed_matrix of the C API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "driver/gemm_driver.hpp"
#include "mmla/mmla.h"

struct mmla_packed_matrix {
  // kAlive while the handle is valid; mmla_packed_free clears it, which catches most uses after
  // free and pointers that were never handles.
  static constexpr std::uint64_t kAlive = 0x6d6d6c612d706b62ull;  // "mmla-pkb"
  std::uint64_t magic;
  mmla::driver::PackedBLayout layout;  // the kernel, KC/NC and shape it was packed for
  void* data;
  std::size_t bytes;
  bool from_bf16;  // packed by mmla_pack_b_bf16
};
