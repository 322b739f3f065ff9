#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Packets per second over AF_XDP, measured as a user would: a load generator in another network
# namespace writes frames into a veth pair as fast as the kernel takes them, and the AF_XDP
# endpoint (examples/xdp_endpoint.c, the serve stack) receives, parses, looks up and dispatches
# them. Usage: scripts/xdp-pps.sh [BUILD_DIR] [SECONDS] (root; build/ and 2 s by default; each
# row is the best of XDP_PPS_RUNS runs, 3 by default).
#
#   TCP: ACK segments to N synthetic established connections (--bench-conns N: 10,000 and
#        100,000, with a reservation so that ehash is sized for them), in a shuffled order, with
#        single lookups (--lookup single) and with the batch lookup (the default);
#   UDP: datagrams from 500 peers, each with its connected socket on the endpoint
#        (--udp-connect-per-peer), with socktab's 4-tuple hash on and off; then the kernel's own
#        UDP stack receiving the same stream (one bound and 500 connected sockets, recvmmsg).
#
# For each run: the frames the endpoint processed per second of the generator's run, the
# endpoint's busy time per frame (from a batch's first frame to its last reply sent), and the
# lookups' share of it; "no socket" counts packets whose lookup found nothing (a RST or an ICMP
# error went back: 0 when every packet found its connection or connected socket). Single lookups are timed one by one: the clock's cost (clock_ns, each
# read) is taken out of both the lookup time and the busy time. With two CPUs or more the
# generator (and the veth's receive path, which runs in its context) is pinned to CPU 0 and the
# endpoint to CPU 1. The endpoint sleeps XDP_IDLE_US (200) microseconds after a short batch
# (--xdp-idle-us), as a core busy with other work would: frames gather, and batches are close
# to full (frames/batch). XDP_MODE=skb|native picks the XDP mode (auto: native where the driver
# has it). Only documentation addresses.
set -u
BUILD=$(realpath "${1:-build}")
SECS=${2:-2}
IDLE_US=${XDP_IDLE_US:-200}
RUNS=${XDP_PPS_RUNS:-3}
MODE=${XDP_MODE:-auto}
EP=$BUILD/example_xdp_endpoint
GEN=$BUILD/tests/real/real_xdp_gen
[ "$(id -u)" = 0 ] || { echo "xdp-pps: needs root" >&2; exit 77; }
[ -x "$EP" ] && [ -x "$GEN" ] || { echo "xdp-pps: no $EP (built without libxdp?) or $GEN" >&2; exit 77; }
if [ -z "${XDP_PPS_NS:-}" ]; then
	exec env XDP_PPS_NS=1 unshare -n bash "$0" "$@"
