#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad input to the CLI (build/socktab) and the torture test (build/torture): every mistake must
# end the command at once with exit status 2 and exactly one line on stderr that names the
# option or the file (never a usage text, a run with a wrapped or truncated value, or a
# success that checked nothing). A few good inputs next to them must still work.
#
#   tests/cli/bad_input.sh SOCKTAB TORTURE
#
# Prints a line per failed case and, last, "N passed, M failed"; exit status 1 if any failed.
set -u
socktab=${1:?usage: bad_input.sh SOCKTAB TORTURE}
torture=${2:?usage: bad_input.sh SOCKTAB TORTURE}
root=$(cd "$(dirname "$0")/../.." && pwd)
smoke=$root/tests/replay/smoke.sock
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# bad WANT SUBSTRING CMD...: CMD exits with status WANT within 10 s and writes exactly one line
# to stderr, and that line contains SUBSTRING.
bad() {
	local want=$1 sub=$2 rc lines
	shift 2
	timeout 10 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qF -- "$sub" "$tmp/err"; then
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "FAIL: ${*#"$root"/} (exit $rc, want $want; $lines lines on stderr, want 1 with '$sub')"
	head -n 5 "$tmp/err" | sed 's/^/    | /'
}

# good PATTERN CMD...: CMD exits 0 within 60 s, prints a line matching PATTERN on stdout and
# nothing on stderr.
good() {
	local pat=$1 rc
	shift
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq 0 ] && grep -qE -- "$pat" "$tmp/out" && [ ! -s "$tmp/err" ]; then
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "FAIL: ${*#"$root"/} (exit $rc, want 0 and a line matching '$pat', no stderr)"
	head -n 5 "$tmp/err" | sed 's/^/    | /'
}

: >"$tmp/empty.sock"
printf '# a comment\n\ncase nothing\n' >"$tmp/comments.sock"
mkdir "$tmp/dir"

# The front door.
bad 2 "which command" "$socktab"
bad 2 "'frob'" "$socktab" frob
bad 2 "batch, connect, crr, kernel-crr, lookup, poll, rss, scale, tour, udp" "$socktab" bench
bad 2 "'frob'" "$socktab" bench frob
good '^  crr ' "$socktab" bench --help
good '^usage: socktab' "$socktab" help
good '^socktab [0-9]+\.[0-9]+$' "$socktab" version

# socktab serve: every mistake is caught before a device is created.
S="--tun t0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2"
bad 2 "--tun, --peer-addr and --addr are required" "$socktab" serve
bad 2 "option '--tun' needs a value" "$socktab" serve --tun
bad 2 "--tun: 'xxxxxxxxxxxxxxxxxxxx'" "$socktab" serve --tun xxxxxxxxxxxxxxxxxxxx \
	--peer-addr 192.0.2.1/24 --addr 192.0.2.2
bad 2 "--peer-addr: '33'" "$socktab" serve --tun t0 --peer-addr 192.0.2.1/33 --addr 192.0.2.2
bad 2 "--addr: 'garbage'" "$socktab" serve --tun t0 --peer-addr 192.0.2.1/24 --addr garbage
bad 2 "--addr must be another address" "$socktab" serve --tun t0 --peer-addr 192.0.2.1/24 \
	--addr 192.0.2.1
# shellcheck disable=SC2086 # $S is a list of arguments
{
bad 2 "--http: '0'" "$socktab" serve $S --http 0
bad 2 "--http: '70000'" "$socktab" serve $S --http 70000
bad 2 "--udp-hash4: 'maybe'" "$socktab" serve $S --udp-hash4 maybe
bad 2 "--flows and --crr need --connect" "$socktab" serve $S --flows 5
bad 2 "--connect: '0'" "$socktab" serve $S --connect 192.0.2.1:0
bad 2 "--duration: '-1'" "$socktab" serve $S --duration -1
bad 2 "--max-conns: '0'" "$socktab" serve $S --max-conns 0
bad 2 "--ss-state: 'bogus'" "$socktab" serve $S --ss-state bogus
bad 2 "unknown option '--bogus'" "$socktab" serve $S --bogus
bad 2 "unexpected argument 'extra'" "$socktab" serve $S extra
}

# Counts: negative, trailing junk, overflow, out of range, empty.
bad 2 "-N: '-1' is not a count" "$socktab" bench crr -N -1
bad 2 "--sockets: '1x'" "$socktab" bench lookup --sockets 1x
bad 2 "--lookups: '-1'" "$socktab" bench lookup --lookups -1
bad 2 "--sockets: '99999999999999999999'" "$socktab" bench lookup --sockets 99999999999999999999
bad 2 "-T: '0'" "$socktab" bench crr -T 0
bad 2 "--threads: '0'" "$socktab" bench scale --threads 0
bad 2 "-F: 'x'" "$socktab" bench scale -F x
bad 2 "--rounds: '26' is not a count" "$socktab" bench scale --rounds 26
bad 2 "--paired: needs -T 2 or more" "$socktab" bench crr --paired 50
bad 2 "--paired: '0'" "$socktab" bench crr -T 2 --paired 0
bad 2 "-T: '0'" "$socktab" bench kernel-crr -T 0
bad 2 "need THREADS <= FLOWS" "$socktab" bench kernel-crr -T 4 -F 2
bad 2 "-N: ''" "$socktab" bench connect -N ''
bad 2 "--queues: '129'" "$socktab" bench rss --queues 129
bad 2 "--budget: '0'" "$socktab" bench poll --budget 0
bad 2 "--connected: 'x'" "$socktab" bench udp --connected x
bad 2 "--unknown: '-5'" "$socktab" bench udp --connected 5 --unknown -5
bad 2 "--random: '-1'" "$socktab" replay --random -1
bad 2 "--threads: 'x'" "$torture" --threads x
bad 2 "--threads: '9'" "$torture" --threads 9

