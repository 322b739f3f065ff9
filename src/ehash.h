/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ehash membership and 4-tuple uniqueness (ehash.c), and connect()'s port choice that inserts
 * into it (connect.c).
 */
#ifndef SOCKTAB_SRC_EHASH_H
#define SOCKTAB_SRC_EHASH_H

#include "net.h"

/* Link @sk (key and hash written) into its slot. Caller holds the ehash lock of sk->hash. */
void socktab__ehash_insert_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* Unlink hashed @sk. Caller holds the ehash lock of sk->hash. */
void socktab__ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* Unlink @sk if it is hashed; takes the ehash lock. */
void socktab__ehash_remove(struct socktab__tables *t, struct socktab_sock *sk);
bool socktab__ehash_hashed(const struct socktab_sock *sk);

/*
 * The net part of a key (R11, R13), evaluated after the rest of the key matched. Nets with
 * their own tables skip it; nets sharing tables compare the tags in the socket's line (unique
 * per tables), and only a net past the 255th compares net pointers, in the cold part. A socket
 * of a second net is published after tables.shared was set (net.h), so a reader that found one
 * also sees the flag.
 */
static inline bool socktab__ehash_net_match(const struct socktab_sock *sk,
					    const struct socktab_net *net)
{
	if (!atomic_load_explicit(&net->tab->shared, memory_order_relaxed))
		return true;
	if (net->tag)
		return sk->net_tag == net->tag;
	return socktab__sk_net(sk) == net;
}

/* Return values of the 4-tuple checks (R24, R56). */
enum { SOCKTAB__UNIQUE = 0, SOCKTAB__NOT_UNIQUE = 1 };
int socktab__check_established_rcu(struct socktab_net *net, struct socktab_sock *sk,
				   uint16_t lport, uint32_t hash);
int socktab__check_established_locked(struct socktab_net *net, struct socktab_sock *sk,
				      uint16_t lport, uint32_t hash, bool port_was_bound,
				      struct socktab_sock **twp);

/* The established lookups (ehash.c); @ref: pin the result, else the caller is inside an RCU
 * read-side section and the result is valid until it ends. */
struct socktab_sock *socktab__lookup_established4(struct socktab_net *net, uint32_t saddr,
						  uint16_t sport, uint32_t daddr, uint16_t dport,
						  int dif, int sdif, bool ref);
struct socktab_sock *socktab__lookup_established6(struct socktab_net *net,
						  const struct in6_addr *saddr, uint16_t sport,
						  const struct in6_addr *daddr, uint16_t dport,
						  int dif, int sdif, bool ref);

/* connect.c: choose @sk's local port (or check its bound one) and insert it into ehash.
 * Caller holds the socket lock. */
int socktab__hash_connect(struct socktab_net *net, struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_EHASH_H */
