#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Benchmark smoke runs (a few seconds each; docs/benchmarks.md has the real runs): every
# benchmark runs and prints the key=value lines its readers rely on.
#   tests/bench/smoke.sh SOCKTAB_EXE
# Prints one line per check and "N passed, M failed".
set -u
exe=$1
pass=0
fail=0
out=$(mktemp)
trap 'rm -f "$out" "$out.png" "$out.tour"' EXIT

# check LABEL PATTERN... -- CMD...: CMD succeeds and prints a line matching every PATTERN.
check() {
	local label=$1 pats=() p
	shift
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	if ! timeout 300 "$@" >"$out" 2>&1; then
		echo "FAIL $label: exit status $?"
		tail -n 5 "$out" | sed 's/^/    | /'
		fail=$((fail + 1))
		return
	fi
	for p in "${pats[@]}"; do
		if ! grep -qE "$p" "$out"; then
			echo "FAIL $label: no line matches $p"
			fail=$((fail + 1))
			return
		fi
	done
	echo "PASS $label"
	pass=$((pass + 1))
}

peers=()
"$exe" bench lookup --help 2>&1 | grep -q 'rte_hash yes' && peers+=('^ratio_vs_rte_hash=[0-9]')
"$exe" bench lookup --help 2>&1 | grep -q 'lfht yes' && peers+=('^ratio_vs_lfht=[0-9]')
check "bench lookup --peer all (20k sockets)" '^mem_latency_ns=[0-9]' "${peers[@]}" \
	'^peer=socktab-sections$' '^ratio_vs_socktab-sections=[0-9]' \
	'^socktab_vs_burst_limit=[0-9]' '^socktab_vs_burst_limit_rounds=[0-9.]+-[0-9.]+$' -- \
	"$exe" bench lookup --sockets 20000 --lookups 200000 --peer all --seed 1
check "bench lookup --touch --refs --threads 2 (20k sockets)" '^ratio_vs_socktab-ref=[0-9]' \
	'^scaling=[0-9]' '^bytes_per_socket=[0-9]' '^bytes_per_timewait=[0-9]' '^hits=200000$' -- \
	"$exe" bench lookup --sockets 20000 --lookups 200000 --peer all --touch 64 --refs \
	--threads 2 --seed 1
check "bench lookup --mode listener --burst 8 --refs" '^mode=listener$' '^hits=200000$' \
	'^ratio_vs_socktab-ref=[0-9]' '^ratio_vs_socktab-sections=[0-9]' -- \
	"$exe" bench lookup --sockets 20000 --lookups 200000 --mode listener --burst 8 --refs \
	--timewait 0 --seed 1
# -6: IPv6 keys and sockets (2001:db8::/32 toward [::1]:80), the peers' 37-byte key; every hit
# found by every table, the family named in the header. Established (single lookups and
# bursts, misses included) and the SYN flood on an IPv6 listener.
check "bench lookup -6 --peer all --touch 64 --threads 2 (20k sockets)" '^family=ipv6$' \
	'^peer_key_bytes=37$' '^hits=200000$' '^lookups_per_sec=[1-9]' '^ratio_vs_socktab-ref=[0-9]' \
	'^bytes_per_timewait=[0-9]' "${peers[@]}" -- \
	"$exe" bench lookup -6 --sockets 20000 --lookups 200000 --peer all --touch 64 --refs \
	--threads 2 --seed 1
check "bench lookup --ipv6 --burst 16 --misses 10" '^family=ipv6$' '^burst_native=yes$' \
	'^lookups_per_sec=[1-9]' "${peers[@]}" -- bash -c \
	"'$exe' bench lookup --ipv6 --sockets 20000 --lookups 200000 --peer all --burst 16 \
	--misses 10 --timewait 0 --seed 1 >'$out.tour' && cat '$out.tour' &&
	! grep -q '^error=' '$out.tour'"
