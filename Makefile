# Thin wrapper over CMake presets: the two README commands (make demo, make test) and friends.
PRESET ?= release
BUILD_DIR := $(if $(filter dev,$(PRESET)),build-dev,build)
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Every Debian 12 package the project needs (build, tests, analysis, data).
DEB_PACKAGES := cmake make g++ pkg-config libsimgrid-dev simgrid libboost-graph-dev \
  nlohmann-json3-dev libfmt-dev libeigen3-dev zlib1g-dev googletest libgtest-dev \
  openmpi-bin libopenmpi-dev \
  python3-matplotlib python3-pandas python3-numpy python3-pytest dataset-fashion-mnist time

.PHONY: deps configure build demo test bench figures golden format clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all $(words $(DEB_PACKAGES)) Debian packages present"; fi

configure: deps
	cmake --preset $(PRESET) >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/sgdsim run experiments/examples/01-resnet50-sync-fat-tree.json --out results/demo
	/usr/bin/python3 analysis/plot_timeline.py results/demo --out results/demo/timeline.png

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD_DIR)/sgdsim_bench --sgdsim ./$(BUILD_DIR)/sgdsim --raw ./$(BUILD_DIR)/raw_simgrid_dag \
	  --smpi-runner tests/smpi/run_smpi_allreduce.sh

# Every paper experiment: PNGs and report.md in results/figures (see experiments/paper).
figures: build
	experiments/paper/run_all.sh ./$(BUILD_DIR)/sgdsim results/figures

# Rewrites tests/golden/ from the current build (review the diff before committing).
golden: build
	./tests/golden/update.sh ./$(BUILD_DIR)/sgdsim

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build build-dev results
