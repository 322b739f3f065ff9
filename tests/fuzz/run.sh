#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the libFuzzer targets (clang, ASan+UBSan, in their own build directory) and run them for
# a bounded time. Used by `make fuzz` (FUZZ_SECONDS each).
#
#   tests/fuzz/run.sh --build            build only
#   tests/fuzz/run.sh SECONDS [TARGET]   run fuzz_script and fuzz_api (or TARGET) for SECONDS each
#
# The runs are the meson tests of suite "fuzz" (tests/fuzz/meson.build, fuzz_one.sh).
set -u
cd "$(dirname "$0")/../.."
dir=${FUZZ_BUILD:-build-fuzz}

build() {
	scripts/deps.sh fuzz || return 1
	if [ ! -f "$dir/build.ninja" ]; then
		CC=clang meson setup "$dir" -Dfuzz=true -Db_sanitize=address,undefined \
			-Db_lundef=false -Dc_args=-fno-sanitize-recover=all >/dev/null || return 1
	fi
	ninja -C "$dir" tests/fuzz/fuzz_script tests/fuzz/fuzz_api >/dev/null
}

if [ "${1:-}" = "--build" ]; then
	build
	exit
fi
build || { echo "fuzz: build failed"; echo "0 passed, 1 failed"; exit 1; }
FUZZ_SECONDS=${1:-60} exec meson test -C "$dir" --suite fuzz --no-rebuild --print-errorlogs \
	${2:+"$2"}