check "bench lookup -6 --mode listener --burst 8 --refs" '^family=ipv6$' '^mode=listener$' \
	'^hits=200000$' '^ratio_vs_socktab-ref=[0-9]' -- \
	"$exe" bench lookup -6 --sockets 20000 --lookups 200000 --mode listener --burst 8 --refs \
	--timewait 0 --seed 1
check "bench lookup (IPv4 default names its family)" '^family=ipv4$' '^peer_key_bytes=12$' \
	'^hits=100000$' -- \
	"$exe" bench lookup --sockets 5000 --lookups 100000 --peer socktab --timewait 0 --seed 1
check "bench batch, every kind (5k sockets)" '^kind=tcp4$' '^kind=tcp6$' '^kind=udp4$' \
	'^kind=udp6$' '^batch_speedup=[0-9]' '^cpu=' -- \
	"$exe" bench batch --sockets 5000 --lookups 50000 --rounds 3 --seed 1
check "bench batch --mixed (every key found, both modes)" '^mixed_vs_per_kind=[0-9]' \
	'^mixed_vs_burst_limit=[0-9]' -- \
	"$exe" bench batch --mixed --sockets 20000 --lookups 100000 --rounds 3 --seed 1
check "bench scale --rounds (crr rounds taking turns)" '^crr_scaling_2=[0-9]' \
	'^crr_scaling_2_rounds=[0-9]' -- \
	"$exe" bench scale --threads 1,2 --sockets 20000 -F 100 -l 0.2 --rounds 3 --no-kernel --seed 1
check "bench crr -T 2 -F 400, each variant" '^wire_errors=0$' '^throughput=[0-9]' -- \
	"$exe" bench crr -T 2 -F 400 -N 4000 --seed 1
# A positive paired_scaling (both phases ran and counted), and with two CPUs the placement probe.
paired=('^wire_errors=0$' '^paired_scaling=([1-9]|0\.[0-9]*[1-9])')
[ "$(nproc)" -ge 2 ] && paired+=('^line_transfer_ns=[1-9]')
check "bench crr --paired (thread 0 alone and both, in turns)" "${paired[@]}" -- \
	"$exe" bench crr -T 2 -F 200 -l 0.4 --paired 20 --variant socktab --seed 1
check "bench crr --port-shares (a port share per thread)" '^wire_errors=0$' \
	'^connect_errors=0$' '^port_shares=per_thread$' -- \
	"$exe" bench crr -T 2 -F 400 -N 4000 --port-shares --port-per-thread --variant socktab \
	--seed 1
check "bench crr --incoming-cpu (each thread's SYNs to its own listener)" '^wire_errors=0$' \
	'^connect_errors=0$' '^incoming_cpu=per_thread$' -- \
	"$exe" bench crr -T 2 -F 400 -N 4000 --incoming-cpu --port-shares --variant socktab --seed 1
check "bench crr --wildcard (listeners on 0.0.0.0)" '^wire_errors=0$' '^connect_errors=0$' \
	'^listener_address=wildcard$' -- \
	"$exe" bench crr -T 2 -F 400 -N 4000 --wildcard --variant socktab --seed 1
check "bench crr --time-wait" '^wire_errors=0$' '^close=fin_time_wait$' -- \
	"$exe" bench crr -T 1 -F 50 -N 500 --time-wait --variant socktab --seed 1
# --full-walk: every connect() examines the 256 first-parity ports of the 512-port range and
# some of the second, on linux-6.1 and linux alike (rows 2 and 3 of the summary), whatever their
# speed: at least 256 ports tried, at most the 512 of the range (how far into the second parity
# a connect() walks depends on the two threads' timing: 258-295 here, more on a loaded machine).
check "bench crr --full-walk: every connect() walks the first parity" \
	'^full_walk_transactions=144$' \
	'^linux +400 +[0-9.]+ +[0-9]+ +[0-9.]+ +(25[6-9]|2[6-9][0-9]|[34][0-9][0-9]|50[0-9]|51[0-2])\.' \
	'^linux-6.1 +400 +[0-9.]+ +[0-9]+ +[0-9.]+ +(25[6-9]|2[6-9][0-9]|[34][0-9][0-9]|50[0-9]|51[0-2])\.' -- \
	"$exe" bench crr -T 2 -F 400 -N 120 --rounds 1 --range 32768-33279 --full-walk --seed 1
