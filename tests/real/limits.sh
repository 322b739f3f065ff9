#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Idle connections must not lock new clients out. serve with --idle-timeout 3
# --max-conns-per-source 3: three connections from 192.0.2.1 to --tcp-echo, two idle and one
# sending a byte every half second, take that address's share, so curl from it is refused
# (RST) while curl from another address (192.0.2.3) gets its page. After 3 s without a segment
# the two idle connections are reset (the kernel's ss no longer shows them), the busy one
# stays, and curl from 192.0.2.1 works again.
. "$(dirname "$0")/common.sh" "$@"
command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh installs it)"
command -v ss >/dev/null || skip "needs ss (iproute2)"

estab7() { ss -tanH state established '( dport = :7 )' | wc -l; }

check "serve starts" start_serve --tcp-echo 7 --http 80 --idle-timeout 3 --max-conns-per-source 3
ip addr add 192.0.2.3/24 dev st0
exec 3<>/dev/tcp/192.0.2.2/7 4<>/dev/tcp/192.0.2.2/7 5<>/dev/tcp/192.0.2.2/7
( for _ in $(seq 20); do printf x >&5 || exit; sleep 0.5; done ) &
BUSY_PID=$!
check "three connections from 192.0.2.1" [ "$(estab7)" = 3 ]
code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
check "a fourth from 192.0.2.1 is refused (status $code)" [ "$code" = 000 ]
code=$(curl -s -m 3 --interface 192.0.2.3 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
check "curl from 192.0.2.3 gets its page (status $code)" [ "$code" = 200 ]
sleep 4.5 # the idle timeout (3 s) and the check's granularity
check "the two idle connections were reset, the busy one stays ($(estab7))" [ "$(estab7)" = 1 ]
code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
check "curl from 192.0.2.1 works again (status $code)" [ "$code" = 200 ]
kill "$BUSY_PID" 2>/dev/null
wait "$BUSY_PID" 2>/dev/null
exec 3>&- 4>&- 5>&-
check "serve exits cleanly" stop_serve
echo "tcp_idle_closed=$(counter tcp_idle_closed) tcp_src_refused=$(counter tcp_src_refused)" \
	"http_responses=$(counter http_responses)"
check "tcp_idle_closed=2" [ "$(counter tcp_idle_closed)" = 2 ]
check "tcp_src_refused=1" [ "$(counter tcp_src_refused)" = 1 ]
check "http_responses=2" [ "$(counter http_responses)" = 2 ]
finish
