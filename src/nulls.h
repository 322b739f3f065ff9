/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hlist_nulls for socktab: a singly linked list whose end is not NULL but a tagged "nulls" value
 * ((v << 1) | 1) naming the chain (R19). Readers walk with acquire loads and no lock; when an
 * object they stand on moves to another chain (a rehash, a key changed in place, R20), the walk
 * ends on a foreign nulls value and the reader restarts.
 *
 * liburcu has no nulls list, and the TSan recipe in shared/notes wants our own lists built on C11
 * atomics: publication is a release store, readers use acquire loads, and pprev (writer-only) is
 * plain because every writer holds the chain's lock.
 */
#ifndef SOCKTAB_SRC_NULLS_H
#define SOCKTAB_SRC_NULLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct socktab__hnode {
	_Atomic uintptr_t next;  /* (r) next node or nulls marker; written under the chain lock */
	/* (e) address of the word pointing at us; NULL when unhashed. Neighbours' inserts and
	 * removals rewrite it under the chain lock while the owner may test it for NULL without that
	 * lock (only the owner's own calls make it NULL or not): hence atomic, relaxed. */
	_Atomic uintptr_t *_Atomic pprev;
};

struct socktab__hhead {
	_Atomic uintptr_t first; /* (r) first node or this chain's nulls marker */
};

/*
 * A compressed head (ehash's, one per slot): four bytes instead of eight. Every node that can
 * be linked behind one lives in a slab, and every slab is carved from one range of address space
 * (pool.c), so a node is named by its offset from the range's base in 32-byte units, an even
 * number; a nulls marker keeps its odd value. A node whose pprev points at a compressed head
 * has pprev's bit 0 set (a node's next field is 8-byte aligned, so the bit is free), and the
 * writers' stores through pprev encode for it.
 */
struct socktab__chead {
	_Atomic uint32_t first; /* (r) first node, compressed, or this chain's nulls marker */
};

/*
 * An ehash slot: the chain's compressed head, and beside it, in the same eight bytes, the
 * compressed address of the chain's second entry (or a nulls marker), rewritten (release)
 * under the chain's lock after every link, replacement and unlink (ehash.c), so it is exact
 * whenever that lock is free. A reader (acquire) only starts the named entry's misses: it
 * prefetches its lines, loading nothing from it but, for an IPv6 key, its slab's header. A
 * slab is unmapped only when its net is freed, after every entry of that net has left the
 * table and a grace period has passed (net.c), and a hint that named one was rewritten when it
 * left: a reader sees such a value only from inside a section that the grace period waited
 * for. A walk goes through the entries' own links, so a value that is stale by the time it is
 * used costs a useless prefetch, never a wrong answer. It lets a batch lookup start the second
 * entry's misses together with the first's, where the chain's link would make them wait for the
 * first (lookup.c).
 */
struct socktab__eslot {
	struct socktab__chead head;
	_Atomic uint32_t second; /* (r) hint: second entry, compressed, or a nulls marker */
};

/* Base of the slab range (pool.c): written once, before the first slab is handed out. */
extern uintptr_t socktab__slab_base;
#define SOCKTAB__SLAB_RANGE_MAX ((uintptr_t)32 << 32) /* what 32 bits in 32-byte units reach */

static inline uintptr_t socktab__nulls(uintptr_t v)
{
	return (v << 1) | 1u;
}

static inline bool socktab__is_nulls(uintptr_t p)
{
	return p & 1u;
}

/*
 * Walk the chain of head @h (a struct socktab__hhead *): @p, a uintptr_t, takes each node's
 * address in turn, loaded with @mo: memory_order_acquire for a reader under RCU, relaxed under
 * the chain's lock (the kernel's sk_nulls_for_each_rcu). The loop ends with the chain's nulls
 * marker in @p; a reader checks after the loop that it is its own chain's.
 */
