#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The device and address statements of the .sock format that a runner must refuse:
#  - scripts the parser rejects as a whole (exit status 2, one `file:line:` message): VRF
#    forms, lo going away, bad device names, addresses outside the allowed ranges, scopes where
#    none can be, devices whose ifindex a statement needs but that no `link add` made;
#  - with root, statements the kernel backend refuses at run time under the traffic rule:
#    tests/replay/traffic_rule.sock, where in every case the last line, and only it, must fail
#    as a SCRIPT ERROR.
#
#   tests/replay/dev_statements.sh SOCKTAB
#
# Prints a line per failed check and, last, "N passed, M failed"; exit status 1 if any failed.
set -u
socktab=${1:?usage: dev_statements.sh SOCKTAB}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# refused LINE...: a script made of these lines is rejected with exit 2 and a file:line message.
refused() {
	local rc
	printf '%s\n' "$@" >"$tmp/bad.sock"
	"$socktab" replay --backend socktab "$tmp/bad.sock" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "bad.sock:[0-9]*:" "$tmp/err"; then
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "FAIL: not refused (exit $rc): $*"
	head -n 3 "$tmp/err" | sed 's/^/    | /'
}

refused 'link add v0 vrf 10'
refused 'link add d0 dummy' 'link set d0 master v0'
refused 'link add d0 dummy' 'link set d0 nomaster'
refused 'link del lo'
refused 'link set lo down'
refused 'link add Eth0 dummy'
refused 'link add d0123456x dummy'
refused 'link add 0d dummy'
refused 'link add d0 bridge'
refused 'link set d0 sideways'
refused 'addr add 10.0.0.1/24 dev lo'
refused 'addr add 192.0.2.1/23 dev lo'
refused 'addr add 192.0.2.1 dev lo'
refused 'addr add 127.0.0.2/8 dev lo'
refused 'addr add 2001:db8::1/31 dev lo'
refused 'addr add fe80::1/63 dev lo'
refused 'addr add fe80::1%lo/64 dev lo'
refused 'addr add ::ffff:192.0.2.1/120 dev lo'
refused 'addr add 192.0.2.1/24 on lo'
refused 's = socket udp 4' 'sendto s 10.1.2.3 9'
refused 's = socket udp 6' 'sendto s 2001:db9::1 9'
refused 's = socket udp 6' 'sendto s fe80:0:0:1::1%lo 9'
refused 's = socket udp 4' 'bind s 192.0.2.1%lo 9'
refused 's = socket udp 6' 'bind s fe80::1%d0 9'
refused 's = socket udp 6' 'bind s fe80::1%-1 9'
refused 's = socket udp 4' 'setsockopt s SO_BINDTOIFINDEX d0'
refused 's = socket udp 4' 'getsockopt s SO_BINDTOIFINDEX => d0'
refused 's = socket udp 4' 'setsockopt s SO_BINDTODEVICE Bad'
refused 'case a' 'link add d0 dummy' 'case b' 's = socket udp 6' 'bind s fe80::1%d0 9'

# Run-time refusals need the kernel backend.
if "$socktab" replay -q --backend kernel "$root/tests/replay/smoke.sock" >/dev/null 2>&1; then
	"$socktab" replay --backend kernel "$root/tests/replay/traffic_rule.sock" >"$tmp/out" 2>&1
	# For each case: its last line must be the only FAIL, and a SCRIPT ERROR.
	awk -v out="$tmp/out" '
		/^[ \t]*#/ || /^[ \t]*$/ { next }
		/^case / { name = $2; next }
		{ last[name] = FNR; cases[name] = 1 }
		END {
			while ((getline l < out) > 0) {
				if (l !~ /^FAIL /)
					continue
				split(l, f, " ")
				n = split(f[2], p, ":")
				c = f[3]; gsub(/[\[\]]/, "", c)
				if (p[n] == last[c] && l ~ /SCRIPT ERROR/)
					ok[c] = 1
				else
					bad[c] = l
			}
			for (c in cases) {
				if (ok[c] && !(c in bad))
					print "PASS " c
				else
					print "FAIL traffic_rule.sock [" c "]: " (c in bad ? bad[c] : "last line was not refused")
			}
		}' "$root/tests/replay/traffic_rule.sock" >"$tmp/verdicts"
	pass=$((pass + $(grep -c '^PASS' "$tmp/verdicts")))
	fail=$((fail + $(grep -c '^FAIL' "$tmp/verdicts")))
	grep '^FAIL' "$tmp/verdicts"
else
	echo "traffic rule: SKIPPED (the kernel backend needs root)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
