# pipewire-audio-session: build, install, demo, tests, benchmarks.
# `make demo` and `make test` install the Debian packages they need (as root).

PREFIX ?= /usr/local
SWIFT ?= swift
MESON_BUILD := build/meson
MODULE := $(MESON_BUILD)/libpipewire-module-audio-session.so

.PHONY: all build deps module swift install demo test unit-test integration-test bench clean

all: build

deps:
	@./scripts/ensure-deps.sh

$(MESON_BUILD)/build.ninja:
	meson setup --prefix=$(PREFIX) $(MESON_BUILD) meson-shim

# The module (C + Swift core, statically linked) and a release pw-session.
module: deps $(MESON_BUILD)/build.ninja
	ninja -C $(MESON_BUILD)

# Debug build of every Swift target, tests included.
swift: deps
	$(SWIFT) build --build-tests

build: module swift

install: module
	meson install -C $(MESON_BUILD)

demo: build
	./scripts/demo.sh

# The test binary that `swift build --build-tests` makes. It is run directly rather
# than through `swift test`: SwiftPM 6.3's `swift test` can exit before it has
# forwarded the last of the binary's output (seen here: the summary line and the
# last suites' results missing, exit status intact), and a test log must be whole.
TEST_BINARY = "$$($(SWIFT) build --show-bin-path)/pipewire-audio-sessionPackageTests.xctest"

unit-test: swift
	$(TEST_BINARY) --testing-library swift-testing --skip IntegrationTests

# On a private headless PipeWire; one sandbox at a time.
integration-test: build
	meson test -C $(MESON_BUILD) --print-errorlogs
	AUDIO_SESSION_MODULE_DIR=$(CURDIR)/$(MESON_BUILD) $(TEST_BINARY) --testing-library swift-testing --no-parallel --filter IntegrationTests

test: unit-test integration-test

bench: module
	./scripts/bench.sh

clean:
	rm -rf $(MESON_BUILD) .build
