#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The batch lookups' prefetches are in the compiled library (meson test prefetch):
#
#   scripts/prefetch-check.sh LIB
#
# A compiler may drop a prefetch without a word: gcc 12 took a static helper that did nothing
# but prefetch for a const function and removed its calls as unused, so the UDP batch walk read
# every hash4 entry cold (twice the time per lookup) and every test still passed. This reads
# LIB's disassembly and checks that each function below holds at least one prefetch
# instruction. Prints what failed and last "N passed, M failed"; exit status 1 if any check
# failed, 77 (skipped) without objdump, without LIB's symbol table (stripped), or on a machine
# whose prefetch instruction it does not know.
set -u
export LC_ALL=C
lib=${1:?usage: prefetch-check.sh LIB}
if ! command -v objdump >/dev/null 2>&1; then
	echo "prefetch-check: objdump not found (Debian: binutils)"
	exit 77
fi
[ -f "$lib" ] || { echo "prefetch-check: $lib: no such file"; exit 1; }
case $(uname -m) in
x86_64 | i?86) insn='prefetch' ;;
aarch64) insn='prfm' ;;
*) echo "prefetch-check: no prefetch mnemonic known for $(uname -m)"; exit 77 ;;
esac
funcs='socktab__udp_prefetch socktab__udp_walk4_start socktab__udp_walk4_step
socktab_lookup_tcp_burst socktab_lookup_mixed'
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# function name -> prefetch instructions in it
objdump -d --no-show-raw-insn "$lib" | awk -v insn="$insn" '
	/^[0-9a-f]+ <[^>]+>:$/ { f = substr($2, 2, length($2) - 3); seen[f] = 1 }
	$0 ~ "\t" insn { n[f]++ }
	END { for (f in seen) print f, n[f] + 0 }' >"$tmp"
pass=0
fail=0
for f in $funcs; do
	c=$(awk -v f="$f" '$1 == f { print $2 }' "$tmp")
	if [ -z "$c" ]; then
		echo "prefetch-check: $lib has no symbol $f (stripped?)"
		exit 77
	fi
	if [ "$c" -gt 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $f: no $insn instruction in $lib"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
