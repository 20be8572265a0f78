#!/usr/bin/env bash
# Models the k-loop of an aarch64 micro-kernel with llvm-mca on Neoverse cores (no Arm machine
# needed). The loop is the basic block between the label and the backward branch that contain the
# most FMLA instructions of the kernel's run function.
#   scripts/mca-kernel.sh src/ukernel/gemm_f32_f32p_f32p/gemm_f32_f32p_f32p_8x12__neon_fma.cpp [FLAGS]
# Needs aarch64-linux-gnu-g++ and llvm-mca-22 (Debian: apt-get install llvm-22). The peak is
# measured the same way: the loop's FMLA (or BFMMLA) count as independent instructions alone.
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
  /^(\.L[0-9]+|[ \t]*[0-9]+):/ { if (n > best) { best = n; out = buf } buf = $0 "\n"; n = 0; next }
  { buf = buf $0 "\n"; if ($1 ~ /^(fmla|bfmmla)$/) n++ }
  END { if (n > best) { out = buf } printf "%s", out }' | awk '{ print } /^[ \t]*b(ne|\.ne|hi|\.hi)[ \t]/ { exit }' > "$loop"
# llvm-mca cannot resolve GNU numeric local labels (1: ... b.ne 1b): give them names.
sed -i -E 's/^[ \t]*([0-9]+):/.Lnum\1:/; s/[ \t]([0-9]+)b$/ .Lnum\1/' "$loop"
op=$(awk '$1 ~ /^(fmla|bfmmla)$/ { print $1 }' "$loop" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
fmas=$(awk -v op="$op" '$1 == op { n++ } END { print n + 0 }' "$loop")
echo "k-loop: $(wc -l < "$loop") lines, $fmas $op per iteration"
# The ideal: the same number of independent $op instructions and nothing else.
ideal=$(mktemp --suffix=.s)
trap 'rm -f "$asm" "$loop" "$ideal"' EXIT
for i in $(seq 0 $((fmas - 1))); do
  if [ "$op" = bfmmla ]; then echo "bfmmla v$((8 + i % 24)).4s, v1.8h, v2.8h"; else echo "fmla v$((8 + i % 24)).4s, v1.4s, v2.s[0]"; fi
done > "$ideal"
cycles() { "$mca" -mtriple=aarch64-linux-gnu -mcpu="$1" -mattr=+bf16 -iterations=200 "$2" 2>/dev/null | awk '/Total Cycles:/ { print $3 / 200 }'; }
for cpu in neoverse-n1 neoverse-n2 neoverse-v1 neoverse-v2; do
  real=$(cycles "$cpu" "$loop")
  best=$(cycles "$cpu" "$ideal")
  if [ -z "$real" ] || [ -z "$best" ]; then
    echo "$cpu: no model for this code (the core lacks the instructions)"
    continue
  fi
  awk -v r="$real" -v b="$best" -v cpu="$cpu" -v op="$op" 'BEGIN {
    printf "%-12s %6.2f cycles/iteration, %6.2f for the %s alone: %5.1f%% of %s peak\n", cpu, r, b, op, 100 * b / r, op }'
done
