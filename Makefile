# Two entry points on a fresh Debian machine: `make demo` and `make test`. Both install what they
# need first (scripts/setup.sh, idempotent).
CMAKE_FLAGS ?= -Wno-deprecated
JOBS ?= 2

.PHONY: all setup build python wheels demo test test-native test-debug test-tsan test-python test-aarch64 build-aarch64 test-wheel-x86_64 test-wheel-aarch64 format format-check clean

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

# Both wheels into dist/ (x86_64 and aarch64, manylinux2014, cross-built with zig; scripts/build-wheels.sh).
wheels: setup
	bash scripts/build-wheels.sh

# The x86_64 wheel, installed on its own into a folder first on the path: the whole Python suite.
WHEEL_X86 = build/wheel-test-x86_64
test-wheel-x86_64: wheels python
	rm -rf $(WHEEL_X86)
	$(PY_VENV)/bin/pip install -q --disable-pip-version-check --no-deps --target $(WHEEL_X86) dist/mmla-*_x86_64.whl
	PYTHONPATH=$(WHEEL_X86) $(PY_VENV)/bin/python -c 'import mmla, sys; sys.exit(0 if "/$(WHEEL_X86)/" in mmla.__file__ else "not the wheel: " + mmla.__file__)'
	PYTHONPATH=$(WHEEL_X86) $(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/python

# The aarch64 wheel in an aarch64 Python under qemu: smoke tests on cortex-a53, neoverse-n1 and max.
test-wheel-aarch64: wheels
	bash scripts/test-wheel-aarch64.sh

# The main job: the C benchmark on a few shapes (each checked against a double reference), then
# `mmla bench --quick`: mmla beside NumPy and PyTorch from Python.
demo: build python
	./build/release/bench/mmla-bench --quick --check
	$(PY_VENV)/bin/mmla bench --quick

# Every test: format, native release, the Python package, native ASan+UBSan, ThreadSanitizer (threading, driver and
# API suites), aarch64 under qemu on three CPU models, both wheels (aarch64 under qemu on the same three).
test: setup format-check test-native test-python test-debug test-tsan test-aarch64 test-wheel-x86_64 test-wheel-aarch64

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

SOURCES = $(shell git ls-files '*.c' '*.cpp' '*.h' '*.hpp' '*.inc')
# clang-format pinned to one version by scripts/setup.sh
CLANG_FORMAT = build/tools-venv/bin/clang-format
format: setup
	$(CLANG_FORMAT) -i $(SOURCES)
format-check: setup
	$(CLANG_FORMAT) --dry-run -Werror $(SOURCES)

clean:
	rm -rf build
