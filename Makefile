# SPDX-License-Identifier: BSD-2-Clause
# Thin wrapper around meson/ninja. `make run` and `make test` install missing Debian packages
# when run as root (scripts/deps.sh), otherwise they print the apt-get line to run.
PREFIX ?= /usr/local
BUILD ?= build
MESON_OPTS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps build run test install clean fuzz layout

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja:
	@scripts/deps.sh
	meson setup $(BUILD) --prefix=$(PREFIX) $(MESON_OPTS) >/dev/null

build: $(BUILD)/build.ninja
	@ninja -C $(BUILD) >/dev/null

# The main job: every seed experiment and peer comparison in one run (docs/benchmarks.md).
run: build
	$(BUILD)/socktab bench tour

test: deps build
	@scripts/run-tests.sh

# libFuzzer targets (clang, ASan+UBSan, in build-fuzz): FUZZ_SECONDS each (tests/fuzz/run.sh).
fuzz:
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

# pahole's view of the structs the lookup path reads (docs/design.md, "Cache lines per lookup").
# pahole 1.24 cannot read DWARF 5's _Atomic types: the headers are compiled alone as strict
# DWARF 4 (qualifier dropped, layout unchanged), keeping every type.
layout: build
	@scripts/deps.sh layout
	@gcc -std=c11 -D_GNU_SOURCE -Iinclude -I$(BUILD)/include -Isrc $$(pkg-config --cflags liburcu-memb) -g -gdwarf-4 \
		-gstrict-dwarf -fno-eliminate-unused-debug-types -c -x c src/layout.h \
		-o $(BUILD)/layout.o
	@pahole -C socktab_sock,socktab__sk_cold,socktab__tw,socktab_net,socktab__tables,socktab__uslot2 \
		$(BUILD)/layout.o

install: build
	meson configure $(BUILD) --prefix=$(PREFIX) --libdir=lib >/dev/null
	meson install -C $(BUILD) >/dev/null
	@echo "installed into $(PREFIX)"

clean:
	rm -rf $(BUILD) build-asan build-tsan build-clang build-fuzz