fi
TMP=$(mktemp -d)
NS_PID=
EP_PID=
cleanup() {
	[ -n "$EP_PID" ] && kill -KILL "$EP_PID" 2>/dev/null
	[ -n "$NS_PID" ] && kill -KILL "$NS_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip link set lo up
unshare -n sleep 600 &
NS_PID=$!
for _ in $(seq 50); do
	[ "$(readlink /proc/$NS_PID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
	sleep 0.1
done
inB() { nsenter -t "$NS_PID" -n "$@"; }
ip link add xdp0 type veth peer name xdp1
ip link set xdp1 netns "$NS_PID"
sysctl -qw net.ipv6.conf.xdp0.disable_ipv6=1
ip link set xdp0 up
inB ip link set lo up
inB ip addr add 192.0.2.1/24 dev xdp1
inB ip link set xdp1 up
inB "$GEN" offload-off xdp1
MAC=$(ip -br link show xdp0 | awk '{ print $3 }')
PIN_GEN=()
PIN_EP=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	PIN_GEN=(taskset -c 0)
	PIN_EP=(taskset -c 1)
fi

c() { grep "^$1=" "$TMP/ep.out" | tail -n1 | cut -d= -f2; }

# once LABEL GEN_KIND GEN_N ENDPOINT_ARGS...: one measured run: "NS_PER_FRAME ROW".
once() {
	local label=$1 kind=$2 n=$3
	shift 3
	# The previous run's socket leaves the queue a moment after its process exits (EBUSY).
	for _ in $(seq 25); do
		"${PIN_EP[@]}" "$EP" xdp0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 \
			--xdp-mode "$MODE" --xdp-idle-us "$IDLE_US" "$@" >"$TMP/ep.out" 2>"$TMP/ep.err" &
		EP_PID=$!
		for _ in $(seq 600); do
			grep -q '^ready=1' "$TMP/ep.out" && break
			kill -0 "$EP_PID" 2>/dev/null || break
			sleep 0.1
		done
		grep -q '^ready=1' "$TMP/ep.out" && break
		wait "$EP_PID"
		grep -q 'resource busy' "$TMP/ep.err" || break
		sleep 0.2
	done
	if ! grep -q '^ready=1' "$TMP/ep.out"; then
		echo "xdp-pps: endpoint did not start:" >&2
		grep -v '^libbpf: elf\|^libxdp' "$TMP/ep.err" >&2
		kill -TERM $$
		exit 1
	fi
	inB "${PIN_GEN[@]}" "$GEN" "$kind" xdp1 "$MAC" "$n" "$SECS" >"$TMP/gen.out"
	sleep 0.3
	kill -TERM "$EP_PID"
	wait "$EP_PID"
	EP_PID=
	awk -v label="$label" -v secs="$SECS" -v sent="$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$TMP/gen.out")" \
		-v fr="$(c xdp_rx_frames)" -v busy="$(c xdp_busy_ns)" -v lk="$(c lookup_ns)" \
		-v nl="$(c lookups)" -v clk="$(c clock_ns)" -v mode="$(c lookup_mode)" \
		-v batches="$(c xdp_batches)" -v drop="$(c xdp_rx_dropped)" \
		-v full="$(c xdp_rx_ring_full)" -v xm="$(c xdp_mode)" \
		-v miss=$(($(c tcp_rst_sent) + $(c udp_noport))) 'BEGIN {
		over = mode == "single" ? nl * clk : 0;      # one clock read per timed lookup
		lkc = lk - over; busyc = busy - 2 * over;     # two reads inside the busy time
		printf "%.1f | %s | %s | %.0f | %.0f | %.1f | %.1f | %.0f %% | %.1f | %d | %d |\n", busyc / fr, label, xm,
			sent / secs, fr / secs, busyc / fr, lkc / nl, 100 * lkc / busyc,
			fr / batches, drop + full, miss
	}'
}

# run LABEL ...: RUNS runs of once(); the table gets the least disturbed one (the lowest busy
# time per frame: the machine's other work preempts the endpoint in some runs).
run() {
	for _ in $(seq "$RUNS"); do
		once "$@"
	done | sort -n | head -n1 | cut -d' ' -f2-
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs online; kernel $(uname -r)"
echo "each run: the generator sends for $SECS s; pps = frames processed / $SECS s;" \
	"--xdp-idle-us $IDLE_US; each row the best of $RUNS runs"
echo
echo "| run | XDP mode | generator pps | endpoint pps | ns/frame (busy) | lookup ns/pkt | socktab share | frames/batch | ring drops | no socket |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in 10000 100000; do
	for l in single batch; do
		run "TCP, $n conns, $l lookups" tcp "$n" --bench-conns "$n" --reserve "$n" --lookup "$l"
	done
done
for h in on off; do
	run "UDP, 500 connected peers, hash4 $h" udp 500 --sockperf 4433 --udp-connect-per-peer \
		--udp-hash4 "$h"
	echo "|   (connected sockets made: $(c udp_connected_socks), in hash4: $(c udp_hashed4)) ||||||||||"
done

# The kernel's UDP stack on the same device and stream (the endpoint's XDP program is gone).
ip addr add 192.0.2.2/24 dev xdp0
"${PIN_EP[@]}" "$GEN" kernel-udp 500 $((SECS + 2)) >"$TMP/k.out" &
KPID=$!
for _ in $(seq 50); do grep -q '^listening=1' "$TMP/k.out" && break; sleep 0.1; done
inB "${PIN_GEN[@]}" "$GEN" udp xdp1 "$MAC" 500 "$SECS" >"$TMP/gen.out"
wait "$KPID"
awk -v secs="$SECS" -v sent="$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$TMP/gen.out")" '
	/^received=/ { split($1, a, "="); split($3, b, "=");
		printf "| UDP, kernel: 1 bound + 500 connected sockets, recvmmsg | - | %.0f | %.0f | %s (receiver CPU) | - | - | - | - | - |\n",
			sent / secs, a[2] / secs, b[2] }' "$TMP/k.out"
