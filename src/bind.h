/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bind buckets (bhash: one tb per port; bhash2: one tb2 per port and address) and the bind()
 * machinery that TCP, listen(), connect() and UDP share (bind.c). Lock legend: common.h.
 */
#ifndef SOCKTAB_SRC_BIND_H
#define SOCKTAB_SRC_BIND_H

#include "net.h"

/* tb2 address types (kernel: ipv6_addr_type subset). */
enum { SOCKTAB__ADDR_ANY = 0, SOCKTAB__ADDR_MAPPED = 1, SOCKTAB__ADDR_V6 = 2 };

#define SOCKTAB__FASTREUSEPORT_ANY 1
#define SOCKTAB__FASTREUSEPORT_STRICT 2

/* bhash entry: one per (net, port, L3 master) in use (kernel inet_bind_bucket, R14, R98). */
struct socktab__tb {
	struct socktab__bucket_rcu rcu;    /* freed after a grace period (R14); first: the block */
	_Atomic(struct socktab__tb *) next; /* (r,b) bhash chain, walked under RCU by connect() */
	struct socktab_net *net;           /* (c) */
	uint16_t port;                     /* (c) */
	int l3mdev;                        /* (c) VRF of its owners, 0: none (R98) */
	_Atomic int8_t fastreuse;          /* (r,b) -1: connect() only; 0 (1 never, R45) */
	_Atomic int8_t fastreuseport;      /* (r,b) -1; 0; STRICT (ANY never, R45) */
	uint8_t fast_ipv6_only;            /* (b) recorded by the reuseport fast path (R44) */
	uint8_t fast_family;               /* (b) */
	uid_t fastuid;                     /* (b) */
	uint32_t fast_rcv_saddr;           /* (b) */
	struct in6_addr fast_v6_rcv_saddr; /* (b) */
	struct socktab__tb2 *tb2_list;     /* (b) address buckets of this port */
};

/* bhash2 entry: one per (net, port, local address) in use (kernel inet_bind2_bucket). */
struct socktab__tb2 {
	struct socktab__bucket_rcu rcu;    /* freed after a grace period; first: the block */
	_Atomic(struct socktab__tb2 *) next; /* (r,b2) bhash2 chain, looked up under RCU by a
					    * listener's child (bind.c) */
	struct socktab__tb2 *tb_next;      /* (b) in tb->tb2_list */
	struct socktab__tb *tb;            /* (c) */
	struct socktab_net *net;           /* (c) */
	uint16_t port;                     /* (c) */
	uint8_t addr_type;                 /* (c) SOCKTAB__ADDR_* */
	int8_t fastreuse;                  /* (b) mirrors tb */
	int8_t fastreuseport;              /* (b) */
	uint32_t v4;                       /* (c) IPv4 address of a MAPPED bucket */
	struct in6_addr addr;              /* (c) address (v4-mapped for MAPPED) */
	struct socktab_sock *owners;       /* (b) sockets and TIME_WAIT entries */
	struct socktab__kids *_Atomic kids; /* (b) made once, freed with the bucket; read by a
					    * child's join without the lock (bind.c) */
	uint32_t kid_live;                 /* (b, and the shard's lock to change) bit s: kids
					    * shard s has owners */
};

/*
 * A listener's children, which own its port through the tb2 of their address (the listener's own
 * when it is bound to that address), spread over shards by the thread that made them (its counter
 * slot's number modulo 16, lowest free first: while at most 16 threads hold slots each has its
 * own), each shard a list with a lock of its own on a line of its own, so that two threads'
 * children join and leave the port without the port's bhash lock (bind.c). Together with
 * tb2->owners they are the bucket's owners. An address bucket that has had a child carries them
 * (about 1 KiB, 16 mutexes) until it is freed.
 */
#define SOCKTAB__KID_SHARDS 16
struct socktab__kids {
	struct {
		_Alignas(64) pthread_mutex_t lock;
		struct socktab_sock *head; /* (this lock) */
	} s[SOCKTAB__KID_SHARDS];
	struct rcu_head rcu;               /* freed after a grace period, with its bucket */
};

/*
 * Buckets allocated before a lock is taken, so that a port walk under locks cannot fail
 * half-way: the functions below that may create a bucket take one from here (and clear the
 * pointer); socktab__bind_prealloc_free() releases what was not used.
 */