# The tour (a short one): both sides' figures of each seed pair, and no WARNING: line (ports
# tried differing inside a pair).
check "bench tour -N 30 (seed pairs comparable)" '^per_port_ratio=[0-9]' '^ports_tried_before=' \
	'^ports_tried_after=' '^tour_seconds=' -- bash -c \
	"'$exe' bench tour -N 30 --sockets 1000 --seed 1 >'$out.tour' && cat '$out.tour' &&
	! grep -q '^WARNING:' '$out.tour'"
check "bench connect --sweep (small range)" '^ports_tried_mean=' -- \
	"$exe" bench connect --range 32768-33791 --sweep 0,0.95 -N 200 --rounds 2 --seed 1
# -6: IPv6 connect() toward [::1]:80, every variant; no failed connect(), one port tried when the
# range is empty, every first-parity port (512 of the 1024) and more at 95 % on the kernel's walk.
check "bench connect -6 --sweep (small range)" '^family=ipv6$' '^destination=\[::1\]:80$' \
	'^connect_ns_mean=[1-9]' \
	'^socktab +0\.00 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00 ' \
	'^socktab +0\.95 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.00 ' \
	'^linux +0\.95 +[0-9.]+ +[0-9.]+ +[0-9.]+ +(51[2-9]|5[2-9][0-9]|[6-9][0-9][0-9]|10[0-2][0-9])\.' \
	'^linux-6\.1 +0\.95 +[0-9.]+ +[0-9.]+ +[0-9.]+ +(51[2-9]|5[2-9][0-9]|[6-9][0-9][0-9]|10[0-2][0-9])\.' -- \
	bash -c "'$exe' bench connect -6 --range 32768-33791 --sweep 0,0.95 -N 200 --rounds 2 \
	--seed 1 >'$out.tour' && cat '$out.tour' && ! grep -q '^failures=[1-9]' '$out.tour'"
check "bench udp --connected 50" '^hash4_speedup=[0-9]' -- \
	"$exe" bench udp --connected 50 --hash4 both -l 0.2
check "bench rss --queues 4" '^rss_on_queue_pct=100' -- \
	"$exe" bench rss --queues 4 --occupancy 0.2 -N 200 --seed 1
check "bench rss (queue share empty and 95 % full)" '^cpu=' '^full_vs_empty_q4=[0-9]' \
	'^full_vs_empty_q16=[0-9]' '^rss_on_queue_pct_q4=100\.00' '^rss_on_queue_pct_q16=100\.00' \
	'^failures_q16=0$' '^index_bytes_per_destination_q16=4160$' -- \
	"$exe" bench rss -N 1000 --seed 1
# Small counts: the keys are there and what is exact holds (no slab for a reserved net, every
# entry expired in budgets of 64); the time bounds are for the full run (docs/embedding.md).
check "bench poll (small)" '^cpu=' '^alloc_reserved_slabs_allocated=0$' \
	'^alloc_plain_new_child_worst_call_us=[0-9]' '^tick_budget_entries_per_call=64\.' \
	'^tick_budget_worst_call_us=[0-9]' '^spin_20us_max_us=[0-9]' -- \
	"$exe" bench poll --entries 6400 --children 5000 --rounds 1
if command -v gnuplot >/dev/null 2>&1; then
	check "bench crr --sweep --plot (gnuplot)" 'throughput' -- bash -c \
		"'$exe' bench crr -F 50,100 -N 500 --seed 1 --plot '$out.png' && test -s '$out.png'"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