#define socktab__hlist_for_each(p, h, mo)                                                          \
	for ((p) = atomic_load_explicit(&(h)->first, (mo)); !socktab__is_nulls(p);                 \
	     (p) = atomic_load_explicit(&((struct socktab__hnode *)(p))->next, (mo)))

static inline uint32_t socktab__chead_enc(uintptr_t p)
{
	return socktab__is_nulls(p) ? (uint32_t)p : (uint32_t)((p - socktab__slab_base) >> 5);
}

static inline uintptr_t socktab__chead_dec(uint32_t v)
{
	return (v & 1u) ? (uintptr_t)v : socktab__slab_base + ((uintptr_t)v << 5);
}

static inline uintptr_t socktab__chead_load(const struct socktab__chead *h, memory_order mo)
{
	return socktab__chead_dec(
		atomic_load_explicit(&((struct socktab__chead *)h)->first, mo));
}

/* pprev value naming compressed head @h. */
static inline _Atomic uintptr_t *socktab__chead_pp(struct socktab__chead *h)
{
	return (_Atomic uintptr_t *)((uintptr_t)&h->first | 1u);
}

/* Store @v into the word @pp names: a node's next field, a head or a compressed head. */
static inline void socktab__pp_store(_Atomic uintptr_t *pp, uintptr_t v, memory_order mo)
{
	if ((uintptr_t)pp & 1u)
		atomic_store_explicit((_Atomic uint32_t *)((uintptr_t)pp & ~(uintptr_t)1),
				      socktab__chead_enc(v), mo);
	else
		atomic_store_explicit(pp, v, mo);
}

/* socktab__hlist_for_each() for a compressed head. */
#define socktab__chlist_for_each(p, h, mo)                                                         \
	for ((p) = socktab__chead_load((h), (mo)); !socktab__is_nulls(p);                          \
	     (p) = atomic_load_explicit(&((struct socktab__hnode *)(p))->next, (mo)))

static inline uintptr_t socktab__nulls_value(uintptr_t p)
{
	return p >> 1;
}

static inline void socktab__hhead_init(struct socktab__hhead *h, uintptr_t v)
{
	atomic_store_explicit(&h->first, socktab__nulls(v), memory_order_relaxed);
}

static inline void socktab__chead_init(struct socktab__chead *h, uint32_t v)
{
	atomic_store_explicit(&h->first, (uint32_t)socktab__nulls(v), memory_order_relaxed);
}

static inline bool socktab__hnode_hashed(const struct socktab__hnode *n)
{
	return atomic_load_explicit(&n->pprev, memory_order_relaxed) != NULL;
}

/* Insert @n at the head of @h. Caller holds the chain lock; @n's key is already written. */
static inline void socktab__hnode_add_head_rcu(struct socktab__hnode *n, struct socktab__hhead *h)
{
	uintptr_t first = atomic_load_explicit(&h->first, memory_order_relaxed);

	/* Release, not relaxed: a reader may reach @n from a stale position (a recycled node it
	 * stood on) and go on to @first without passing through the head's release store. */
	atomic_store_explicit(&n->next, first, memory_order_release);
	atomic_store_explicit(&n->pprev, &h->first, memory_order_relaxed);
	if (!socktab__is_nulls(first))
		atomic_store_explicit(&((struct socktab__hnode *)first)->pprev, &n->next,
				      memory_order_relaxed);
	/* Publishes @n and every field written before: pairs with the readers' acquire loads. */
	atomic_store_explicit(&h->first, (uintptr_t)n, memory_order_release);
}

/* socktab__hnode_add_head_rcu() for a compressed head. */
static inline void socktab__hnode_add_chead_rcu(struct socktab__hnode *n, struct socktab__chead *h)
{
	uintptr_t first = socktab__chead_load(h, memory_order_relaxed);

	atomic_store_explicit(&n->next, first, memory_order_release); /* as above */
	atomic_store_explicit(&n->pprev, socktab__chead_pp(h), memory_order_relaxed);
	if (!socktab__is_nulls(first))
		atomic_store_explicit(&((struct socktab__hnode *)first)->pprev, &n->next,
				      memory_order_relaxed);
	atomic_store_explicit(&h->first, socktab__chead_enc((uintptr_t)n), memory_order_release);
}

