#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Make sure the build dependencies are present. As root, install what is missing from Debian's
# archive; otherwise print the exact apt-get line and fail.
set -eu
pkgs=()
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || pkgs+=(gcc)
command -v meson >/dev/null 2>&1 || pkgs+=(meson)
command -v ninja >/dev/null 2>&1 || pkgs+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || pkgs+=(pkg-config)
if ! pkg-config --exists liburcu-memb 2>/dev/null; then pkgs+=(liburcu-dev); fi
# `scripts/deps.sh fuzz`: clang with libFuzzer's runtime (`make fuzz`, `make test`);
# `scripts/deps.sh layout`: pahole (`make layout`).
case "${1:-}" in
fuzz)
	command -v clang >/dev/null 2>&1 || pkgs+=(clang)
	echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
		clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1 ||
		pkgs+=(libclang-rt-14-dev)
	;;
layout) command -v pahole >/dev/null 2>&1 || pkgs+=(dwarves) ;;
esac
# Sanitizer runtimes used by `make test` (ASan/UBSan/TSan with gcc).
for lib in libasan.so libubsan.so libtsan.so; do
	if ! gcc -print-file-name="$lib" 2>/dev/null | grep -q /; then
		pkgs+=(gcc); break
	fi
done
# Optional: gnuplot (bench --plot); liburcu's cds_lfht, a peer of the lookup benchmark, comes
# with liburcu-dev. Installed as root; otherwise a note, never a failure: the build leaves out
# what is missing.
opt=()
command -v gnuplot >/dev/null 2>&1 || opt+=(gnuplot-nox)
# Optional: the real clients of tests/real (`meson test --suite real`, root only): curl,
# ApacheBench, sockperf and hping3 (the SYN flood). A test whose client is missing is skipped
# (exit 77).
command -v curl >/dev/null 2>&1 || opt+=(curl)
command -v ab >/dev/null 2>&1 || opt+=(apache2-utils)
command -v sockperf >/dev/null 2>&1 || opt+=(sockperf)
command -v hping3 >/dev/null 2>&1 || opt+=(hping3)
command -v ip >/dev/null 2>&1 || opt+=(iproute2) # ip(8): serve's TUN peer side
# Optional: libxdp and libbpf, for the AF_XDP endpoint (examples/xdp_endpoint.c, `socktab serve
# --xdp`, tests/real/xdp.sh, scripts/xdp-pps.sh); without them the build leaves it out.
pkg-config --exists libxdp 2>/dev/null || opt+=(libxdp-dev)
pkg-config --exists libbpf 2>/dev/null || opt+=(libbpf-dev)
# clang's BPF target compiles serve's steering program for a device shared with the kernel
# (bpf/steer.bpf.c, tests/real/share.sh); without clang serve keeps libxdp's default program.
command -v clang >/dev/null 2>&1 || opt+=(clang)
if [ ${#opt[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "deps: installing optional ${opt[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends "${opt[@]}" >/dev/null 2>&1 ||
			{ apt-get update >/dev/null 2>&1 &&
			  apt-get install -y --no-install-recommends "${opt[@]}" >/dev/null 2>&1; } ||
			echo "deps: could not install ${opt[*]} (optional; benchmarks and tests run without them)" >&2
	else
		echo "deps: optional packages missing (bench --plot, tests/real clients, AF_XDP): apt-get install -y ${opt[*]}" >&2
	fi
fi
# DPDK (libdpdk-dev): the DPDK endpoint (examples/dpdk_endpoint.c, tests/real/dpdk.sh,
# scripts/dpdk-pps.sh), the rte_hash peer of `bench lookup` and test_rss_dpdk. Installed as root
# on its own, so that a missing optional package above cannot keep it out; otherwise a note,
# never a failure (the build leaves them out).
if ! pkg-config --exists libdpdk 2>/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		echo "deps: installing libdpdk-dev" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends libdpdk-dev >/dev/null 2>&1 ||
			{ apt-get update >/dev/null 2>&1 &&
			  apt-get install -y --no-install-recommends libdpdk-dev >/dev/null 2>&1; } ||
			echo "deps: could not install libdpdk-dev (the DPDK endpoint and its test are left out)" >&2
	else
		echo "deps: the DPDK endpoint and its test need: apt-get install -y libdpdk-dev" >&2
	fi
fi
# abidw and abidiff (abigail-tools), for the ABI check against the last release in make test's
# unit suite (`meson test abi`, scripts/abi-check.sh; skipped, exit 77, without them). Installed
# as root on its own, so that a missing optional package above cannot keep it out; otherwise a
# note, never a failure.
if ! { command -v abidw >/dev/null 2>&1 && command -v abidiff >/dev/null 2>&1; }; then
	if [ "$(id -u)" = 0 ]; then
		echo "deps: installing abigail-tools" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends abigail-tools >/dev/null 2>&1 ||
			{ apt-get update >/dev/null 2>&1 &&
			  apt-get install -y --no-install-recommends abigail-tools >/dev/null 2>&1; } ||
			echo "deps: could not install abigail-tools (meson test abi is skipped without it)" >&2
	else
		echo "deps: the ABI check (meson test abi) needs: apt-get install -y abigail-tools" >&2
	fi
fi
[ ${#pkgs[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing ${pkgs[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends "${pkgs[@]}"; }
else
	echo "deps: missing packages. Run as root:" >&2
	echo "  apt-get install -y ${pkgs[*]}" >&2
	exit 1
fi
