#!/usr/bin/env bash
# Installs the aarch64 wheel from dist/ into Debian's aarch64 CPython (scripts/aarch64-python.sh)
# and runs the smoke subset of the pytest suite under qemu-user on three cores: cortex-a53 (v8.0),
# neoverse-n1 (v8.2) and max (v8.6+ with BF16/I8MM/SVE). On each, mmla.info() must name the fp32
# kernel and the BFMMLA kernel only where the core has BF16 (elsewhere it names the reference kernel
# of that family, which is never run: bf16 inputs are widened and the fp32 kernel runs).
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=$(ls dist/mmla-*_aarch64.whl 2>/dev/null) ||
  { echo "test-wheel-aarch64: no aarch64 wheel in dist/ (make wheels)" >&2; exit 1; }
bash scripts/aarch64-python.sh >/dev/null
venv=$(bash scripts/wheel-venv.sh)
py=build/aarch64-python/bin/python
site=build/wheel-test-aarch64
pyver=$("$py" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')

# The host's pip installs for the target (python -m venv does not work under qemu without
# binfmt_misc): the wheel, and the test tools pinned for the dev venv. NumPy is Debian's.
rm -rf "$site"
pins=$(grep -E '^(pytest|hypothesis|ml_dtypes)==' python/requirements-dev.txt)
# shellcheck disable=SC2086  # one requirement per word
"$venv/bin/pip" install -q --disable-pip-version-check --target "$site" --only-binary=:all: \
  --platform manylinux2014_aarch64 --platform manylinux_2_27_aarch64 --platform manylinux_2_28_aarch64 \
  --implementation cp --python-version "$pyver" \
  "$wheel" $pins 'numpy==1.24.2' 2>&1 | grep -v 'WARNING: Location' || true
# NumPy comes from Debian's python3-numpy (the wheel and ml_dtypes must work with that one); the
# pip copy above only satisfied the dependency resolver.
rm -rf "$site"/numpy "$site"/numpy-* "$site"/numpy.libs
[ -f "$site/mmla/__init__.py" ] || { echo "test-wheel-aarch64: the wheel did not install" >&2; exit 1; }

# model | expected gemm_f32_f32p_f32p kernel | expected gemm_f32_bf16p_bf16p kernel
models=(
  "cortex-a53|gemm_f32_f32p_f32p_8x12__neon_fma|gemm_f32_bf16p_bf16p_4x4c4__ref"
  "neoverse-n1|gemm_f32_f32p_f32p_8x12__neon_fma|gemm_f32_bf16p_bf16p_4x4c4__ref"
  "max|gemm_f32_f32p_f32p_8x12__neon_fma|gemm_f32_bf16p_bf16p_8x12c4__neon_bfmmla"
)
for entry in "${models[@]}"; do
  IFS='|' read -r model fp32 bf16 <<<"$entry"
  echo "== aarch64 wheel under qemu-aarch64 -cpu $model"
  # -I: no user site or cwd, so `import mmla` is the installed wheel, not the source tree
  QEMU_CPU=$model PYTHONPATH=$site "$py" -I -c '
import os, sys
sys.path.insert(0, os.environ["PYTHONPATH"])
import numpy, mmla
k = mmla.info()["kernels"]
print(" ", mmla.__file__, "numpy", numpy.__version__, k)
want = {"gemm_f32_f32p_f32p": sys.argv[1], "gemm_f32_bf16p_bf16p": sys.argv[2]}
for family, kernel in want.items():
    if k.get(family) != kernel:
        sys.exit(f"test-wheel-aarch64: {family} is {k.get(family)!r}, expected {kernel!r}")
' "$fp32" "$bf16"
  QEMU_CPU=$model PYTHONPATH=$site MMLA_TEST_PYTHON=$py "$py" -m pytest -q -p no:cacheprovider -m smoke \
    --ignore=tests/python/test_torch.py tests/python
done
