/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bhash and bhash2: the bind buckets, and the port rules of bind(2) (socktab_bind() itself is
 * in socket.c).
 *
 * Tables: bhash[(port + mix) & mask] holds one tb per (net, port) (R8, R14); bhash2[portaddr hash
 * & mask] holds one tb2 per (net, port, local address) (R7, R15). A socket that owns a port is an
 * owner of exactly one tb2: on its owners list, or, a listener's child, in one of its kids shards
 * (below). TIME_WAIT entries stay owners (R48), always on the list.
 * Locks: the bhash bucket lock guards the tb, its tb2 list and every owners list of that port; the
 * bhash2 bucket lock (taken inside it) guards only the bhash2 chain. A listener's children, which
 * own its port through the tb2 of their address, are kept apart, in that tb2's kids shards
 * (bind.h): the shard of the thread that made them (its counter slot's number, common.h, modulo the
 * 16 shards: lowest free first, so while at most 16 threads hold slots each has its own), each list
 * under a lock of its own, innermost of all. A child joins its shard, and leaves it, holding only
 * the shard's lock while the shard has other owners: the shard is then known to the bucket
 * (kid_live), which the bucket's owners keep alive. A shard's first owner and its last are added
 * and removed under the bhash lock as well, so under the bhash lock kid_live tells which shards
 * have owners, and every walk of a bucket's owners walks the live shards under their locks. tb is
 * published with a release store and freed after a grace period, because connect() walks bhash
 * chains under RCU (R55); so is tb2 (and its kids shards), because a child looks up the tb2 of its
 * address under RCU to join it (a tb2 found so may be on its way out: the join then finds its shard
 * empty under the shard's lock and takes the bhash lock, as a shard's first owner does).
 * Rules implemented: R37-R45 (entry checks, overlap relation, conflict predicate, which owners are
 * compared, fast paths), R49-R50 (bind(0)), R58 (bucket reset when only connect() owners remain),
 * R60 (IP_BIND_ADDRESS_NO_PORT), R64-R66 (ranges, reserved ports), R109 (a TCP socket's own
 * reuseport group in the conflict checks).
 * VRF (R98): a bucket belongs to one L3 master (the VRF of its owners' bound device, or 0), so
 * the same port binds once in the default domain and once per VRF; with tcp_l3mdev_accept
 * everything shares domain 0. The domain is the one the socket had when it took the port; a
 * later SO_BINDTODEVICE does not move it (the kernel's does not either).
 */
#include <stdlib.h>

#include "socktab/feed.h"

#include "addr.h"
#include "bind.h"
#include "dev.h"

/*
 * ---- the port feed (socktab/feed.h) ----
 * The net holds a pointer to the caller's callbacks, NULL when none: writers test it where a
 * bucket is created or destroyed (one load, one branch), and only then open a read-side section
 * to call it, so that socktab_net_set_port_feed() can wait for every call of the feed it replaced.
 */
int socktab__feed_tell(struct socktab_net *net, const struct socktab_port_key *key, int what)
{
	const struct socktab_port_feed *f;
	int r = 0;

	socktab__rcu_read_lock();
	f = atomic_load_explicit(&net->port_feed, memory_order_acquire);
	if (f && what == SOCKTAB__FEED_RELEASE)
		f->release(f->arg, key);
	else if (f)
		r = f->claim(f->arg, key, what == SOCKTAB__FEED_FORCED ? SOCKTAB_FEED_F_FORCED : 0);
	socktab__rcu_read_unlock();
	return what == SOCKTAB__FEED_REFUSABLE && r < 0 ? r : 0;
}

/* The key a TCP socket's address bucket on @port would have (as tb2_find_or_create fills it). */
static void sk_feed_key(const struct socktab_sock *sk, uint16_t port, int l3mdev,
			struct socktab_port_key *k)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	uint32_t v4 = socktab__sk_rcv_saddr(sk);

	memset(k, 0, sizeof(*k));
	k->proto = SOCKTAB_TCP;
	if (sk->family == AF_INET || socktab__v6_is_mapped(&a)) {
		k->family = AF_INET;
		socktab__v6_map(&k->addr, v4);
	} else {
		k->family = AF_INET6;
		k->addr = a;
	}
	k->port = port;
	k->l3mdev = l3mdev;
}

static void tb2_feed_key(const struct socktab__tb2 *tb2, struct socktab_port_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = SOCKTAB_TCP;
	k->family = tb2->addr_type == SOCKTAB__ADDR_MAPPED ? AF_INET : AF_INET6;
	k->addr = tb2->addr;
	k->port = tb2->port;
	k->l3mdev = tb2->tb->l3mdev;
}

int socktab_net_set_port_feed(struct socktab_net *net, const struct socktab_port_feed *feed)
{
	bool left;
	int err = 0;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_port_feed()");
	if (!net || (feed && (!feed->claim || !feed->release)))
		return -EINVAL;
	/* An online thread passes a quiescent state here; a section of the caller's own would
	 * make the wait below wait for itself. */
	left = socktab__rcu_wait_begin();
	if (socktab__rcu_read_ongoing()) {
		err = -EDEADLK;
	} else {
		socktab__lock(&net->settings_lock);
		atomic_store_explicit(&net->port_feed, feed, memory_order_release);
		socktab__unlock(&net->settings_lock);
#ifdef SOCKTAB_NAIVE_ORDER
		/* The negative control: return without waiting, so a call of the old feed may
		 * still run after the replacement returned (tests/unit/test_feed.c
		 * replace_under_writers sees it). */
#else
		/* Calls that loaded the old feed may still run: wait for them. */
		socktab__synchronize_rcu();
#endif
	}
	socktab__rcu_wait_end(left);
	return err;
}

/* The TCP half of socktab_net_port_feed_dump() (udp.c), which checks the arguments. */
int socktab__tcp_feed_dump(struct socktab_net *net,
			   int (*fn)(void *arg, const struct socktab_port_key *key), void *arg)
{
	struct socktab__tables *t;
	int r = 0;

	t = net->tab;
	for (uint32_t i = 0; i <= t->bhash_mask && !r; i++) {
		struct socktab__bhead *head = &t->bhash[i];

		socktab__lock(socktab__bhead_lock(t, head));
		for (struct socktab__tb *tb = atomic_load_explicit(&head->chain, memory_order_relaxed);
		     tb && !r; tb = atomic_load_explicit(&tb->next, memory_order_relaxed)) {
			if (tb->net != net)
				continue;
			for (struct socktab__tb2 *tb2 = tb->tb2_list; tb2 && !r; tb2 = tb2->tb_next) {
				struct socktab_port_key k;

				tb2_feed_key(tb2, &k);
				r = fn(arg, &k);
			}
		}
		socktab__unlock(socktab__bhead_lock(t, head));
	}
	return r;
}

struct socktab__tb *socktab__tb_find_locked(struct socktab__bhead *head, struct socktab_net *net,
				     uint16_t port, int l3mdev)
{
	SOCKTAB__ASSERT_LOCKED(socktab__bhead_lock(net->tab, head));
	for (struct socktab__tb *tb = atomic_load_explicit(&head->chain, memory_order_relaxed); tb;
	     tb = atomic_load_explicit(&tb->next, memory_order_relaxed))
		if (tb->net == net && tb->port == port && tb->l3mdev == l3mdev)
			return tb;
	return NULL;
}

/* Caller is inside an RCU read-side section. */
struct socktab__tb *socktab__tb_find_rcu(struct socktab__bhead *head, struct socktab_net *net,
					 uint16_t port, int l3mdev)
{
	SOCKTAB__ASSERT_RCU();
	for (struct socktab__tb *tb = atomic_load_explicit(&head->chain, memory_order_acquire); tb;
	     tb = atomic_load_explicit(&tb->next, memory_order_acquire))
		if (tb->net == net && tb->port == port && tb->l3mdev == l3mdev)
			return tb;
	return NULL;
}

/* Buckets come from the thread's cache of bucket blocks (pool.c): a connect() that finds its
 * port's buckets already there hands its preallocation back for the next one. */
int socktab__bind_prealloc(struct socktab__bind_prealloc *pa)
{
	pa->tb = socktab__bucket_alloc(sizeof(*pa->tb));
	pa->tb2 = socktab__bucket_alloc(sizeof(*pa->tb2));
	if (!pa->tb || !pa->tb2) {
		socktab__bind_prealloc_free(pa);
		return -ENOMEM;
	}
	return 0;
}

void socktab__bind_prealloc_free(struct socktab__bind_prealloc *pa)
{
	socktab__bucket_free(pa->tb);
	socktab__bucket_free(pa->tb2);
	pa->tb = NULL;
	pa->tb2 = NULL;
}

/* Take the preallocated block if there is one, else allocate one. */
static void *take_or_alloc(void **slot, size_t size)
{
	void *p = *slot;

	if (!p)
		return socktab__bucket_alloc(size);
	*slot = NULL;
	return p;
}

/* Caller holds head->lock. The new bucket starts as "connect() only" (-1/-1, R55). */
struct socktab__tb *socktab__tb_create_locked(struct socktab__bhead *head, struct socktab_net *net,
					      uint16_t port, int l3mdev,
					      struct socktab__bind_prealloc *pa)
{
	struct socktab__tb *tb;

	SOCKTAB__ASSERT_LOCKED(socktab__bhead_lock(net->tab, head));
	tb = pa ? take_or_alloc((void **)&pa->tb, sizeof(*tb)) : socktab__bucket_alloc(sizeof(*tb));
	if (!tb)
		return NULL;
	tb->net = net;
	tb->port = port;
	tb->l3mdev = l3mdev;
	atomic_init(&tb->fastreuse, -1);
	atomic_init(&tb->fastreuseport, -1);
	atomic_init(&tb->next, atomic_load_explicit(&head->chain, memory_order_relaxed));
	/* Publishes the initialised bucket to connect()'s RCU walk. */
	atomic_store_explicit(&head->chain, tb, memory_order_release);
	SOCKTAB__STAT_ADD(net, bind_buckets, 1);
	return tb;
}

/* Caller holds head->lock. Frees @tb (after a grace period) once it has no address bucket. */
void socktab__tb_maybe_destroy_locked(struct socktab__bhead *head, struct socktab__tb *tb)
{
	_Atomic(struct socktab__tb *) *pp = &head->chain;

	SOCKTAB__ASSERT_LOCKED(socktab__bhead_lock(tb->net->tab, head));
	if (tb->tb2_list)
		return;
	for (struct socktab__tb *cur; (cur = atomic_load_explicit(pp, memory_order_relaxed));
	     pp = &cur->next) {
		if (cur == tb) {
			atomic_store_explicit(pp, atomic_load_explicit(&tb->next, memory_order_relaxed),
					      memory_order_release);
			break;
		}
	}
	SOCKTAB__STAT_ADD(tb->net, bind_buckets, -1);
	socktab__bucket_free_rcu(&tb->rcu);
}

static int sk_addr_type(const struct socktab_sock *sk, struct in6_addr *a, uint32_t *v4)
{
	*a = socktab__sk_v6_saddr(sk);
	*v4 = socktab__sk_rcv_saddr(sk);
	if (sk->family == AF_INET || socktab__v6_is_mapped(a))
		return SOCKTAB__ADDR_MAPPED;
	return socktab__v6_is_any(a) ? SOCKTAB__ADDR_ANY : SOCKTAB__ADDR_V6;
}

/* R15: AF_INET6 compares the full v6 address; AF_INET matches MAPPED buckets by v4 address. */
bool socktab__tb2_addr_match(const struct socktab__tb2 *tb2, const struct socktab_sock *sk)
{
	if (sk->family == AF_INET6) {
		struct in6_addr a = socktab__sk_v6_saddr(sk);

		return memcmp(&tb2->addr, &a, 16) == 0;
	}
	return tb2->addr_type == SOCKTAB__ADDR_MAPPED && tb2->v4 == socktab__sk_rcv_saddr(sk);
}

static struct socktab__bhead2 *bhash2_head(struct socktab_net *net, const struct in6_addr *a,
					   uint16_t port)
{
	struct socktab__tables *t = net->tab;

	return &t->bhash2[socktab__portaddr_hash(net, a, port) & t->bhash_mask];
}

/* @sk's exact address bucket on tb's port, found through bhash2. Caller holds tb's bhash lock. */
struct socktab__tb2 *socktab__tb2_find_locked(struct socktab_net *net, const struct socktab__tb *tb,
				       const struct socktab_sock *sk)
{
	struct in6_addr a;
	struct socktab__bhead2 *h2;
	struct socktab__tb2 *tb2;

	if (!tb)
		return NULL;
	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, tb->port));
	/* A port without address buckets (one whose tb was just made) has nothing to find: no
	 * bhash2 lock, no walk. */
	if (!tb->tb2_list)
		return NULL;
	a = socktab__sk_v6_saddr(sk);
	h2 = bhash2_head(net, &a, tb->port);
	socktab__lock(socktab__bhead2_lock(net->tab, h2));
	for (tb2 = atomic_load_explicit(&h2->chain, memory_order_relaxed); tb2;
	     tb2 = atomic_load_explicit(&tb2->next, memory_order_relaxed))
		if (tb2->tb == tb && socktab__tb2_addr_match(tb2, sk))
			break;
	socktab__unlock(socktab__bhead2_lock(net->tab, h2));
	return tb2;
}

