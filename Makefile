# Two entry points on a fresh Debian machine: `make demo` and `make test`. Both install what they
# need first (scripts/setup.sh, idempotent).
CMAKE_FLAGS ?= -Wno-deprecated
JOBS ?= 2

.PHONY: all setup build python demo test test-native test-debug test-tsan test-python test-aarch64 build-aarch64 format format-check clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake --preset release $(CMAKE_FLAGS) >/dev/null
	cmake --build --preset release -j $(JOBS)

# The Python package in the project's venv (build/py-venv): pinned dependencies, then `pip install .`.
PY_VENV = build/py-venv
python: setup
	bash scripts/python-venv.sh

# The main job: the C benchmark on a few shapes (each checked against a double reference), then
# `mmla bench --quick`: mmla beside NumPy and PyTorch from Python.
demo: build python
	./build/release/bench/mmla-bench --quick --check
	$(PY_VENV)/bin/mmla bench --quick

# Every test: format, native release, the Python package, native ASan+UBSan, ThreadSanitizer (threading, driver and
# API suites), aarch64 under qemu on three CPU models.
test: setup format-check test-native test-python test-debug test-tsan test-aarch64

test-native: build
	ctest --preset release -j $(JOBS)

test-python: python
	$(PY_VENV)/bin/python -m pytest -q tests/python

test-debug: setup
	cmake --preset debug $(CMAKE_FLAGS) >/dev/null
	cmake --build --preset debug -j $(JOBS)
	ctest --preset debug -j $(JOBS)

test-tsan: setup
	cmake --preset tsan $(CMAKE_FLAGS) >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -j $(JOBS)

build-aarch64: setup
	cmake --preset aarch64 $(CMAKE_FLAGS) >/dev/null
	cmake --build --preset aarch64 -j $(JOBS)

test-aarch64: build-aarch64
	bash scripts/test-aarch64.sh build/aarch64

SOURCES = $(shell git ls-files '*.c' '*.cpp' '*.h' '*.hpp')
# clang-format pinned to one version by scripts/setup.sh
CLANG_FORMAT = build/tools-venv/bin/clang-format
format: setup
	$(CLANG_FORMAT) -i $(SOURCES)
format-check: setup
	$(CLANG_FORMAT) --dry-run -Werror $(SOURCES)

clean:
	rm -rf build
