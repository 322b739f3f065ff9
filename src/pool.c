/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Object pools: one per kind of object per net (TCP/UDP sockets of each family, TIME_WAIT
 * entries of each family).
 *
 * A slab is one block: its objects first, each `stride` bytes (the socket's line and the
 * caller's area, or a whole TIME_WAIT entry), then the cold parts of those objects. So the lines
 * a lookup and a stack's per-packet code touch are dense, and the control state stays out of
 * their way. An object keeps its slot and cold part for the life of the net.
 *
 * Objects are freed after an RCU grace period, in batches (socktab__pool_free_rcu), so a reader
 * inside a read-side section may use whatever it found. Slabs are freed only by
 * socktab__pool_destroy(), which net_free() calls after the last callbacks ran.
 *
 * An object comes from the free list, else it is carved from the first slab with room; a slab
 * is allocated when none has room. A net's reservation (socktab_net_params.reserve_socks,
 * reserve_tw) allocates the slabs for that many objects up front and faults them in
 * (socktab__pool_reserve), so until they are all carved no socket or entry costs an allocation
 * or a page fault: without it, every slab's first object pays the 2 MiB allocation and its
 * objects the faults of the pages they land on.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "net.h"

/*
 * The slab range. Every slab of the process is carved from one range of address space, reserved
 * (PROT_NONE, nothing committed) when the first slab is made, so that an ehash head can name any
 * object in 32 bits (nulls.h, struct socktab__chead). A slab is made readable and writable when
 * handed out; a destroyed pool's slabs drop their pages, become inaccessible again (a stray
 * access faults) and wait on a free stack for the next pool.
 *
 * Its size: at most 128 GiB (all that 32 bits reach), and under an address-space limit
 * (RLIMIT_AS, `ulimit -v`, which counts a PROT_NONE reservation like any mapping) at most half
 * of the limit, so the process keeps the other half for its own mappings (the nets' tables,
 * thread stacks, malloc's arenas). When the system refuses that size, half of it is tried, and
 * so on down to RANGE_MIN. Slabs past the range fail with -ENOMEM.
 */
uintptr_t socktab__slab_base;
#define RANGE_SLABS (SOCKTAB__SLAB_RANGE_MAX / SOCKTAB__SLAB_BYTES)
/* The smallest range tried: 8 slabs, one for each kind of pool (16 MiB). */
#define RANGE_MIN (8 * SOCKTAB__SLAB_BYTES)
static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t range_slabs, range_carved;   /* (range_lock) slabs the range holds, carved so far */
static uint32_t range_free[RANGE_SLABS];   /* (range_lock) free slabs' indices, a stack */
static size_t range_nfree;                 /* (range_lock) */

/* The first size tried: the largest, or half the address-space limit, whole slabs, at least
 * RANGE_MIN. */
static size_t range_first_len(void)
{
	size_t len = SOCKTAB__SLAB_RANGE_MAX;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < (rlim_t)len)
		len = (size_t)(rl.rlim_cur / 2) & ~(SOCKTAB__SLAB_BYTES - 1);
	return len < RANGE_MIN ? RANGE_MIN : len;
}

static void range_reserve_locked(void)
{
	for (size_t len = range_first_len(); len >= RANGE_MIN;
	     len = (len / 2) & ~(SOCKTAB__SLAB_BYTES - 1)) {
		void *r = mmap(NULL, len + SOCKTAB__SLAB_BYTES, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r != MAP_FAILED) {
			socktab__slab_base = ((uintptr_t)r + SOCKTAB__SLAB_BYTES - 1) &
					     ~(uintptr_t)(SOCKTAB__SLAB_BYTES - 1);
			range_slabs = len / SOCKTAB__SLAB_BYTES;
			return;
		}
	}
}

static void *slab_alloc(void)
{
	void *slab = NULL;
	size_t i;

	pthread_mutex_lock(&range_lock);
	if (!socktab__slab_base)
		range_reserve_locked();
	if (range_nfree)
		i = range_free[range_nfree - 1];
	else if (range_carved < range_slabs)
		i = range_carved;
	else
		goto out;
	slab = (void *)(socktab__slab_base + i * SOCKTAB__SLAB_BYTES);
	if (mprotect(slab, SOCKTAB__SLAB_BYTES, PROT_READ | PROT_WRITE)) {
		slab = NULL;
		goto out;
	}
	if (range_nfree)
		range_nfree--;
	else
		range_carved++;
out:
	pthread_mutex_unlock(&range_lock);
	return slab;
}