struct socktab__tb2 *socktab__tb2_find_rcu(struct socktab__tb *tb, const struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	struct socktab__bhead2 *h2 = bhash2_head(tb->net, &a, tb->port);
	struct socktab__tb2 *tb2;

	SOCKTAB__ASSERT_RCU();
	for (tb2 = atomic_load_explicit(&h2->chain, memory_order_acquire); tb2;
	     tb2 = atomic_load_explicit(&tb2->next, memory_order_acquire))
		if (tb2->tb == tb && socktab__tb2_addr_match(tb2, sk))
			break;
	return tb2;
}

/*
 * Caller holds the bhash lock of tb->port. Takes the bhash2 lock. @found: @sk's bucket as
 * socktab__tb2_find_locked() gave it under the lock the caller still holds (NULL: none, made
 * here). @pa: as tb_create_locked. @feed: how a new bucket is told to the port feed
 * (SOCKTAB__FEED_*; SOCKTAB__FEED_CLAIMED: the caller claimed it already). NULL with *err =
 * -ENOMEM, or -EADDRINUSE when the feed refused it; nothing changed then.
 */
static struct socktab__tb2 *tb2_get(struct socktab_net *net, struct socktab__tb *tb,
				    const struct socktab_sock *sk, struct socktab__tb2 *found,
				    struct socktab__bind_prealloc *pa, bool *created, int feed,
				    int *err)
{
	struct in6_addr a;
	uint32_t v4;
	int type = sk_addr_type(sk, &a, &v4);
	struct socktab__bhead2 *h2;
	struct socktab__tb2 *tb2;

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, tb->port));
	*created = false;
	if (found)
		return found;
	if (feed != SOCKTAB__FEED_CLAIMED && socktab__feed_on(net)) {
		struct socktab_port_key k;

		sk_feed_key(sk, tb->port, tb->l3mdev, &k);
		if (socktab__feed_tell(net, &k, feed)) {
			*err = -EADDRINUSE;
			return NULL;
		}
	}
	tb2 = pa ? take_or_alloc((void **)&pa->tb2, sizeof(*tb2))
		 : socktab__bucket_alloc(sizeof(*tb2));
	if (!tb2) {
		if (feed != SOCKTAB__FEED_CLAIMED && socktab__feed_on(net)) {
			struct socktab_port_key k;

			sk_feed_key(sk, tb->port, tb->l3mdev, &k);
			socktab__feed_tell(net, &k, SOCKTAB__FEED_RELEASE);
		}
		*err = -ENOMEM;
		return NULL;
	}
	tb2->tb = tb;
	tb2->net = net;
	tb2->port = tb->port;
	tb2->addr_type = (uint8_t)type;
	tb2->v4 = type == SOCKTAB__ADDR_MAPPED ? v4 : 0;
	if (type == SOCKTAB__ADDR_MAPPED)
		socktab__v6_map(&tb2->addr, v4);
	else
		tb2->addr = a;
	tb2->fastreuse = -1;
	tb2->fastreuseport = -1;
	atomic_store_explicit(&tb2->kids, NULL, memory_order_relaxed);
	tb2->kid_live = 0;
	tb2->tb_next = tb->tb2_list;
	tb->tb2_list = tb2;
	h2 = bhash2_head(net, &tb2->addr, tb->port);
	socktab__lock(socktab__bhead2_lock(net->tab, h2));
	atomic_store_explicit(&tb2->next, atomic_load_explicit(&h2->chain, memory_order_relaxed),
			      memory_order_relaxed);
	/* Release: a lookup under RCU (socktab__tb2_find_rcu) that finds it finds it whole. */
	atomic_store_explicit(&h2->chain, tb2, memory_order_release);
	socktab__unlock(socktab__bhead2_lock(net->tab, h2));
	*created = true;
	return tb2;
}

