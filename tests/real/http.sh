#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# curl against --http over IPv4 and IPv6: status, body, and the TIME_WAIT the stack keeps
# after closing first, as its SIGUSR1 `ss` dump shows it.
. "$(dirname "$0")/common.sh" "$@"
command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh installs it)"

check "serve starts" start_serve --http 80 --ss-state time-wait --ss-sport 80
for url in http://192.0.2.2/ "http://[2001:db8::2]/"; do
	code=$(curl -s -m 5 -o "$TMP/body" -w '%{http_code}' "$url")
	check "curl $url: status 200" [ "$code" = 200 ]
	check "curl $url: body" [ "$(cat "$TMP/body")" = "Hello from socktab serve" ]
done
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' http://192.0.2.2:8080/)
check "curl to a closed port: refused (RST)" [ "$code" = 000 ]
sleep 0.2
kill -USR1 "$SERVE_PID"
wait_for '^ss_total=' "$OUT" 5
check "ss --ss-state time-wait: two TIME-WAIT lines" \
	[ "$(grep -c '^TIME-WAIT .*:80 ' "$OUT")" = 2 ]
check "ss dump: nothing but TIME-WAIT" [ "$(counter ss_total)" = 2 ]
check "ss dump: the IPv6 entry" grep -q '^TIME-WAIT .*\[2001:db8::2\]:80 .*\[2001:db8::1\]:' "$OUT"
check "serve exits cleanly" stop_serve
check "http_responses=2" [ "$(counter http_responses)" = 2 ]
check "tcp_timewait=2" [ "$(counter tcp_timewait)" = 2 ]
check "tcp_rst_sent=1" [ "$(counter tcp_rst_sent)" = 1 ]
check "no invalid packets" [ "$(counter rx_invalid)" = 0 ]
finish
