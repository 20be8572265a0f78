#!/usr/bin/env bash
# Makes (or brings up to date) the project's Python venv, build/py-venv, with the pinned packages of
# python/requirements-dev.txt, then builds and installs mmla into it (`pip install .`, no build
# isolation so that the pinned scikit-build-core and nanobind are the ones used). Idempotent: a
# venv whose requirements file has not changed is only re-installed from source.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/py-venv
req=python/requirements-dev.txt
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$venv/.requirements"; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/.requirements"
fi
# Rebuilds only what changed: scikit-build-core keeps its CMake build tree in build/py-ext.
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps \
  -Cbuild-dir=build/py-ext .