/* The callers that cannot take a refusal (connect, an accepted child, connect()'s source
 * address move): the feed is told, forced, unless @claimed (connect()'s walk claimed the key
 * already, socktab__feed_claim_locked()). */
struct socktab__tb2 *socktab__tb2_find_or_create_locked(struct socktab_net *net,
							struct socktab__tb *tb,
							const struct socktab_sock *sk,
							struct socktab__bind_prealloc *pa,
							bool *created, bool claimed)
{
	int err;

	return tb2_get(net, tb, sk, socktab__tb2_find_locked(net, tb, sk), pa, created,
		       claimed ? SOCKTAB__FEED_CLAIMED : SOCKTAB__FEED_FORCED, &err);
}

struct socktab__tb2 *socktab__tb2_found_or_create_locked(struct socktab_net *net,
							 struct socktab__tb *tb,
							 struct socktab__tb2 *found,
							 const struct socktab_sock *sk,
							 struct socktab__bind_prealloc *pa,
							 bool *created, bool claimed)
{
	int err;

	return tb2_get(net, tb, sk, found, pa, created,
		       claimed ? SOCKTAB__FEED_CLAIMED : SOCKTAB__FEED_FORCED, &err);
}

int socktab__feed_claim_locked(struct socktab_net *net, const struct socktab__tb2 *found,
			       const struct socktab_sock *sk, uint16_t port, int l3mdev)
{
	struct socktab_port_key k;

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, port));
	if (found)
		return 0;
	sk_feed_key(sk, port, l3mdev, &k);
	return socktab__feed_tell(net, &k, SOCKTAB__FEED_REFUSABLE) ? -EADDRINUSE : 1;
}

void socktab__feed_unclaim_locked(struct socktab_net *net, const struct socktab_sock *sk,
				  uint16_t port, int l3mdev)
{
	struct socktab_port_key k;

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, port));
	sk_feed_key(sk, port, l3mdev, &k);
	socktab__feed_tell(net, &k, SOCKTAB__FEED_RELEASE);
}

/* @sk owns @port through @tb2, first on the list at @head (tb2's owners or a kids shard), whose
 * lock the caller holds. */
static void owner_link(struct socktab_sock *sk, struct socktab__tb2 *tb2, uint16_t port,
		       struct socktab_sock **head)
{
	struct socktab__bindlink *bl = socktab__sk_bl(sk);

	socktab__sk_set_num(sk, port);
	sk->sport = port;
	bl->tb2 = tb2;
	bl->next = *head;
	if (*head)
		socktab__sk_bl(*head)->pprev = &bl->next;
	bl->pprev = head;
	*head = sk;
}

static void owners_unlink(struct socktab_sock *sk)
{
	struct socktab__bindlink *bl = socktab__sk_bl(sk);

	*bl->pprev = bl->next;
	if (bl->next)
		socktab__sk_bl(bl->next)->pprev = bl->pprev;
	bl->next = NULL;
	bl->pprev = NULL;
	bl->tb2 = NULL;
}

/* Does @tb2 have an owner (on its list or in a kids shard)? Caller holds the bhash lock. */
static bool tb2_owned(const struct socktab__tb2 *tb2)
{
	return tb2->owners || tb2->kid_live;
}

/* ---- kids shards (bind.h) ---- */

/* Destroy the first @n shard locks of @k and free it. */
static void kids_destroy(struct socktab__kids *k, int n)
{
	while (n--)
		pthread_mutex_destroy(&k->s[n].lock);
	free(k);
}

static void kids_free_rcu(struct rcu_head *head)
{
	struct socktab__kids *k = caa_container_of(head, struct socktab__kids, rcu);

	socktab__rcu_cb_enter(k);
	kids_destroy(k, SOCKTAB__KID_SHARDS);
}

/* The calling thread's shard: its counter slot's number (common.h) modulo the shards. */
static unsigned int kid_shard(void)
{
	return socktab__stat_slot() % SOCKTAB__KID_SHARDS;
}

/* 1 + the shard @sk owns its port in, 0 for none (a TIME_WAIT entry never does). */
static unsigned int sk_kid(const struct socktab_sock *sk)
{
	return socktab__sk_is_tw(sk) ? 0 : sk->cold->kid;
}

/* Caller holds shard @i's lock: @sk owns @port among its owners. */
static void kid_link(struct socktab__kids *k, unsigned int i, struct socktab__tb2 *tb2,
		     struct socktab_sock *sk, uint16_t port)
{
	owner_link(sk, tb2, port, &k->s[i].head);
	sk->cold->kid = (uint8_t)(i + 1);
}

/* Caller holds the bhash lock: @sk, a kid, leaves its shard; the shard's bit goes with its last
 * owner. */
static void kid_unhash_locked(struct socktab__tb2 *tb2, struct socktab_sock *sk)
{
	struct socktab__kids *k = atomic_load_explicit(&tb2->kids, memory_order_relaxed);
	unsigned int i = sk_kid(sk) - 1;

	socktab__lock(&k->s[i].lock);
	owners_unlink(sk);
	sk->cold->kid = 0;
	if (!k->s[i].head)
		tb2->kid_live &= ~(1u << i);
	socktab__unlock(&k->s[i].lock);
}

