#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The scaling curve in one run: socktab bench scale at 1, 2, 4, 8 and 16 threads (lookups, and
# tcp_crr at -F 1000 and at -F 20000, IPv4), with the live kernel's own crr churn beside it when
# run as root, plus a counting build's locks, atomics and shared writes per operation (lookups,
# crr, connect() at 95 % occupancy). Made for a many-core machine
# (8.4 minutes on a 2-vCPU AMD EPYC, builds included; the runs are bounded in time, not by the
# cores); on a 2-vCPU machine it shows what oversubscription costs.
#   scripts/scale-device.sh [OUTDIR]      (default: $OUT when set, else ./scale-out)
# Writes OUTDIR/machine.txt, OUTDIR/scale-F1000.txt, OUTDIR/scale-F20000.txt,
# OUTDIR/scale-F1000-port-per-thread.txt (each thread's flows to a listener port of its own, as
# the kernel's churn has), OUTDIR/scale-F1000-port-shares.txt (the same, each thread connecting
# with a port share of its own, socktab_thread_set_port_share; no kernel run),
# OUTDIR/scale-F1000-incoming-cpu.txt (one listener port, each thread with a port share and its
# SYNs to a listener of its own through SO_INCOMING_CPU; no kernel run) and OUTDIR/locks.txt;
# every command is echoed into its output file.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-scale-out}}
threads=${SCALE_THREADS:-1,2,4,8,16}
mkdir -p "$out"

build() { # DIR [meson options]: configure once, then build the CLI
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
	ninja -C "$dir" socktab >/dev/null
}
build build
build build-counters -Dcontention_counters=true

{
	date -u
	uname -r
	lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3)' || true
	nproc
} >"$out/machine.txt"

run() { # FILE COMMAND...: the command, then its output, into FILE (and a summary on stdout)
	local file=$1
	shift
	{ echo "\$ $*"; "$@"; } >"$file" 2>&1
	tail -n 8 "$file"
}

run "$out/scale-F1000.txt" build/socktab bench scale --threads "$threads" -F 1000 -l 3 \
	--sockets 1000000 --seed 1
run "$out/scale-F20000.txt" build/socktab bench scale --threads "$threads" -F 20000 -l 3 \
	--sockets 1000000 --seed 1
run "$out/scale-F1000-port-per-thread.txt" build/socktab bench scale --threads "$threads" \
	-F 1000 -l 3 --sockets 1000000 --seed 1 --port-per-thread
run "$out/scale-F1000-port-shares.txt" build/socktab bench scale --threads "$threads" \
	-F 1000 -l 3 --sockets 1000000 --seed 1 --port-per-thread --port-shares --no-kernel
run "$out/scale-F1000-incoming-cpu.txt" build/socktab bench scale --threads "$threads" \
	-F 1000 -l 3 --sockets 1000000 --seed 1 --port-shares --incoming-cpu --no-kernel
run "$out/locks.txt" build-counters/socktab bench scale --threads "$threads" -F 1000 -l 1 \
	--sockets 100000 --seed 1 --no-kernel
echo "scale-device: outputs in $out"
