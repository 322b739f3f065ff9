#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Closed ports, IPv4 and IPv6: a SYN gets RST|ACK, so the kernel's connect() fails with
# ECONNREFUSED; a datagram gets ICMP port unreachable, so a connected kernel UDP socket sees
# ECONNREFUSED.
. "$(dirname "$0")/common.sh" "$@"

check "serve starts" start_serve --tcp-echo 7 --udp-echo 9
for a in 192.0.2.2 2001:db8::2; do
	check "TCP $a:81: ECONNREFUSED" "$PEER" refused-tcp $a 81
	check "UDP $a:99: ECONNREFUSED" "$PEER" refused-udp $a 99
	check "TCP $a:7 (open): no refusal" bash -c "! '$PEER' refused-tcp $a 7 >/dev/null"
done
check "serve exits cleanly" stop_serve
check "tcp_rst_sent=2" [ "$(counter tcp_rst_sent)" = 2 ]
check "icmp_unreach_sent=2" [ "$(counter icmp_unreach_sent)" = 2 ]
finish
