# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tests/real tests: `. common.sh SOCKTAB PEER` at the top of a test.
#
# Each test runs in a network namespace of its own (the script re-executes itself under
# `unshare -n`), with lo up and nothing else but the TUN device `socktab serve` creates there:
# the kernel side is 192.0.2.1/24 and 2001:db8::1/64, the stack answers on 192.0.2.2 and
# 2001:db8::2. Traffic never leaves the namespace. Without root or /dev/net/tun the test is
# skipped (exit 77). The last line is always "N passed, M failed".
set -u
SOCKTAB=$(realpath "$1")
PEER=$(realpath "$2")
pass=0
fail=0

skip() {
	echo "SKIP: $1"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
# REAL_NO_TUN=1: a test whose endpoint has no TUN device (AF_XDP, DPDK) runs without one.
[ "${REAL_NO_TUN:-0}" = 1 ] || [ -c /dev/net/tun ] || skip "no /dev/net/tun"
command -v ip >/dev/null && command -v unshare >/dev/null || skip "needs ip and unshare"
if [ -z "${SOCKTAB_REAL_NS:-}" ]; then
	exec env SOCKTAB_REAL_NS=1 unshare -n bash "$0" "$@"
fi
ip link set lo up

TMP=$(mktemp -d)
OUT=$TMP/serve.out
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill -KILL "$SERVE_PID" 2>/dev/null
	jobs -p | xargs -r kill -KILL 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# check DESCRIPTION COMMAND...: one check, counted.
check() {
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "PASS $what"
	else
		fail=$((fail + 1))
		echo "FAIL $what"
	fi
}

# The test's verdict: the last line, and the exit status. After a failure, what the last
# `socktab serve` said comes first.
finish() {
	if [ "$fail" -ne 0 ]; then
		echo "--- last socktab serve: stderr, then the end of stdout"
		tail -n 20 "$TMP/serve.err" 2>/dev/null
		tail -n 40 "$OUT" 2>/dev/null
	fi
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

# wait_ready: wait (20 s at most: a loaded machine or a sanitizer build starts slowly) for the
# endpoint started as $SERVE_PID to print ready=1 into $OUT; 1 if it exited or never did.
wait_ready() {
	for _ in $(seq 200); do
		grep -q '^ready=1' "$OUT" 2>/dev/null && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# start_serve ARGS...: `socktab serve` on st0 with the addresses above, once it is ready.
start_serve() {
	"$SOCKTAB" serve --tun st0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 \
		--peer-addr6 2001:db8::1/64 --addr6 2001:db8::2 "$@" >"$OUT" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	wait_ready && return 0
	echo "socktab serve did not become ready:" >&2
	cat "$TMP/serve.err" >&2
	return 1
}

# stop_serve: SIGTERM, then its exit counters are in $OUT.
stop_serve() {
	kill -TERM "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID"
	local rc=$?
	SERVE_PID=
	return $rc
}

# peer_ns SECONDS: the peer namespace of the kernel peers, held by a process of its own
# ($NS_PID) for SECONDS at most; inB COMMAND... runs a command there.
peer_ns() {
	command -v nsenter >/dev/null || skip "needs nsenter"
	unshare -n sleep "$1" &
	NS_PID=$!
	for _ in $(seq 50); do
		[ "$(readlink /proc/$NS_PID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
}
inB() { nsenter -t "$NS_PID" -n "$@"; }

# veth_pair HERE THERE: a veth pair, THERE moved into the peer namespace (skipped without veth).
veth_pair() {
	ip link add "$1" type veth peer name "$2" || skip "no veth"
	ip link set "$2" netns "$NS_PID"
}

# counter NAME: a key=value the stack printed at exit.
counter() {
	grep "^$1=" "$OUT" | tail -n1 | cut -d= -f2
}

# wait_for PATTERN FILE SECONDS: until a line matches.
wait_for() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
