#!/usr/bin/env bash
# The host venv that builds and checks the wheels: build/wheel-venv with scripts/wheel-requirements.txt
# and the build requirements of pyproject.toml (the wheels are built without build isolation, so
# the cross build and the native one use the same nanobind, and a rerun downloads nothing).
# Idempotent: reinstalls only when those requirements change. Prints the venv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/wheel-venv
reqs=scripts/wheel-requirements.txt

build_reqs=()
if [ -f pyproject.toml ]; then
  mapfile -t build_reqs < <(python3 -c '
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f).get("build-system", {}).get("requires", [])))')
fi
want=$(cat "$reqs"; printf '%s\n' "${build_reqs[@]}")
stamp=$venv/.mmla-requirements
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"
  exit 0
fi
echo "wheel-venv: installing the wheel tools into $venv" >&2
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# The pins come first: a build requirement such as "scikit-build-core>=0.10" is then already met.
"$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs" "${build_reqs[@]}" >&2
echo "$want" >"$stamp"
echo "$venv"