void socktab__bind_kid_hash_locked(struct socktab__tb2 *tb2, struct socktab_sock *sk,
				   uint16_t port)
{
	struct socktab__kids *k = atomic_load_explicit(&tb2->kids, memory_order_relaxed);
	unsigned int i = kid_shard();

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(tb2->net, port));
	if (!k) {
		k = aligned_alloc(_Alignof(struct socktab__kids), sizeof(*k));
		if (!k) {
			socktab__bind_hash_locked(sk, tb2, port);
			return;
		}
		for (int j = 0; j < SOCKTAB__KID_SHARDS; j++) {
			if (socktab__mutex_init(&k->s[j].lock)) {
				kids_destroy(k, j);
				socktab__bind_hash_locked(sk, tb2, port);
				return;
			}
			k->s[j].head = NULL;
		}
		/* Release: a join that finds the shards finds them made. */
		atomic_store_explicit(&tb2->kids, k, memory_order_release);
	}
	socktab__lock(&k->s[i].lock);
	kid_link(k, i, tb2, sk, port);
	tb2->kid_live |= 1u << i;
	socktab__unlock(&k->s[i].lock);
}

#ifdef SOCKTAB_NAIVE_ORDER
/* The negative control of tests/stress/stress_kids.c: with SOCKTAB_NAIVE_KIDS in the
 * environment, a join decides whether its shard has an owner before it takes the shard's lock. */
static bool naive_kids(void)
{
	static _Atomic int on = -1;

	return socktab__naive_env(&on, "SOCKTAB_NAIVE_KIDS");
}
#endif

bool socktab__bind_kid_join(struct socktab__tb2 *tb2, struct socktab_sock *sk, uint16_t port)
{
	struct socktab__kids *k = atomic_load_explicit(&tb2->kids, memory_order_acquire);
	unsigned int i;
	bool joined = false;

	if (!k)
		return false;
	i = kid_shard();
#ifdef SOCKTAB_NAIVE_ORDER
	if (naive_kids()) {
		/* The negative control: the owner is looked for before the lock is taken. */
		bool had = atomic_load_explicit((struct socktab_sock *_Atomic *)&k->s[i].head,
						memory_order_relaxed) != NULL;

		for (volatile int n = 0; n < 20000; n++)
			;
		socktab__lock(&k->s[i].lock);
		if (had)
			kid_link(k, i, tb2, sk, port);
		socktab__unlock(&k->s[i].lock);
		return had;
	}
#endif
	socktab__lock(&k->s[i].lock);
	/* An owner here: the shard is live, and stays so while its lock is held. */
	if (k->s[i].head) {
		kid_link(k, i, tb2, sk, port);
		joined = true;
	}
	socktab__unlock(&k->s[i].lock);
	return joined;
}

/* Leave the shard without the bhash lock, where nothing but the shard's list changes: another
 * owner stays in it (so the bucket and its other buckets stay as they are) and is not one that
 * connect() bound (so R58's reset, which only such owners left would call for, is not due).
 * Caller holds @sk's socket lock; true if @sk left. */
static bool kid_leave(struct socktab_sock *sk)
{
	struct socktab__bindlink *bl = socktab__sk_bl(sk);
	struct socktab__kids *k = atomic_load_explicit(&bl->tb2->kids, memory_order_relaxed);
	unsigned int i = sk_kid(sk) - 1;
	struct socktab_sock *other;
	bool left = false;

	socktab__lock(&k->s[i].lock);
	other = k->s[i].head != sk ? k->s[i].head : bl->next;
	if (other && !(RD(other->userlocks) & SOCKTAB__CONNECT_BIND)) {
		owners_unlink(sk);
		sk->cold->kid = 0;
		sk->userlocks &= (uint8_t)~SOCKTAB__CONNECT_BIND;
		left = true;
	}
	socktab__unlock(&k->s[i].lock);
	return left;
}

/*
 * Does @pred hold for an owner of @tb2 (its owners list, then its live kids shards, each under
 * its lock)? Caller holds the bhash lock.
 */
static bool owners_any(const struct socktab__tb2 *tb2,
		       bool (*pred)(const struct socktab_sock *sk2, const void *arg), const void *arg)
{
	struct socktab__kids *k;

	for (const struct socktab_sock *o = tb2->owners; o; o = socktab__sk_bl(o)->next)
		if (pred(o, arg))
			return true;
	if (!tb2->kid_live)
		return false;
	k = atomic_load_explicit(&tb2->kids, memory_order_relaxed);
	for (uint32_t live = tb2->kid_live; live; live &= live - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(live);
		bool r = false;

		socktab__lock(&k->s[i].lock);
		for (const struct socktab_sock *o = k->s[i].head; o && !r;
		     o = socktab__sk_bl(o)->next)
			r = pred(o, arg);
		socktab__unlock(&k->s[i].lock);
		if (r)
			return true;
	}
	return false;
}

/* Caller holds the bhash lock. Frees @tb2 when it has no owner. */
void socktab__tb2_maybe_destroy_locked(struct socktab_net *net, struct socktab__tb2 *tb2)
{
	struct socktab__bhead2 *h2;
	_Atomic(struct socktab__tb2 *) *ap;
	struct socktab__tb2 **pp;
	struct socktab__kids *kids;

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, tb2->port));
	if (tb2_owned(tb2))
		return;
	if (socktab__feed_on(net)) {
		struct socktab_port_key k;

		tb2_feed_key(tb2, &k);
		socktab__feed_tell(net, &k, SOCKTAB__FEED_RELEASE);
	}
	h2 = bhash2_head(net, &tb2->addr, tb2->port);
	socktab__lock(socktab__bhead2_lock(net->tab, h2));
	for (ap = &h2->chain; atomic_load_explicit(ap, memory_order_relaxed);
	     ap = &atomic_load_explicit(ap, memory_order_relaxed)->next)
		if (atomic_load_explicit(ap, memory_order_relaxed) == tb2) {
			/* A lookup under RCU standing on it goes on from its next as before;
			 * one that reads the new link reads the bucket it names whole. */
			atomic_store_explicit(ap, atomic_load_explicit(&tb2->next,
								       memory_order_relaxed),
					      memory_order_release);
			break;
		}
	socktab__unlock(socktab__bhead2_lock(net->tab, h2));
	for (pp = &tb2->tb->tb2_list; *pp; pp = &(*pp)->tb_next)
		if (*pp == tb2) {
			*pp = tb2->tb_next;
			break;
		}
	/* A child's lookup under RCU may still read the bucket and lock its shards. */
	kids = atomic_load_explicit(&tb2->kids, memory_order_relaxed);
	if (kids)
		socktab__call_rcu(kids, &kids->rcu, kids_free_rcu);
	socktab__bucket_free_rcu(&tb2->rcu);
}

/* Caller holds the bhash lock. Makes @sk an owner of @tb2 on @port. */
void socktab__bind_hash_locked(struct socktab_sock *sk, struct socktab__tb2 *tb2, uint16_t port)
{
	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(tb2->net, port));
	owner_link(sk, tb2, port, &tb2->owners);
}

/* Caller holds the bhash lock: @sk leaves @tb2's owners, from its list or its kids shard. */
static void owner_unhash_locked(struct socktab__tb2 *tb2, struct socktab_sock *sk)
{
	if (sk_kid(sk))
		kid_unhash_locked(tb2, sk);
	else
		owners_unlink(sk);
}

