/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Type-stable socket pool (the kernel's SLAB_TYPESAFE_BY_RCU, R20).
 *
 * Socket objects are carved from slabs and never returned to malloc while the net lives: a freed
 * socket goes on a free list and may be handed out again at once, possibly while a lock-free
 * reader still looks at it. Readers cope through the nulls protocol (restart on a foreign chain
 * end), increment-if-not-zero references and a key re-check (ehash.c). The slabs themselves are
 * freed only by socktab__pool_destroy(), which net_free() calls after a grace period.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "net.h"

#define SLAB_OBJS 64
#define HUGE_2M ((size_t)2 << 20)

int socktab__pool_init(struct socktab__pool *p, size_t obj_size)
{
	memset(p, 0, sizeof(*p));
	p->priv_size = obj_size - sizeof(struct socktab_sock);
	p->obj_size = (obj_size + 63) & ~(size_t)63;
	return -pthread_mutex_init(&p->lock, NULL);
}

static int pool_grow_locked(struct socktab__pool *p)
{
	unsigned char *slab;

	SOCKTAB__ASSERT_LOCKED(&p->lock);
	if (p->nslabs == p->slab_cap) {
		size_t cap = p->slab_cap ? p->slab_cap * 2 : 16;
		void **n = realloc(p->slabs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->slabs = n;
		p->slab_cap = cap;
	}
	/*
	 * Slabs double from 64 sockets up to 8192, so a small net stays small while a big one ends
	 * up in a few large blocks. Blocks of 2 MiB or more are 2 MiB-aligned and offered to
	 * transparent huge pages: with a million sockets every lookup's miss on the socket line
	 * would otherwise pay a page-table walk too (bench lookup, perf).
	 */
	size_t nobj = (size_t)SLAB_OBJS << (p->nslabs < 7 ? p->nslabs : 7);
	size_t bytes = p->obj_size * nobj, align = SOCKTAB__CACHELINE;

	if (bytes >= HUGE_2M) {
		bytes = (bytes + HUGE_2M - 1) & ~(HUGE_2M - 1);
		nobj = bytes / p->obj_size;
		align = HUGE_2M;
	}
	if (posix_memalign((void **)&slab, align, bytes))
		return -ENOMEM;
	if (align == HUGE_2M)
		(void)madvise(slab, bytes, MADV_HUGEPAGE); /* a hint: failure only costs speed */
	memset(slab, 0, bytes);
	p->slabs[p->nslabs++] = slab;
	for (size_t i = nobj; i-- > 0;) {
		struct socktab_sock *sk = (struct socktab_sock *)(slab + (size_t)i * p->obj_size);

		pthread_mutex_init(&sk->lock, NULL);
		sk->in_pool = 1;
		sk->pool_next = p->free;
		p->free = sk;
		sk->all_next = p->all;
		p->all = sk;
	}
	atomic_fetch_add_explicit(&p->nobjs, nobj, memory_order_relaxed);
	return 0;
}

/* Returns a socket with refcnt 0 and state FREE; the caller initialises and publishes it. */
struct socktab_sock *socktab__pool_alloc(struct socktab__pool *p)
{
	struct socktab_sock *sk;

	socktab__lock(&p->lock);
	if (!p->free && pool_grow_locked(p)) {
		socktab__unlock(&p->lock);
		return NULL;
	}
	sk = p->free;
	p->free = sk->pool_next;
	sk->in_pool = 0;
	sk->pool_next = NULL;
	socktab__unlock(&p->lock);
	return sk;
}

/* Back on the free list. Caller holds the pool lock. */
static void free_locked(struct socktab__pool *p, struct socktab_sock *sk)
{
	SOCKTAB__ASSERT(!sk->in_pool); /* a double free would hand one object out twice */
	SOCKTAB__ASSERT(!socktab__hnode_hashed(&sk->node) && !sk->tb2 && !sk->bind_pprev);
	sk->in_pool = 1;
	sk->pool_next = p->free;
	p->free = sk;
}

/* A batch's grace period is over: every socket of it goes back on the free list. */
static void limbo_free_rcu(struct rcu_head *head)
{
	struct socktab_sock *sk = caa_container_of(head, struct socktab_sock, rcu), *next;
	struct socktab__pool *p = &RD(sk->net)->pool;

	socktab__rcu_cb_enter(sk);
	socktab__lock(&p->lock);
	for (; sk; sk = next) {
		next = sk->pool_next;
		free_locked(p, sk);
	}
	socktab__unlock(&p->lock);
}

/*
 * Sockets are freed after a grace period, in batches: one call_rcu per LIMBO_BATCH sockets, so a
 * connection-churning workload does not pay a callback per close. The batch is carried by its
 * first socket's rcu head and linked through pool_next. Caller holds nothing.
 */
#define LIMBO_BATCH 64

void socktab__pool_free_rcu(struct socktab__pool *p, struct socktab_sock *sk)
{
	struct socktab_sock *batch = NULL;

	socktab__lock(&p->lock);
	sk->pool_next = p->limbo;
	p->limbo = sk;
	if (++p->nlimbo >= LIMBO_BATCH) {
		batch = p->limbo;
		p->limbo = NULL;
		p->nlimbo = 0;
	}
	socktab__unlock(&p->lock);
	if (batch)
		socktab__call_rcu(batch, &batch->rcu, limbo_free_rcu);
}

/* Hand the batch in progress to call_rcu now (net teardown, before its barrier). */
void socktab__pool_flush(struct socktab__pool *p)
{
	struct socktab_sock *batch;

	socktab__lock(&p->lock);
	batch = p->limbo;
	p->limbo = NULL;
	p->nlimbo = 0;
	socktab__unlock(&p->lock);
	if (batch)
		socktab__call_rcu(batch, &batch->rcu, limbo_free_rcu);
}

void socktab__pool_destroy(struct socktab__pool *p)
{
	for (struct socktab_sock *sk = p->all; sk; sk = sk->all_next)
		pthread_mutex_destroy(&sk->lock);
	for (size_t i = 0; i < p->nslabs; i++)
		free(p->slabs[i]);
	free(p->slabs);
	pthread_mutex_destroy(&p->lock);
	memset(p, 0, sizeof(*p));
}
