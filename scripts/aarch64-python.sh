#!/usr/bin/env bash
# Makes an aarch64 CPython 3.11 with NumPy, runnable under qemu-user, from Debian's arm64 packages:
# `apt-get download` + `dpkg -x` into a sysroot (no maintainer scripts run, nothing is installed on
# the host). The same sysroot gives the cross build of the Python extension its headers.
#
#   scripts/aarch64-python.sh [ROOT]      (default build/aarch64-python)
#
# Afterwards: ROOT/sysroot (the unpacked packages), ROOT/include/python3.11 (headers with the
# aarch64 pyconfig.h, usable without the sysroot's glibc headers), ROOT/bin/python (runs the aarch64
# python3.11 under qemu; QEMU_CPU picks the core). Idempotent: the .debs are cached in
# build/cache/debs-arm64 and the sysroot is unpacked once per package list.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-build/aarch64-python}
cache=build/cache/debs-arm64
sysroot=$root/sysroot

# What the interpreter, its headers and NumPy need. Debian resolves the rest; the filter drops
# what only matters on an installed system (dpkg, perl, compilers' headers) and the alternative
# BLAS builds: the reference libblas3/liblapack3 is enough for NumPy's tests here.
wanted=(python3.11:arm64 libpython3.11-dev:arm64 python3-numpy:arm64 libstdc++6:arm64)
skip='^(dpkg|install-info|tar|perl|perl-base|perl-modules-.*|libperl.*|libc6-dev|libc-dev-bin|linux-libc-dev|libcrypt-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto|libexpat1-dev|zlib1g-dev|libopenblas.*|libblis.*|libatlas.*|libgomp1|readline-common)$'

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "aarch64-python: enabling Debian's arm64 architecture (for apt-get download only)"
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
  "${sudo_cmd[@]}" apt-get update -qq
fi
list_pkgs() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${wanted[@]}" 2>/dev/null |
    sed -n 's/^\([a-z0-9][^ ]*\):arm64$/\1/p' | grep -vE "$skip" | sort -u
}
pkgs=$(list_pkgs)
if ! echo "$pkgs" | grep -qx python3-numpy; then
  "${sudo_cmd[@]}" apt-get update -qq # arm64 lists missing or stale
  pkgs=$(list_pkgs)
fi

stamp=$sysroot/.mmla-packages
if [ -x "$root/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgs" ]; then
  exit 0
fi

mkdir -p "$cache"
missing=()
for p in $pkgs; do
  compgen -G "$cache/${p}_*_arm64.deb" >/dev/null || compgen -G "$cache/${p}_*_all.deb" >/dev/null ||
    missing+=("$p:arm64")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "aarch64-python: downloading ${#missing[@]} arm64 packages into $cache"
  # -o APT::Sandbox::User=root: the _apt user may not write into the project's folder
  (cd "$cache" && apt-get download -qq -o APT::Sandbox::User=root "${missing[@]}")
fi

echo "aarch64-python: unpacking into $sysroot"
rm -rf "$sysroot" "$root/include" "$root/bin"
mkdir -p "$sysroot"
for p in $pkgs; do
  # the newest cached version of each package
  deb=$(compgen -G "$cache/${p}_*_arm64.deb" || compgen -G "$cache/${p}_*_all.deb")
  deb=$(echo "$deb" | sort -V | tail -1)
  dpkg -x "$deb" "$sysroot"
done

# dpkg -x runs no maintainer scripts: make the links that update-alternatives and python3-minimal's
# postinst would have made.
lib=$sysroot/usr/lib/aarch64-linux-gnu
ln -sf blas/libblas.so.3 "$lib/libblas.so.3"
ln -sf lapack/liblapack.so.3 "$lib/liblapack.so.3"
ln -sf python3.11 "$sysroot/usr/bin/python3"

# Headers for the cross build: Debian's multiarch pyconfig.h wrapper needs the whole sysroot
# include dir (and its glibc 2.36 headers) on the path; a copy with the aarch64 pyconfig.h in
# place does not, so a compiler targeting an older glibc uses its own libc headers.
mkdir -p "$root/include"
cp -r "$sysroot/usr/include/python3.11" "$root/include/"
cp "$sysroot/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h" "$root/include/python3.11/pyconfig.h"

# qemu-aarch64 -L makes the sysroot the guest's / for the loader and the libraries.
mkdir -p "$root/bin"
abs=$(cd "$sysroot" && pwd)
cat >"$root/bin/python" <<EOF
#!/bin/sh
# aarch64 python3.11 from Debian's arm64 packages, under qemu-user (QEMU_CPU selects the core).
exec qemu-aarch64 -L "$abs" "$abs/usr/bin/python3.11" "\$@"
EOF
chmod +x "$root/bin/python"
"$root/bin/python" -c 'import numpy, platform; print("aarch64-python:", platform.machine(), platform.python_version(), "numpy", numpy.__version__)'
echo "$pkgs" >"$stamp"