/* Insert @n at the tail of @h (a walk from the head). Caller holds the chain lock; @n's key is
 * already written. */
static inline void socktab__hnode_add_tail_rcu(struct socktab__hnode *n, struct socktab__hhead *h)
{
	_Atomic uintptr_t *pp = &h->first;
	uintptr_t p;

	while (!socktab__is_nulls(p = atomic_load_explicit(pp, memory_order_relaxed)))
		pp = &((struct socktab__hnode *)p)->next;
	atomic_store_explicit(&n->next, p, memory_order_relaxed);
	atomic_store_explicit(&n->pprev, pp, memory_order_relaxed);
	/* Publishes @n with its key: pairs with the readers' acquire loads. */
	atomic_store_explicit(pp, (uintptr_t)n, memory_order_release);
}

/*
 * Unlink @n. Caller holds the chain lock. @n->next is left alone so that a reader standing on @n
 * can finish its walk (it will see the right nulls value, or a foreign one if @n is reused).
 */
static inline void socktab__hnode_del_rcu(struct socktab__hnode *n)
{
	uintptr_t next = atomic_load_explicit(&n->next, memory_order_relaxed);
	_Atomic uintptr_t *pprev = atomic_load_explicit(&n->pprev, memory_order_relaxed);

	/* Readers that load *pprev now skip @n; @next was published long ago: relaxed would do, but
	 * release keeps the store ordered after any key change made under the same lock. */
	socktab__pp_store(pprev, next, memory_order_release);
	if (!socktab__is_nulls(next))
		atomic_store_explicit(&((struct socktab__hnode *)next)->pprev, pprev,
				      memory_order_relaxed);
	atomic_store_explicit(&n->pprev, NULL, memory_order_relaxed);
}

/*
 * Put @new where @old is, in one store, so a concurrent reader sees one of the two and never
 * neither (R22: the sk -> TIME_WAIT swap and the TIME_WAIT takeover). Caller holds the chain lock;
 * @new's key is written.
 *
 * A reader may already stand on @old when the store lands. If @old's key then changes under it
 * (a socket gives its port back after the swap), that reader no longer matches @old and walks
 * on from @old->next: which must lead through @new, or it would miss both. So @old->next is
 * pointed at @new last (a forwarding link): a reader on @old goes on to @new and from there
 * along the chain. @old is unhashed (pprev NULL), and its next is rewritten when it is linked
 * again; a reader carried into another chain that way restarts at that chain's nulls value.
 */
static inline void socktab__hnode_replace_rcu(struct socktab__hnode *old,
					      struct socktab__hnode *new)
{
	uintptr_t next = atomic_load_explicit(&old->next, memory_order_relaxed);
	_Atomic uintptr_t *pprev = atomic_load_explicit(&old->pprev, memory_order_relaxed);

	atomic_store_explicit(&new->next, next, memory_order_release);
	atomic_store_explicit(&new->pprev, pprev, memory_order_relaxed);
	if (!socktab__is_nulls(next))
		atomic_store_explicit(&((struct socktab__hnode *)next)->pprev, &new->next,
				      memory_order_relaxed);
	socktab__pp_store(pprev, (uintptr_t)new, memory_order_release);
	atomic_store_explicit(&old->pprev, NULL, memory_order_relaxed);
#ifndef SOCKTAB_NAIVE_ORDER
	/* Release: a reader that follows the link sees @new's key. */
	atomic_store_explicit(&old->next, (uintptr_t)new, memory_order_release);
#endif
}

#endif /* SOCKTAB_SRC_NULLS_H */
