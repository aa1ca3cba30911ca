# Two commands, both safe to repeat:
#   make run    install what is missing (Debian packages), build, start the agent in the foreground
#   make test   install what is missing, build everything, run every test
# Pass agent flags with ARGS, e.g.  make run ARGS='--web.listen-address=127.0.0.1:9868 --log.level=debug'

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
ARGS ?=
CTEST_ARGS ?=

.PHONY: all deps test-deps build build-all run test clean

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

clean:
	rm -rf $(BUILD_DIR)
