#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# What a user outside the repository does: `make install PREFIX=P`, then build the examples with
# PKG_CONFIG_PATH=P/lib/pkgconfig and run them with LD_LIBRARY_PATH=P/lib. Also checks that the
# shared library exports the public API only. Prints "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }

if make -s install PREFIX="$tmp/p" BUILD=build-install >"$tmp/log" 2>&1 &&
	[ -f "$tmp/p/lib/pkgconfig/socktab.pc" ]; then
	ok "make install PREFIX=P puts socktab.pc in P/lib/pkgconfig"
else
	ko "make install"; tail -n 20 "$tmp/log"
fi
export PKG_CONFIG_PATH="$tmp/p/lib/pkgconfig"
for ex in hello server quic_select dispatch; do
	mkdir -p "$tmp/$ex"
	cp "examples/$ex.c" "$tmp/$ex/"
	if (cd "$tmp/$ex" && cc -std=c11 -Wall -Wextra -Werror "$ex.c" -o "$ex" \
		$(pkg-config --cflags --libs socktab)) >"$tmp/log" 2>&1 &&
		LD_LIBRARY_PATH="$tmp/p/lib" "$tmp/$ex/$ex" >"$tmp/log" 2>&1; then
		ok "examples/$ex.c builds outside the tree with pkg-config and runs"
	else
		ko "examples/$ex.c"; tail -n 20 "$tmp/log"
	fi
done
lib=$(ls "$tmp"/p/lib/libsocktab.so.* 2>/dev/null | head -n1)
if [ -n "$lib" ] && ! nm -D --defined-only "$lib" | grep -q ' socktab__'; then
	ok "libsocktab.so exports no internal symbol"
else
	ko "exported symbols: $(nm -D --defined-only "$lib" 2>/dev/null | grep -c ' socktab__') internal"
fi
if readelf -d "$lib" 2>/dev/null | grep -q 'SONAME.*libsocktab.so.0'; then
	ok "SONAME libsocktab.so.0"
else
	ko "SONAME"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