/* Caller holds the bhash lock: @new (a TIME_WAIT entry) takes @old's place among the owners. */
void socktab__bind_replace_owner_locked(struct socktab_sock *old, struct socktab_sock *new)
{
	struct socktab__bindlink *ob = socktab__sk_bl(old), *nb = socktab__sk_bl(new);

	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(socktab__sk_net(old), ob->tb2->port));
	if (sk_kid(old)) {
		/* A TIME_WAIT entry is never a kid: it joins the owners list. */
		struct socktab__tb2 *tb2 = ob->tb2;

		socktab__bind_hash_locked(new, tb2, tb2->port);
		kid_unhash_locked(tb2, old);
		return;
	}
	nb->tb2 = ob->tb2;
	nb->next = ob->next;
	nb->pprev = ob->pprev;
	*nb->pprev = new;
	if (nb->next)
		socktab__sk_bl(nb->next)->pprev = &nb->next;
	ob->next = NULL;
	ob->pprev = NULL;
	ob->tb2 = NULL;
}

static bool not_connect_bound(const struct socktab_sock *o, const void *arg)
{
	(void)arg;
	return !(o->userlocks & SOCKTAB__CONNECT_BIND);
}

static bool owners_all_connect_bound(const struct socktab__tb2 *tb2)
{
	return !owners_any(tb2, not_connect_bound, NULL);
}

/*
 * Caller holds the bhash lock of @sk's port. Drop @sk's port ownership; free empty buckets; when
 * only connect()-bound owners remain, return the buckets to "connect() only" (R58, 6.18).
 */
void socktab__bind_unhash_locked(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__tb2 *tb2 = socktab__sk_bl(sk)->tb2;
	struct socktab__tb *tb;
	struct socktab__bhead *head;
	bool all_connect = true;

	if (!tb2)
		return;
	tb = tb2->tb;
	head = socktab__bhash_head(net, tb->port);
	SOCKTAB__ASSERT_LOCKED(socktab__bhead_lock(net->tab, head));
	owner_unhash_locked(tb2, sk);
	sk->userlocks &= (uint8_t)~SOCKTAB__CONNECT_BIND;
	if (tb2_owned(tb2) && owners_all_connect_bound(tb2)) {
		tb2->fastreuse = -1;
		tb2->fastreuseport = -1;
	}
	socktab__tb2_maybe_destroy_locked(net, tb2);
	if (!tb->tb2_list) {
		socktab__tb_maybe_destroy_locked(head, tb);
		return;
	}
	for (struct socktab__tb2 *t2 = tb->tb2_list; t2; t2 = t2->tb_next)
		if (!owners_all_connect_bound(t2))
			all_connect = false;
	if (all_connect) {
		WR(tb->fastreuse, -1);
		WR(tb->fastreuseport, -1);
	}
}

void socktab__bind_set_uid(struct socktab_sock *sk, uid_t uid)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__tb2 *tb2 = socktab__sk_bl(sk)->tb2;
	struct socktab__bhead *head;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!tb2) {
		sk->uid = uid;
		return;
	}
	head = socktab__bhash_head(net, tb2->port);
	socktab__lock(socktab__bhead_lock(net->tab, head));
	sk->uid = uid;
	socktab__unlock(socktab__bhead_lock(net->tab, head));
}

/*
 * Release @sk's port (kernel inet_put_port). Caller holds the socket lock. The local port field
 * is left alone: a closing socket keeps its key for readers that still hold a reference.
 */
void socktab__put_port(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__bhead *head;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!socktab__sk_bl(sk)->tb2 || (sk_kid(sk) && kid_leave(sk)))
		return;
	head = socktab__bhash_head(net, socktab__sk_bl(sk)->tb2->port);
	socktab__lock(socktab__bhead_lock(net->tab, head));
	socktab__bind_unhash_locked(net, sk);
	socktab__unlock(socktab__bhead_lock(net->tab, head));
}

/*
 * connect() gave a socket that owns a port through a wildcard tb2 its source address: move it to
 * the tb2 of (port, @newaddr) (kernel inet_bhash2_update_saddr). Caller holds the socket lock;
 * takes the bhash lock. On -ENOMEM nothing changed.
 */
int socktab__bhash2_update_saddr(struct socktab_sock *sk, const struct in6_addr *newaddr)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__tb2 *old = socktab__sk_bl(sk)->tb2, *tb2;
	struct socktab__bhead *head;
	struct in6_addr saved = socktab__sk_v6_saddr(sk);
	uint64_t saved_pair = RD(sk->addrpair);
	bool created;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	struct in6_addr a = *newaddr;

	/* An AF_INET socket's wildcard is the mapped 0.0.0.0 (R15): its v4 alias must follow,
	 * or the socket would stay in the old address bucket. */
	if (sk->family == AF_INET && socktab__v6_is_any(&a))
		socktab__v6_map(&a, 0);
	socktab__sk_set_v6_saddr(sk, &a);
	if (socktab__v6_is_mapped(&a))
		WR(sk->addrpair, (saved_pair & 0xffffffffull) | ((uint64_t)a.s6_addr32[3] << 32));
	if (!old)
		return 0;
	head = socktab__bhash_head(net, old->port);
	socktab__lock(socktab__bhead_lock(net->tab, head));
	tb2 = socktab__tb2_find_or_create_locked(net, old->tb, sk, NULL, &created, false);
	if (!tb2) {
		socktab__unlock(socktab__bhead_lock(net->tab, head));
		socktab__sk_set_v6_saddr(sk, &saved);
		WR(sk->addrpair, saved_pair);
		return -ENOMEM;
	}
	if (tb2 != old) {
		owner_unhash_locked(old, sk);
		if (created) {
			tb2->fastreuse = old->fastreuse;
			tb2->fastreuseport = old->fastreuseport;
		}
		socktab__tb2_maybe_destroy_locked(net, old);
		socktab__bind_hash_locked(sk, tb2, tb2->port);
	}
	socktab__unlock(socktab__bhead_lock(net->tab, head));
	return 0;
}

/* R64: the net range, narrowed by a nonzero IP_LOCAL_PORT_RANGE whose bounds lie inside it. */
void socktab__port_range(struct socktab_net *net, const struct socktab_sock *sk, int *low,
			 int *high, bool *local_ports)
{
	uint32_t r = RD(net->port_range);
	int lo = (int)(r & 0xffff), hi = (int)(r >> 16);
	uint32_t sr = sk->cold->local_port_range;

	*local_ports = sr != 0;
	if (sr) {
		int slo = (int)(sr & 0xffff), shi = (int)(sr >> 16);

		if (slo && slo >= lo && slo <= hi)
			lo = slo;
		if (shi && shi >= lo && shi <= hi)
			hi = shi;
	}
	*low = lo;
	*high = hi;
}

/* ---- address overlap (R40) ---- */

static bool ipv4_rcv_saddr_equal(uint32_t a1, uint32_t a2, bool sk2_ipv6only, bool wild1,
				 bool wild2)
{
	if (sk2_ipv6only)
		return false;
	if (a1 == a2)
		return true;
	return (wild1 && !a1) || (wild2 && !a2);
}

