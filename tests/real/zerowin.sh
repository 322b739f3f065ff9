#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A zero window must be probed, not given up (RFC 1122 4.2.2.17), while the peer answers the
# probes. A kernel client (slow_reader) with a 4 KB receive buffer sends 1 MB to --tcp-echo and
# stops reading for 15 s: the echo fills its window and serve probes it. With --tcp-retries 3
# --rto-max-ms 1000 a connection that counted its probes as retransmissions would be reset
# after 2.4 s (0.2 + 0.4 + 0.8 + 1); the probes the kernel answers must keep it, and the whole
# megabyte must come back once the client reads. Then the same with the peer gone (st0 down):
# the unanswered probes give the connection up after 3 of them.
. "$(dirname "$0")/common.sh" "$@"
READER=$(dirname "$PEER")/real_slow_reader
[ -x "$READER" ] || skip "no $READER"

check "serve starts" start_serve --tcp-echo 7 --tcp-retries 3 --rto-max-ms 1000
timeout 60 "$READER" 192.0.2.2 7 1000000 15 >"$TMP/reader"
rc=$?
cat "$TMP/reader"
check "the connection held 15 s with a zero window, and the echo is complete" [ $rc = 0 ]
check "serve exits cleanly" stop_serve
probes=$(counter tcp_probes)
echo "tcp_probes=$probes tcp_timeouts=$(counter tcp_timeouts)" \
	"tcp_retransmits=$(counter tcp_retransmits)"
check "more than 10 probes answered (over 3 times --tcp-retries)" [ "${probes:-0}" -gt 10 ]
check "no connection timed out" [ "$(counter tcp_timeouts)" = 0 ]

check "serve starts (peer goes away)" start_serve --tcp-echo 7 --tcp-retries 3 --rto-max-ms 1000
timeout 60 "$READER" 192.0.2.2 7 1000000 3 >"$TMP/reader" &
READER_PID=$!
sleep 3.5 # the window is closed and probed
ip link set st0 down
sleep 6 # 3 unanswered probes 1 s apart, the give-up at the 4th firing (4 s), and slack
check "serve exits cleanly" stop_serve
kill "$READER_PID" 2>/dev/null
wait "$READER_PID" 2>/dev/null
echo "tcp_probes=$(counter tcp_probes) tcp_timeouts=$(counter tcp_timeouts)"
check "unanswered probes: the connection given up" [ "$(counter tcp_timeouts)" = 1 ]
check "nothing left open" [ "$(counter tcp_conns_now)" = 0 ]
finish
