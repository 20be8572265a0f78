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
  clang-format                 # format check
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
