#!/usr/bin/env bash
# Runs the cross-built aarch64 test suite under qemu-user on three CPU models: v8.0 (cortex-a53),
# v8.2 with dotprod (neoverse-n1) and v9 with BF16/I8MM/SVE/SME (max). For each, the features
# mmla_get_config() must report and the kernel it must choose are given to the dispatch test.
set -euo pipefail
build_dir=${1:-build/aarch64}

# model | features qemu 7.2 reports through HWCAP/HWCAP2 | expected gemm_f32_f32p_f32p kernel |
# expected bf16 kernel ("none": bf16 GEMM and fast math run on the fp32 kernel)
models=(
  "cortex-a53|asimd|gemm_f32_f32p_f32p_8x12__neon_fma|none"
  "neoverse-n1|asimd atomics asimddp|gemm_f32_f32p_f32p_8x12__neon_fma|none"
  "max|asimd atomics asimddp bf16 i8mm sve sve2 sme|gemm_f32_f32p_f32p_8x12__neon_fma|gemm_f32_bf16p_bf16p_8x12c4__neon_bfmmla"
)

for entry in "${models[@]}"; do
  IFS='|' read -r model features kernel bf16_kernel <<<"$entry"
  echo "== qemu-aarch64 -cpu $model"
  QEMU_CPU=$model MMLA_TEST_EXPECT_FEATURES="$features" MMLA_TEST_EXPECT_KERNEL="$kernel" \
    MMLA_TEST_EXPECT_BF16_KERNEL="$bf16_kernel" \
    ctest --test-dir "$build_dir" -j2 --output-on-failure
done