# Reals: nan, inf, out of range, junk.
bad 2 "--occupancy: 'nan'" "$socktab" bench connect --occupancy nan
bad 2 "--occupancy: 'nan'" "$socktab" bench rss --occupancy nan
bad 2 "--occupancy: 'inf'" "$socktab" bench rss --occupancy inf
bad 2 "--occupancy: '0.96'" "$socktab" bench rss --occupancy 0.96
bad 2 "-l: '0'" "$socktab" bench crr -l 0
bad 2 "-l: '1s'" "$socktab" bench udp --connected 5 -l 1s
bad 2 "--duration: 'nan'" "$torture" --duration nan
bad 2 "--duration: '-1'" "$torture" --duration -1

# Lists and ranges.
bad 2 "--sweep: ''" "$socktab" bench connect --sweep ''
bad 2 "--sweep: '0.5,,0.9'" "$socktab" bench connect --sweep 0.5,,0.9
bad 2 "-F: '10,'" "$socktab" bench crr -F 10,
bad 2 "-p: '50,101'" "$socktab" bench crr -p 50,101
bad 2 "--range: '1-1'" "$socktab" bench crr --range 1-1
bad 2 "--range: '40000-30000'" "$socktab" bench connect --range 40000-30000
bad 2 "--range: '40000'" "$socktab" bench rss --range 40000
bad 2 "-F: 1 flows for 2 threads" "$socktab" bench crr -T 2 -F 1
bad 2 "do not fit" "$socktab" bench crr -F 20 --range 40000-40009
bad 2 "--hash4-slots: '16777217'" "$socktab" bench batch --hash4-slots 16777217
bad 2 "--hash4-slots: '-1'" "$socktab" bench batch --hash4-slots -1

# Choices.
bad 2 "--peer: 'foo'" "$socktab" bench lookup --peer foo
bad 2 "--variant: 'foo'" "$socktab" bench connect --variant foo
bad 2 "--rcu-precheck: 'maybe'" "$socktab" bench crr --rcu-precheck maybe
bad 2 "--hash4: 'sometimes'" "$socktab" bench udp --connected 5 --hash4 sometimes
bad 2 "--backend: 'foo'" "$socktab" replay --backend foo "$smoke"

# Seeds: every command that takes one refuses junk and values past 2^64 - 1.
for cmd in "bench connect" "bench crr" "bench lookup" "bench rss" "bench tour" \
	"bench udp --connected 5" "replay --random 1"; do
	# shellcheck disable=SC2086 # cmd is words on purpose
	bad 2 "--seed: 'abc'" "$socktab" $cmd --seed abc
	# shellcheck disable=SC2086
	bad 2 "--seed: '99999999999999999999'" "$socktab" $cmd --seed 99999999999999999999
done
bad 2 "--seed: 'abc'" "$torture" --seed abc
bad 2 "--seed: '99999999999999999999'" "$torture" --seed 99999999999999999999

# Options: unknown, missing value, value given to a flag, stray operands.
bad 2 "'--backend' needs a value" "$socktab" replay --backend
bad 2 "'-N' needs a value" "$socktab" bench crr -N
bad 2 "unknown option '--frob'" "$socktab" bench lookup --frob
bad 2 "unknown option '-x'" "$socktab" bench udp -x
bad 2 "'--json' takes no value" "$socktab" bench crr --json=yes
bad 2 "unexpected argument 'extra'" "$socktab" bench tour extra
bad 2 "--connected N is required" "$socktab" bench udp
bad 2 "unknown option '--frob'" "$torture" --frob
bad 2 "unexpected argument 'extra'" "$torture" extra

# --plot: an output that cannot be written fails before the benchmark runs.
bad 2 "--plot: '/nonexistent/x.png'" "$socktab" bench connect --plot /nonexistent/x.png
bad 2 "--plot: '/nonexistent/x.png'" "$socktab" bench crr --plot /nonexistent/x.png
bad 2 "--plot: '$tmp/dir'" "$socktab" bench crr --plot "$tmp/dir"

# replay: nothing to check is a failure, not a pass.
bad 2 "$tmp/dir" "$socktab" replay --backend socktab "$tmp/dir"
bad 2 "/dev/null: no statements" "$socktab" replay --backend socktab /dev/null
bad 2 "empty.sock: no statements" "$socktab" replay --backend socktab "$tmp/empty.sock"
bad 2 "comments.sock: no statements" "$socktab" replay --backend socktab "$tmp/comments.sock"
bad 2 "$tmp/missing.sock" "$socktab" replay --backend socktab "$tmp/missing.sock"
bad 2 "--case: 'NOMATCH'" "$socktab" replay --backend socktab --case NOMATCH "$smoke"
bad 2 "no FILE" "$socktab" replay
bad 2 "no FILE" "$socktab" replay --random 1 "$smoke"

# Good input next to the bad: -F defaults to -T, a matching --case runs.
good '^num_flows=2$' "$socktab" bench crr -T 2 -N 200 --variant socktab --seed 1
good '^[1-9][0-9]* passed, 0 failed$' "$socktab" replay -q --backend socktab --case refused "$smoke"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
