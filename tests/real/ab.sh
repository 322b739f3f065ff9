#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# ApacheBench: 20,000 requests, 50 at a time, against --http. Every connection ends in a
# TIME_WAIT entry on the stack's side; the kernel client reuses its ports within seconds, so
# many SYNs meet those entries and take them over (tcp_tw_syn_reuse).
. "$(dirname "$0")/common.sh" "$@"
command -v ab >/dev/null || skip "ab is not installed (apache2-utils; scripts/deps.sh)"

check "serve starts" start_serve --http 80
timeout 120 ab -n 20000 -c 50 http://192.0.2.2/ >"$TMP/ab" 2>&1
check "ab: Complete requests: 20000" grep -Eq '^Complete requests: +20000$' "$TMP/ab"
check "ab: Failed requests: 0" grep -Eq '^Failed requests: +0$' "$TMP/ab"
grep -E '^(Requests per second|Time per request|Non-2xx)' "$TMP/ab"
check "serve exits cleanly" stop_serve
check "http_responses=20000" [ "$(counter http_responses)" = 20000 ]
check "tcp_timewait=20000" [ "$(counter tcp_timewait)" = 20000 ]
echo "tcp_tw_syn_reuse=$(counter tcp_tw_syn_reuse) tcp_retransmits=$(counter tcp_retransmits)" \
	"lookup_ns_mean=$(counter lookup_ns_mean)"
finish
