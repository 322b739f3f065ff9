#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The stack as the client: 20,000 flows to a kernel echo server, each with its port from
# socktab's connect(). The kernel's `ss` must show 20,000 distinct 4-tuples, every port in the
# default range 32768-60999, and connect()'s parity rule: all even ports (relative to the range's
# low end) before any odd one. The range has 14,116 even ports, so 20,000 flows toward one
# destination take all of them and 5,884 odd ones (docs/rules.md R54, R58, O1). Then 100 IPv6
# flows, and a short tcp_crr run (--crr): close, reconnect, with TIME_WAIT on the stack's side.
. "$(dirname "$0")/common.sh" "$@"

"$PEER" echo-server 9000 >"$TMP/server" &
SERVER_PID=$!
check "kernel echo server listens" wait_for '^listening=1' "$TMP/server" 5
check "serve starts" start_serve --connect 192.0.2.1:9000 --flows 20000
check "20000 flows echo-checked" wait_for '^connect_done=1' "$OUT" 120
grep '^connect_done' "$OUT"
ss -tanH state established '( sport = :9000 )' | awk '{ print $4, $3 }' | sort -u >"$TMP/tuples"
n=$(wc -l <"$TMP/tuples")
check "kernel ss: 20000 distinct 4-tuples ($n)" [ "$n" = 20000 ]
awk '{ n = split($1, a, ":"); print a[n] }' "$TMP/tuples" | sort -n >"$TMP/ports"
check "every port in 32768-60999" \
	awk '$1 < 32768 || $1 > 60999 { bad++ } END { exit bad > 0 }' "$TMP/ports"
check "ports distinct" [ "$(sort -u "$TMP/ports" | wc -l)" = 20000 ]
even=$(awk '($1 - 32768) % 2 == 0' "$TMP/ports" | wc -l)
check "parity: all 14116 even ports taken ($even)" [ "$even" = 14116 ]
check "parity: the rest odd ($((20000 - even)))" [ $((20000 - even)) = 5884 ]
check "serve exits cleanly" stop_serve
check "tcp_active_ok=20000" [ "$(counter tcp_active_ok)" = 20000 ]
check "tcp_active_failed=0" [ "$(counter tcp_active_failed)" = 0 ]

# IPv6: 100 flows.
check "serve starts (IPv6 flows)" start_serve --connect "[2001:db8::1]:9000" --flows 100
check "IPv6: 100 flows echo-checked" wait_for '^connect_done=1 ok=100 failed=0' "$OUT" 30
check "IPv6: kernel ss shows them" \
	[ "$(ss -tanH state established '( sport = :9000 )' | grep -c '\[2001:db8::2\]')" = 100 ]
check "serve exits cleanly" stop_serve

# tcp_crr for 3 s with 16 flows.
check "serve starts (crr)" start_serve --connect 192.0.2.1:9000 --flows 16 --crr --duration 3
wait "$SERVE_PID"
SERVE_PID=
ok=$(counter tcp_active_ok)
check "crr: more than 500 transactions ($ok)" [ "${ok:-0}" -gt 500 ]
check "crr: every close left a TIME_WAIT entry" [ "$(counter tcp_timewait)" -ge $((ok - 16)) ]
check "crr: no failed flow" [ "$(counter tcp_active_failed)" -le 16 ]
# Each close keeps its port in TIME_WAIT for 60 s (tcp_tw_reuse applies to loopback only), so
# a fast run may use up the range's 28,232 ports: connect() then fails EADDRNOTAVAIL.
echo "crr transactions/s: $((ok / 3)) connect_errors=$(counter tcp_connect_errors)" \
	"lookup_ns_mean=$(counter lookup_ns_mean)"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
finish
