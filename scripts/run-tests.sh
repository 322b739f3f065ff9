#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# What `make test` runs: meson's test suites (meson.build owns the list) in each build flavour,
# with warnings as errors; the clang, ASan and TSan builds also with the packet path's assertions
# (-Dpacket_path_checks=true, src/common.h):
#   build        gcc: unit, stress, conformance, bench, install (and real, when present)
#   build-clang  clang: unit
#   build-asan   gcc, AddressSanitizer + UndefinedBehaviorSanitizer, counting (contention_counters): unit, stress
#   build-tsan   gcc, ThreadSanitizer: stress
#   build-fuzz   clang, libFuzzer + ASan/UBSan: fuzz (30 s per target)
# Each test prints "N passed, M failed" as its last line (a test without one counts as one
# check); a test that exits 77 is skipped, never passed. Last line: the totals.
set -u
cd "$(dirname "$0")/.."
echo "kernel: $(uname -r) (the kernel backend's outcomes hold for this release)"
total_pass=0
total_fail=0
total_skip=0

# setup DIR [meson options...]: configure once (warnings as errors), then build.
setup() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=true "$@" >/dev/null || return 1
	else
		meson configure "$dir" -Dwerror=true >/dev/null || return 1
	fi
	ninja -C "$dir" >/dev/null
}

setup_clang() { CC=clang setup build-clang -Dpacket_path_checks=true; }

# A step that is one check (a build).
step() {
	local label=$1 log
	shift
	log=$(mktemp)
	if "$@" >"$log" 2>&1; then
		total_pass=$((total_pass + 1))
		printf '%-52s %5d passed, %d failed\n' "$label" 1 0
	else
		total_fail=$((total_fail + 1))
		printf '%-52s %5d passed, %d failed\n' "$label" 0 1
		tail -n 40 "$log" | sed 's/^/    | /'
	fi
	rm -f "$log"
}

# suite DIR LABEL SUITE...: run meson's tests of those suites in DIR and add their counts.
suite() {
	local dir=$1 label=$2 args=() s counts
	shift 2
	for s in "$@"; do args+=(--suite "$s"); done
	meson test -C "$dir" --no-rebuild --print-errorlogs "${args[@]}" >/dev/null 2>&1
	counts=$(python3 - "$dir/meson-logs/testlog.json" "$label" <<'PY'
import json, re, sys
path, label = sys.argv[1], sys.argv[2]
tp = tf = ts = 0
for line in open(path):
    t = json.loads(line)
    out = t.get("stdout") or ""
    m = None
    for m in re.finditer(r"^(\d+) passed, (\d+) failed", out, re.M):
        pass
    res = t["result"]
    if res == "SKIP":
        ts += 1
        print("%-52s  SKIPPED (exit 77)" % (label + " " + t["name"])[:52], file=sys.stderr)
        continue
    p, f = (int(m.group(1)), int(m.group(2))) if m else (1 if res == "OK" else 0, 0)
    if res != "OK" and f == 0:
        f = 1
    tp += p
    tf += f
    print("%-52s %5d passed, %d failed (%.0fs)" % ((label + " " + t["name"])[:52], p, f,
          t.get("duration", 0)), file=sys.stderr)
    if f:
        lines = [l for l in out.splitlines() + (t.get("stderr") or "").splitlines()
                 if not l.startswith("PASS ")]
        for l in lines[-40:]:
            print("    | " + l, file=sys.stderr)
print(tp, tf, ts)
PY
)
	set -- $counts
	total_pass=$((total_pass + ${1:-0}))
	total_fail=$((total_fail + ${2:-1}))
	total_skip=$((total_skip + ${3:-0}))
}

echo "== gcc (build)"
step "build (gcc, -Werror)" setup build
suites=(unit stress conformance bench install)
meson test -C build --list --suite real >/dev/null 2>&1 && suites+=(real)
suite build gcc "${suites[@]}"

echo "== clang (build-clang)"
if command -v clang >/dev/null 2>&1; then
	step "build (clang, -Werror)" setup_clang
	suite build-clang clang unit
fi

echo "== AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)"
step "build (asan+ubsan)" setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=all -Dpacket_path_checks=true -Dcontention_counters=true
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
suite build-asan asan unit stress

echo "== ThreadSanitizer (build-tsan)"
step "build (tsan)" setup build-tsan -Db_sanitize=thread -Db_lundef=false \
	-Dpacket_path_checks=true
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
suite build-tsan tsan stress

echo "== libFuzzer (build-fuzz; \`make fuzz\` runs longer)"
step "build (fuzz targets)" tests/fuzz/run.sh --build
FUZZ_SECONDS=30 suite build-fuzz fuzz fuzz

if [ "$total_skip" -gt 0 ]; then
	echo "($total_skip tests skipped: see SKIPPED above)"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
