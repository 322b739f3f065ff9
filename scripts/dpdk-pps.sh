#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Packets per second of the DPDK endpoint's packet path (examples/dpdk_endpoint.c --bench N):
# N synthetic established TCP connections (10,000 and 100,000; peers 198.51.100.1-200 to
# 192.0.2.2:5001), one ACK frame for each in a shuffled order, fed burst by burst (32) into a
# ring port (rte_eth_from_rings) and taken out with rte_eth_rx_burst() by one lcore in online
# mode: Ethernet, IPv4 and TCP checks with the checksum, the lookup, the connection's ACK
# processing. Timed from rx_burst to the burst's last packet (feeding the ring is the NIC's part,
# not timed); single lookups (socktab_lookup_one4 per packet) and batch lookups
# (socktab_lookup_batch4 per burst) in turn, 3 rounds, the best round of each. "socktab's
# share" is the lookups' part of that time; the clock reads around each single lookup are taken
# out. Then what grace periods cost the polling lcore: its idle loop alone and while another
# thread runs socktab grace periods back to back.
# Usage: scripts/dpdk-pps.sh [BUILD_DIR] (build/ by default). No root, NIC or hugepages needed
# (--no-huge -m 1024); 20-40 s. Exit 77 where the build has no DPDK endpoint.
set -u
BUILD=$(realpath "${1:-build}")
EP=$BUILD/example_dpdk_endpoint
[ -x "$EP" ] || { echo "dpdk-pps: no $EP (built without libdpdk-dev?)" >&2; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for n in 10000 100000; do
	timeout -k 5 120 "$EP" -l 0 --no-huge --no-pci -m 1024 --no-shconf --log-level=lib.eal:error \
		--log-level=lib.telemetry:error -- --bench "$n" >"$TMP/$n" 2>"$TMP/$n.err" ||
		{ echo "dpdk-pps: --bench $n failed:" >&2; cat "$TMP/$n.err" >&2; exit 1; }
done
val() { # FILE LOOKUP KEY
	awk -v l="lookup=$2" -v k="$3=" '$0 ~ l { for (i = 1; i <= NF; i++)
		if (index($i, k) == 1) print substr($i, length(k) + 1) }' "$1"
}
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| connections | lookups | packets/s | ns per packet | socktab's lookups, ns per packet | socktab's share |"
echo "|---|---|---|---|---|---|"
for n in 10000 100000; do
	for l in single batch; do
		printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$l" "$(val "$TMP/$n" $l pps)" \
			"$(val "$TMP/$n" $l ns_per_packet)" "$(val "$TMP/$n" $l lookup_ns)" \
			"$(val "$TMP/$n" $l socktab_share)"
	done
done
echo
for n in 10000 100000; do
	echo "grace periods ($n connections): $(grep '^grace_periods' "$TMP/$n")"
done
