#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# socktab serve --xdp on a device whose address the kernel holds too (docs/sharing.md): the
# steering program sends socktab's flows to the AF_XDP socket and everything else to the
# kernel. One veth pair: xdp0 here holds 192.0.2.2/24 in the kernel and is socktab's device,
# xdp1 (192.0.2.1/24) is in a peer namespace. socktab answers HTTP on 80, a kernel HTTP server
# on 8080; from the peer: 100 requests to each, ping, the kernel's ARP; the program's counters;
# EADDRINUSE both ways; then 5,000 outgoing connections of socktab and 5,000 of the kernel to
# the same peer address and port at once: 10,000 distinct 4-tuples, no RST. IPv6 too
# (2001:db8::2 / 2001:db8::1): 10 requests to each server, and 500 outgoing connections of
# socktab whose neighbour's link address comes from the kernel's IPv6 table; and serve's refusal
# of a device where the kernel holds one of its addresses only.
# Usage: share.sh SOCKTAB PEER XDP_GEN STEER (STEER "none": built without the steering program).
if [ "${4:-none}" = none ]; then
	echo "SKIP: built without the steering program (needs libxdp, libbpf-dev and clang)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
. "$(dirname "$0")/common.sh" "$@"
GEN=$(realpath "$3")
command -v curl >/dev/null || skip "needs curl"
command -v python3 >/dev/null || skip "needs python3"

peer_ns 120
veth_pair xdp0 xdp1
ip addr add 192.0.2.2/24 dev xdp0
ip -6 addr add 2001:db8::2/64 dev xdp0 nodad
ip link set xdp0 up
inB ip link set lo up
inB ip addr add 192.0.2.1/24 dev xdp1
inB ip -6 addr add 2001:db8::1/64 dev xdp1 nodad
inB ip link set xdp1 up
inB "$GEN" offload-off xdp1 || skip "cannot turn xdp1's offloads off"
"$GEN" offload-off xdp0 || skip "cannot turn xdp0's offloads off"

start_share() {
	"$SOCKTAB" serve --xdp xdp0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 \
		--peer-addr6 2001:db8::1/64 --addr6 2001:db8::2 "$@" \
		>"$OUT" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	wait_ready && return 0
	cat "$TMP/serve.err" >&2
	if grep -q 'AF_XDP socket on\|xsk_umem__create\|attaching the steering' "$TMP/serve.err"; then
		SERVE_PID=
		skip "no AF_XDP socket or XDP program on a veth here"
	fi
	return 1
}

# ICMP echo to ADDR, COUNT times (no ping(8) needed): prints the replies received.
pingpy() {
	python3 -c 'import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1)
got = 0
for seq in range(int(sys.argv[2])):
    h = struct.pack("!BBHHH", 8, 0, 0, 0x5354, seq) + b"socktab!"
    h = h[:2] + struct.pack("!H", csum(h)) + h[4:]
    s.sendto(h, (sys.argv[1], 0))
    try:
        while True:
            r = s.recv(1500)
            ihl = (r[0] & 15) * 4
            if r[ihl] == 0 and struct.unpack("!HH", r[ihl + 4:ihl + 8]) == (0x5354, seq):
                got += 1
                break
    except socket.timeout:
        pass
print(got)' "$1" "$2"
}

# A kernel bind(2) of ADDR PORT: prints the errno name, or "ok".
kbind() {
	python3 -c 'import errno, socket, sys
s = socket.socket()
try:
    s.bind((sys.argv[1], int(sys.argv[2]))); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "$2"
}

"$PEER" http-server 8080 >"$TMP/khttp" &
KHTTP_PID=$!
check "kernel HTTP server on 8080" wait_for '^listening=1' "$TMP/khttp" 5
rst0=$(nstat -az TcpOutRsts 2>/dev/null | awk '/TcpOutRsts/ { print $2 }')
check "serve --xdp starts on a shared device" start_share --http 80 --udp-echo 7
check "steering program loaded" grep -q 'share: steering program on xdp0' "$TMP/serve.err"
grep 'share:' "$TMP/serve.err"

