#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The AF_XDP endpoint (examples/xdp_endpoint.c: the serve stack on an AF_XDP socket, batch
# lookups in one read-side section per batch) against kernel peers in another network namespace
# over a veth pair: 10,000 TCP connections held at once, then closed; 100 over IPv6 (neighbour
# discovery by the stack); 500 UDP peers with a connected socket each, every echo back; 5,000
# outgoing flows whose local ports the kernel sees with connect()'s parity (even ports of the
# ephemeral range). Only documentation addresses: the stack is 192.0.2.2 / 2001:db8::2 on xdp0,
# the kernel 192.0.2.1 / 2001:db8::1 on xdp1 in the peer namespace.
# Usage: xdp.sh ENDPOINT PEER XDP_GEN (ENDPOINT "none": built without libxdp, skipped).
if [ "${1:-none}" = none ]; then
	echo "SKIP: built without libxdp/libbpf"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
. "$(dirname "$0")/common.sh" "$@"
GEN=$(realpath "$3")

peer_ns 300
veth_pair xdp0 xdp1
sysctl -qw net.ipv6.conf.xdp0.disable_ipv6=1 2>/dev/null
ip link set xdp0 up
inB ip link set lo up
inB ip addr add 192.0.2.1/24 dev xdp1
inB ip -6 addr add 2001:db8::1/64 dev xdp1 nodad
inB ip link set xdp1 up
# Full checksums and no segment above the MTU from the kernel side, as on a wire.
inB "$GEN" offload-off xdp1 || skip "cannot turn xdp1's offloads off"

# start_xdp ARGS...: the endpoint on xdp0, waiting (20 s at most) for its ready=1; skip when
# the kernel refuses the AF_XDP socket.
start_xdp() {
	"$SOCKTAB" xdp0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 \
		--peer-addr6 2001:db8::1/64 --addr6 2001:db8::2 "$@" >"$OUT" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	wait_ready && return 0
	cat "$TMP/serve.err" >&2
	if grep -q 'AF_XDP socket on\|xsk_umem__create' "$TMP/serve.err"; then
		SERVE_PID=
		skip "no AF_XDP socket on a veth here"
	fi
	return 1
}

check "endpoint starts" start_xdp --tcp-echo 7 --udp-echo 4433 --udp-connect-per-peer \
	--reserve 16384
grep 'AF_XDP on' "$TMP/serve.err"
timeout 100 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 192.0.2.2 7 10000 256 >"$TMP/hold"
rc=$?
cat "$TMP/hold"
check "tcp-hold: 10000 echoes" [ $rc = 0 ]
check "tcp-hold: 10000 held at once" grep -q '^held=10000 ' "$TMP/hold"
check "tcp-hold over IPv6 (neighbour discovery): 100 echoes" \
	timeout 20 nsenter -t "$NS_PID" -n "$PEER" tcp-hold "2001:db8::2" 7 100
timeout 60 nsenter -t "$NS_PID" -n "$PEER" udp-peers 192.0.2.2 4433 500 10 >"$TMP/peers"
rc=$?
cat "$TMP/peers"
check "udp-peers: 5000 echoes of 500 peers" [ $rc = 0 ]
sleep 3 # the FINs of the closed connections
check "endpoint exits cleanly" stop_serve
grep -v '^libbpf: elf: skipping\|^libxdp: ' "$TMP/serve.err" >&2
check "tcp_accepted=10100" [ "$(counter tcp_accepted)" = 10100 ]
check "every connection closed" [ "$(counter tcp_conns_now)" = 0 ]
check "udp_connected_socks=500" [ "$(counter udp_connected_socks)" = 500 ]
check "udp_rx=5000" [ "$(counter udp_rx)" = 5000 ]
check "udp_hashed4=500" [ "$(counter udp_hashed4)" = 500 ]
# The stack's ARP and neighbour discovery: the kernel peer holds xdp0's link address for both.
mac=$(ip -br link show xdp0 | awk '{ print $3 }')
check "kernel ARP entry of 192.0.2.2 is xdp0's $mac" \
	bash -c "nsenter -t $NS_PID -n ip neigh show 192.0.2.2 dev xdp1 | grep -q 'lladdr $mac'"
check "kernel neighbour entry of 2001:db8::2 is xdp0's" \
	bash -c "nsenter -t $NS_PID -n ip -6 neigh show 2001:db8::2 dev xdp1 | grep -q 'lladdr $mac'"
check "no packet dropped for want of a neighbour" [ "$(counter xdp_no_neigh)" = 0 ]
check "batch lookups (lookup_mode=batch)" [ "$(counter lookup_mode)" = batch ]
echo "xdp_mode=$(counter xdp_mode) frames=$(counter xdp_rx_frames)" \
	"batches=$(counter xdp_batches) relookups=$(counter xdp_relookups)" \
	"retransmits=$(counter tcp_retransmits) conns_now=$(counter tcp_conns_now)" \
	"rx_dropped=$(counter xdp_rx_dropped) rx_ring_full=$(counter xdp_rx_ring_full)"

# Outgoing flows: socktab's connect() picks each local port; the kernel's ss sees them.
nsenter -t "$NS_PID" -n "$PEER" echo-server 9000 >"$TMP/server" &
SERVER_PID=$!
check "kernel echo server listens" wait_for '^listening=1' "$TMP/server" 5
check "endpoint starts (flows)" start_xdp --connect 192.0.2.1:9000 --flows 5000
check "5000 flows echo-checked" wait_for '^connect_done=1' "$OUT" 60
grep '^connect_done' "$OUT"
inB ss -tanH state established '( sport = :9000 )' | awk '{ print $4, $3 }' | sort -u \
	>"$TMP/tuples"
check "kernel ss: 5000 distinct 4-tuples ($(wc -l <"$TMP/tuples"))" \
	[ "$(wc -l <"$TMP/tuples")" = 5000 ]
awk '{ n = split($1, a, ":"); print a[n] }' "$TMP/tuples" | sort -n >"$TMP/ports"
check "every port in 32768-60999" \
	awk '$1 < 32768 || $1 > 60999 { bad++ } END { exit bad > 0 }' "$TMP/ports"
even=$(awk '($1 - 32768) % 2 == 0' "$TMP/ports" | wc -l)
check "connect() parity: all 5000 ports even ($even)" [ "$even" = 5000 ]
check "endpoint exits cleanly" stop_serve
check "tcp_active_ok=5000" [ "$(counter tcp_active_ok)" = 5000 ]
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
kill "$NS_PID"
wait "$NS_PID" 2>/dev/null
finish
