#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the libFuzzer targets (clang, ASan+UBSan, in their own build directory) and run them for
# a bounded time. Used by `make fuzz` (FUZZ_SECONDS each) and by `make test` (about 30 s each).
#
#   tests/fuzz/run.sh --build            build only
#   tests/fuzz/run.sh SECONDS [TARGET]   run fuzz_script and fuzz_api (or TARGET) for SECONDS each
#
# The working corpus of each target grows in $FUZZ_BUILD/corpus/TARGET across runs; seeds come
# from tests/fuzz/seeds (fuzz_api) and tests/conformance. A crash, leak, UB report, timeout or
# invariant violation leaves its input in $FUZZ_BUILD/artifacts/ and fails the run; replay it
# with `$FUZZ_BUILD/tests/fuzz/TARGET FILE` (fuzz_api: FUZZ_API_TRACE=1 prints every call).
# Prints one line per target and "N passed, M failed".
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
secs=${1:-60}
targets=${2:-fuzz_script fuzz_api}
build || { echo "fuzz: build failed"; echo "0 passed, 1 failed"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0
fail=0
for t in $targets; do
	corpus=$dir/corpus/$t
	log=$dir/$t.log
	mkdir -p "$corpus" "$dir/artifacts"
	case $t in
	fuzz_api) flags=(-max_len=2048) seeds=(tests/fuzz/seeds tests/conformance) ;;
	# fuzz_script: no -max_len, the default follows the largest seed script.
	*) flags=() seeds=(tests/conformance) ;;
	esac
	start=$SECONDS
	"$dir/tests/fuzz/$t" "${flags[@]}" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" "$corpus" "${seeds[@]}" \
		>"$log" 2>&1
	rc=$?
	runs=$(grep -a '^stat::number_of_executed_units' "$log" | awk '{print $2}')
	ninputs=$(find "$corpus" -type f | wc -l)
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "$t: ${runs:-0} runs in $((SECONDS - start)) s, corpus $ninputs inputs, no crash"
	else
		fail=$((fail + 1))
		echo "$t: FAILED (exit $rc) after $((SECONDS - start)) s; log $log"
		grep -a -E 'VIOLATION|ERROR|SUMMARY|Test unit written' "$log" | head -n 10
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