ok80=0 ok8080=0
DEADLINE=$((SECONDS + 30))
for _ in $(seq 100); do
	[ "$(inB curl -s -m 2 -o /dev/null -w '%{http_code}' http://192.0.2.2/)" = 200 ] &&
		ok80=$((ok80 + 1))
	[ "$(inB curl -s -m 2 -o /dev/null -w '%{http_code}' http://192.0.2.2:8080/)" = 200 ] &&
		ok8080=$((ok8080 + 1))
	[ $SECONDS -lt $DEADLINE ] || break
done
echo "curl: $ok80 + $ok8080 in $((SECONDS + 30 - DEADLINE)) s"
check "socktab HTTP on 80: 100 of 100 ($ok80)" [ "$ok80" = 100 ]
check "kernel HTTP on 8080: 100 of 100 ($ok8080)" [ "$ok8080" = 100 ]
ok6=0
for _ in $(seq 10); do
	[ "$(inB curl -s -m 2 -o /dev/null -w '%{http_code}' 'http://[2001:db8::2]/')" = 200 ] &&
		ok6=$((ok6 + 1))
	[ "$(inB curl -s -m 2 -o /dev/null -w '%{http_code}' 'http://[2001:db8::2]:8080/')" = 200 ] &&
		ok6=$((ok6 + 1))
done
check "IPv6: socktab on 80 and the kernel on 8080, 20 of 20 ($ok6)" [ "$ok6" = 20 ]
check "ping 192.0.2.2: 3 of 3 (the kernel answers)" [ "$(inB bash -c "$(declare -f pingpy); pingpy 192.0.2.2 3")" = 3 ]
mac=$(ip -br link show xdp0 | awk '{ print $3 }')
check "peer's ARP entry of 192.0.2.2 is xdp0's $mac (the kernel's answer)" \
	bash -c "nsenter -t $NS_PID -n ip neigh show 192.0.2.2 dev xdp1 | grep -q 'lladdr $mac'"
