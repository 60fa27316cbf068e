# Thin wrapper over CMake presets: the two README commands (make demo, make test) and friends.
PRESET ?= release
BUILD_DIR := $(if $(filter dev,$(PRESET)),build-dev,build)
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Extra cache entries for the configure step (CI: -DSGDSIM_WERROR=ON, warnings as errors in the
# release build too).
CMAKE_ARGS ?=

# Every Debian 12 package the project needs (build, tests, analysis, data).
DEB_PACKAGES := cmake make g++ pkg-config libsimgrid-dev libboost-graph-dev \
  nlohmann-json3-dev libfmt-dev libeigen3-dev zlib1g-dev googletest libgtest-dev \
  openmpi-bin libopenmpi-dev \
  python3-matplotlib python3-pandas python3-numpy python3-pytest python3-jsonschema dataset-fashion-mnist \
  pybind11-dev python3-pybind11 python3-dev python3-nbconvert python3-ipykernel jupyter-nbconvert time graphviz dpkg-dev \
  mkdocs

# What make demo needs: the compiler, the libraries the sgdsim binary links, and the plot's
# Python modules (no test, MPI, Python-module or packaging packages).
DEMO_PACKAGES := cmake make g++ pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev \
  libfmt-dev libeigen3-dev zlib1g-dev python3-matplotlib python3-pandas python3-numpy

# Hardening (docs/hardening.md): build folders of the dev and fuzz presets, seconds per fuzzer.
SANITIZE_PRESET ?= dev-clang
# Preset ci-clang is dev-clang at -O1 with the fuzz targets in the same build, so CI compiles once for
# both make sanitize and make fuzz (SANITIZE_PRESET=ci-clang FUZZ_PRESET=ci-clang).
SANITIZE_DIR ?= build-$(SANITIZE_PRESET)
SANITIZE_CXX := $(if $(filter dev-clang ci-clang,$(SANITIZE_PRESET)),clang++-14,g++)
FUZZ_PRESET ?= fuzz
FUZZ_DIR ?= build-$(FUZZ_PRESET)
FUZZ_SECONDS ?= 60
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
SANITIZE_PACKAGES := $(if $(filter dev-clang ci-clang,$(SANITIZE_PRESET)),$(FUZZ_PACKAGES))

# Installs those of the Debian packages $(1) that are missing (apt-get, as root or with sudo).
install_missing = missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all $(words $(1)) Debian packages present"; fi

.PHONY: deps configure build demo test sanitize fuzz bench figures golden format clean install package docs-check docs

deps:
	@$(call install_missing,$(DEB_PACKAGES))

configure: deps
	cmake --preset $(PRESET) $(CMAKE_ARGS) >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the binary it runs (the tests are built by make test).
demo:
	@$(call install_missing,$(DEMO_PACKAGES))
	cmake --preset $(PRESET) >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sgdsim
	./$(BUILD_DIR)/sgdsim run experiments/examples/01-resnet50-sync-fat-tree.json --out results/demo --overwrite
	/usr/bin/python3 analysis/plot_timeline.py results/demo --out results/demo/timeline.png

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# Debug build with ASan + UBSan and warnings as errors (preset dev-clang: clang-14, so that CI
# builds and tests with GCC in make test and with Clang here; SANITIZE_PRESET=dev uses GCC),
# then every test there but the ones labelled slow (the longest under the sanitizers, or repeats
# of code paths other cases run: tests/CMakeLists.txt says which; ctest -N -L slow lists them) or
# tree (checks of the repository, the docs' numbers and the validation bounds; make test runs
# them), and the release build's end-to-end tests (label cli) running the sanitized sgdsim
# (SGDSIM_TEST_BINARY; the sanitized presets build no driver of their own); a sanitizer report
# fails. Leak checks need ptrace: where a container refuses it, they are switched off (with a
# notice). Allocation stacks are kept to 5 frames (malloc_context_size; ASan's default is 30):
# 10 % less test time, and a report still shows the bad access's whole stack (rerun with
# ASAN_OPTIONS=malloc_context_size=30 for the allocation's).
sanitize: build
	@$(call install_missing,$(SANITIZE_PACKAGES))
	cmake --preset $(SANITIZE_PRESET) -B $(SANITIZE_DIR) >/dev/null
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	@asan=malloc_context_size=5; printf 'int main() { return 0; }\n' | $(SANITIZE_CXX) -fsanitize=address -x c++ - -o $(SANITIZE_DIR)/lsan-probe && \
	  $(SANITIZE_DIR)/lsan-probe >/dev/null 2>&1 || { asan=$$asan:detect_leaks=0; \
	  echo "sanitize: LeakSanitizer cannot run on this machine (ptrace refused?): leak checks off"; }; \
	  set -x; export ASAN_OPTIONS=$$asan UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1; \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -LE 'slow|tree|cli' && \
	  SGDSIM_TEST_BINARY=$(CURDIR)/$(SANITIZE_DIR)/sgdsim SGDSIM_TEST_SANITIZED=1 \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L cli -LE 'slow|tree'

# libFuzzer targets (preset fuzz, clang-14): seed corpora, then FUZZ_SECONDS per target, two at a
# time (tests/fuzz/run.sh prints executions and coverage; a crash fails).
fuzz: deps
	@$(call install_missing,$(FUZZ_PACKAGES))
	cmake --preset $(FUZZ_PRESET) -B $(FUZZ_DIR) >/dev/null
	cmake --build $(FUZZ_DIR) --target fuzzers -j $(JOBS)
	tests/fuzz/make_corpus.sh $(FUZZ_DIR)/corpus
	FUZZ_DIR=$(FUZZ_DIR) tests/fuzz/run.sh -t $(FUZZ_SECONDS) -j 2

# The tree the analytic scheduler's largest rows compare with (a git revision; empty: no
# comparison): its sgdsim is built in $(BASELINE_DIR) from `git archive` and run in the same
# bench run, one row after the other. BENCH_ARGS="--rows scale" runs those rows only.
# ASTRA_SIM: ASTRA-sim's congestion-unaware analytical binary, run beside sgdsim in the
# "astra-sim" rows (not a Debian package; empty: those rows run sgdsim and write ASTRA-sim's
# inputs only). BENCH_ARGS="--rows astra-sim" runs those rows only.
BENCH_BASELINE ?= HEAD~1
BASELINE_DIR := $(BUILD_DIR)/baseline-tree
BASELINE_SGDSIM := $(if $(BENCH_BASELINE),$(BASELINE_DIR)/$(BUILD_DIR)/sgdsim)

bench: build
	@if [ -n "$(BENCH_BASELINE)" ]; then \
	  rev=$$(git rev-parse --verify "$(BENCH_BASELINE)^{commit}") || exit 2; \
	  if [ "$$(cat $(BASELINE_DIR)/REVISION 2>/dev/null)" != "$$rev" ]; then \
	    rm -rf $(BASELINE_DIR) && mkdir -p $(BASELINE_DIR) && \
	    git archive "$$rev" | tar -x -C $(BASELINE_DIR) && \
	    (cd $(BASELINE_DIR) && cmake --preset $(PRESET) >/dev/null) && \
	    echo "$$rev" > $(BASELINE_DIR)/REVISION.pending; \
	  fi; \
	  cmake --build $(BASELINE_DIR)/$(BUILD_DIR) -j $(JOBS) --target sgdsim >/dev/null && \
	  { [ ! -f $(BASELINE_DIR)/REVISION.pending ] || mv $(BASELINE_DIR)/REVISION.pending $(BASELINE_DIR)/REVISION; } && \
	  echo "bench: baseline tree $(BENCH_BASELINE) ($$rev) in $(BASELINE_DIR)"; \
	fi
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sgdsim_bench raw_simgrid_dag simgrid_comm_rate
	./$(BUILD_DIR)/sgdsim_bench --sgdsim ./$(BUILD_DIR)/sgdsim --raw ./$(BUILD_DIR)/raw_simgrid_dag \
	  --smpi-runner tests/smpi/run_smpi_allreduce.sh $(if $(BASELINE_SGDSIM),--baseline $(BASELINE_SGDSIM)) \
	  $(if $(ASTRA_SIM),--astra-sim $(ASTRA_SIM)) $(BENCH_ARGS)

# Every paper experiment: PNGs and report.md in results/figures (see experiments/paper).
figures: build
	experiments/paper/run_all.sh ./$(BUILD_DIR)/sgdsim results/figures

# Installs into PREFIX (default /usr/local): bin/sgdsim, lib/python3/dist-packages/sgdsim (the
# Python module), share/sgdsim/{models/profiles,platforms,
# examples,analysis,data}, share/doc/sgdsim. The prefix can be moved afterwards.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Debian package of the same files under /usr: $(BUILD_DIR)/sgdsim_<version>_amd64.deb.
package: build
	cd $(BUILD_DIR) && cpack -G DEB
	@ls $(BUILD_DIR)/sgdsim_*_amd64.deb

# Reruns the commands named in the <!-- docs-check: ... --> blocks of every Markdown page
# (README.md, docs/**, every tracked *.md) and fails when a number differs
# (tests/repo/docs_check.py; add --update to rewrite the blocks). Also a test.
docs-check: build
	/usr/bin/python3 tests/repo/docs_check.py --bin ./$(BUILD_DIR)/sgdsim

# The manual (docs/, nav in mkdocs.yml) as a website in build/site; a broken link or a page
# missing from the nav fails (--strict, and the test Docs.EveryPageInNav).
docs: deps
	mkdocs build --strict --site-dir $(CURDIR)/build/site

# Rewrites tests/golden/ from the current build (review the diff before committing).
golden: build
	./tests/golden/update.sh ./$(BUILD_DIR)/sgdsim

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build build-dev build-dev-clang build-ci-clang build-fuzz results
