#!/usr/bin/env bash
# Installs everything the build, the tests and the aarch64 cross build need, on Debian/Ubuntu.
# Idempotent: installs only what is missing, so `make demo` and `make test` can call it every time.
set -euo pipefail

packages=(
  cmake ninja-build g++ make   # native build
  googletest                   # GoogleTest sources (/usr/src/googletest), built with the project
  libblas3                     # the reference BLAS the plain-C CBLAS test compares with
  g++-aarch64-linux-gnu        # cross compiler and aarch64 glibc sysroot
  qemu-user                    # runs the aarch64 tests on x86
  python3 python3-venv         # the tools venv below (and the Python package later)
  libopenblas-dev libblis-dev libdnnl-dev  # optional: mmla-bench's side-by-side columns
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Pinned Python tools in a venv of the project's own (clang-format from PyPI, so that the format
# check means the same on every distribution).
tools=build/tools-venv
clang_format_version=14.0.6
if ! "$tools/bin/clang-format" --version 2>/dev/null | grep -q "version $clang_format_version"; then
  echo "setup: installing clang-format $clang_format_version into $tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check "clang-format==$clang_format_version"
fi
