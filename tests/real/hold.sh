#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# 10,000 concurrent kernel TCP connections to --tcp-echo, each echo-checked, all open at once
# (peer tcp-hold raises RLIMIT_NOFILE). Then they close, and the stack closes after them.
. "$(dirname "$0")/common.sh" "$@"

check "serve starts" start_serve --tcp-echo 7
timeout 120 "$PEER" tcp-hold 192.0.2.2 7 10000 256 >"$TMP/hold"
rc=$?
cat "$TMP/hold"
check "tcp-hold: 10000 echoes" [ $rc = 0 ]
check "tcp-hold: 10000 held at once" grep -q '^held=10000 ' "$TMP/hold"
timeout 10 "$PEER" tcp-hold "2001:db8::2" 7 100 >"$TMP/hold6"
check "tcp-hold over IPv6: 100 echoes" [ $? = 0 ]
sleep 1 # the FINs of the closed connections
check "serve exits cleanly" stop_serve
check "tcp_accepted=10100" [ "$(counter tcp_accepted)" = 10100 ]
check "every connection closed (passive close: no TIME_WAIT)" [ "$(counter tcp_conns_now)" = 0 ]
check "tcp_timewait=0" [ "$(counter tcp_timewait)" = 0 ]
echo "tcp_retransmits=$(counter tcp_retransmits) lookup_ns_mean=$(counter lookup_ns_mean)"
finish
