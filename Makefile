# pipewire-audio-session: build, install, demo, tests, benchmarks.
# `make demo` and `make test` install the Debian packages they need (as root).

PREFIX ?= /usr/local
SWIFT ?= swift
MESON_BUILD := build/meson
MODULE := $(MESON_BUILD)/libpipewire-module-audio-session.so

.PHONY: all build deps module module-pw1.4 module-pw1.6 pipewire-1.4 pipewire-1.6 swift install demo \
	test unit-test integration-test integration-test-pw0.3 integration-test-pw1.4 integration-test-pw1.6 bench clean

# PipeWire 1.4 + WirePlumber 0.5 (Debian 13, Fedora, Arch), unpacked from Debian's
# bookworm-backports packages into a private tree: never installed over the system's.
PW14_TREE := build/pipewire-1.4
PW14_BUILD := build/meson-pw1.4

# PipeWire 1.6 + WirePlumber 0.5.18 (Debian sid, Arch, Fedora's newest): a Debian sid root
# filesystem made with mmdebstrap (its C library is newer than Debian 12's); the sandbox
# runs its daemons through the root's own dynamic loader (scripts/pipewire-rootfs.sh).
PW16_TREE := build/pipewire-1.6
PW16_BUILD := build/meson-pw1.6

all: build

deps:
	@./scripts/ensure-deps.sh

$(MESON_BUILD)/build.ninja:
	meson setup --prefix=$(PREFIX) -Dbolt=enabled $(MESON_BUILD) meson-shim

# The module (C + Swift core, statically linked) and a release pw-session.
module: deps $(MESON_BUILD)/build.ninja
	ninja -C $(MESON_BUILD)

# Debug build of every Swift target, tests included.
swift: deps
	./scripts/swiftpm.sh $(SWIFT) build --build-tests

build: module swift

pipewire-1.4: deps
	@./scripts/pipewire-tree.sh $(PW14_TREE) >/dev/null

# The module again, built against PipeWire 1.4's headers, for the 1.4 tests.
$(PW14_BUILD)/build.ninja: | pipewire-1.4
	PKG_CONFIG_PATH=$$(echo $(CURDIR)/$(PW14_TREE)/root/usr/lib/*/pkgconfig) \
		meson setup --prefix=$(PREFIX) -Dbolt=enabled $(PW14_BUILD) meson-shim

module-pw1.4: pipewire-1.4 $(PW14_BUILD)/build.ninja
	ninja -C $(PW14_BUILD)

pipewire-1.6: deps
	@./scripts/pipewire-rootfs.sh $(PW16_TREE) >/dev/null

# The module alone, built against PipeWire 1.6's headers (programs cannot be linked
# against sid's libraries here: the tests' clients are the ones built in $(MESON_BUILD)).
$(PW16_BUILD)/build.ninja: | pipewire-1.6
	PKG_CONFIG_PATH=$(CURDIR)/$(PW16_TREE)/pkgconfig \
		meson setup --prefix=$(PREFIX) -Dbolt=enabled -Dmodule_only=true $(PW16_BUILD) meson-shim

module-pw1.6: pipewire-1.6 $(PW16_BUILD)/build.ninja
	ninja -C $(PW16_BUILD)

# The module, pw-session, libaudiosession (with its header and audio-session.pc), the
# drop-in and the agent's user unit; stripped. ldconfig makes the new library known.
install: module
	meson install --strip -C $(MESON_BUILD)
	-ldconfig

demo: build
	./scripts/demo.sh

# The test binary that `swift build --build-tests` makes. It is run directly rather
# than through `swift test`: SwiftPM 6.3's `swift test` can exit before it has
# forwarded the last of the binary's output (seen here: the summary line and the
# last suites' results missing, exit status intact), and a test log must be whole.
TEST_BINARY = "$$(./scripts/swiftpm.sh $(SWIFT) build --show-bin-path)/pipewire-audio-sessionPackageTests.xctest"

unit-test: swift
	$(TEST_BINARY) --testing-library swift-testing --skip IntegrationTests

# On a private headless PipeWire; one sandbox at a time. The whole suite runs three
# times: on the system's PipeWire 0.3.65 + WirePlumber 0.4, on PipeWire 1.4 +
# WirePlumber 0.5.8, and on PipeWire 1.6 + WirePlumber 0.5.18, with the module built
# against each one's headers.
integration-test: integration-test-pw0.3 integration-test-pw1.4 integration-test-pw1.6

# The role-loopback tests (WirePlumber 0.5's role-based policy) run the 1.4 tree in
# this pass too, with the module built here (it loads in 1.4 unchanged).
integration-test-pw0.3: build pipewire-1.4
	@echo "== integration tests on the system's PipeWire ($$(pkg-config --modversion libpipewire-0.3)) =="
	meson test -C $(MESON_BUILD) --print-errorlogs
	AUDIO_SESSION_MODULE_DIR=$(CURDIR)/$(MESON_BUILD) $(TEST_BINARY) --testing-library swift-testing --no-parallel --filter IntegrationTests

integration-test-pw1.4: swift module-pw1.4
	@echo "== integration tests on PipeWire 1.4 + WirePlumber 0.5 ($(PW14_TREE)) =="
	meson test -C $(PW14_BUILD) --print-errorlogs
	. $(CURDIR)/$(PW14_TREE)/env.sh && AUDIO_SESSION_MODULE_DIR=$(CURDIR)/$(PW14_BUILD) \
		$(TEST_BINARY) --testing-library swift-testing --no-parallel --filter IntegrationTests

# The tests' clients are the host's (the test binary, browsers, players) and 1.6's own
# tools (pw-dump, pw-play, wpctl, …, through the root's loader); the C API's tests use
# the libaudiosession of $(MESON_BUILD).
integration-test-pw1.6: build module-pw1.6
	@echo "== integration tests on $$(cat $(PW16_TREE)/versions) ($(PW16_TREE)) =="
	meson test -C $(PW16_BUILD) --print-errorlogs
	. $(CURDIR)/$(PW16_TREE)/env.sh && AUDIO_SESSION_MODULE_DIR=$(CURDIR)/$(PW16_BUILD) \
		AUDIO_SESSION_CLIENT_BUILD_DIR=$(CURDIR)/$(MESON_BUILD) \
		$(TEST_BINARY) --testing-library swift-testing --no-parallel --filter IntegrationTests

test: unit-test integration-test

bench: module module-pw1.4 module-pw1.6
	./scripts/bench.sh

clean:
	rm -rf $(MESON_BUILD) $(PW14_BUILD) $(PW16_BUILD) .build
