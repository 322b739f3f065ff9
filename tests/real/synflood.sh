#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A bounded SYN flood on `socktab serve --http`: 200,000 SYNs from hping3 in the peer
# namespace, one spoofed documentation source (192.0.2.100, held by no device: the SYN-ACKs go
# nowhere, as in a real flood) with incrementing source ports, 15,000 a second or so.
# Each SYN that socktab_syn_decide() lets queue makes a request entry (socktab_req_new), not a
# connection: tcp_synq_now is the net's count of them.
#   1. defaults (--syncookies 1, --backlog 4096): while the flood runs, curl gets its page
#      (its SYN gets a SYN cookie, its ACK makes the connection); the SYN queue never holds
#      more than the backlog + 1 (the kernel's queue-full test); RSS before and after.
#   2. --backlog 60000: the memory per half-open connection, from RSS and the number of
#      request entries; none of them is a connection (tcp_conns_now).
#   3. the control, --syncookies 0: once the queue is full (1,537 requests: the last quarter
#      of tcp_max_syn_backlog is kept for proven peers), curl's SYN is dropped and curl fails.
. "$(dirname "$0")/common.sh" "$@"
command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh installs it)"
command -v hping3 >/dev/null || skip "hping3 is not installed (scripts/deps.sh installs it)"

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"; }

# flood COUNT: hping3 in the background (HPING_PID), at most 60 s.
flood() {
	timeout 60 hping3 -q -S -p 80 -a 192.0.2.100 -i u1 -c "$1" 192.0.2.2 \
		>"$TMP/hping" 2>&1 &
	HPING_PID=$!
}

# curl_during: up to 5 tries of curl (3 s each) while hping3 runs; 0 when one got the page
# with the flood still running.
curl_during() {
	local i code
	for i in 1 2 3 4 5; do
		code=$(curl -s --connect-timeout 2 -m 3 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
		if [ "$code" = 200 ]; then
			kill -0 "$HPING_PID" 2>/dev/null && { echo "curl: 200 on try $i, flood running"; return 0; }
			echo "curl: 200 on try $i, but the flood was over"
			return 1
		fi
		echo "curl: try $i: status $code"
	done
	return 1
}

# 1. defaults
check "serve starts" start_serve --http 80
rss0=$(rss_kb)
flood 200000
sleep 1
check "curl during the flood succeeds" curl_during
ok=1
for _ in 1 2 3; do # three more, each must succeed at the first try
	code=$(curl -s --connect-timeout 2 -m 3 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
	[ "$code" = 200 ] || ok=0
done
check "three more curls during the flood, each at the first try" [ $ok = 1 ]
check "the flood was still running" kill -0 "$HPING_PID"
wait "$HPING_PID"
rss1=$(rss_kb)
check "serve exits cleanly" stop_serve
echo "RSS before=${rss0} kB after=${rss1} kB" \
	"rx_packets=$(counter rx_packets) tcp_synq_peak=$(counter tcp_synq_peak)" \
	"tcp_synq_now=$(counter tcp_synq_now) tcp_synrecv_expired=$(counter tcp_synrecv_expired)"
echo "tcp_syncookies_sent=$(counter tcp_syncookies_sent)" \
	"tcp_syncookies_recv=$(counter tcp_syncookies_recv)" \
	"tcp_syncookies_failed=$(counter tcp_syncookies_failed)" \
	"http_responses=$(counter http_responses)"
check "200000 SYNs reached serve" [ "$(counter rx_packets)" -ge 200000 ]
check "SYN cookies sent" [ "$(counter tcp_syncookies_sent)" -gt 100000 ]
check "curl's connections came from cookies" [ "$(counter tcp_syncookies_recv)" -ge 1 ]
check "every curl answered" [ "$(counter http_responses)" -ge 4 ]
check "SYN queue held at most backlog + 1 = 4097" [ "$(counter tcp_synq_peak)" -le 4097 ]
check "RSS grew less than 16 MB" [ $((rss1 - rss0)) -lt 16384 ]

# 2. memory per half-open connection: 60,000 of them (one source's ports: 65,536 at most)
check "serve starts (--backlog 60000)" start_serve --http 80 --backlog 60000 \
	--max-conns-per-source 0
rss0=$(rss_kb)
flood 200000
wait "$HPING_PID"
rss1=$(rss_kb)
check "serve exits cleanly" stop_serve
n=$(counter tcp_synq_now)
echo "RSS before=${rss0} kB after=${rss1} kB with tcp_synq_now=$n half-open" \
	"tcp_syncookies_sent=$(counter tcp_syncookies_sent)" \
	"tcp_retransmits=$(counter tcp_retransmits) tcp_conns_now=$(counter tcp_conns_now)"
check "tens of thousands half-open ($n)" [ "${n:-0}" -gt 20000 ]
check "the half-open ones are request entries, not connections" \
	[ "$(counter tcp_conns_now)" = 0 ]
[ "${n:-0}" -gt 0 ] && echo "memory per half-open connection: $(((rss1 - rss0) * 1024 / n)) bytes"

# 3. control: no cookies, the SYN queue fills and curl's SYN is dropped
check "serve starts (--syncookies 0)" start_serve --http 80 --syncookies 0
flood 20000
wait "$HPING_PID"
code=$(curl -s --connect-timeout 2 -m 2 -o /dev/null -w '%{http_code}' http://192.0.2.2/)
check "control: without cookies, curl after the flood fails (status $code)" [ "$code" = 000 ]
check "serve exits cleanly" stop_serve
echo "control: tcp_synq_peak=$(counter tcp_synq_peak) tcp_syn_dropped=$(counter tcp_syn_dropped)" \
	"tcp_syncookies_sent=$(counter tcp_syncookies_sent)"
check "control: the queue stopped at 1537" [ "$(counter tcp_synq_peak)" = 1537 ]
check "control: no cookie sent" [ "$(counter tcp_syncookies_sent)" = 0 ]
finish