static void slab_free(void *slab)
{
	/* A fresh inaccessible mapping in its place: the pages go back, the next pool finds
	 * zeroes, and tools that follow memory through mmap (ThreadSanitizer's shadow) see the old
	 * objects end instead of taking the next pool's first writes for races with them. */
	if (mmap(slab, SOCKTAB__SLAB_BYTES, PROT_NONE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		(void)madvise(slab, SOCKTAB__SLAB_BYTES, MADV_DONTNEED);
		(void)mprotect(slab, SOCKTAB__SLAB_BYTES, PROT_NONE);
	}
	pthread_mutex_lock(&range_lock);
	range_free[range_nfree++] =
		(uint32_t)(((uintptr_t)slab - socktab__slab_base) / SOCKTAB__SLAB_BYTES);
	pthread_mutex_unlock(&range_lock);
}


static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

int socktab__pool_init(struct socktab__pool *p, struct socktab_net *net, int kind,
		       size_t priv_size)
{
	memset(p, 0, sizeof(*p));
	p->net = net;
	p->kind = (uint8_t)kind;
	switch (kind) {
	case SOCKTAB__K_TW4:
		p->stride = sizeof(struct socktab__tw);
		break;
	case SOCKTAB__K_TW6:
		p->stride = round_up(sizeof(struct socktab__tw6), SOCKTAB__CACHELINE);
		break;
	case SOCKTAB__K_REQ4:
		p->stride = sizeof(struct socktab__req);
		break;
	case SOCKTAB__K_REQ6:
		p->stride = round_up(sizeof(struct socktab__req6), SOCKTAB__CACHELINE);
		break;
	default:
		p->stride = sizeof(struct socktab_sock) + round_up(priv_size, SOCKTAB__CACHELINE);
		p->cold_size = sizeof(struct socktab__sk_cold);
		if (kind == SOCKTAB__K_UDP4 || kind == SOCKTAB__K_UDP6)
			p->cold_size += sizeof(struct socktab__udp_ext);
		/* The IPv6 key goes first, and the part's size is a multiple of 32: the key is
		 * 32-byte aligned, one line for an IPv6 lookup to read. */
		if (kind == SOCKTAB__K_TCP6 || kind == SOCKTAB__K_UDP6) {
			p->v6_off = sizeof(struct socktab__v6key);
			p->cold_size = round_up(p->cold_size + p->v6_off, 32);
		}
	}
	return socktab__mutex_init(&p->lock);
}

/* Objects per slab: the first line is the slab's header. */
static size_t slab_nobj(const struct socktab__pool *p)
{
	return (SOCKTAB__SLAB_BYTES - SOCKTAB__CACHELINE) / (p->stride + p->cold_size);
}

/*
 * The header of a new slab of @p with room for @nobj objects: the net, and where each object's
 * IPv6 key is (socktab__sk_v6()). A socket's is the start of its cold part, the cold array
 * beginning after the objects; a TIME_WAIT or request entry's is inside the entry. Written
 * before any object of the slab is carved, so before any is published.
 */
static void slab_hdr_init(struct socktab__slab_hdr *h, const struct socktab__pool *p, size_t nobj)
{
	uintptr_t base = (uintptr_t)h + SOCKTAB__CACHELINE;

	/* The reciprocals are exact for offsets and sizes below 2^21 (socktab__slab_index()). */
	SOCKTAB__ASSERT(p->stride < SOCKTAB__SLAB_BYTES && SOCKTAB__SLAB_BYTES <= (size_t)1 << 21);
	h->net = p->net;
	h->v6_recip = socktab__slab_recip(p->stride);
	h->stride = p->stride;
	if (p->kind == SOCKTAB__K_UDP4 || p->kind == SOCKTAB__K_UDP6) {
		/* Object i's UDP part: after its cold part's IPv6 key (if any) and cold fields. */
		h->udp_base = base + nobj * p->stride + p->v6_off + sizeof(struct socktab__sk_cold);
		h->udp_recip = socktab__slab_recip(p->cold_size);
	} else {
		h->udp_base = 0;
		h->udp_recip = 0;
	}
	switch (p->kind) {
	case SOCKTAB__K_TCP6:
	case SOCKTAB__K_UDP6:
		h->v6_base = base + nobj * p->stride;
		h->v6_stride = p->cold_size;
		break;
	case SOCKTAB__K_TW6:
		h->v6_base = base + offsetof(struct socktab__tw6, v6);
		h->v6_stride = p->stride;
		break;
	case SOCKTAB__K_REQ6:
		h->v6_base = base + offsetof(struct socktab__req6, v6);
		h->v6_stride = p->stride;
		break;
	default:
		h->v6_base = 0;
		h->v6_stride = 0;
	}
}

/* Append a slab; with @prefault it is offered to huge pages and faulted in now. */
static int pool_grow_locked(struct socktab__pool *p, bool prefault)
{
	unsigned char *slab;

	SOCKTAB__ASSERT_LOCKED(&p->lock);
	if (p->nslabs == p->slab_cap) {
		size_t cap = p->slab_cap ? p->slab_cap * 2 : 16;
		struct socktab__slab *n = realloc(p->slabs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->slabs = n;
		p->slab_cap = cap;
	}
	/*
	 * Every slab is SOCKTAB__SLAB_BYTES, aligned to its size, with a header in its first line
	 * that names the net: socktab__sk_net() masks an object's address to find it, so no
	 * object carries a net pointer. From the second slab of a pool on, slabs are offered to
	 * transparent huge pages: with a million sockets every lookup's miss on the socket line
	 * would otherwise pay a page-table walk too (bench lookup); a small net's single slab stays
	 * on small pages, of which it touches few, since objects are carved as first needed. A
	 * reserved slab is touched whole at once, so a huge page costs it no extra memory.
	 */
	size_t nobj = slab_nobj(p);

	SOCKTAB__ASSERT(nobj >= 1); /* sock_priv_size is at most 1 MiB */
	slab = slab_alloc();
	if (!slab)
		return -ENOMEM;
	if (p->nslabs || prefault)
		(void)madvise(slab, SOCKTAB__SLAB_BYTES, MADV_HUGEPAGE); /* a hint: failure costs speed */
	if (prefault)
		socktab__prefault(slab, SOCKTAB__SLAB_BYTES);
	slab_hdr_init((struct socktab__slab_hdr *)slab, p, nobj);
	slab += SOCKTAB__CACHELINE;
	p->slabs[p->nslabs].base = slab;
	p->slabs[p->nslabs].nobj = nobj;
	p->slabs[p->nslabs].used = 0;
	p->nslabs++;
	atomic_fetch_add_explicit(&p->nslabs_made, 1, memory_order_relaxed);
	return 0;
}

/* The slab the next new object is carved from (growing the pool when every slab is full), or
 * NULL when no slab can be allocated. */
static struct socktab__slab *carve_slab_locked(struct socktab__pool *p)
{
	SOCKTAB__ASSERT_LOCKED(&p->lock);
	while (p->cur < p->nslabs && p->slabs[p->cur].used == p->slabs[p->cur].nobj)
		p->cur++;
	if (p->cur == p->nslabs && pool_grow_locked(p, false))
		return NULL;
	return &p->slabs[p->cur];
}

int socktab__pool_reserve(struct socktab__pool *p, size_t n)
{
	size_t want = (n + slab_nobj(p) - 1) / slab_nobj(p);
	int err = 0;

	socktab__lock(&p->lock);
	for (size_t i = 0; i < want && !err; i++)
		err = pool_grow_locked(p, true);
	socktab__unlock(&p->lock);
	return err;
}

/* Carve the next object of slab @s: zeroed, with its kind, family and cold part (with its
 * socket lock); NULL if that lock cannot be made. */
static struct socktab_sock *carve_locked(struct socktab__pool *p, struct socktab__slab *s)
{
	size_t i = s->used++;
	struct socktab_sock *sk = (struct socktab_sock *)(s->base + i * p->stride);

	SOCKTAB__ASSERT_LOCKED(&p->lock);
	memset(sk, 0, p->stride);
	sk->family = p->kind == SOCKTAB__K_TCP4 || p->kind == SOCKTAB__K_UDP4 ||
				     p->kind == SOCKTAB__K_TW4 || p->kind == SOCKTAB__K_REQ4
			     ? AF_INET
			     : AF_INET6;
	sk->net_tag = p->net->tag;
	atomic_init(&sk->kind, p->kind | (p->net->priv_size && p->cold_size ? SOCKTAB__HAS_PRIV : 0));
	if (p->cold_size) {
		unsigned char *c = s->base + s->nobj * p->stride + i * p->cold_size;

		memset(c, 0, p->cold_size);
		sk->cold = (struct socktab__sk_cold *)(c + p->v6_off);
		if (socktab__mutex_init(&sk->cold->lock)) {
			s->used--;
			return NULL;
		}
		SOCKTAB__ASSERT(!p->v6_off || (unsigned char *)socktab__sk_v6(sk) == c);
		SOCKTAB__ASSERT((p->kind != SOCKTAB__K_UDP4 && p->kind != SOCKTAB__K_UDP6) ||
				socktab__udp_ext_sk(socktab__sk_udp(sk)) == sk);
	} else {
		sk->cold = &p->net->tw_cold;
		SOCKTAB__ASSERT(p->kind != SOCKTAB__K_TW6 ||
				socktab__sk_v6(sk) == &((struct socktab__tw6 *)sk)->v6);
		SOCKTAB__ASSERT(p->kind != SOCKTAB__K_REQ6 ||
				socktab__sk_v6(sk) == socktab__req6_v6(sk));
	}
	atomic_fetch_add_explicit(&p->nobjs, 1, memory_order_relaxed);
	return sk;
}

/* Whether some thread's cache holds objects back from their grace period (any thread). */
static bool caches_returned(struct socktab__pool *p)
{
	for (int i = 0; i < SOCKTAB__STAT_SLOTS - 1; i++)
		if (atomic_load_explicit(&p->cache[i].returned, memory_order_relaxed))
			return true;
	return false;
}

bool socktab__pool_has_room(struct socktab__pool *p)
{
	bool room;

	socktab__lock(&p->lock);
	room = p->free || atomic_load_explicit(&p->returned, memory_order_relaxed) ||
	       caches_returned(p);
	for (size_t i = p->cur; i < p->nslabs && !room; i++)
		room = p->slabs[i].used < p->slabs[i].nobj;
	socktab__unlock(&p->lock);
	return room;
}

/* How many free objects a thread's cache takes from the pool's free list at a time. */
#define CACHE_BATCH 32

/* The calling thread's cache of @p, or NULL when it shares the last counter slot. */
static struct socktab__pool_cache *pool_cache(struct socktab__pool *p)
{
	uint32_t slot = socktab__stat_slot();

	return slot < SOCKTAB__STAT_SLOTS - 1 ? &p->cache[slot] : NULL;
}

/* Take the whole of the Treiber stack @top (acquire: its links and flags were written before
 * the push that published them). */
static struct socktab_sock *stack_take(struct socktab_sock *_Atomic *top)
{
	if (!atomic_load_explicit(top, memory_order_relaxed))
		return NULL;
	return atomic_exchange_explicit(top, NULL, memory_order_acquire);
}

/*
 * Fill the pool's empty free list: from its own returned stack, else from the first cache whose
 * returned stack holds objects (a thread that frees more than it allocates keeps the rest
 * there); the flag stays set while another cache's stack holds some. The caches are looked
 * through only when a push has been made to one since the last look, so a pool that grows
 * (every list empty) pays for no look.
 */
static void pool_refill_locked(struct socktab__pool *p)
{
	SOCKTAB__ASSERT_LOCKED(&p->lock);
	p->free = stack_take(&p->returned);
	if (p->free || !atomic_load_explicit(&p->cache_returned, memory_order_relaxed))
		return;
	atomic_store_explicit(&p->cache_returned, false, memory_order_relaxed);
	/* seq_cst: the flag's clearing comes before the looks, so a push the looks miss sets it
	 * again (limbo_free_rcu()'s fence on its side). */
	atomic_thread_fence(memory_order_seq_cst);
	for (int i = 0; i < SOCKTAB__STAT_SLOTS - 1; i++) {
		if (!p->free) {
			p->free = stack_take(&p->cache[i].returned);
		} else if (atomic_load_explicit(&p->cache[i].returned, memory_order_relaxed)) {
			/* More to take another time: the next look must not skip it. */
			atomic_store_explicit(&p->cache_returned, true, memory_order_relaxed);
			break;
		}
	}
}

/* Refill the empty cache @c: its own returned batches, whole, without a lock; else up to
 * CACHE_BATCH objects from the pool's free list. */
static void cache_refill(struct socktab__pool *p, struct socktab__pool_cache *c)
{
	c->free = stack_take(&c->returned);
	if (c->free)
		return;
	socktab__lock(&p->lock);
	if (!p->free)
		pool_refill_locked(p);
	for (int n = 0; p->free && n < CACHE_BATCH; n++) {
		struct socktab_sock *sk = p->free;

		p->free = socktab__sk_bl(sk)->pool_next;
		socktab__sk_bl(sk)->pool_next = c->free;
		c->free = sk;
	}
	socktab__unlock(&p->lock);
}

/* Hand out @sk, taken from a free list: no longer freed, no bind links. Only the pool writes
 * the kind's IN_POOL bit, and only the thread that holds the object: a load and a store. */
static struct socktab_sock *hand_out(struct socktab_sock *sk)
{
	uint8_t kind = atomic_load_explicit(&sk->kind, memory_order_relaxed);

	SOCKTAB__ASSERT(kind & SOCKTAB__IN_POOL);
	atomic_store_explicit(&sk->kind, kind & (uint8_t)~SOCKTAB__IN_POOL, memory_order_relaxed);
	memset(socktab__sk_bl(sk), 0, sizeof(struct socktab__bindlink));
	return sk;
}

struct socktab_sock *socktab__pool_alloc(struct socktab__pool *p)
{
	struct socktab__pool_cache *c = pool_cache(p);
	struct socktab_sock *sk;
	struct socktab__slab *s;

	if (c && !c->free)
		cache_refill(p, c);
	if (c && c->free) {
		/* The thread's own objects: no lock, no line another thread writes. */
		sk = c->free;
		c->free = socktab__sk_bl(sk)->pool_next;
		return hand_out(sk);
	}
	socktab__lock(&p->lock);
	if (!p->free)
		pool_refill_locked(p);
	if (p->free) {
		sk = p->free;
		p->free = socktab__sk_bl(sk)->pool_next;
		hand_out(sk);
	} else {
		s = carve_slab_locked(p);
		sk = s ? carve_locked(p, s) : NULL;
		if (sk)
			memset(socktab__sk_bl(sk), 0, sizeof(struct socktab__bindlink));
	}
	socktab__unlock(&p->lock);
	return sk;
}

struct socktab__pool *socktab__sock_pool(struct socktab_net *net, int proto, int family)
{
	int k = proto == SOCKTAB_UDP ? SOCKTAB__K_UDP4 : SOCKTAB__K_TCP4;

	return &net->pools[k + (family == AF_INET6)];
}

struct socktab__pool *socktab__tw_pool(struct socktab_net *net, int family)
{
	return &net->pools[family == AF_INET6 ? SOCKTAB__K_TW6 : SOCKTAB__K_TW4];
}

struct socktab__pool *socktab__req_pool(struct socktab_net *net, int family)
{
	return &net->pools[family == AF_INET6 ? SOCKTAB__K_REQ6 : SOCKTAB__K_REQ4];
}

static struct socktab__pool *sk_pool(struct socktab_sock *sk)
{
	return &socktab__sk_net(sk)->pools[socktab__sk_kind(sk)];
}

#ifdef SOCKTAB_NAIVE_ORDER
/*
 * The negative control (meson -Dnaive_order=true) of the push below: a load and a store for the
 * compare and swap, with a widened window between them. A socktab__pool_alloc() that takes the
 * stack inside the window takes the old top's objects, and the store puts them back under the
 * batch: each is then handed out twice (tests/stress/stress_pool.c). Every test allocates, so
 * it is taken only with SOCKTAB_NAIVE_POOL in the environment (stress_pool's meson test sets
 * it): the build's other controls must fail for their own races, not for a corrupt pool.
 */
static bool naive_push(void)
{
	static _Atomic int on = -1;

	return socktab__naive_env(&on, "SOCKTAB_NAIVE_POOL");
}
#endif

/*
 * A batch's grace period is over: the whole batch goes back, onto the returned stack of the
 * cache it names, else of its pool (a Treiber stack taken whole, so a push never meets ABA).
 * The batch is a ring through pool_next; the head passed in is its oldest member's, whose
 * pool_next names the newest, whose bind link names the cache (unless the batch has one
 * member). Its members were marked freed when they joined it, so this reads two objects
 * whatever the batch's size. The call_rcu thread takes no lock here, so a caller of
 * socktab__pool_alloc() or socktab__pool_free_rcu() never waits for it.
 */
static void limbo_free_rcu(struct rcu_head *head)
{
	struct socktab__bindlink *oldest = caa_container_of(head, struct socktab__bindlink, rcu);
	struct socktab_sock *newest;
	struct socktab__bindlink *nbl;
	struct socktab__pool_cache *home;
	struct socktab_sock *_Atomic *stack;
	struct socktab__pool *p;

	socktab__rcu_cb_enter(oldest); /* before the first read of the batch (TSan's hand-off) */
	newest = oldest->pool_next;
	nbl = socktab__sk_bl(newest);
	home = nbl != oldest ? nbl->home : NULL;
	p = sk_pool(newest);
	stack = home ? &home->returned : &p->returned;
	/* Release: the links and flags of the batch are visible to whoever takes the stack. */
	struct socktab_sock *top = atomic_load_explicit(stack, memory_order_relaxed);

#ifdef SOCKTAB_NAIVE_ORDER
	if (naive_push()) {
		for (volatile int i = 0; i < 20000; i++)
			;
		oldest->pool_next = top;
		atomic_store_explicit(stack, newest, memory_order_release);
		goto pushed;
	}
#endif
	do
		oldest->pool_next = top;
	while (!atomic_compare_exchange_weak_explicit(stack, &top, newest, memory_order_release,
						      memory_order_relaxed));
#ifdef SOCKTAB_NAIVE_ORDER
pushed:
#endif
	/* The push comes before the flag's load (a fence: the push may be a release only), and the
	 * refiller's clearing before its look, so either the look sees the push or this sees
	 * the flag cleared and sets it. */
	if (home) {
		atomic_thread_fence(memory_order_seq_cst);
		if (!atomic_load_explicit(&p->cache_returned, memory_order_relaxed))
			atomic_store_explicit(&p->cache_returned, true, memory_order_relaxed);
	}
}

/*
 * Objects are freed after a grace period, in batches: one call_rcu per LIMBO_BATCH objects, so a
 * connection-churning workload does not pay a callback per close. A batch is a list through
 * pool_next (newest first); on submission its oldest member links back to the newest, closing a
 * ring, and carries the batch with its rcu head (which shares no bytes with pool_next); the
 * newest names the cache the batch returns to.
 */
#define LIMBO_BATCH 64

/* Close batch @l into a ring carried by its oldest member, its newest naming @home (the cache
 * it returns to; NULL: the pool), and return the carrier. */
static struct socktab__bindlink *limbo_close(struct socktab__limbo *l,
					     struct socktab__pool_cache *home)
{
	struct socktab__bindlink *bl = socktab__sk_bl(l->tail);

	if (l->head != l->tail)
		socktab__sk_bl(l->head)->home = home;
	bl->pool_next = l->head;
	l->head = l->tail = NULL;
	l->n = 0;
	return bl;
}

/* Add @sk to batch @l (of @home, as limbo_close()); the carrier when that filled it, else NULL. */
static struct socktab__bindlink *limbo_push(struct socktab__limbo *l, struct socktab_sock *sk,
					    struct socktab__pool_cache *home)
{
	socktab__sk_bl(sk)->pool_next = l->head;
	if (!l->head)
		l->tail = sk;
	l->head = sk;
	return ++l->n >= LIMBO_BATCH ? limbo_close(l, home) : NULL;
}

void socktab__pool_free_rcu(struct socktab_sock *sk)
{
	socktab__pool_free_rcu_many(&sk, 1);
}

/* Mark @sk freed, checking it was not already (no double free) and is in no table. */
static void mark_freed(struct socktab_sock *sk)
{
	uint8_t kind = atomic_load_explicit(&sk->kind, memory_order_relaxed);
	struct socktab__bindlink *bl = socktab__sk_bl(sk);

	SOCKTAB__ASSERT(!(kind & SOCKTAB__IN_POOL));
	SOCKTAB__ASSERT(!socktab__hnode_hashed(&sk->node) && !bl->tb2 && !bl->pprev);
	SOCKTAB__ASSERT(socktab__sk_is_tw(sk) || socktab__sk_is_req(sk) || !sk->cold->kid);
	atomic_store_explicit(&sk->kind, kind | SOCKTAB__IN_POOL, memory_order_relaxed);
}

/*
 * Each run of objects of one pool is pushed under one hold of its lock: a reaper that frees a
 * budget of entries takes the lock once per run, not once per entry, so another thread's
 * socktab_socket() or close() waits for it at most once per run. A run of at most LIMBO_BATCH
 * objects fills at most one batch (the batch in progress held at most LIMBO_BATCH - 1).
 */
void socktab__pool_free_rcu_many(struct socktab_sock *const *sks, size_t n)
{
	SOCKTAB__ASSERT(n <= LIMBO_BATCH);
	for (size_t i = 0; i < n;) {
		struct socktab__pool *p = sk_pool(sks[i]);
		/* The thread's own batch takes no lock; a thread without a cache, the pool's. */
		struct socktab__pool_cache *c = pool_cache(p);
		struct socktab__limbo *l = c ? &c->limbo : &p->limbo;
		struct socktab__bindlink *carrier = NULL;

		if (!c)
			socktab__lock(&p->lock);
		for (; i < n && sk_pool(sks[i]) == p; i++) {
			struct socktab__bindlink *full;

			mark_freed(sks[i]);
			full = limbo_push(l, sks[i], c);
			if (full) {
				SOCKTAB__ASSERT(!carrier);
				carrier = full;
			}
		}
		if (!c)
			socktab__unlock(&p->lock);
		if (carrier)
			socktab__call_rcu(carrier, &carrier->rcu, limbo_free_rcu);
	}
}

/* Hand the batches in progress to call_rcu now, the pool's and every thread cache's (net
 * teardown, before its barrier, when no other thread uses the net). */
void socktab__pool_flush(struct socktab__pool *p)
{
	struct socktab__bindlink *carrier = NULL;

	socktab__lock(&p->lock);
	if (p->limbo.head)
		carrier = limbo_close(&p->limbo, NULL);
	for (int i = 0; i < SOCKTAB__STAT_SLOTS - 1; i++) {
		struct socktab__pool_cache *c = &p->cache[i];

		if (c->limbo.head) {
			struct socktab__bindlink *bl = limbo_close(&c->limbo, c);

			socktab__call_rcu(bl, &bl->rcu, limbo_free_rcu);
		}
	}
	socktab__unlock(&p->lock);
	if (carrier)
		socktab__call_rcu(carrier, &carrier->rcu, limbo_free_rcu);
}

void socktab__pool_walk(struct socktab__pool *p, void (*fn)(struct socktab_sock *, void *),
			void *arg)
{
	size_t n;

	socktab__lock(&p->lock);
	n = p->nslabs;
	socktab__unlock(&p->lock);
	for (size_t s = 0; s < n; s++) {
		struct socktab__slab sl;

		socktab__lock(&p->lock);
		sl = p->slabs[s];
		socktab__unlock(&p->lock);
		for (size_t i = 0; i < sl.used; i++)
			fn((struct socktab_sock *)(sl.base + i * p->stride), arg);
	}
}

void socktab__pool_destroy(struct socktab__pool *p)
{
	for (size_t i = 0; i < p->nslabs; i++) {
		struct socktab__slab *s = &p->slabs[i];

		for (size_t j = 0; p->cold_size && j < s->used; j++)
			pthread_mutex_destroy(&((struct socktab_sock *)(s->base + j * p->stride))->cold->lock);
		slab_free(s->base - SOCKTAB__CACHELINE);
	}
	free(p->slabs);
	pthread_mutex_destroy(&p->lock);
	memset(p, 0, sizeof(*p));
}

/*
 * Bind buckets' memory. A thread's cache: a free list, the batch of blocks waiting for their
 * grace period, and its home, where the call_rcu thread returns the batches (a Treiber stack,
 * taken whole by the thread). The home outlives the thread while batches are in flight: it
 * counts the thread and each batch, and the last of them frees it.
 */
#define BUCKET_BATCH 32
/* The most free blocks a thread keeps (512 KiB): about what a connection-churning thread frees
 * in the grace period its batches wait for; past it, blocks go back to malloc. */
#define BUCKET_CACHE_MAX 4096

struct socktab__bucket_home {
	struct socktab__bucket_rcu *_Atomic returned;
	_Atomic uint32_t refs; /* the thread while it has the cache, and each batch in flight */
};

static _Thread_local struct {
	struct socktab__bucket_rcu *free;   /* through next */
	uint32_t nfree;
	struct socktab__bucket_rcu *limbo;  /* newest first */
	struct socktab__bucket_rcu *limbo_oldest;
	uint32_t nlimbo;
	struct socktab__bucket_home *home;
} bucket_cache;

static void bucket_list_free(struct socktab__bucket_rcu *r)
{
	while (r) {
		struct socktab__bucket_rcu *next = r->next;

		free(r);
		r = next;
	}
}

static struct socktab__bucket_rcu *stack_take_bucket(struct socktab__bucket_rcu *_Atomic *top)
{
	if (!atomic_load_explicit(top, memory_order_relaxed))
		return NULL;
	return atomic_exchange_explicit(top, NULL, memory_order_acquire);
}

static void bucket_free_one_rcu(struct rcu_head *head)
{
	struct socktab__bucket_rcu *r = caa_container_of(head, struct socktab__bucket_rcu, head);

	socktab__rcu_cb_enter(r);
	free(r);
}

/* The blocks back from their grace period onto the free list, up to the cap (the rest to
 * malloc): called when the list runs dry and whenever the thread hands a batch over, so a thread
 * that frees more buckets than it makes keeps no more than the cap. */
static void bucket_take_returned(void)
{
	struct socktab__bucket_rcu *r;

	if (!bucket_cache.home)
		return;
	r = stack_take_bucket(&bucket_cache.home->returned);
	while (r) {
		struct socktab__bucket_rcu *next = r->next;

		socktab__bucket_free(r);
		r = next;
	}
}

void *socktab__bucket_alloc(size_t size)
{
	struct socktab__bucket_rcu *r = bucket_cache.free;

	SOCKTAB__ASSERT(size <= SOCKTAB__BUCKET_BYTES && size >= sizeof(*r));
	if (!r) {
		bucket_take_returned();
		r = bucket_cache.free;
	}
	if (!r)
		return calloc(1, SOCKTAB__BUCKET_BYTES);
	bucket_cache.free = r->next;
	bucket_cache.nfree--;
	memset(r, 0, size);
	return r;
}

void socktab__bucket_free(void *b)
{
	struct socktab__bucket_rcu *r = b;

	if (!r)
		return;
	if (bucket_cache.nfree >= BUCKET_CACHE_MAX) {
		free(r);
		return;
	}
	r->next = bucket_cache.free;
	bucket_cache.free = r;
	bucket_cache.nfree++;
}

/* A batch's grace period is over: onto its home's stack; the home's last reference frees it. */
static void bucket_batch_rcu(struct rcu_head *head)
{
	struct socktab__bucket_rcu *oldest = caa_container_of(head, struct socktab__bucket_rcu, head);
	struct socktab__bucket_home *home;
	struct socktab__bucket_rcu *newest, *top;

	socktab__rcu_cb_enter(oldest);
	home = oldest->home;
	newest = oldest->next;
	top = atomic_load_explicit(&home->returned, memory_order_relaxed);
	do
		oldest->next = top;
	while (!atomic_compare_exchange_weak_explicit(&home->returned, &top, newest,
						      memory_order_release, memory_order_relaxed));
	/* acq_rel: the last holder sees every push before it. */
	if (atomic_fetch_sub_explicit(&home->refs, 1, memory_order_acq_rel) == 1) {
		bucket_list_free(atomic_exchange_explicit(&home->returned, NULL,
							  memory_order_acquire));
		free(home);
	}
}

/* Hand the batch in progress to call_rcu: its oldest block carries it, naming the newest. */
static void bucket_submit(void)
{
	struct socktab__bucket_rcu *oldest = bucket_cache.limbo_oldest;

	oldest->next = bucket_cache.limbo;
	oldest->home = bucket_cache.home;
	bucket_cache.limbo = bucket_cache.limbo_oldest = NULL;
	bucket_cache.nlimbo = 0;
	atomic_fetch_add_explicit(&bucket_cache.home->refs, 1, memory_order_relaxed);
	socktab__call_rcu(oldest, &oldest->head, bucket_batch_rcu);
	bucket_take_returned();
}

void socktab__bucket_free_rcu(struct socktab__bucket_rcu *r)
{
	if (!bucket_cache.home) {
		struct socktab__bucket_home *home = calloc(1, sizeof(*home));

		if (!home) {
			/* No cache: the block goes alone, back to malloc. */
			socktab__call_rcu(r, &r->head, bucket_free_one_rcu);
			return;
		}
		atomic_init(&home->refs, 1);
		bucket_cache.home = home;
	}
	r->next = bucket_cache.limbo;
	if (!bucket_cache.limbo)
		bucket_cache.limbo_oldest = r;
	bucket_cache.limbo = r;
	if (++bucket_cache.nlimbo >= BUCKET_BATCH)
		bucket_submit();
}

void socktab__bucket_cache_release(void)
{
	struct socktab__bucket_home *home = bucket_cache.home;

	if (home && bucket_cache.limbo)
		bucket_submit(); /* before the free list goes: it may refill it */
	bucket_list_free(bucket_cache.free);
	bucket_cache.free = NULL;
	bucket_cache.nfree = 0;
	if (!home)
		return;
	bucket_cache.home = NULL;
	bucket_list_free(atomic_exchange_explicit(&home->returned, NULL, memory_order_acquire));
	if (atomic_fetch_sub_explicit(&home->refs, 1, memory_order_acq_rel) == 1) {
		bucket_list_free(atomic_exchange_explicit(&home->returned, NULL,
							  memory_order_acquire));
		free(home);
	}
}