static bool rcv_saddr_equal(const struct socktab_sock *sk, const struct socktab_sock *sk2,
			    bool match_wildcard)
{
	bool v6only2 = socktab__ipv6_only(sk2);

	if (sk->family == AF_INET6) {
		struct in6_addr a1 = socktab__sk_v6_saddr(sk);
		struct in6_addr a2 = socktab__sk_v6_saddr(sk2);
		bool sk2_v6 = sk2->family == AF_INET6;
		int t1 = socktab__v6_is_mapped(&a1) ? SOCKTAB__ADDR_MAPPED
			 : socktab__v6_is_any(&a1)  ? SOCKTAB__ADDR_ANY
						    : SOCKTAB__ADDR_V6;
		int t2 = !sk2_v6 || socktab__v6_is_mapped(&a2) ? SOCKTAB__ADDR_MAPPED
			 : socktab__v6_is_any(&a2)	     ? SOCKTAB__ADDR_ANY
							     : SOCKTAB__ADDR_V6;

		if (t1 == SOCKTAB__ADDR_MAPPED && t2 == SOCKTAB__ADDR_MAPPED)
			return ipv4_rcv_saddr_equal(socktab__sk_rcv_saddr(sk),
						    socktab__sk_rcv_saddr(sk2), v6only2, match_wildcard,
						    match_wildcard);
		if (t1 == SOCKTAB__ADDR_ANY && t2 == SOCKTAB__ADDR_ANY)
			return true;
		if (t2 == SOCKTAB__ADDR_ANY && match_wildcard &&
		    !(v6only2 && t1 == SOCKTAB__ADDR_MAPPED))
			return true;
		if (t1 == SOCKTAB__ADDR_ANY && match_wildcard &&
		    !(socktab__ipv6_only(sk) && t2 == SOCKTAB__ADDR_MAPPED))
			return true;
		return sk2_v6 && memcmp(&a1, &a2, 16) == 0;
	}
	return ipv4_rcv_saddr_equal(socktab__sk_rcv_saddr(sk), socktab__sk_rcv_saddr(sk2), v6only2,
				    match_wildcard, match_wildcard);
}

/* R40 for UDP (src/udp.c), which has its own conflict rules (R68) over the same relation. */
bool socktab__rcv_saddr_equal(const struct socktab_sock *sk, const struct socktab_sock *sk2,
			      bool match_wildcard)
{
	return rcv_saddr_equal(sk, sk2, match_wildcard);
}

/*
 * Does @sk hold a reuseport group (sk_reuseport_cb)? Before it listens, only the one of its own
 * that SO_ATTACH_REUSEPORT_CBPF gave it while it was in no table (R108, R109); listen() keeps or
 * drops that group only after its conflict check. Caller holds @sk's socket lock, as attach does.
 */
static bool holds_group(const struct socktab_sock *sk)
{
	return atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed) != NULL;
}

/*
 * inet_csk_bind_conflict's reuseport_cb_ok: SO_REUSEPORT may excuse @sk only while it holds no
 * group. The kernel also excuses a group with closed members that can migrate; socktab has no
 * such members, since a listener leaves its group when it stops listening.
 */
static bool reuseport_cb_ok(const struct socktab_sock *sk)
{
	return !holds_group(sk);
}

/* R42. sk2 may be a TIME_WAIT entry (its reuse flags are the original socket's). */
static bool bind_conflict(const struct socktab_sock *sk, const struct socktab_sock *sk2,
			  bool relax, bool cb_ok, bool reuseport_ok)
{
	uint32_t d1 = RD(sk->bound_dev_if), d2 = RD(sk2->bound_dev_if);
	int st2 = RD(sk2->state);
	bool rp = RD(sk->reuseport) && RD(sk2->reuseport) && cb_ok &&
		  (st2 == SOCKTAB_TCP_TIME_WAIT || sk->uid == sk2->uid);

	if (sk == sk2)
		return false;
	if (d1 && d2 && d1 != d2)
		return false;
	if (RD(sk->reuse) && RD(sk2->reuse) && st2 != SOCKTAB_TCP_LISTEN)
		return !relax || (!reuseport_ok && rp);
	return !(reuseport_ok && rp);
}

/* What an owner of a bucket is compared with (owners_any). */
struct conflict_arg {
	const struct socktab_sock *sk;
	bool relax, cb_ok, reuseport_ok;
};

/* R41 then R42 for an owner of a tb2 that sk is compared with as a whole. */
static bool bhash2_conflicts(const struct socktab_sock *sk2, const void *arg)
{
	const struct conflict_arg *c = arg;

	if (socktab__ipv6_only(sk2)) {
		struct in6_addr a = socktab__sk_v6_saddr(c->sk);

		if (c->sk->family == AF_INET || socktab__v6_is_mapped(&a))
			return false;
	}
	return bind_conflict(c->sk, sk2, c->relax, c->cb_ok, c->reuseport_ok);
}

static bool bhash2_conflict(const struct socktab_sock *sk, const struct socktab__tb2 *tb2,
			    bool relax, bool cb_ok, bool reuseport_ok)
{
	struct conflict_arg c = { sk, relax, cb_ok, reuseport_ok };

	return owners_any(tb2, bhash2_conflicts, &c);
}

static bool tb_conflicts(const struct socktab_sock *sk2, const void *arg)
{
	const struct conflict_arg *c = arg;

	return bind_conflict(c->sk, sk2, c->relax, c->cb_ok, c->reuseport_ok) &&
	       rcv_saddr_equal(c->sk, sk2, true);
}

/* inet_use_hash2_on_bind(): a specific (non-wildcard) local address. */
static bool use_hash2_on_bind(const struct socktab_sock *sk)
{
	if (sk->family == AF_INET6) {
		struct in6_addr a = socktab__sk_v6_saddr(sk);

		if (socktab__v6_is_any(&a))
			return false;
		if (!socktab__v6_is_mapped(&a))
			return true;
	}
	return socktab__sk_rcv_saddr(sk) != 0;
}

/* R43 (a): owners of the wildcard tb2 of this port that a specific sk must respect. */
static bool addr_any_conflict(const struct socktab_sock *sk, const struct socktab__tb *tb,
			      bool relax, bool reuseport_ok)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	bool sk_plain_v6 = sk->family == AF_INET6 && !socktab__v6_is_mapped(&a);
	/* 0.0.0.0 and :: hash to the same bhash2 chain (R7): one walk finds both. */
	struct socktab__bhead2 *h2 = bhash2_head(tb->net, &any6, tb->port);
	bool cb_ok = reuseport_cb_ok(sk), conflict = false;

	socktab__lock(socktab__bhead2_lock(tb->net->tab, h2));
	for (const struct socktab__tb2 *tb2 = atomic_load_explicit(&h2->chain, memory_order_relaxed);
	     tb2 && !conflict; tb2 = atomic_load_explicit(&tb2->next, memory_order_relaxed)) {
		bool any = tb2->addr_type == SOCKTAB__ADDR_ANY ||
			   (tb2->addr_type == SOCKTAB__ADDR_MAPPED && tb2->v4 == 0 && !sk_plain_v6);

		if (tb2->tb == tb && any && bhash2_conflict(sk, tb2, relax, cb_ok, reuseport_ok))
			conflict = true;
	}
	socktab__unlock(socktab__bhead2_lock(tb->net->tab, h2));
	return conflict;
}

/* R43: does binding sk on tb's port conflict with an owner? tb2: sk's exact bucket or NULL. */
static bool csk_bind_conflict(const struct socktab_sock *sk, const struct socktab__tb *tb,
			      const struct socktab__tb2 *tb2, bool relax, bool reuseport_ok)
{
	bool cb_ok = reuseport_cb_ok(sk);

	if (!use_hash2_on_bind(sk)) {
		struct conflict_arg c = { sk, relax, cb_ok, reuseport_ok };

		for (const struct socktab__tb2 *t2 = tb->tb2_list; t2; t2 = t2->tb_next)
			if (owners_any(t2, tb_conflicts, &c))
				return true;
		return false;
	}
	return tb2 && bhash2_conflict(sk, tb2, relax, cb_ok, reuseport_ok);
}

/*
 * R44: the SO_REUSEPORT fast path (sk_reuseport_match). Never for a socket that holds a group of
 * its own (R109): the full check must see it; and update_fastreuse() then records it as a
 * socket the bucket did not match (FASTREUSEPORT_STRICT), as the kernel does.
 */
