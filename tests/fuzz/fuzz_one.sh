#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run one libFuzzer target for $FUZZ_SECONDS (default 30): tests/fuzz/fuzz_one.sh TARGET_EXE
# The working corpus grows in <build>/corpus/TARGET across runs; seeds come from tests/fuzz/seeds
# (fuzz_api) and tests/conformance. A crash, leak, UB report, timeout or invariant violation
# leaves its input in <build>/artifacts/ and fails the run; replay it with `TARGET_EXE FILE`
# (fuzz_api: FUZZ_API_TRACE=1 prints every call). Prints "N passed, M failed".
set -u
exe=$1
t=$(basename "$exe")
build=$(cd "$(dirname "$exe")/../.." && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
secs=${FUZZ_SECONDS:-30}
corpus=$build/corpus/$t
log=$build/$t.log
mkdir -p "$corpus" "$build/artifacts"
case $t in
fuzz_api) flags=(-max_len=2048) seeds=("$src/tests/fuzz/seeds" "$src/tests/conformance") ;;
# fuzz_script: no -max_len, the default follows the largest seed script.
*) flags=() seeds=("$src/tests/conformance") ;;
esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
"$exe" "${flags[@]}" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$corpus" "${seeds[@]}" \
	>"$log" 2>&1
rc=$?
runs=$(grep -a '^stat::number_of_executed_units' "$log" | awk '{print $2}')
if [ "$rc" -eq 0 ]; then
	echo "$t: ${runs:-0} runs in $((SECONDS - start)) s, corpus $(find "$corpus" -type f | wc -l) inputs, no crash"
	echo "1 passed, 0 failed"
	exit 0
fi
echo "$t: FAILED (exit $rc) after $((SECONDS - start)) s; log $log"
grep -a -E 'VIOLATION|ERROR|SUMMARY|Test unit written' "$log" | head -n 10
echo "0 passed, 1 failed"
exit 1
