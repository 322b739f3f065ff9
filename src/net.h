/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The network namespace (struct socktab_net), the TCP hash tables it uses (private or shared
 * with other nets, R11, R13) and their lock stripes, the socket pool, and the declarations of
 * the table hashes (R1-R8; defined in hash.c, the IPv4 ehash one inline here).
 * Lock legend: common.h.
 */
#ifndef SOCKTAB_SRC_NET_H
#define SOCKTAB_SRC_NET_H

#include "socktab/dev.h"

#include "hash.h"
#include "sock.h"

#define SOCKTAB__PERTURB_SIZE (1u << 16) /* RFC 6056 alg. 4 table (kernel: table_perturb) */
#define SOCKTAB__PM_SKETCH 4096         /* portmap.c: cells per count-min sketch row */
#define SOCKTAB__PM_BUCKETS 64          /* portmap.c: index hash buckets per net */

struct socktab__tb;
struct socktab__tb2;
struct socktab__portmap;
struct socktab__rss;
struct socktab__udp_table;
struct socktab__ifcfg;
struct socktab__sk_lookup_array;

/* A caller's FIB (socktab_net_set_fib()), replaced whole and freed after a grace period. */
struct socktab__fib {
	socktab_fib_fn fn;                 /* (c) */
	void *arg;                         /* (c) */
	struct rcu_head rcu;
};

/*
 * Slots are bare heads (8 bytes, as the kernel's are 16 with their spinlock); their locks are
 * striped, one set per table (struct socktab__stripes, common.h; socktab__bhead_lock() and
 * friends pick a slot's).
 */

/* bhash slot: bind buckets of the ports that hash here (bind.h). */
struct socktab__bhead {
	_Atomic(struct socktab__tb *) chain; /* (r,b) */
};

/* bhash2 slot: address buckets of the (port, address) pairs that hash here. */
struct socktab__bhead2 {
	/* (b2; r: a listener's child looks its bucket up, bind.c) */
	_Atomic(struct socktab__tb2 *) chain;
};

/* lhash2 slot: listeners by (address, port) (R29); chain ends in nulls i + LISTENING_NULLS_BASE. */
struct socktab__lhead {
	struct socktab__hhead head;        /* (r, its stripe) */
};
#define SOCKTAB__LISTENING_NULLS_BASE (1u << 29)
#define SOCKTAB__BIND_LOCKS 1024 /* stripes per bind/listen table, at most one per slot */

/* Hash tables; private to one net or shared by several (R11, R13). */
struct socktab__tables {
	_Atomic int refs;                  /* (a) nets using these tables */
	_Atomic uint32_t next_tag;         /* (a) tags given to the nets using them so far */
	uint32_t ehash_mask;               /* (c) */
	uint32_t bhash_mask;               /* (c) */
	struct socktab__eslot *ehash;      /* (c) head and second-entry hint per slot (nulls.h) */
	struct socktab__stripes ehash_locks; /* (c) by hash */
	struct socktab__bhead *bhash;      /* (c) */
	struct socktab__bhead2 *bhash2;    /* (c) */
	uint32_t lhash2_mask;              /* (c) */
	struct socktab__lhead *lhash2;     /* (c) */
	struct socktab__stripes bhash_locks;  /* (c) by slot, as the two below */
	struct socktab__stripes bhash2_locks; /* (c) */
	struct socktab__stripes lhash2_locks; /* (c) */
};

/* One slab of a pool: room for @nobj objects of the pool's stride, then their cold parts; the
 * first @used have been handed out at least once. */
struct socktab__slab {
	unsigned char *base;
	size_t nobj;
	size_t used;
};

/*
 * Object pool of one kind (pool.c). A freed object returns to the free list after a grace
 * period; slabs are freed with the net.
 */
/* A batch of freed objects filling up (pool.c): a list through pool_next, newest first. */
struct socktab__limbo {
	struct socktab_sock *head;         /* the newest */
	struct socktab_sock *tail;         /* the oldest */
	uint32_t n;
};

/*
 * A thread's cache of one pool (socktab__pool.cache, indexed by the thread's counter slot,
 * common.h): objects to hand out without the pool's lock, the batch of freed ones waiting for
 * its grace period, and the batches whose grace period is over. A batch comes back to the cache
 * of the thread that freed it, so a thread that frees and allocates its own objects (a
 * connection's sockets, opened and closed on one core) reuses lines it already holds, and the
 * call_rcu thread touches one object per batch, not each. Only the slot's owner touches @free
 * and the limbo batch (net teardown flushes every cache, when no other thread uses the net);
 * @returned is a Treiber stack pushed by the call_rcu thread, taken whole by the owner when its
 * free list runs dry, or by another thread that found the pool empty (socktab__pool_alloc) and
 * takes such stacks before it carves new objects. What the owner took stays its own: a thread
 * that frees far more than it allocates holds, between its allocations, at most one such take.
 */