static bool reuseport_match(const struct socktab__tb *tb, const struct socktab_sock *sk)
{
	int frp = RD(tb->fastreuseport);

	if (frp <= 0 || !RD(sk->reuseport) || holds_group(sk) || tb->fastuid != sk->uid)
		return false;
	if (frp == SOCKTAB__FASTREUSEPORT_ANY)
		return true;
	if (tb->fast_family == AF_INET6) {
		/* tb's recorded AF_INET6 address against sk, wildcard on tb's side only. */
		struct in6_addr a1 = tb->fast_v6_rcv_saddr, a2 = socktab__sk_v6_saddr(sk);
		bool sk_v6 = sk->family == AF_INET6;
		bool m1 = socktab__v6_is_mapped(&a1), m2 = !sk_v6 || socktab__v6_is_mapped(&a2);

		if (m1 && m2)
			return ipv4_rcv_saddr_equal(tb->fast_rcv_saddr, socktab__sk_rcv_saddr(sk),
						    socktab__ipv6_only(sk), true, false);
		if (socktab__v6_is_any(&a1) && sk_v6 && socktab__v6_is_any(&a2))
			return true;
		if (socktab__v6_is_any(&a1) && !(tb->fast_ipv6_only && m2))
			return true;
		return sk_v6 && memcmp(&a1, &a2, 16) == 0;
	}
	return ipv4_rcv_saddr_equal(tb->fast_rcv_saddr, socktab__sk_rcv_saddr(sk),
				    socktab__ipv6_only(sk), true, false);
}

static void record_fast(struct socktab__tb *tb, const struct socktab_sock *sk)
{
	tb->fastuid = sk->uid;
	tb->fast_rcv_saddr = socktab__sk_rcv_saddr(sk);
	tb->fast_ipv6_only = socktab__ipv6_only(sk);
	tb->fast_family = sk->family;
	tb->fast_v6_rcv_saddr = socktab__sk_v6_saddr(sk);
}

/*
 * R45, after a successful bind/listen (inet_csk_update_fastreuse); @first: tb had no owner before
 * sk. Linux 6.18 links sk's address bucket into tb before it gets here, so the branch it keeps
 * for a bucket without owners (fastreuse = reuse, FASTREUSEPORT_ANY) never runs: a new bucket
 * keeps inet_bind_bucket_create's 0/0 and takes the steps of any later owner. So fastreuse never
 * rises above 0, and a first SO_REUSEPORT owner records itself as FASTREUSEPORT_STRICT, which
 * lets a later socket through the fast path only on an address that the recorded one covers.
 */
static void update_fastreuse(struct socktab__tb *tb, struct socktab__tb2 *tb2,
			     const struct socktab_sock *sk, bool first)
{
	bool reuse = RD(sk->reuse) && RD(sk->state) != SOCKTAB_TCP_LISTEN;

	if (first) {
		WR(tb->fastreuse, 0);
		WR(tb->fastreuseport, 0);
	}
	if (!reuse)
		WR(tb->fastreuse, 0);
	if (RD(sk->reuseport)) {
		if (!reuseport_match(tb, sk)) {
			WR(tb->fastreuseport, SOCKTAB__FASTREUSEPORT_STRICT);
			record_fast(tb, sk);
		}
	} else {
		WR(tb->fastreuseport, 0);
	}
	tb2->fastreuse = RD(tb->fastreuse);
	tb2->fastreuseport = RD(tb->fastreuseport);
}

static bool tb_has_owners(const struct socktab__tb *tb)
{
	for (const struct socktab__tb2 *t2 = tb->tb2_list; t2; t2 = t2->tb_next)
		if (tb2_owned(t2))
			return true;
	return false;
}

int socktab__sk_bound_l3mdev(const struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	int dev = (int)RD(sk->bound_dev_if), m;

	if (!dev || RD(net->tcp_l3mdev_accept))
		return 0;
	socktab__rcu_read_lock();
	m = socktab__l3mdev_master(socktab__ifcfg_rcu(net), dev);
	socktab__rcu_read_unlock();
	return m;
}

/*
 * With a port feed, a port whose address bucket would be new (@found, @sk's bucket on the port,
 * is NULL) is claimed here, where a refusal sends the walk on to the next port; *claimedp then
 * tells the caller not to claim it again.
 */
static bool open_port_refused(struct socktab_net *net, struct socktab_sock *sk,
			      const struct socktab__tb2 *found, uint16_t port, int l3mdev,
			      bool *claimedp)
{
	int c = socktab__feed_claim_locked(net, found, sk, port, l3mdev);

	if (c < 0)
		return true;
	*claimedp = c > 0;
	return false;
}

/*
 * R49: bind(0) / listen() without bind. On success returns 0 with *portp set and the bhash lock
 * of that port held (the caller finishes the bind under it), and the port's buckets as the walk
 * found them under that lock: *tbp (NULL: none yet) and *tb2p, @sk's address bucket on it (NULL:
 * none), so that the caller looks neither up again.
 */
static int find_open_port(struct socktab_net *net, struct socktab_sock *sk, int l3mdev, int *portp,
			  struct socktab__bhead **headp, struct socktab__tb **tbp,
			  struct socktab__tb2 **tb2p, bool *claimedp)
{
	bool relax = false;
	uint32_t rnd;

	socktab__random_bytes(&rnd, sizeof(rnd));
ports_exhausted:;
	int attempt_half = RD(sk->reuse) ? 1 : 0;
other_half_scan:;
	int low, high;
	bool local_ports;

	socktab__port_range(net, sk, &low, &high, &local_ports);
	high++;
	if (high - low < 4)
		attempt_half = 0;
	if (attempt_half) {
		int half = low + (((high - low) >> 2) << 1);

		if (attempt_half == 1)
			high = half;
		else
			low = half;
	}
	uint32_t remaining = (uint32_t)(high - low);

	if (remaining > 1)
		remaining &= ~1u;
	/* Odd offset: bind(0) prefers the parity connect() avoids (R49 step 3). */
	rnd = rnd * 1103515245u + 12345u;
	uint32_t offset = (uint32_t)(((uint64_t)rnd * remaining) >> 32) | 1u;
other_parity_scan:;
	int port = low + (int)offset;

	for (uint32_t i = 0; i < remaining; i += 2, port += 2) {
		if (port >= high)
			port -= (int)remaining;
		if (socktab__port_reserved(net, (uint16_t)port))
			continue;
		struct socktab__bhead *head = socktab__bhash_head(net, (uint16_t)port);

		socktab__lock(socktab__bhead_lock(net->tab, head));
		socktab__sk_set_num(sk, (uint16_t)port);
		struct socktab__tb *tb = socktab__tb_find_locked(head, net, (uint16_t)port, l3mdev);
		struct socktab__tb2 *tb2 = NULL;
		bool busy = false;

		if (tb) {
			busy = use_hash2_on_bind(sk) && addr_any_conflict(sk, tb, relax, false);
			if (!busy) {
				tb2 = socktab__tb2_find_locked(net, tb, sk);
				busy = csk_bind_conflict(sk, tb, tb2, relax, false);
			}
		}
		if (!busy && (!socktab__feed_on(net) ||
			      !open_port_refused(net, sk, tb2, (uint16_t)port, l3mdev, claimedp))) {
			*portp = port;
			*headp = head;
			*tbp = tb;
			*tb2p = tb2;
			return 0;
		}
		socktab__unlock(socktab__bhead_lock(net->tab, head));
	}
	socktab__sk_set_num(sk, 0);
	offset--;
	if (!(offset & 1))
		goto other_parity_scan;
	if (attempt_half == 1) {
		attempt_half = 2;
		goto other_half_scan;
	}
	if (RD(net->autobind_reuse) && !relax) {
		relax = true;
		goto ports_exhausted;
	}
	return -EADDRINUSE;
}

