# SPDX-License-Identifier: BSD-2-Clause
# Thin wrapper around meson/ninja. `make run` and `make test` install missing Debian packages
# when run as root (scripts/deps.sh), otherwise they print the apt-get line to run.
PREFIX ?= /usr/local
BUILD ?= build
MESON_OPTS ?=

.PHONY: all deps build run test install clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja:
	@scripts/deps.sh
	meson setup $(BUILD) --prefix=$(PREFIX) $(MESON_OPTS) >/dev/null

build: $(BUILD)/build.ninja
	@ninja -C $(BUILD) >/dev/null

# The main job: for now a short self-demo of connect() under port pressure.
run: build
	$(BUILD)/socktab bench connect --range 32768-36863 --sweep 0,0.5,0.95 -N 2000

test: build
	@scripts/run-tests.sh

install: build
	meson configure $(BUILD) --prefix=$(PREFIX) >/dev/null
	meson install -C $(BUILD) >/dev/null
	@echo "installed into $(PREFIX)"

clean:
	rm -rf $(BUILD) build-asan build-tsan build-clang
