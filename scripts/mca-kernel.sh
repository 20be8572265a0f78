#!/usr/bin/env bash
# Models the k-loop of an aarch64 micro-kernel with llvm-mca on Neoverse cores (no Arm machine
# needed). The loop is the basic block between the label and the backward branch that contain the
# most FMLA instructions of the kernel's run function.
#   scripts/mca-kernel.sh src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_8x12__neon_fma.cpp [FLAGS]
# Needs aarch64-linux-gnu-g++ and llvm-mca-22 (Debian: apt-get install llvm-22).
set -euo pipefail
src=$1
shift
flags=${*:--march=armv8-a -ffp-contract=fast}
mca=$(command -v llvm-mca-22 || true)
[ -n "$mca" ] || { echo "llvm-mca-22 not found (apt-get install llvm-22)" >&2; exit 1; }
asm=$(mktemp --suffix=.s)
loop=$(mktemp --suffix=.s)
trap 'rm -f "$asm" "$loop"' EXIT
# shellcheck disable=SC2086
aarch64-linux-gnu-g++ -std=c++20 -O3 $flags -I"$(dirname "$0")/../src" -S -o "$asm" "$src"
# Split the run function into label-delimited blocks and keep the one with the most FMLA/BFMMLA.
awk '/^_ZN4mmla7ukernel12_GLOBAL__N_13runE/,/^\t\.size/' "$asm" | awk '
  /^\.L[0-9]+:/ { if (n > best) { best = n; out = buf } buf = $0 "\n"; n = 0; next }
  { buf = buf $0 "\n"; if ($1 ~ /^(fmla|bfmmla|fmmla)$/) n++ }
  END { if (n > best) { out = buf } printf "%s", out }' | awk '{ print } /^\tb(ne|\.ne|hi|\.hi)\t/ { exit }' > "$loop"
fmas=$(grep -cE '^\s(fmla|bfmmla)' "$loop")
echo "k-loop: $(wc -l < "$loop") lines, $fmas FMLA/BFMMLA per iteration"
for cpu in neoverse-n1 neoverse-n2 neoverse-v1 neoverse-v2; do
  cycles=$("$mca" -mtriple=aarch64-linux-gnu -mcpu="$cpu" -iterations=200 "$loop" 2>/dev/null |
           awk '/Total Cycles:/ { print $3 }')
  # 128-bit FP pipes: 2 on N1/N2, 4 on V1/V2 (V1's 2x256-bit SVE pipes run NEON as 4x128).
  pipes=2
  case $cpu in neoverse-v*) pipes=4 ;; esac
  awk -v c="$cycles" -v f="$fmas" -v p="$pipes" -v cpu="$cpu" 'BEGIN {
    per_iter = c / 200; ideal = f / p
    printf "%-12s %6.2f cycles/iteration, ideal %5.2f: %5.1f%% of FMA peak\n", cpu, per_iter, ideal, 100 * ideal / per_iter }'
done
