#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The exported ABI of libsocktab.so against the last release's (meson test abi):
#
#   scripts/abi-check.sh LIB [VERSION_H_DIR]     check LIB (a build's libsocktab.so)
#   scripts/abi-check.sh --update LIB [DIR]      write abi/libsocktab.so.0.abi from LIB (release)
#
# VERSION_H_DIR is the directory of the generated socktab/version.h (default: LIB's directory
# /include/socktab, where meson writes it). The checks:
#   1. every socktab_ symbol LIB exports carries a version node of src/libsocktab.map
#      (nm -D: name@@SOCKTAB_x.y), and LIB exports nothing else;
#   2. the map lists exactly the functions the public headers declare (include/socktab/*.h and
#      version.h), and LIB exports every name the map lists;
#   3. released nodes are never edited: every name@version of the baseline is still exported,
#      and a name the baseline lacks is in a node the baseline does not know (a new release's);
#   4. abidiff between the baseline (abi/libsocktab.so.0.abi) and abidw's view of LIB, both
#      with the public headers' types only (abi/private-types.suppr): no function, variable or
#      public type removed or changed. Added functions pass (check 3 puts them in a new node),
#      and so do members appended to a struct that carries its size (abi/appended-members.suppr);
#   5. that struct's baseline members are unchanged (offset, name, type) and first in LIB's.
# Prints what failed, abidiff's report, and last "N passed, M failed"; exit status 1 if any
# check failed, 77 (skipped) when abidw/abidiff are missing, LIB has no debug info (build with
# -g: meson's default debugoptimized does) or LIB is for another architecture than the baseline.
set -u
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
baseline=$root/abi/libsocktab.so.0.abi
map=$root/src/libsocktab.map
suppr=$root/abi/private-types.suppr
appended=$root/abi/appended-members.suppr
update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
lib=${1:?usage: abi-check.sh [--update] LIB [VERSION_H_DIR]}
verdir=${2:-$(dirname "$lib")/include/socktab}

missing=()
for t in abidw abidiff; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
	echo "abi-check: ${missing[*]} not found (Debian: abigail-tools). Run as root:"
	echo "  apt-get install -y abigail-tools"
	exit 77
fi
for t in nm readelf gcc python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "abi-check: $t not found"; exit 1; }
done
[ -f "$lib" ] || { echo "abi-check: $lib: no such file"; exit 1; }
[ -f "$verdir/version.h" ] || { echo "abi-check: $verdir/version.h: no such file"; exit 1; }

# abidw, the same way for the baseline and for the library under test: the public headers (the
# generated version.h's directory too), private types opaque or dropped (abi/private-types.suppr),
# no paths, locations or build directories, so the XML depends on the ABI alone.
abidw_lib() {
	abidw --headers-dir "$root/include/socktab" --headers-dir "$verdir" --drop-private-types \
		--suppressions "$suppr" --no-corpus-path --no-comp-dir-path --no-show-locs \
		--drop-undefined-syms --type-id-style hash --out-file "$2" "$1"
}

if ! readelf -S "$lib" | grep -q '\.debug_info'; then
	echo "abi-check: $lib has no debug info; build it with -g (e.g. buildtype=debugoptimized)"
	exit 77
fi

if [ "$update" = 1 ]; then
	abidw_lib "$lib" "$baseline" || exit 1
	echo "abi-check: wrote $baseline ($(wc -c <"$baseline") bytes)"
	exit 0
fi

# params_prefix BASE NEW STRUCT: STRUCT's data members in abidw's XML BASE (offset, name and
# type id) are the first ones of STRUCT in NEW; prints the first difference otherwise.
params_prefix() {
	python3 - "$@" <<'PY'
import re
import sys

def members(path, name):
    text = open(path).read()
    m = re.search(r"<class-decl name='%s'[^>]*[^/]>(.*?)</class-decl>" % re.escape(name), text,
                  re.S)
    if not m:
        return None
    return re.findall(r"layout-offset-in-bits='(\d+)'>\s*<var-decl name='([^']+)' "
                      r"type-id='([^']+)'", m.group(1))

base, new, name = sys.argv[1:4]
b, n = members(base, name), members(new, name)
if not b or not n:
    sys.exit("%s: no definition in %s" % (name, base if not b else new))
for x, y in zip(b, n):
    if x != y:
        sys.exit("%s: the baseline's %s (bit %s, type %s) is now %s (bit %s, type %s)"
                 % (name, x[1], x[0], x[2], y[1], y[0], y[2]))
if len(n) < len(b):
    sys.exit("%s: %d of the baseline's members are gone" % (name, len(b) - len(n)))
PY
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	[ -s "$tmp/why" ] && sed 's/^/    /' "$tmp/why"
	: >"$tmp/why"
}
: >"$tmp/why"

# The map's nodes and names, comments left out.
awk '{ s = s $0 "\n" } END { gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", s); printf "%s", s }' "$map" \
	>"$tmp/map"
grep -oE '^[A-Za-z_][A-Za-z0-9_.]*[[:space:]]*\{' "$tmp/map" | tr -d '{ \t' | sort -u \
	>"$tmp/nodes"
grep -oE '^[[:space:]]*socktab_[A-Za-z0-9_]+[[:space:]]*;' "$tmp/map" | tr -d ' \t;' |
	sort >"$tmp/map-names"
sort -u "$tmp/map-names" | cmp -s - "$tmp/map-names" ||
	{ echo "abi-check: $map lists a name twice"; fail=$((fail + 1)); }