struct socktab__pool_cache {
	_Alignas(SOCKTAB__CACHELINE) struct socktab_sock *free; /* through pool_next */
	struct socktab__limbo limbo;
	struct socktab_sock *_Atomic returned; /* (a) batches back from their grace period */
};

struct socktab__pool {
	pthread_mutex_t lock;
	struct socktab_net *net;           /* (c) */
	uint8_t kind;                      /* (c) enum socktab__kind */
	size_t stride;                     /* (c) bytes per object: its line(s) and caller area */
	size_t cold_size;                  /* (c) bytes per cold part, 0 for TIME_WAIT entries */
	size_t v6_off;                     /* (c) where the cold struct starts in it (IPv6 key) */
	struct socktab_sock *free;         /* (p) */
	struct socktab_sock *_Atomic returned; /* (a) freed after their grace period, pushed by
					    * the call_rcu thread without the lock; taken whole
					    * into @free under it (the batches of threads
					    * without a cache, and single objects) */
	_Atomic bool cache_returned;       /* (a) a cache's @returned may hold objects: set by
					    * each push there, cleared by a thread that looks
					    * through the caches for objects to take */
	struct socktab__limbo limbo;       /* (p) the batch of threads without a cache */
	struct socktab__slab *slabs;       /* (p) */
	size_t nslabs, slab_cap;           /* (p) */
	size_t cur;                        /* (p) the slab new objects are carved from: slabs
					    * before it are full (reserved slabs wait after it) */
	_Atomic uint64_t nobjs;            /* (a) */
	_Atomic uint64_t nslabs_made;      /* (a) nslabs, for socktab_net_stats() */
	/* Per-thread caches, one per owned counter slot; the shared slot's threads use the
	 * lock above. */
	struct socktab__pool_cache cache[SOCKTAB__STAT_SLOTS - 1];
};

/* The striped socket locks of a net. */
#define SOCKTAB__SK_LOCKS 256

/*
 * The counters every connect(), close() and handshake changes, one slot a thread
 * (socktab__stat_slot(), common.h): socktab_net_stats() adds the slots up. One slot alone may
 * go below zero (a socket counted on one thread, closed on another); the sum does not.
 */
struct socktab__stat_slot {
	_Alignas(SOCKTAB__CACHELINE) _Atomic int64_t established;
	_Atomic int64_t bind_buckets;
	_Atomic int64_t requests;          /* request entries in ehash */
	_Atomic int64_t ports_tried;       /* connect() candidates examined */
	_Atomic int64_t connects;
};

/* Count @v in counter @field of @net, on the calling thread's slot. */
#define SOCKTAB__STAT_ADD(net, field, v)                                                          \
	do {                                                                                       \
		uint32_t socktab__i = socktab__stat_slot();                                        \
		socktab__stat_add(&(net)->stat[socktab__i].field, socktab__i, (int64_t)(v));       \
	} while (0)

struct socktab_net {
	/* Line 0: read by every lookup. */
	_Alignas(SOCKTAB__CACHELINE) struct socktab__tables *tab; /* (c) */
	struct socktab__eslot *ehash;      /* (c) tab->ehash, without the indirection */
	uint32_t ehash_mask;               /* (c) tab->ehash_mask */
	uint32_t hash_mix;                 /* (c) netns mix (R1) */
	uint32_t ehash_secret;             /* (c) R3 */
	uint32_t ehash6_secret;            /* (c) R4 */
	uint32_t ipv6_hash_secret;         /* (c) R4 */
	uint8_t lport_inside;              /* (c) variant: lport hashed inside (before Linux 6.15) */
	uint8_t has_priv;                  /* (c) sockets have a caller area: lookups prefetch it */
	uint8_t tag;                       /* (c) unique among the nets sharing the tables, 1-255;
					    * 0 for any after the 255th */
	uint8_t rcu_precheck;              /* (c) variant: RCU pre-check of 4-tuples in connect() */
	uint8_t tcp_timestamps;            /* (c) */
	uint8_t privileged;                /* (c) */
	_Atomic uint8_t sk_lookup_on;      /* (a, settings_lock) sk_lookup below is not NULL: the
					    * listener / unconnected step tests this byte only */
	enum socktab_variant variant;      /* (c) */
	uint64_t port_key[2];              /* (c) SipHash key of the connect() offset (R10) */
	socktab_clock_fn clock;            /* (c) */
	void *clock_arg;                   /* (c) */
	uint64_t tw_len_ns;                /* (c) */

