# Two commands, both safe to repeat:
#   make run    install what is missing (Debian packages), build, start the agent in the foreground
#   make test   install what is missing, build everything, run every test (lint included)
#   make lint   only the lint: clang-format on changed lines, file and function sizes
#   make deb    a Release build in build-deb/ packaged as build-deb/fabricwatch_<version>_<arch>.deb
# Pass agent flags with ARGS, e.g.  make run ARGS='--web.listen-address=127.0.0.1:9868 --log.level=debug'

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
ARGS ?=
CTEST_ARGS ?=

.PHONY: all deps test-deps build build-all run test lint clean demo deb

all: build

deps:
	@tools/install-deps.sh build

test-deps:
	@tools/install-deps.sh test

# Configure once; later builds are incremental. A tree configured by `make test` keeps its tests.
$(BUILD_DIR)/CMakeCache.txt:
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBUILD_TESTING=OFF >/dev/null

build: deps $(BUILD_DIR)/CMakeCache.txt
	@cmake --build $(BUILD_DIR) --target fabricwatch -j $(JOBS)

run: build
	exec $(BUILD_DIR)/exporter/fabricwatch $(ARGS)

build-all: test-deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBUILD_TESTING=ON >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build-all
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 600 $(CTEST_ARGS)

# The Debian package (README "Install"): its own Release tree without tests, the agent built,
# then cpack (deploy/CMakeLists.txt). cpack does not build: the tree is packaged as built.
DEB_BUILD_DIR ?= build-deb
deb: deps
	@cmake -S . -B $(DEB_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
	@cmake --build $(DEB_BUILD_DIR) --target fabricwatch fabricwatch_man -j $(JOBS)
	@cd $(DEB_BUILD_DIR) && cpack -G DEB

# clang-format on the lines changed since a base, and the size limits (tools/lint.sh; `make test`
# runs it too, as ctest lint.format_and_size). LINT_BASE=<commit> chooses the base.
lint: test-deps
	@tools/lint.sh

# The demo (README "Demo: a simulated node"): a simulated HGX RoCE node cycling through every fault
# (tools/fabricsim/scenarios/demo.yaml, looping) and the agent on it at :9868, each port's peer
# read from the simulator's LLDP replay (leaf01-rail1..8). No root, no RDMA hardware. Ctrl-C
# stops both. DEMO_ROOT holds the replay root, DEMO_SPEED compresses time.
DEMO_ROOT ?= $(BUILD_DIR)/demo-node
DEMO_SPEED ?= 1
demo: build
	@cmake --build $(BUILD_DIR) --target fabricsim -j $(JOBS)
	@rm -rf $(DEMO_ROOT)
	@$(BUILD_DIR)/tools/fabricsim/fabricsim build --preset hgx-roce --root $(DEMO_ROOT)
	@trap 'kill $$sim $$agent 2>/dev/null; wait' INT TERM EXIT; \
	  $(BUILD_DIR)/tools/fabricsim/fabricsim run --preset hgx-roce --root $(DEMO_ROOT) \
	    --scenario tools/fabricsim/scenarios/demo.yaml --loop --speed $(DEMO_SPEED) & sim=$$!; \
	  $(BUILD_DIR)/exporter/fabricwatch --path.sysfs=$(DEMO_ROOT)/sys \
	    --path.ethtool=$(DEMO_ROOT)/ethtool --path.kmsg=$(DEMO_ROOT)/kmsg \
	    --path.smp=$(DEMO_ROOT)/smp --path.lldp=$(DEMO_ROOT)/lldp $(ARGS) & agent=$$!; \
	  echo "demo: agent on http://localhost:9868/ (metrics at /metrics); faults print below; Ctrl-C stops"; \
	  wait $$agent

clean:
	rm -rf $(BUILD_DIR)
