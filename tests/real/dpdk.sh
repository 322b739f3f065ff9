#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The DPDK endpoint (examples/dpdk_endpoint.c) against kernel peers in another network namespace
# over a veth pair, through DPDK's net_af_packet vdev without hugepages or PCI devices: N TCP
# connections held at once (default 10,000), each echo-checked, then closed by the peers; 500
# over IPv6; 500 UDP peers with a connected socket each, every echo back, and 50 over IPv6; SYN
# cookies under a small backlog; outgoing flows whose local ports socktab's connect() chose,
# which the kernel's ss lists with connect()'s parity (even ports of 32768-60999), over IPv4 and
# IPv6; then a shorter run over net_af_xdp where DPDK can start it. With two CPUs or more the endpoint runs two lcores on one socktab net (two queue pairs;
# the vdev has no RSS, so the lcores hand packets over by socktab_net_rss_queue()).
# Only documentation addresses: the endpoint is 192.0.2.2 / 2001:db8::2 on dpdk0, the kernel
# 192.0.2.1 / 2001:db8::1 on dpdk1 in the peer namespace.
# Usage: dpdk.sh ENDPOINT PEER XDP_GEN [N] (ENDPOINT "none": built without libdpdk-dev; N, or
# DPDK_TEST_CONNS, the connections held at once). Above about 14,000 the kernel peer's own
# connect() from its one address slows down (its 14,116 even ports are used up, and each later
# connect walks them before an odd one): 20,000 did not finish in tcp-hold's 60 s here.
# Exit 77 with one line saying why where DPDK, root or the vdev is missing.
if [ "${1:-none}" = none ]; then
	echo "SKIP: built without libdpdk-dev"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
REAL_NO_TUN=1 . "$(dirname "$0")/common.sh" "$@"
command -v ss >/dev/null || skip "needs ss"
EP=$SOCKTAB
GEN=$(realpath "$3")
N=${4:-${DPDK_TEST_CONNS:-10000}}

peer_ns 300
veth_pair dpdk0 dpdk1
sysctl -qw net.ipv6.conf.dpdk0.disable_ipv6=1 2>/dev/null
ip link set dpdk0 up
inB ip link set lo up
inB ip addr add 192.0.2.1/24 dev dpdk1
inB ip -6 addr add 2001:db8::1/64 dev dpdk1 nodad
inB ip link set dpdk1 up
# Full checksums and no segment above the MTU from the kernel side, as on a wire.
inB "$GEN" offload-off dpdk1 || skip "cannot turn dpdk1's offloads off"

# Two lcores (and two queue pairs) where there are two CPUs.
if [ "$(nproc)" -ge 2 ]; then LCORES=0,1 QP=2; else LCORES=0 QP=1; fi
EAL=(-l "$LCORES" --no-huge --no-pci -m 512 --no-shconf --log-level=lib.eal:error
     --vdev "net_af_packet0,iface=dpdk0,qpairs=$QP")

# start_ep ARGS...: the endpoint, until it prints ready=1 (wait_ready); skip when the EAL or
# the vdev would not start (exit status 3). One still running but not ready is killed.
start_ep() {
	"$EP" "${EAL[@]}" -- --addr 192.0.2.2 --peer 192.0.2.1/24 \
		--addr6 2001:db8::2 --peer6 2001:db8::1/64 "$@" >"$OUT" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	wait_ready && return 0
	kill -KILL "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID"
	local rc=$?
	SERVE_PID=
	if [ $rc = 3 ]; then
		NO_START="$(grep -v '^EAL: \(Detected\|Selected\|Physical\)\|^TELEMETRY' "$TMP/serve.err" | tail -n1)"
		[ -n "${OPTIONAL:-}" ] && return 3
		skip "DPDK could not start net_af_packet here: $NO_START"
	fi
	cat "$TMP/serve.err" >&2
	return 1
}

t0=$SECONDS
check "endpoint starts ($(echo "$LCORES" | tr , ' ' | wc -w) lcores, net_af_packet)" \
	start_ep --tcp-echo 7 --udp-echo 4433 --reserve $((N + 4096))
head -n1 "$OUT"
timeout 100 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 192.0.2.2 7 "$N" 256 >"$TMP/hold"
rc=$?
cat "$TMP/hold"
check "tcp-hold: $N echoes" [ $rc = 0 ]
check "tcp-hold: $N held at once" grep -q "^held=$N " "$TMP/hold"
check "tcp-hold over IPv6: 500 echoes" \
	timeout 30 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 2001:db8::2 7 500
timeout 60 nsenter -t "$NS_PID" -n "$PEER" udp-peers 192.0.2.2 4433 500 10 >"$TMP/peers"
rc=$?
cat "$TMP/peers"
check "udp-peers: 5000 echoes of 500 peers" [ $rc = 0 ]
check "udp-peers over IPv6: 150 echoes of 50 peers" \
	timeout 20 nsenter -t "$NS_PID" -n "$PEER" udp-peers 2001:db8::2 4433 50 3
# The peers closed their connections: each FIN takes its connection through LAST_ACK.
for _ in $(seq 100); do
	[ "$(inB ss -tanH state fin-wait-1 state fin-wait-2 '( dport = :7 )' | wc -l)" = 0 ] && break
	sleep 0.1
