#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every test: unit tests (plain, clang, ASan+UBSan), the stress test (plain, ASan, TSan),
# the header check and an install + pkg-config smoke test. Each binary prints "N passed, M
# failed"; a binary that dies without that line counts as one failure. Last line: the totals.
set -u
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run LABEL CMD... : run one test binary, add its counts.
run() {
	local label=$1
	shift
	local start=$SECONDS rc
	timeout 600 "$@" >"$log" 2>&1
	rc=$?
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
	local p=0 f=0
	if [ -n "$line" ]; then
		p=$(echo "$line" | awk '{print $1}')
		f=$(echo "$line" | awk '{print $3}')
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	printf '%-44s %4d passed, %d failed (%ds)\n' "$label" "$p" "$f" $((SECONDS - start))
	if [ "$f" -ne 0 ]; then
		grep -vE '^PASS ' "$log" | tail -n 40 | sed 's/^/    | /'
	fi
}

# A step that is one test (build, compile check).
step() {
	local label=$1
	shift
	if "$@" >"$log" 2>&1; then
		total_pass=$((total_pass + 1))
		printf '%-44s %4d passed, %d failed\n' "$label" 1 0
	else
		total_fail=$((total_fail + 1))
		printf '%-44s %4d passed, %d failed\n' "$label" 0 1
		tail -n 40 "$log" | sed 's/^/    | /'
	fi
}

UNITS="test_connect test_bind test_ehash test_timewait test_api test_listen test_nocliff test_udp test_burst"

setup() { # dir, extra meson args...
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
	ninja -C "$dir" >/dev/null
}

setup_clang() { CC=clang setup build-clang; }

echo "== plain build (gcc, -Werror)"
step "build (gcc)" setup build
for t in $UNITS; do run "unit/$t" build/$t; done
run "unit/test_alloc_fail (every allocation fails once)" build/test_alloc_fail
run "unit/test_hashflood (adversarial 4-tuples)" build/test_hashflood
run "stress/stress_ehash (plain, 3 s)" build/stress_ehash --duration 3
run "torture (plain, 3 s)" build/torture --duration 3 --seed 1
run "cli/bad_input (one line, exit 2 per mistake)" tests/cli/bad_input.sh build/socktab build/torture
run "stress/stress_udp (plain, 3 s)" build/stress_udp --duration 3

echo "== conformance: tests/conformance/*.sock against socktab and the live kernel"
# Kernel backend needs root (or an unprivileged user namespace): exit 77 means it could not
# run; then those lines count as skipped, never as passed.
CORPUS="tests/conformance/*.sock tests/replay/smoke.sock"
build/socktab replay -q --backend kernel tests/replay/smoke.sock >/dev/null 2>&1
if [ $? -eq 77 ]; then
	echo "conformance (kernel backend): SKIPPED: no privilege to create network namespaces"
	skipped=$((skipped + 1))
	run "conformance (socktab backend)" build/socktab replay -q --backend socktab $CORPUS
else
	run "conformance (both backends)" build/socktab replay -q --backend both $CORPUS
fi
run "replay --random 500 --seed 1 (differential)" build/socktab replay --random 500 --seed 1

echo "== benchmarks (smoke: a few seconds; docs/benchmarks.md has the real runs)"
# A build configured before libdpdk-dev was installed lacks the rte_hash peer: reconfigure.
if pkg-config --exists libdpdk 2>/dev/null &&
	build/socktab bench lookup --help | grep -q 'rte_hash no'; then
	meson setup --reconfigure build >/dev/null && ninja -C build >/dev/null
fi
# bench_ok LABEL PATTERN... -- CMD...: the command succeeds and prints every PATTERN line.
bench_ok() {
	local pats=()
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	"$@" >"$log.out" 2>&1 || return 1
	for p in "${pats[@]}"; do grep -qE "$p" "$log.out" || { echo "missing: $p"; return 1; }; done
}
peer_pats=()
pkg-config --exists libdpdk 2>/dev/null && peer_pats+=('^ratio_vs_rte_hash=[0-9]')
pkg-config --exists liburcu-cds 2>/dev/null && peer_pats+=('^ratio_vs_lfht=[0-9]')
step "bench lookup --peer all (20k sockets)" bench_ok '^mem_latency_ns=[0-9]' "${peer_pats[@]}" -- \
	build/socktab bench lookup --sockets 20000 --lookups 200000 --peer all --seed 1
