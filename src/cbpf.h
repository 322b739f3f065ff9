/* SPDX-License-Identifier: BSD-2-Clause */
/* Classic BPF of SO_ATTACH_REUSEPORT_CBPF, checked and run with the kernel's semantics (cbpf.c). */
#ifndef SOCKTAB_SRC_CBPF_H
#define SOCKTAB_SRC_CBPF_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/filter.h>

/* The packet a program runs over, as run_bpf_filter() hands it over past the transport header. */
struct socktab__cbpf_pkt {
	const unsigned char *data;         /* the payload (may be NULL when len is 0) */
	uint32_t len;                      /* its length: skb->len, BPF_LEN */
	bool tcp;                          /* a TCP segment, else a UDP datagram (SKF_AD_PAY_OFFSET) */
	int32_t l3proto;                   /* SKF_AD_PROTOCOL: ETH_P_IP or ETH_P_IPV6, -1 if unknown */
	int *cpu;                          /* the receiving CPU (SKF_AD_CPU), SOCKTAB__CPU_UNASKED
					    * (common.h) until a program asks; then filled in */
};

/*
 * What sk_reuseport_attach_filter() refuses before it looks at the socket: a NULL @f or a
 * length of 0 or above BPF_MAXINSNS, a program bpf_check_classic() refuses, or one whose
 * conversion to eBPF fails (-EINVAL); a converted program larger than net.core.optmem_max
 * (-ENOMEM). Returns 0 or that errno, negative. Context: any; no lock, no allocation.
 */
int socktab__cbpf_check(const struct sock_filter *f, uint32_t len);

/*
 * Run the program of @len instructions at @f (checked by socktab__cbpf_check) over @pkt. Returns true with its value
 * in *@ret (the kernel's 0 where it ends a program early: a division by X = 0, a load past the
 * payload), or false when the program loads what socktab does not have (a header byte, the
 * ingress device, the packet's mark, ...: cbpf.c): no value, the caller's hash decides.
 * Context: any; reads the payload, nothing else shared.
 */
bool socktab__cbpf_run(const struct sock_filter *f, uint32_t len,
		       const struct socktab__cbpf_pkt *pkt, uint32_t *ret);

#endif /* SOCKTAB_SRC_CBPF_H */