done
check "endpoint exits cleanly" stop_serve
for k in lcores rx_packets handoffs handoffs_dropped lookups tcp_accepted tcp_closed tcp_open_at_exit \
	 tcp_retransmits tcp_relookups udp_connected_socks udp_hashed4 lookup_ns_mean \
	 quiescent_ns_mean quiescent_ns_max; do
	printf '%s=%s ' "$k" "$(counter $k)"
done
echo
check "tcp_accepted=$((N + 500))" [ "$(counter tcp_accepted)" = $((N + 500)) ]
check "every connection closed by its FIN (none open at exit)" [ "$(counter tcp_open_at_exit)" = 0 ]
check "udp_connected_socks=550" [ "$(counter udp_connected_socks)" = 550 ]
check "udp_hashed4=550 (every peer's socket in hash4)" [ "$(counter udp_hashed4)" = 550 ]
check "udp_rx=5150" [ "$(counter udp_rx)" = 5150 ]
check "batch lookups" [ "$(counter lookup_mode)" = batch ]

# SYN cookies: a backlog of 8 against 256 connects at once.
check "endpoint starts (backlog 8)" start_ep --tcp-echo 7 --backlog 8 --lookup single
check "tcp-hold through SYN cookies: 2000 echoes" \
	timeout 60 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 192.0.2.2 7 2000 256
check "endpoint exits cleanly" stop_serve
echo "tcp_cookies_sent=$(counter tcp_cookies_sent) tcp_cookies_ok=$(counter tcp_cookies_ok)" \
	"tcp_accepted=$(counter tcp_accepted)"
check "children from cookies (tcp_cookies_ok > 0)" [ "$(counter tcp_cookies_ok)" -gt 0 ]
check "tcp_accepted=2000" [ "$(counter tcp_accepted)" = 2000 ]

# Outgoing flows: socktab's connect() picks each local port (on the lcore's queue); the kernel's
# ss sees them.
nsenter -t "$NS_PID" -n "$PEER" echo-server 9000 >"$TMP/server" &
SERVER_PID=$!
check "kernel echo server listens" wait_for '^listening=1' "$TMP/server" 5
# flows FAMILY-ADDR COUNT: the endpoint's flows, then the kernel's view of their ports.
flows() {
	local to=$1 n=$2
	check "endpoint starts (flows to $to)" start_ep --connect "$to" --flows "$n"
	check "$n flows echo-checked" wait_for '^connect_done=1' "$OUT" 60
	grep '^connect_done' "$OUT"
	inB ss -tanH state established '( sport = :9000 )' | awk '{ print $4, $3 }' | sort -u \
		>"$TMP/tuples"
	check "kernel ss: $n distinct 4-tuples ($(wc -l <"$TMP/tuples"))" \
		[ "$(wc -l <"$TMP/tuples")" = "$n" ]
	awk '{ n = split($1, a, ":"); print a[n] }' "$TMP/tuples" | sort -n >"$TMP/ports"
	check "every port in 32768-60999" \
		awk '$1 < 32768 || $1 > 60999 { bad++ } END { exit bad > 0 }' "$TMP/ports"
	even=$(awk '($1 - 32768) % 2 == 0' "$TMP/ports" | wc -l)
	check "connect() parity: all $n ports even ($even)" [ "$even" = "$n" ]
	check "endpoint exits cleanly" stop_serve
	check "tcp_active_ok=$n" [ "$(counter tcp_active_ok)" = "$n" ]
	echo "handoffs=$(counter handoffs) tcp_retransmits=$(counter tcp_retransmits)"
	# The endpoint reset its flows at exit: the kernel's side is gone before the next run.
	for _ in $(seq 50); do
		[ "$(inB ss -tanH state established '( sport = :9000 )' | wc -l)" = 0 ] && break
		sleep 0.1
	done
}
flows 192.0.2.1:9000 4000
flows "[2001:db8::1]:9000" 500
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"

# The same endpoint over net_af_xdp (one lcore, the veth's one queue), where the kernel gives
# AF_XDP sockets to DPDK: a shorter run; where it cannot start, this part alone is left out.
EAL=(-l 0 --no-huge --no-pci -m 512 --no-shconf --log-level=lib.eal:error
     --log-level=pmd.net.af_xdp:error --vdev net_af_xdp0,iface=dpdk0)
OPTIONAL=1 start_ep --tcp-echo 7 --udp-echo 4433
case $? in
0)
	check "net_af_xdp: tcp-hold 1000 echoes" \
		timeout 60 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 192.0.2.2 7 1000 256
	check "net_af_xdp: tcp-hold over IPv6 100 echoes" \
		timeout 30 nsenter -t "$NS_PID" -n "$PEER" tcp-hold 2001:db8::2 7 100
	check "net_af_xdp: udp-peers 100 x 3" \
		timeout 30 nsenter -t "$NS_PID" -n "$PEER" udp-peers 192.0.2.2 4433 100 3
	check "net_af_xdp: endpoint exits cleanly" stop_serve
	check "net_af_xdp: udp_hashed4=100" [ "$(counter udp_hashed4)" = 100 ]
	;;
3) echo "net_af_xdp left out: it did not start here ($NO_START)" ;;
*) check "net_af_xdp: endpoint starts" false ;;
esac
kill "$NS_PID"
wait "$NS_PID" 2>/dev/null
echo "seconds=$((SECONDS - t0))"
finish