struct socktab__bind_prealloc {
	struct socktab__tb *tb;
	struct socktab__tb2 *tb2;
};
int socktab__bind_prealloc(struct socktab__bind_prealloc *pa);
void socktab__bind_prealloc_free(struct socktab__bind_prealloc *pa);

/* Bucket lookups: caller holds head->lock (the _rcu form: inside an RCU read-side section). */
struct socktab__tb *socktab__tb_find_locked(struct socktab__bhead *head, struct socktab_net *net,
					    uint16_t port, int l3mdev);
struct socktab__tb *socktab__tb_find_rcu(struct socktab__bhead *head, struct socktab_net *net,
					 uint16_t port, int l3mdev);
/* Caller holds head->lock. From @pa when given, else allocated (NULL on -ENOMEM). */
struct socktab__tb *socktab__tb_create_locked(struct socktab__bhead *head, struct socktab_net *net,
					      uint16_t port, int l3mdev,
					      struct socktab__bind_prealloc *pa);
/* inet_sk_bound_l3mdev(): the VRF whose bind buckets @sk uses (R98): the L3 master of its bound
 * device, or 0 with net.ipv4.tcp_l3mdev_accept (everything then shares bucket 0). */
int socktab__sk_bound_l3mdev(const struct socktab_sock *sk);
/* Caller holds head->lock. Frees @tb (after a grace period) once it has no address bucket. */
void socktab__tb_maybe_destroy_locked(struct socktab__bhead *head, struct socktab__tb *tb);
/* Is @tb2 the address bucket of @sk's local address (on its port)? */
bool socktab__tb2_addr_match(const struct socktab__tb2 *tb2, const struct socktab_sock *sk);
/*
 * @sk's address bucket on @tb's port (NULL when it has none, or when @tb is NULL). Caller holds
 * the bhash lock of tb->port; takes the bhash2 lock unless the port has no address bucket at
 * all. What it returns stays valid only while the caller keeps that bhash lock: so a caller
 * that needs the bucket again under the same lock carries it rather than looking it up twice.
 */
struct socktab__tb2 *socktab__tb2_find_locked(struct socktab_net *net,
					      const struct socktab__tb *tb,
					      const struct socktab_sock *sk);
/* @sk's address bucket on @tb's port, or NULL, looked up without a lock: what it returns may be
 * on its way out (freed after a grace period), which a caller must find out under a lock of the
 * bucket (a child's join does, bind.c). Caller is inside an RCU read-side section. */
struct socktab__tb2 *socktab__tb2_find_rcu(struct socktab__tb *tb, const struct socktab_sock *sk);
/* @sk's address bucket on @tb's port, made when it has none. Caller holds the bhash lock of
 * tb->port. @pa: as socktab__tb_create_locked(); @claimed: see socktab__feed_claim_locked(). */
struct socktab__tb2 *socktab__tb2_find_or_create_locked(struct socktab_net *net,
							struct socktab__tb *tb,
							const struct socktab_sock *sk,
							struct socktab__bind_prealloc *pa,
							bool *created, bool claimed);
/* The same for a caller that looked the bucket up (socktab__tb2_find_locked()) under the bhash
 * lock it still holds: @found is what it got; NULL makes one without a second lookup. */
struct socktab__tb2 *socktab__tb2_found_or_create_locked(struct socktab_net *net,
							 struct socktab__tb *tb,
							 struct socktab__tb2 *found,
							 const struct socktab_sock *sk,
							 struct socktab__bind_prealloc *pa,
							 bool *created, bool claimed);
/*
 * The port walks of connect() and bind(0), under the bhash lock of @port, when the net has a
 * port feed (socktab__feed_on(): a walk without one makes no call): claim @sk's key on @port
 * through the feed when @sk's address has no bucket on the port yet (@found: that bucket as
 * socktab__tb2_find_locked() gave it under the same lock, NULL when there is none), so that a
 * port the feed refuses (one a kernel socket holds, say) is passed over like a busy one. 1:
 * claimed (create the bucket with @claimed, or give the claim back with
 * socktab__feed_unclaim_locked()); 0: nothing to claim; -EADDRINUSE: refused.
 */
int socktab__feed_claim_locked(struct socktab_net *net, const struct socktab__tb2 *found,
			       const struct socktab_sock *sk, uint16_t port, int l3mdev);
void socktab__feed_unclaim_locked(struct socktab_net *net, const struct socktab_sock *sk,
				  uint16_t port, int l3mdev);
