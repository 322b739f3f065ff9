#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The figures docs/embedding.md reports, one run each (not a test: nothing is checked):
#   ab requests/s through `socktab serve`, and through a kernel server reached over a veth pair
#   set up the same way (two namespaces, same addresses), for scale;
#   sockperf ping-pong latency, TCP and UDP, through `socktab serve`;
#   lookup_ns_mean with 500 connected UDP peers, socktab's UDP 4-tuple hash on and off.
# usage: tests/real/measure.sh build/socktab build/tests/real/real_peer   (root)
set -u
SOCKTAB=$(realpath "$1")
PEER=$(realpath "$2")
[ "$(id -u)" = 0 ] || { echo "measure.sh: needs root" >&2; exit 77; }
N=socktab-measure-$$
ip netns add $N-a && ip netns add $N-b || exit 1
trap 'ip netns pids $N-a | xargs -r kill -KILL; ip netns pids $N-b | xargs -r kill -KILL;
      ip netns del $N-a; ip netns del $N-b' EXIT
A="ip netns exec $N-a"
B="ip netns exec $N-b"
$A ip link set lo up
$B ip link set lo up

serve() { # ARGS...: socktab serve in namespace a, waits for ready=1
	$A "$SOCKTAB" serve --tun st0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 "$@" >/tmp/$N.out &
	for _ in $(seq 50); do grep -q '^ready=1' /tmp/$N.out 2>/dev/null && return; sleep 0.1; done
}
stop() { ip netns pids $N-a | xargs -r kill -TERM; sleep 0.5; }

echo "== ab -n 20000 -c 50, socktab serve --http (TUN)"
serve --http 80
$A ab -q -n 20000 -c 50 http://192.0.2.2/ | grep -E '^(Requests per second|Failed requests)'
stop

echo "== ab -n 20000 -c 50, kernel server (real_peer http-server) over veth"
ip link add veth-a netns $N-a type veth peer name veth-b netns $N-b
$A ip addr add 192.0.2.1/24 dev veth-a
$B ip addr add 192.0.2.2/24 dev veth-b
$A ip link set veth-a up
$B ip link set veth-b up
$B "$PEER" http-server 80 >/dev/null &
sleep 0.5
$A ab -q -n 20000 -c 50 http://192.0.2.2/ | grep -E '^(Requests per second|Failed requests)'
ip netns pids $N-b | xargs -r kill -TERM
$A ip link del veth-a

echo "== sockperf ping-pong -t 5 -m 64, socktab serve --sockperf"
serve --sockperf 11111
for p in --tcp ""; do
	$A sockperf ping-pong $p -i 192.0.2.2 -p 11111 -t 5 -m 64 2>&1 |
		grep -E 'Summary|percentile 99.000' | sed "s/^/${p:-udp} /"
done
stop

echo "== 500 connected UDP peers, 10 datagrams each: lookup_ns_mean"
for h in on off; do
	serve --udp-echo 4433 --udp-connect-per-peer --udp-hash4 $h
	$A "$PEER" udp-peers 192.0.2.2 4433 500 10
	stop
	echo "hash4=$h $(grep -E '^(lookups|lookup_ns_mean)=' /tmp/$N.out | tr '\n' ' ')"
done
rm -f /tmp/$N.out
