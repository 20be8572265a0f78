#!/usr/bin/env bash
# The host venv that builds and checks the wheels: build/wheel-venv with scripts/wheel-requirements.txt
# and the build tools pinned in python/requirements-dev.txt (scikit-build-core, nanobind, cmake,
# ninja: one pin for the dev build and the wheels). The wheels are built without build isolation, so
# the cross build and the native one use the same nanobind and a rerun downloads nothing.
# Idempotent: reinstalls only when those requirements change. Prints the venv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/wheel-venv
want=$(grep -v '^#' scripts/wheel-requirements.txt
       grep -E '^(scikit-build-core|nanobind|cmake|ninja)==' python/requirements-dev.txt)
stamp=$venv/.mmla-requirements
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv"
  exit 0
fi
echo "wheel-venv: installing the wheel tools into $venv" >&2
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# shellcheck disable=SC2086  # one requirement per word
"$venv/bin/pip" install -q --disable-pip-version-check $want >&2
echo "$want" >"$stamp"
echo "$venv"