check "socktab's UDP echo on 7: 10 of 10" [ "$(inB python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1); n = 0
for i in range(10):
    s.sendto(b"ping%d" % i, ("192.0.2.2", 7))
    try:
        n += s.recv(100) == b"ping%d" % i
    except socket.timeout:
        pass
print(n)')" = 10 ]
check "kernel UDP bind(0.0.0.0:7) while socktab holds it: EADDRINUSE" [ "$(python3 -c 'import errno, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.bind(("0.0.0.0", 7)); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])')" = EADDRINUSE ]
check "kernel bind(192.0.2.2:80) while socktab listens: EADDRINUSE" \
	[ "$(kbind 192.0.2.2 80)" = EADDRINUSE ]
check "kernel bind(0.0.0.0:80): EADDRINUSE" [ "$(kbind 0.0.0.0 80)" = EADDRINUSE ]
check "kernel bind(192.0.2.2:81), a port socktab does not hold: ok" \
	[ "$(kbind 192.0.2.2 81)" = ok ]
check "serve exits cleanly" stop_serve
rst1=$(nstat -az TcpOutRsts 2>/dev/null | awk '/TcpOutRsts/ { print $2 }')
grep '^share_' "$OUT"
check "socktab saw no kernel flow: no RST sent, no refused SYN" \
	[ "$(counter tcp_rst_sent)/$(counter tcp_refused)" = 0/0 ]
check "the kernel saw no socktab flow: no RST from the kernel (${rst0:-?} -> ${rst1:-?})" \
	[ "${rst0:-no count}" = "$rst1" ]
check "program: frames redirected = frames socktab received" \
	[ "$(counter share_redirected)" = "$(counter xdp_rx_frames)" ]
check "program: kernel flows passed ($(counter share_pass_kernel))" \
	[ "$(counter share_pass_kernel)" -ge 500 ]
check "program: ARP passed ($(counter share_pass_arp))" [ "$(counter share_pass_arp)" -ge 1 ]
check "program: ICMP passed ($(counter share_pass_icmp))" [ "$(counter share_pass_icmp)" -ge 3 ]
check "socktab accepted 110 (100 + 10 over IPv6)" [ "$(counter tcp_accepted)" = 110 ]
check "the kernel's port 80 is free again after serve" [ "$(kbind 192.0.2.2 80)" = ok ]

# socktab's bind() on the kernel's listening port.
"$SOCKTAB" serve --xdp xdp0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 --http 8080 \
	>"$TMP/clash.out" 2>"$TMP/clash.err" &
CLASH_PID=$!
for _ in $(seq 50); do kill -0 $CLASH_PID 2>/dev/null || break; sleep 0.1; done
kill -KILL $CLASH_PID 2>/dev/null
wait $CLASH_PID 2>/dev/null
check "socktab bind on the kernel's 8080: EADDRINUSE" \
	grep -q 'Address already in use' "$TMP/clash.err"
kill -TERM $KHTTP_PID
wait $KHTTP_PID 2>/dev/null

# 5,000 + 5,000 outgoing connections to the same peer address and port, beside a kernel server
# on a port of socktab's half of the ephemeral range (50000), which socktab's connect() must
# leave alone (else the steering would take that server's SYNs).
nsenter -t "$NS_PID" -n "$PEER" echo-server 9000 >"$TMP/server" &
SERVER_PID=$!
check "peer echo server listens" wait_for '^listening=1' "$TMP/server" 5
"$PEER" http-server 50000 >"$TMP/khttp2" &
KHTTP_PID=$!
check "kernel HTTP server on 50000" wait_for '^listening=1' "$TMP/khttp2" 5
# And kernel listeners on every 128th port of socktab's half: 5,000 flows on even ports span
# some 10,000 ports, so without the reservation socktab's connect() would meet dozens of them.
python3 -c 'import socket, sys, time
ls = []
for p in range(46884, 61000, 128):
    s = socket.socket(); s.bind(("0.0.0.0", p)); s.listen(1); ls.append(s)
print("listening=1", flush=True)
time.sleep(120)' >"$TMP/klisten" &
KLISTEN_PID=$!
check "kernel listeners on every 128th port of 46884-60999" wait_for '^listening=1' "$TMP/klisten" 5
check "serve starts (flows)" start_share --connect 192.0.2.1:9000 --flows 5000
check "socktab reserved the kernel's ports of its half" \
	grep -q 'socktab 46884-60999 (1[0-9][0-9] held' "$TMP/serve.err"
timeout 40 "$PEER" tcp-hold 192.0.2.1 9000 5000 256 >"$TMP/hold" &
HOLD_PID=$!
# The 4-tuples (all to 192.0.2.1:9000: the source address and port tell them apart): the peer's
# established ones, sampled while both sides open and hold theirs (socktab's stay open until
# serve stops), then the kernel's own, which it keeps in TIME_WAIT after tcp-hold closed them.
: >"$TMP/tuples"
for _ in $(seq 300); do
	inB ss -tanH state established '( sport = :9000 )' | awk '{ print $4 }' >>"$TMP/tuples"
	kill -0 $HOLD_PID 2>/dev/null || break
	sleep 0.1
done
wait $HOLD_PID
hold_rc=$?
check "socktab: 5000 flows echo-checked" wait_for '^connect_done=1' "$OUT" 30
check "kernel HTTP on 50000 beside socktab's 5000 flows: 10 of 10" \
	[ "$(for _ in $(seq 10); do inB curl -s -m 2 -o /dev/null -w '%{http_code}\n' \
		http://192.0.2.2:50000/; done | grep -c 200)" = 10 ]
check "kernel: 5000 connections held at once, echo-checked" \
	grep -q '^held=5000 echo_ok=5000 failed=0' "$TMP/hold"
inB ss -tanH state established '( sport = :9000 )' | awk '{ print $4 }' >>"$TMP/tuples"
ss -tanH '( dport = :9000 )' | awk '{ print $4 }' >>"$TMP/tuples"
n=$(sed 's/^\[::ffff:\(.*\)\]/\1/' "$TMP/tuples" | sort -u | wc -l)
check "peer: 10000 distinct 4-tuples from 192.0.2.2 ($n)" [ "$n" = 10000 ]
check "no RST at the peer" [ "$(inB nstat -az TcpOutRsts TcpInRsts |
	awk '/Rsts/ { s += $2 } END { print s + 0 }')" = 0 ]
check "serve exits cleanly (flows)" stop_serve
check "socktab tcp_active_ok=5000" [ "$(counter tcp_active_ok)" = 5000 ]
check "no RST at socktab" [ "$(counter tcp_rst_rcvd)/$(counter tcp_rst_sent)" = 0/0 ]
check "no port conflict with the kernel" [ "$(counter share_conflicts)" = 0 ]

# The same over IPv6, from a neighbour entry the kernel does not have yet. socktab sees no
# neighbour discovery on the shared device and the peer sends it nothing before the first
# SYN-ACK, so the link address of 2001:db8::1 can only come from the kernel's IPv6 table,
# filled by the solicitation that socktab's datagram to the discard port makes the kernel send.
ip -6 neigh flush dev xdp0
check "the kernel knows no link address of 2001:db8::1 before serve" \
	bash -c '! ip -6 neigh show 2001:db8::1 dev xdp0 | grep -q lladdr'
check "serve starts (flows over IPv6)" start_share --connect "[2001:db8::1]:9000" --flows 500
check "socktab: 500 flows over IPv6 echo-checked" wait_for '^connect_done=1' "$OUT" 30
grep '^connect_done' "$OUT"
peer_mac=$(inB ip -br link show xdp1 | awk '{ print $3 }')
check "the kernel resolved 2001:db8::1 to xdp1's $peer_mac" \
	bash -c "ip -6 neigh show 2001:db8::1 dev xdp0 | grep -q 'lladdr $peer_mac'"
check "serve exits cleanly (flows over IPv6)" stop_serve
check "socktab tcp_active_ok=500 over IPv6" [ "$(counter tcp_active_ok)" = 500 ]
check "no packet dropped for want of a neighbour (xdp_no_neigh=$(counter xdp_no_neigh))" \
	[ "$(counter xdp_no_neigh)" = 0 ]

# A device where the kernel holds one of serve's addresses and not the other: serve refuses to
# start and names the missing one (shared, the kernel would not answer ARP or neighbour
# discovery for it; unshared, socktab would take the kernel's flows of the other).
refuse() { # ADDR-HELD ADDR-MISSING
	timeout 10 "$SOCKTAB" serve --xdp xdp0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 \
		--peer-addr6 2001:db8::1/64 --addr6 2001:db8::2 --http 80 >"$OUT" 2>"$TMP/serve.err"
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] &&
		grep -q "share: the kernel holds $1 on xdp0 but not $2" "$TMP/serve.err"
}
ip addr del 192.0.2.2/24 dev xdp0
check "serve refuses xdp0 where the kernel holds 2001:db8::2 and not 192.0.2.2" \
	refuse 2001:db8::2 192.0.2.2
check "the kernel's server on 50000 still answers over IPv6" \
	[ "$(inB curl -s -m 2 -o /dev/null -w '%{http_code}' 'http://[2001:db8::2]:50000/')" = 200 ]
ip addr add 192.0.2.2/24 dev xdp0
ip -6 addr del 2001:db8::2/64 dev xdp0
check "serve refuses xdp0 where the kernel holds 192.0.2.2 and not 2001:db8::2" \
	refuse 192.0.2.2 2001:db8::2
kill -TERM "$KHTTP_PID" "$KLISTEN_PID" "$SERVER_PID"
wait "$KHTTP_PID" 2>/dev/null
wait "$SERVER_PID"
kill "$NS_PID"
wait "$NS_PID" 2>/dev/null
finish