void socktab__tb2_maybe_destroy_locked(struct socktab_net *net, struct socktab__tb2 *tb2);

/* Owners. Caller holds the bhash lock of the port. */
void socktab__bind_hash_locked(struct socktab_sock *sk, struct socktab__tb2 *tb2, uint16_t port);
void socktab__bind_unhash_locked(struct socktab_net *net, struct socktab_sock *sk);
void socktab__bind_replace_owner_locked(struct socktab_sock *old, struct socktab_sock *new);
/* A child @sk owns @port through @tb2, the bucket of its address, in the calling thread's kids
 * shard (socktab__bind_kid_hash_locked: with the bhash lock held; it falls back to the owners
 * list when the shards cannot be made). socktab__bind_kid_join(): without the bhash lock, only
 * where that shard has owners already, which keep @tb2; false (nothing done) otherwise. Caller
 * holds the listener's socket lock, and @tb2 is the listener's own bucket (which that lock
 * keeps) or one looked up inside the caller's RCU read-side section (socktab__tb2_find_rcu). */
void socktab__bind_kid_hash_locked(struct socktab__tb2 *tb2, struct socktab_sock *sk,
				   uint16_t port);
bool socktab__bind_kid_join(struct socktab__tb2 *tb2, struct socktab_sock *sk, uint16_t port);
/* A listener's child @sk takes owner uid @uid (what sock_graft does at accept()): under its
 * port's bhash lock, which every conflict check that reads an owner's uid holds. Caller holds
 * the socket lock. */
void socktab__bind_set_uid(struct socktab_sock *sk, uid_t uid);
/* inet_put_port(). Caller holds the socket lock; takes the bhash lock. */
void socktab__put_port(struct socktab_sock *sk);
/* inet_bhash2_update_saddr(). Caller holds the socket lock; takes the bhash lock. */
int socktab__bhash2_update_saddr(struct socktab_sock *sk, const struct in6_addr *newaddr);

/* inet_csk_get_port(): take port @snum (0: choose one). Caller holds the socket lock. */
int socktab__get_port(struct socktab_net *net, struct socktab_sock *sk, int snum);
/* R64: the range connect()/bind(0) use for @sk. */
void socktab__port_range(struct socktab_net *net, const struct socktab_sock *sk, int *low,
			 int *high, bool *local_ports);
/* R40: the address-overlap relation, shared with UDP. */
bool socktab__rcv_saddr_equal(const struct socktab_sock *sk, const struct socktab_sock *sk2,
			      bool match_wildcard);

/* bind()'s locked address steps, shared by TCP and UDP (the unlocked checks are in addr.h). */
int socktab__bind_set_addr(struct socktab_sock *sk, const struct in6_addr *a6, uint32_t v4,
			   uint32_t scope_id, uint8_t *saved);
void socktab__bind_undo_addr(struct socktab_sock *sk, uint8_t saved);
void socktab__bind_done(struct socktab_sock *sk, int snum);

/*
 * The port feed (socktab/feed.h). socktab__feed_on(): does @net have one (one relaxed load:
 * the test every writer makes first). socktab__feed_tell(): tell it @key in one of the ways
 * below, inside a read-side section it opens; returns the refusal of a SOCKTAB__FEED_REFUSABLE
 * claim (a negative errno), else 0. Caller holds the bind lock of the key's port.
 */
enum {
	SOCKTAB__FEED_REFUSABLE = 0, /* a claim that may be refused */
	SOCKTAB__FEED_FORCED = 1,    /* a claim that is a report */
	SOCKTAB__FEED_RELEASE = 2,
	SOCKTAB__FEED_CLAIMED = 3,   /* tb2_get() only: the caller claimed the bucket already */
};
struct socktab_port_key;
static inline bool socktab__feed_on(const struct socktab_net *net)
{
	return __builtin_expect(atomic_load_explicit(&net->port_feed, memory_order_relaxed) != NULL, 0);
}
int socktab__feed_tell(struct socktab_net *net, const struct socktab_port_key *key, int what);
/* socktab_net_port_feed_dump()'s TCP half: every address bucket of @net, under its bind lock. */
int socktab__tcp_feed_dump(struct socktab_net *net,
			   int (*fn)(void *arg, const struct socktab_port_key *key), void *arg);

#endif /* SOCKTAB_SRC_BIND_H */