	/* Settings (sysctls), changed at run time. */
	pthread_mutex_t settings_lock;
	_Atomic uint32_t port_range;       /* (a) high << 16 | low */
	_Atomic int unprivileged_port_start; /* (a) */
	_Atomic int tw_reuse;              /* (a) */
	_Atomic uint32_t tw_reuse_delay_ms; /* (a) */
	_Atomic int autobind_reuse;        /* (a) */
	_Atomic uint64_t reserved[65536 / 64]; /* (a) ip_local_reserved_ports bitmap */
	_Atomic int somaxconn;             /* (a) net.core.somaxconn */
	_Atomic uint8_t ip_nonlocal_bind;  /* (a) net.ipv4.ip_nonlocal_bind */
	_Atomic uint8_t ip6_nonlocal_bind; /* (a) net.ipv6.ip_nonlocal_bind */
	_Atomic uint8_t tcp_l3mdev_accept; /* (a) net.ipv4.tcp_l3mdev_accept */
	_Atomic uint8_t udp_l3mdev_accept; /* (a) net.ipv4.udp_l3mdev_accept */
	_Atomic uint8_t tcp_rfc1337;       /* (a) net.ipv4.tcp_rfc1337 */
	_Atomic uint8_t tcp_syncookies;    /* (a) net.ipv4.tcp_syncookies 0..2 (reqsk.c) */
	_Atomic uint8_t tcp_migrate_req;   /* (a) net.ipv4.tcp_migrate_req 0/1 (reqsk.c) */
	_Atomic int max_syn_backlog;       /* (a) net.ipv4.tcp_max_syn_backlog */
	uint32_t req_priv_size;            /* (c) caller bytes of a request entry */
	uint8_t net_raw;                   /* (c) callers hold CAP_NET_RAW */
	_Atomic uint8_t kvariant[SOCKTAB_KV_COUNT]; /* (a) kernel variants, 0/1 (socktab/net.h) */
	uint32_t tw_priv_size;             /* (c) caller bytes a TIME_WAIT entry keeps */
	uint32_t priv_size;                /* (c) caller bytes per socket */
	pthread_mutex_t reuseport_lock;    /* guards every reuseport group of this net */

	_Atomic uint32_t *perturb;         /* (a) table_perturb (R54, R57) */

	struct socktab__pool pools[SOCKTAB__K_NR];
	struct socktab__stripes sk_locks;  /* (c) SOCKTAB__SK_LOCKS of them, for TIME_WAIT and
					    * request entries (a socket has its own) */
	struct socktab__sk_cold tw_cold;   /* (c) all zero: what a TIME_WAIT entry's cold pointer names */

	pthread_mutex_t tw_lock;
	struct socktab_sock *tw_head;      /* (t) oldest first (struct socktab__tw) */
	struct socktab_sock *tw_tail;      /* (t) */
	_Atomic uint64_t tw_head_expire;   /* (t, read without it) oldest entry's expiry, or
					    * UINT64_MAX: lets every control call skip tw_lock */

	struct socktab__stat_slot *stat;   /* (c) SOCKTAB__STAT_SLOTS per-thread counter slots */
	_Atomic uint64_t n_time_wait;      /* (a) read by connect() (a net without entries) */
	_Atomic uint64_t n_tw_recycled;    /* (a) */
	_Atomic uint64_t n_tw_overflow;    /* (a) active closes left without a TIME_WAIT entry */
	struct socktab__rss *_Atomic rss;  /* (r) RSS key and RETA (rss.c), replaced whole */
	_Atomic uint64_t n_rss_rejected;   /* (a) candidates the RSS filter passed over (rss.c) */
	_Atomic uint64_t rss_index_bytes;  /* (a) bytes of the per-queue summaries (rss.c) */
	_Atomic uint32_t rss_indexes;      /* (a) summary sets, retired ones until freed */
	_Atomic uint8_t rss_walk_only;     /* (a) tests only: RSS connect() filters each candidate
					    * of the busy-port index, without the summaries (the
					    * reference the summaries must agree with) */

