#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# sockperf ping-pong, TCP and UDP, 2 s each, against --sockperf (sockperf's server side: an
# echo that clears the client flag of each message).
. "$(dirname "$0")/common.sh" "$@"
command -v sockperf >/dev/null || skip "sockperf is not installed (scripts/deps.sh)"

check "serve starts" start_serve --sockperf 11111
for proto in tcp udp; do
	flag=
	[ $proto = tcp ] && flag=--tcp
	timeout 30 sockperf ping-pong $flag -i 192.0.2.2 -p 11111 -t 2 -m 64 >"$TMP/sp" 2>&1
	obs=$(sed -n 's/.*Total \([0-9]*\) observations.*/\1/p' "$TMP/sp" | tail -n1)
	check "sockperf $proto: at least 1000 round trips (${obs:-0})" [ "${obs:-0}" -ge 1000 ]
	check "sockperf $proto: no error" bash -c "! grep -qi 'error\|no messages' '$TMP/sp'"
	avg=$(sed -n 's/.*Summary: Latency is \([0-9.]*\) usec.*/\1/p' "$TMP/sp")
	p99=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$TMP/sp")
	echo "sockperf_${proto}_avg_us=$avg sockperf_${proto}_p99_us=$p99"
done
check "serve exits cleanly" stop_serve
check "UDP datagrams echoed" [ "$(counter udp_tx)" -gt 1000 ]
finish
