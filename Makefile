# tilelang-cpp: `make run` (quickstart) and `make test` set themselves up on a fresh machine:
# Debian packages via apt when missing, a local .venv filled from PyPI, then an incremental build.

PY_BOOT  ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
BUILD    := build
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
APT_PKGS := cmake g++ make libgtest-dev python3-venv
# torch: the compatibility tier (tests/compat) runs TileLang-style programs with torch CPU tensors;
# the core itself does not need it (tests/compat/test_compat_numpy_only.py). threadpoolctl: bench/ records
# which kernel the BLAS peers run (docs/PERFORMANCE.md).
PY_PKGS  := numpy ml_dtypes nanobind pytest torch threadpoolctl
export PYTHONPATH := $(CURDIR)/python
export TILELANG_SOURCE_DIR := $(CURDIR)

.PHONY: all run test test-cpp test-py test-random bench build setup clean

all: build

# --- set-up -------------------------------------------------------------------------------------
$(VENV)/.apt-ok:
	@missing=""; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	[ -f /usr/include/gtest/gtest.h ] || missing="$$missing libgtest-dev"; \
	$(PY_BOOT) -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; \
	fi
	@mkdir -p $(VENV) && touch $@

$(VENV)/.py-ok: $(VENV)/.apt-ok Makefile
	@[ -x $(PY) ] || $(PY_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check $(PY_PKGS)
	@touch $@

setup: $(VENV)/.py-ok

# --- build --------------------------------------------------------------------------------------
$(BUILD)/CMakeCache.txt: $(VENV)/.py-ok CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY) \
	  -Dnanobind_DIR=$$($(PY) -m nanobind --cmake_dir) >/dev/null

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# --- entry points -------------------------------------------------------------------------------
run: build
	$(PY) examples/quickstart.py

test: build
	$(PY) scripts/check_layers.py --objects $(BUILD)  # include graph and link dependencies between layers; fails on a wrong-way edge
	$(BUILD)/tl_tests --gtest_brief=1 --gtest_filter=-*OnGpu.*  # the GPU tier runs in scripts/gpu_check.sh
	TL_TEST_TIER=cpu $(PY) -m pytest -q -x tests/python tests/error tests/fuzz tests/compat
	@# slow tier: kernels over more than 2^31 elements (needs ~6.5 GiB of free memory, ~1-2 min)
	TL_TEST_TIER=cpu TL_SLOW_TESTS_STRICT=1 $(PY) -m pytest -q -x tests/slow

# More random programs than CI's fixed seed (tests/python/fuzz): TL_RANDOM_PROGRAMS=300 TL_RANDOM_SEED=7 make test-random
test-random: build
	$(PY) -m pytest -q tests/python/fuzz

bench: build
	$(PY) bench/run_all.py

clean:
	rm -rf $(BUILD) python/tilelang/_core*.so