	/* ---- connect() port index (portmap.c). Zeroed by calloc: no init/teardown; every index
	 * is freed when its destination's entries leave ehash. (pm) = pm_lock. ---- */
	_Atomic uint32_t pm_sketch[2][SOCKTAB__PM_SKETCH]; /* (a) sampled ehash entries per
							    * destination hash cell */
	_Atomic(struct socktab__portmap *) pm_table[SOCKTAB__PM_BUCKETS]; /* (r,pm) indexes */
	_Atomic uint64_t pm_memo[SOCKTAB__PM_BUCKETS]; /* (a) last false-positive build per bucket */
	_Atomic uint32_t pm_live;          /* (a) indexes in pm_table */
	_Atomic int pm_lock;               /* spin lock, a leaf: links and unlinks indexes */

	/* ---- devices, addresses, routes (dev.c) ---- */
	pthread_mutex_t dev_lock;          /* serialises changes of the snapshot */
	struct socktab__ifcfg *_Atomic ifcfg; /* (r, dev_lock) current snapshot */
	struct socktab__fib *_Atomic fib;  /* (r) the caller's FIB, or NULL */

	/* ---- UDP (udp.c): always private to the net, even with shared TCP tables ---- */
	struct socktab__udp_table *udp;    /* (c) */

	/* ---- dispatch hook (sk_lookup.c): read by a lookup at its listener / unconnected step */
	struct socktab__sk_lookup_array *_Atomic sk_lookup; /* (r, settings_lock) or NULL */
	int sk_lookup_next_id;             /* (settings_lock) the last attachment id given */

	/* ---- port feed (bind.c, socktab/feed.h): the caller's callbacks, or NULL ---- */
	const struct socktab_port_feed *_Atomic port_feed; /* (r, settings_lock) */
};

static inline uint64_t socktab__now(struct socktab_net *net)
{
	return net->clock(net->clock_arg);
}

/* ---- table hashes (hash.c; hash.h holds the primitives) ---- */
/* R3: lport added after hashing (inside for the linux-6.1 variant). Inline: every IPv4 lookup
 * pays it. */
static inline uint32_t socktab__ehashfn4(const struct socktab_net *net, uint32_t laddr,
					 uint16_t lport, uint32_t faddr, uint16_t fport_be)
{
	uint32_t iv = net->ehash_secret + net->hash_mix;

	if (net->lport_inside)
		return socktab__jhash_3words(laddr, faddr, ((uint32_t)lport << 16) | fport_be, iv);
	return lport + socktab__jhash_3words(laddr, faddr, fport_be, iv);
}
uint32_t socktab__ehashfn6(const struct socktab_net *net, const struct in6_addr *laddr,
			   uint16_t lport, const struct in6_addr *faddr, uint16_t fport_be);
uint32_t socktab__sk_ehashfn(const struct socktab_net *net, const struct socktab_sock *sk,
			     uint16_t lport);
uint32_t socktab__bhashfn(const struct socktab_net *net, uint16_t port);
uint32_t socktab__portaddr_hash(const struct socktab_net *net, const struct in6_addr *a,
				uint16_t port);

/* socktab__portaddr_hash() of the IPv4 address @addr (network order; its v4-mapped form, and
 * 0.0.0.0 hashes as :: does), from the word itself: a lookup's key need not build the mapped
 * address, whose four narrow stores a wide load of it would wait on. */
static inline uint32_t socktab__portaddr_hash4(const struct socktab_net *net, uint32_t addr,
					       uint16_t port)
{
	return socktab__jhash_1word(addr, net->hash_mix) ^ port;
}

/* The bhash slot and lock of @port. */
static inline struct socktab__bhead *socktab__bhash_head(struct socktab_net *net, uint16_t port)
{
	return &net->tab->bhash[socktab__bhashfn(net, port) & net->tab->bhash_mask];
}

/* The lock of a bhash / bhash2 / lhash2 slot: its table's stripe. */
static inline pthread_mutex_t *socktab__bhead_lock(const struct socktab__tables *t,
						   const struct socktab__bhead *h)
{
	return socktab__stripe(&t->bhash_locks, (uint32_t)(h - t->bhash));
}

static inline pthread_mutex_t *socktab__bhead2_lock(const struct socktab__tables *t,
						    const struct socktab__bhead2 *h)
{
	return socktab__stripe(&t->bhash2_locks, (uint32_t)(h - t->bhash2));
}

