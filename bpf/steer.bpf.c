// SPDX-License-Identifier: BSD-2-Clause
/*
 * The steering program of `socktab serve --xdp` on a device whose address the kernel also
 * holds: a frame goes to the AF_XDP socket of its queue only when it is an IPv4 or IPv6 TCP or
 * UDP packet whose destination (protocol, address, port) socktab owns; everything else (ARP,
 * neighbour discovery, ICMP, fragments, the kernel's ports, other hosts' frames) passes to the
 * kernel. The owned keys are the port feed's (socktab/feed.h), written by stack/share.c: an
 * exact key (protocol, family, address, port), a wildcard key of the family (address 0.0.0.0
 * or ::), and for IPv4 also the IPv6 wildcard (an AF_INET6 socket bound to :: takes IPv4).
 * Counters: per CPU, indexed by enum in steer.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEER_KEYS_MAX);
	__type(key, struct steer_key);
	__type(value, __u32);
} owned SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, STEER_QUEUES_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STEER_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline int count(__u32 which, int verdict)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
	return verdict;
}

static __always_inline int owned_key(struct steer_key *k)
{
	if (bpf_map_lookup_elem(&owned, k))
		return 1;
	__builtin_memset(k->addr, 0, 16);
	if (k->family == STEER_AF_INET) {
		k->addr[10] = 0xff;
		k->addr[11] = 0xff;
		if (bpf_map_lookup_elem(&owned, k))
			return 1;
		__builtin_memset(k->addr, 0, 16);
		k->family = STEER_AF_INET6;
	}
	return bpf_map_lookup_elem(&owned, k) != NULL;
}

SEC("xdp")
int socktab_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct steer_key k;
	__u8 proto;
	void *l4;

	if ((void *)(eth + 1) > end)
		return count(STEER_PASS_OTHER, XDP_PASS);
	__builtin_memset(&k, 0, sizeof(k));
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return count(STEER_PASS_OTHER, XDP_PASS);
		if (ip->frag_off & bpf_htons(0x3fff)) /* MF or an offset: the kernel reassembles */
			return count(STEER_PASS_FRAGMENT, XDP_PASS);
		proto = ip->protocol;
		l4 = (void *)ip + ip->ihl * 4;
		k.family = STEER_AF_INET;
		k.addr[10] = 0xff;
		k.addr[11] = 0xff;
		__builtin_memcpy(&k.addr[12], &ip->daddr, 4);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return count(STEER_PASS_OTHER, XDP_PASS);
		proto = ip6->nexthdr; /* extension headers (fragments among them): the kernel's */
		l4 = ip6 + 1;
		k.family = STEER_AF_INET6;
		__builtin_memcpy(k.addr, &ip6->daddr, 16);
	} else if (eth->h_proto == bpf_htons(ETH_P_ARP)) {
		return count(STEER_PASS_ARP, XDP_PASS);
	} else {
		return count(STEER_PASS_OTHER, XDP_PASS);
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return count(proto == IPPROTO_ICMP || proto == 58 ? STEER_PASS_ICMP : STEER_PASS_OTHER,
			     XDP_PASS);
	if (l4 + 4 > end)
		return count(STEER_PASS_OTHER, XDP_PASS);
	k.proto = proto;
	k.port = *(__u16 *)(l4 + 2);
	if (!owned_key(&k))
		return count(STEER_PASS_KERNEL, XDP_PASS);
	if (bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS) != XDP_REDIRECT)
		return count(STEER_PASS_NO_XSK, XDP_PASS);
	return count(STEER_REDIRECTED, XDP_REDIRECT);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