/*
 * Kernel inet_csk_get_port(): take port @snum (0: choose one) for @sk. Caller holds the socket
 * lock and has set sk's local address. Returns 0 or -EADDRINUSE / -ENOMEM; on error nothing
 * changed. Used by bind() and listen() (which re-validates the socket's own port in LISTEN state).
 */
int socktab__get_port(struct socktab_net *net, struct socktab_sock *sk, int snum)
{
	struct socktab__bhead *head;
	struct socktab__tb *tb;
	/* @sk's address bucket on the port as looked up under the lock held (NULL: none). */
	struct socktab__tb2 *tb2 = NULL, *own;
	bool tb_created = false, tb2_created = false, first;
	bool check = true, claimed = false;
	int port = snum, ret, l3mdev = socktab__sk_bound_l3mdev(sk);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!port) {
		ret = find_open_port(net, sk, l3mdev, &port, &head, &tb, &tb2, &claimed);
		if (ret)
			return ret;
		check = false;
	} else {
		head = socktab__bhash_head(net, (uint16_t)port);
		socktab__lock(socktab__bhead_lock(net->tab, head));
		tb = socktab__tb_find_locked(head, net, (uint16_t)port, l3mdev);
		tb2 = socktab__tb2_find_locked(net, tb, sk); /* the walk above found it itself */
	}
	if (!tb) {
		tb = socktab__tb_create_locked(head, net, (uint16_t)port, l3mdev, NULL);
		if (!tb) {
			ret = -ENOMEM;
			goto fail;
		}
		tb_created = true;
	}
	first = !tb_has_owners(tb);
	/*
	 * R44 fast paths. Only the SO_REUSEPORT one is taken: the SO_REUSEADDR one needs
	 * tb->fastreuse > 0, which 6.18 never sets (update_fastreuse), so a SO_REUSEADDR bind next
	 * to an owner that cleared SO_REUSEADDR after binding fails (conformance case
	 * reuseaddr_cleared_after_bind): the full check below reads every owner's current flag.
	 */
	if (check && !first && reuseport_match(tb, sk))
		check = false;
	socktab__sk_set_num(sk, (uint16_t)port);
	if (check && use_hash2_on_bind(sk) && addr_any_conflict(sk, tb, true, true)) {
		ret = -EADDRINUSE;
		goto fail;
	}
	if (check && csk_bind_conflict(sk, tb, tb2, true, true)) {
		ret = -EADDRINUSE;
		goto fail;
	}
	own = socktab__sk_bl(sk)->tb2;
	if (own) {
		/*
		 * listen() re-validating a port the socket already owns (R46). The checks ran in the
		 * bucket of its current L3 domain, which differs from its own when SO_BINDTODEVICE
		 * or tcp_l3mdev_accept changed since bind(); the socket stays in its own bucket,
		 * whose fast-reuse state follows it, and a bucket made only for the checks goes
		 * (the kernel keeps it and warns).
		 */
		update_fastreuse(own->tb, own, sk, own->tb == tb && first);
		if (tb_created)
			socktab__tb_maybe_destroy_locked(head, tb);
		socktab__unlock(socktab__bhead_lock(net->tab, head));
		return 0;
	}
	tb2 = tb2_get(net, tb, sk, tb2, NULL, &tb2_created,
		      claimed ? SOCKTAB__FEED_CLAIMED : SOCKTAB__FEED_REFUSABLE, &ret);
	if (!tb2)
		goto fail;
	claimed = false;
	update_fastreuse(tb, tb2, sk, first);
	socktab__bind_hash_locked(sk, tb2, (uint16_t)port);
	socktab__unlock(socktab__bhead_lock(net->tab, head));
	return 0;
fail:
	if (claimed) { /* find_open_port() claimed a bucket that was not made */
		struct socktab_port_key k;

		sk_feed_key(sk, (uint16_t)port, l3mdev, &k);
		socktab__feed_tell(net, &k, SOCKTAB__FEED_RELEASE);
	}
	if (!socktab__sk_bl(sk)->tb2) /* a listener re-validating its own port keeps it */
		socktab__sk_set_num(sk, 0);
	if (tb_created)
		socktab__tb_maybe_destroy_locked(head, tb);
	socktab__unlock(socktab__bhead_lock(net->tab, head));
	return ret;
}

/*
 * The locked half of bind()'s address checks (R38, R85, R86), both protocols: a v4-mapped
 * address on a v6only socket (-EINVAL) or not local (-EADDRNOTAVAIL, -ENODEV), a specific IPv6
 * address that is not local or needs a device (socktab__bind_check_v6). On success writes @a6
 * as the local address with its IPv4 alias (127.0.0.6 for a specific IPv6 address, which also
 * forces v6only) and returns the old v6only in *saved for
 * socktab__bind_undo_addr(). Caller holds the socket lock; nothing is written on error.
 */
int socktab__bind_set_addr(struct socktab_sock *sk, const struct in6_addr *a6, uint32_t v4,
			   uint32_t scope_id, uint8_t *saved)
{
	bool specific_v6 = false;
	int err;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (sk->family == AF_INET6) {
		if (socktab__v6_is_mapped(a6)) {
			if (sk->v6only)
				return -EINVAL;
			v4 = a6->s6_addr32[3];
			err = socktab__bind_check_v4(sk, v4);
			if (err)
				return err;
		} else if (!socktab__v6_is_any(a6)) {
			err = socktab__bind_check_v6(sk, a6, scope_id);
			if (err)
				return err;
			v4 = SOCKTAB__LOOPBACK4_IPV6;
			specific_v6 = true;
		}
	}
	WR(sk->addrpair, (uint64_t)v4 << 32);
	socktab__sk_set_v6_saddr(sk, a6);
	*saved = sk->v6only;
	if (specific_v6)
		sk->v6only = 1;
	/* __inet_bind: a broadcast or multicast address names the socket but is no source
	 * (inet_saddr stays 0): connect() and sends take the route's. */
	if (sk->family == AF_INET && v4)
		socktab__skf_set(sk, SOCKTAB__SKF_SADDR_ANY,
				 socktab__v4_is_group(socktab__sk_net(sk), v4,
						      (int)RD(sk->bound_dev_if)));
	return 0;
}

/* The port could not be had: forget what socktab__bind_set_addr() wrote. Socket lock held. */
void socktab__bind_undo_addr(struct socktab_sock *sk, uint8_t saved)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	sk->v6only = saved;
	socktab__skf_set(sk, SOCKTAB__SKF_SADDR_ANY, false);
	WR(sk->addrpair, 0);
	socktab__sk_set_v6_saddr(sk, &any);
}

/* R39 after a successful bind: address/port locks, and the port getsockname shows. */
void socktab__bind_done(struct socktab_sock *sk, int snum)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (sk->family == AF_INET ? socktab__sk_rcv_saddr(sk) != 0 : !socktab__v6_is_any(&a))
		sk->userlocks |= SOCKTAB__BINDADDR_LOCK;
	if (snum)
		sk->userlocks |= SOCKTAB__BINDPORT_LOCK;
	sk->sport = socktab__sk_num(sk); /* 0 with IP_BIND_ADDRESS_NO_PORT */
}