# 1. What LIB exports: name@@VERSION for each defined dynamic symbol (the version definitions
# themselves, type A, left out).
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort >"$tmp/exported"
while read -r s; do
	name=${s%%@*}
	ver=${s#*@@}
	if [ "$name" = "$s" ] || [ "$ver" = "$s" ]; then
		echo "$s: no default version (the map does not list it)" >>"$tmp/why"
	elif ! grep -qxF -- "$ver" "$tmp/nodes"; then
		echo "$s: version $ver is not a node of src/libsocktab.map" >>"$tmp/why"
	elif [[ ! $name =~ ^socktab_[a-z0-9] ]]; then
		echo "$s: not a public name (socktab_*, never socktab__*)" >>"$tmp/why"
	fi
done <"$tmp/exported"
if [ -s "$tmp/why" ]; then
	bad "every exported symbol is socktab_* with a version of the map"
else
	ok
fi

# 2. The public declarations (gcc -aux-info lists every prototype after preprocessing) against
# the map, and the map against the exports.
printf '#include <socktab/socktab.h>\n' >"$tmp/all.c"
if gcc -std=c11 -D_GNU_SOURCE -I"$root/include" -I"$(dirname "$verdir")" -aux-info "$tmp/aux" \
	-fsyntax-only "$tmp/all.c" 2>"$tmp/why"; then
	: >"$tmp/why"
	grep -E '^/\* [^ ]*include/socktab/[^/ ]+\.h:[0-9]+:[A-Z]+ \*/ extern ' "$tmp/aux" |
		awk 'match($0, /socktab_[A-Za-z0-9_]+ \(/) { print substr($0, RSTART, RLENGTH - 2) }' |
		sort -u >"$tmp/declared"
	[ -s "$tmp/declared" ] || echo "no declarations found in include/socktab" >>"$tmp/why"
	comm -23 "$tmp/declared" "$tmp/map-names" |
		sed 's|$|: declared in include/socktab but not in the map|' >>"$tmp/why"
	comm -13 "$tmp/declared" "$tmp/map-names" |
		sed 's|$|: in the map but declared by no public header|' >>"$tmp/why"
fi
if [ -s "$tmp/why" ]; then bad "the map lists exactly the public headers' functions"; else ok; fi
sed 's/@.*//' "$tmp/exported" | sort -u >"$tmp/exported-names"
comm -23 "$tmp/map-names" "$tmp/exported-names" |
	sed 's/$/: in the map but not exported by LIB/' >>"$tmp/why"
if [ -s "$tmp/why" ]; then bad "LIB exports every name of the map"; else ok; fi

# 3. Released nodes are not edited: the baseline's name@version pairs against LIB's.
sed -nE "s/.*<elf-symbol name='([^']+)' version='([^']+)'.*/\1@@\2/p" "$baseline" | sort \
	>"$tmp/base-syms"
sed 's/.*@@//' "$tmp/base-syms" | sort -u >"$tmp/base-nodes"
grep '@@' "$tmp/exported" >"$tmp/lib-syms"
comm -23 "$tmp/base-syms" "$tmp/lib-syms" |
	sed 's/$/: in the last release, no longer exported (removed, or moved to another node)/' \
	>>"$tmp/why"
comm -13 "$tmp/base-syms" "$tmp/lib-syms" | while read -r s; do
	grep -qxF -- "${s#*@@}" "$tmp/base-nodes" &&
		echo "$s: new, but in the released node ${s#*@@} (add it to a new node)"
done >>"$tmp/why"
if [ -s "$tmp/why" ]; then bad "released version nodes unchanged"; else ok; fi

# 4. abidiff. Its exit status is a bit field: 1 error, 2 usage, 4 ABI change, 8 incompatible
# change (a removal). A change that is only additions passes: the same diff without the added
# symbols has nothing left.
if ! abidw_lib "$lib" "$tmp/lib.abi" 2>"$tmp/why"; then
	bad "abidw reads LIB"
else
	barch=$(sed -nE "1,3s/.*architecture='([^']*)'.*/\1/p" "$baseline")
	larch=$(sed -nE "1,3s/.*architecture='([^']*)'.*/\1/p" "$tmp/lib.abi")
	if [ "$barch" != "$larch" ]; then
		echo "abi-check: the baseline is for $barch, $lib for $larch: no ABI diff"
		echo "$pass passed, $fail failed"
		[ "$fail" -eq 0 ] && exit 77
		exit 1
	fi
	abidiff --no-default-suppression --suppressions "$appended" "$baseline" "$tmp/lib.abi" \
		>"$tmp/report" 2>&1
	rc=$?
	abidiff --no-default-suppression --suppressions "$appended" --no-added-syms "$baseline" \
		"$tmp/lib.abi" >/dev/null 2>&1
	rc_noadd=$?
	if [ $((rc & 3)) -ne 0 ]; then
		cp "$tmp/report" "$tmp/why"
		bad "abidiff runs (exit status $rc)"
	elif [ "$rc_noadd" -ne 0 ]; then
		cp "$tmp/report" "$tmp/why"
		bad "ABI compatible with abi/libsocktab.so.0.abi (abidiff exit status $rc)"
	else
		ok
		if [ "$rc" -ne 0 ]; then
			echo "abi-check: additions only (compatible):"
			sed 's/^/    /' "$tmp/report"
		fi
	fi
	# 5. abi/appended-members.suppr lets the whole of a struct's change pass once a member is
	# appended, a changed type of an old member too (libabigail 2.2): the baseline's members
	# of each such struct, by offset, name and type, must be the new struct's first members.
	if params_prefix "$baseline" "$tmp/lib.abi" socktab_net_params >"$tmp/why" 2>&1; then
		ok
	else
		bad "socktab_net_params: members only appended to the baseline's"
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