step "bench crr -T 2 -F 400, each variant" bench_ok '^wire_errors=0$' '^throughput=[0-9]' -- \
	build/socktab bench crr -T 2 -F 400 -N 4000 --seed 1
step "bench crr --time-wait" bench_ok '^wire_errors=0$' '^close=fin_time_wait$' -- \
	build/socktab bench crr -T 1 -F 50 -N 500 --time-wait --variant socktab --seed 1
step "bench connect --sweep (small range)" bench_ok '^ports_tried_mean=' -- \
	build/socktab bench connect --range 32768-33791 --sweep 0,0.95 -N 200 --rounds 2 --seed 1
if command -v gnuplot >/dev/null 2>&1; then
	step "bench crr --sweep --plot (gnuplot)" bench_ok 'throughput' -- bash -c \
		"build/socktab bench crr -F 50,100 -N 500 --seed 1 --plot $log.png && test -s $log.png"
fi
rm -f "$log.out" "$log.png"

echo "== clang build (-Werror)"
if command -v clang >/dev/null 2>&1; then
	step "build (clang)" setup_clang
	for t in $UNITS; do run "unit/$t (clang)" build-clang/$t; done
fi

echo "== ASan + UBSan"
step "build (asan+ubsan)" setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=all
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in $UNITS; do run "unit/$t (asan+ubsan)" build-asan/$t; done
run "unit/test_alloc_fail (asan+ubsan, LSan)" build-asan/test_alloc_fail
run "unit/test_hashflood (asan+ubsan)" build-asan/test_hashflood
run "stress/stress_ehash (asan+ubsan, 3 s)" build-asan/stress_ehash --duration 3
run "stress/stress_udp (asan+ubsan, 3 s)" build-asan/stress_udp --duration 3

echo "== TSan"
step "build (tsan)" setup build-tsan -Db_sanitize=thread -Db_lundef=false
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
run "stress/stress_ehash (tsan, 4 s)" build-tsan/stress_ehash --duration 4
run "stress/stress_udp (tsan, 4 s)" build-tsan/stress_udp --duration 4
# torture-tsan.supp: tsan.supp plus one lock-order report of new_child that cannot deadlock.
TSAN_OPTIONS="suppressions=$PWD/tests/stress/torture-tsan.supp halt_on_error=1" \
	run "torture (tsan, 4 s)" build-tsan/torture --duration 4 --seed 2

echo "== libFuzzer (clang, ASan+UBSan, build-fuzz; \`make fuzz\` runs longer)"
step "build (fuzz targets)" tests/fuzz/run.sh --build
run "fuzz/fuzz_script (30 s)" tests/fuzz/run.sh 30 fuzz_script
run "fuzz/fuzz_api (30 s)" tests/fuzz/run.sh 30 fuzz_api

echo "== headers and install"
step "public header alone (C, -Werror)" cc -std=c11 -Wall -Wextra -Werror -Iinclude -c \
	tests/unit/test_headers.c -o /dev/null
if command -v g++ >/dev/null 2>&1; then
	step "public header alone (C++)" g++ -x c++ -Wall -Wextra -Werror -Iinclude -c \
		tests/unit/test_headers.c -o /dev/null
fi
inst=$(mktemp -d)
step "make install + pkg-config example" bash -c "
	make -s install PREFIX=$inst BUILD=build-install >/dev/null &&
	PKG_CONFIG_PATH=\$(dirname \$(find $inst -name socktab.pc)) &&
	export PKG_CONFIG_PATH &&
	cc -std=c11 -Wall -Wextra -Werror examples/hello.c -o $inst/hello \$(pkg-config --cflags --libs socktab) &&
	LD_LIBRARY_PATH=\$(dirname \$(find $inst -name 'libsocktab.so' | head -n1)) $inst/hello"
rm -rf "$inst"

if [ "$skipped" -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $skipped skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
