#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# 500 kernel UDP clients against --udp-echo --udp-connect-per-peer, 10 datagrams each: every
# echo comes back, and the stack made one connected socket per peer (all in socktab's 4-tuple
# hash). The same run with --udp-hash4 off gives the lookup cost without that hash. Then 100
# IPv6 peers.
. "$(dirname "$0")/common.sh" "$@"

declare -A mean
for h in on off; do
	check "serve starts (hash4 $h)" start_serve --udp-echo 4433 --udp-connect-per-peer \
		--udp-hash4 $h
	timeout 60 "$PEER" udp-peers 192.0.2.2 4433 500 10 >"$TMP/peers"
	rc=$?
	cat "$TMP/peers"
	check "hash4 $h: 5000 echoes of 500 peers" [ $rc = 0 ]
	check "serve exits cleanly" stop_serve
	check "hash4 $h: udp_connected_socks=500" [ "$(counter udp_connected_socks)" = 500 ]
	check "hash4 $h: udp_rx=5000" [ "$(counter udp_rx)" = 5000 ]
	check "hash4 $h: udp_hashed4=500 (connected sockets stay in hash4)" \
		[ "$(counter udp_hashed4)" = 500 ]
	mean[$h]=$(counter lookup_ns_mean)
	echo "hash4=$h lookups=$(counter lookups) lookup_ns_mean=${mean[$h]}"
done
check "serve starts (IPv6)" start_serve --udp-echo 4433 --udp-connect-per-peer
check "IPv6: 100 peers x 3 echoes" timeout 30 "$PEER" udp-peers 2001:db8::2 4433 100 3
check "serve exits cleanly" stop_serve
check "IPv6: udp_connected_socks=100" [ "$(counter udp_connected_socks)" = 100 ]
check "lookups cost less with hash4 (${mean[on]} ns vs ${mean[off]} ns)" \
	awk -v on="${mean[on]}" -v off="${mean[off]}" 'BEGIN { exit !(on < off) }'
finish