static inline pthread_mutex_t *socktab__lhead_lock(const struct socktab__tables *t,
						   const struct socktab__lhead *h)
{
	return socktab__stripe(&t->lhash2_locks, (uint32_t)(h - t->lhash2));
}

static inline pthread_mutex_t *socktab__bhash_lock(struct socktab_net *net, uint16_t port)
{
	return socktab__bhead_lock(net->tab, socktab__bhash_head(net, port));
}

static inline pthread_mutex_t *socktab__ehash_lock(struct socktab__tables *t, uint32_t hash)
{
	return socktab__stripe(&t->ehash_locks, hash);
}

/* Is @port in net.ipv4.ip_local_reserved_ports? */
static inline bool socktab__port_reserved(struct socktab_net *net, uint16_t port)
{
	return (RD(net->reserved[port >> 6]) >> (port & 63)) & 1;
}

/* ---- pool.c ---- */
int socktab__pool_init(struct socktab__pool *p, struct socktab_net *net, int kind,
		       size_t priv_size);
/* An object of the pool's kind with refcnt 0 and state FREE; the caller initialises and
 * publishes it. Its cold part (if any) is linked and names the net; the rest is stale. */
struct socktab_sock *socktab__pool_alloc(struct socktab__pool *p);
/* Can the pool hand out an object without a new slab? (tests) */
bool socktab__pool_has_room(struct socktab__pool *p);
/* Allocate the slabs for @n objects of a new pool now, offered to transparent huge pages and
 * faulted in, so that its first @n objects need neither an allocation nor a page fault.
 * 0 or -ENOMEM (the slabs already made stay the pool's). */
int socktab__pool_reserve(struct socktab__pool *p, size_t n);
/* The pool of a new socket of @proto and @family, or of a TIME_WAIT entry of @family. */
struct socktab__pool *socktab__sock_pool(struct socktab_net *net, int proto, int family);
struct socktab__pool *socktab__tw_pool(struct socktab_net *net, int family);
struct socktab__pool *socktab__req_pool(struct socktab_net *net, int family);
/* @sk is unhashed and its refcount reached zero: back to the free list after a grace period
 * (batched). socktab__pool_flush() submits the batch in progress. */
void socktab__pool_free_rcu(struct socktab_sock *sk);
/* The same for @n objects (at most 64, of any pools), each pool's lock taken once per run. */
void socktab__pool_free_rcu_many(struct socktab_sock *const *sks, size_t n);
void socktab__pool_flush(struct socktab__pool *p);
/* Call @fn on every object the pool ever handed out, free or not. Caller holds nothing; @fn
 * must not allocate from this pool. */
void socktab__pool_walk(struct socktab__pool *p, void (*fn)(struct socktab_sock *, void *),
			void *arg);
void socktab__pool_destroy(struct socktab__pool *p);

/*
 * Bind buckets' memory (bind.c): blocks of SOCKTAB__BUCKET_BYTES, any net's, cached by the
 * thread that frees them. A block freed after a grace period comes back, in a batch of 32, to the
 * cache of the thread that freed it: a thread that opens and closes connections reuses its own
 * buckets, calls call_rcu once per batch, and gives malloc nothing to move between threads (an
 * address bucket's kids shards, bind.h, have a call_rcu of their own). A
 * thread keeps at most 4,096 free blocks (512 KiB; more go back to malloc, so a thread that
 * frees the buckets other threads made does not hoard them), and what it holds goes back to
 * malloc when it unregisters (socktab_thread_unregister()).
 * A block freed after a grace period begins with its struct socktab__bucket_rcu, which shares
 * no bytes with what its readers read.
 */
#define SOCKTAB__BUCKET_BYTES 128
struct socktab__bucket_home;
struct socktab__bucket_rcu {
	struct rcu_head head;               /* a batch's carrier (its oldest block) */
	struct socktab__bucket_rcu *next;   /* the batch, newest first; the carrier's: the newest */
	struct socktab__bucket_home *home;  /* the carrier's: the cache the batch goes back to */
};
/* A zeroed block for @size bytes (at most SOCKTAB__BUCKET_BYTES), or NULL (-ENOMEM). */
void *socktab__bucket_alloc(size_t size);
/* Free @b now: no reader can still hold it. */
void socktab__bucket_free(void *b);
/* Free the block @r begins after a grace period. */
void socktab__bucket_free_rcu(struct socktab__bucket_rcu *r);
/* Give the calling thread's cached blocks back to malloc (thread unregistration). */
void socktab__bucket_cache_release(void);

#endif /* SOCKTAB_SRC_NET_H */
