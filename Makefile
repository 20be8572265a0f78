# Two entry points on a fresh Debian machine: `make demo` and `make test`. Both install what they
# need first (scripts/setup.sh, idempotent).
CMAKE_FLAGS ?= -Wno-deprecated
JOBS ?= 2

.PHONY: all setup build demo test test-native test-debug test-tsan test-aarch64 build-aarch64 format format-check clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake --preset release $(CMAKE_FLAGS) >/dev/null
	cmake --build --preset release -j $(JOBS)

# The main job for now: the benchmark on a few shapes, each checked against a double reference.
demo: build
	./build/release/bench/mmla-bench --quick --check

# Every test: format, native release, native ASan+UBSan, ThreadSanitizer (threading, driver and
# API suites), aarch64 under qemu on three CPU models.
test: setup format-check test-native test-debug test-tsan test-aarch64

test-native: build
	ctest --preset release -j $(JOBS)

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
