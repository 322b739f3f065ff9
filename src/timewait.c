/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TIME_WAIT entries (R48, R61-R63, R100).
 *
 * A TIME_WAIT entry (struct socktab__tw, sock.h) is a compact object of its own pool: the
 * socket's first line (so lookups walk and match it like any entry, and see state TIME_WAIT), its
 * bind-bucket link, list links, expiry and SOCKTAB__TW_PRIV bytes for the caller. The
 * active closer's socket is swapped for it in place: in its ehash chain (one store, so a reader
 * sees one or the other, R22) and among its tb2's owners (it keeps the port, with the original
 * socket's reuse flags, R48; a listener's child leaves its kids shard, bind.c, and the entry joins
 * the owners list instead); a socket its caller still holds with a port bind() locked stays an
 * owner beside the entry. The net keeps a FIFO list of entries (all live tw_len), which holds one
 * reference on each. There is no timer thread: socktab_net_tick_budget() reaps expired entries a
 * budget at a time (socktab_net_tick() repeats it until none is due), the control calls reap a few
 * each, and a connect() that meets an expired entry takes it over.
 * Every unhash of an entry happens under the bhash lock of its port; a bucket link
 * (socktab__sk_bl(tw)->tb2 != NULL) says it is still hashed.
 */
#include <limits.h>

#include "bind.h"
#include "dev.h"
#include "ehash.h"
#include "timewait.h"

static struct socktab__tw *twof(struct socktab_sock *sk)
{
	return socktab__sk_tw(sk);
}

/*
 * (t) The entry left the list for good: it expired, was killed or reset, or a new connection
 * took its place (socktab__tw_deschedule_put()). It is no longer TIME_WAIT for the socktab_tw_*()
 * calls, though a caller holding it from a lookup still sees its state byte say so. Unlike
 * !ONLIST it is never set while the entry is being made (in ehash, not yet on the list).
 */
#define TWF_GONE 0x40
_Static_assert(!(TWF_GONE & (SOCKTAB__TWF_SUBSTATE | SOCKTAB__TWF_TS | SOCKTAB__TWF_ONLIST)),
	       "a flag of its own");

static bool tw_on_list(const struct socktab_sock *tw)
{
	return RD(((struct socktab_sock *)tw)->tw_flags) & SOCKTAB__TWF_ONLIST;
}

static void tw_flags_set(struct socktab_sock *tw, uint8_t mask, uint8_t v)
{
	uint8_t f = RD(tw->tw_flags);

	WR(tw->tw_flags, (uint8_t)((f & ~mask) | v));
}

/* Link @tw at the list's tail (the newest), flags untouched. */
static void tw_list_link_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	SOCKTAB__ASSERT_LOCKED(&net->tw_lock);
	twof(tw)->next = NULL;
	twof(tw)->prev = net->tw_tail;
	if (net->tw_tail) {
		twof(net->tw_tail)->next = tw;
	} else {
		net->tw_head = tw;
		WR(net->tw_head_expire, RD(twof(tw)->expire_ns));
	}
	net->tw_tail = tw;
}

/* Unlink @tw from the list, flags untouched. */
static void tw_list_unlink_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	struct socktab__tw *t = twof(tw);

	SOCKTAB__ASSERT_LOCKED(&net->tw_lock);
	if (t->prev) {
		twof(t->prev)->next = t->next;
	} else {
		net->tw_head = t->next;
		WR(net->tw_head_expire, net->tw_head ? RD(twof(net->tw_head)->expire_ns) : UINT64_MAX);
	}
	if (t->next)
		twof(t->next)->prev = t->prev;
	else
		net->tw_tail = t->prev;
	t->next = t->prev = NULL;
}

/* A new entry joins the list. */
static void tw_list_add_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	tw_list_link_locked(net, tw);
	tw_flags_set(tw, SOCKTAB__TWF_ONLIST, SOCKTAB__TWF_ONLIST);
}

/* An entry leaves the list for good (one flag store: off the list and gone). */
static void tw_list_del_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	tw_list_unlink_locked(net, tw);
	tw_flags_set(tw, SOCKTAB__TWF_ONLIST | TWF_GONE, TWF_GONE);
}

/*
 * Replace established @sk by a new TIME_WAIT entry. Caller holds sk's lock; sk is in ehash and
 * owns its port. With @keep_port sk stays an owner of the port beside the entry
 * (inet_twsk_hashdance adds the entry; a socket its caller still holds keeps a port bind()
 * locked), else the entry takes sk's place. Returns -ENOMEM when no entry can be allocated (then
 * the caller closes without one, as the kernel does when tcp_max_tw_buckets is reached), counted
 * in the net's tw_overflow (the kernel's TCPTimeWaitOverflow).
 */
int socktab__tw_create_and_swap(struct socktab_net *net, struct socktab_sock *sk, int substate,
				bool keep_port)
{
	struct socktab__tables *t = net->tab;
	struct socktab_sock *tw = socktab__pool_alloc(socktab__tw_pool(net, sk->family));
	struct socktab__bhead *head;
	pthread_mutex_t *l;
	uint64_t now = socktab__now(net);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!tw) {
		atomic_fetch_add_explicit(&net->n_tw_overflow, 1, memory_order_relaxed);
		return -ENOMEM;
	}
	atomic_store_explicit(&tw->node.pprev, NULL, memory_order_relaxed);
	WR(tw->v4key, RD(sk->v4key));
	WR(tw->addrpair, RD(sk->addrpair));
	WR(tw->portpair, RD(sk->portpair));
	WR(tw->hash, RD(sk->hash));
	WR(tw->bound_dev_if, RD(sk->bound_dev_if));
	if (sk->family == AF_INET6) {
		struct in6_addr d = socktab__sk_v6_daddr(sk), l6 = socktab__sk_v6_saddr(sk);

		socktab__sk_set_v6_daddr(tw, &d);
		socktab__sk_set_v6_saddr(tw, &l6);
	}
	WR(tw->reuse, RD(sk->reuse));
	WR(tw->reuseport, RD(sk->reuseport));
	WR(tw->v6only, RD(sk->v6only));
	tw->uid = sk->uid;
	tw->sport = sk->sport;
	tw->userlocks = sk->userlocks & SOCKTAB__CONNECT_BIND;
	WR(tw->tw_flags, (uint8_t)(substate | (net->tcp_timestamps ? SOCKTAB__TWF_TS : 0)));
	WR(twof(tw)->expire_ns, now + net->tw_len_ns);
	/* The caller's TIME_WAIT state: the first tw_priv_size bytes of the socket's area. */
	memset(twof(tw)->priv, 0, sizeof(twof(tw)->priv));
	memcpy(twof(tw)->priv, socktab__sk_priv(sk), net->tw_priv_size);
	WR(tw->state, SOCKTAB_TCP_TIME_WAIT);
	/* The list's reference; published by the chain's release store below. */
	atomic_store_explicit(&tw->refcnt, 1, memory_order_release);

	head = socktab__bhash_head(net, socktab__sk_num(sk));
	socktab__lock(socktab__bhead_lock(net->tab, head));
	if (keep_port)
		socktab__bind_hash_locked(tw, socktab__sk_bl(sk)->tb2, socktab__sk_num(sk));
	else
		socktab__bind_replace_owner_locked(sk, tw);
	l = socktab__ehash_lock(t, RD(sk->hash));
	socktab__lock(l);
	socktab__ehash_replace_locked(t, sk, tw);
	socktab__unlock(l);
	socktab__unlock(socktab__bhead_lock(net->tab, head));

	socktab__lock(&net->tw_lock);
	tw_list_add_locked(net, tw);
	socktab__unlock(&net->tw_lock);
	atomic_fetch_add_explicit(&net->n_time_wait, 1, memory_order_relaxed);
	SOCKTAB__STAT_ADD(net, established, -1);
	return 0;
}

/*
 * tcp_twsk_unique's loopback test for tcp_tw_reuse = 2: the entry is bound to lo, or its local or
 * remote address is a loopback one (IPv4, ::1 or v4-mapped 127/8).
 */
static bool tw_loopback(const struct socktab_sock *tw)
{
	if (RD(tw->bound_dev_if) == SOCKTAB__LOOPBACK_IFINDEX)
		return true;
	if (RD(tw->v4key))
		return socktab__v4_is_loopback(socktab__sk_rcv_saddr(tw)) ||
		       socktab__v4_is_loopback(socktab__sk_daddr(tw));
	struct in6_addr l = socktab__sk_v6_saddr(tw), r = socktab__sk_v6_daddr(tw);

	return socktab__v6_is_loopback(&l) || socktab__v6_is_loopback(&r);
}

/*
 * R61, R102 (tcp_twsk_unique): may a new connection take over @tw's 4-tuple? An expired entry
 * always may (its timer would have fired). A connect() whose port was bound (no search: the
 * kernel passes no twp) takes any entry that recorded a peer timestamp; the port search needs
 * tcp_tw_reuse, which an entry in the FIN_WAIT2 substate (the peer has not closed yet) turns
 * off, and which value 2 limits to loopback entries. Caller holds the ehash lock of tw.
 */
bool socktab__tw_unique(struct socktab_net *net, struct socktab_sock *tw, bool port_was_bound)
{
	uint64_t now = socktab__now(net);
	int reuse = RD(net->tw_reuse);

	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(net->tab, RD(tw->hash)));
	uint64_t expire = RD(twof(tw)->expire_ns);

	if (now >= expire)
		return true;
	if ((RD(tw->tw_flags) & SOCKTAB__TWF_SUBSTATE) == SOCKTAB_TCP_FIN_WAIT2)
		reuse = 0;
	if (reuse == 2 && !tw_loopback(tw))
		reuse = 0;
	if (!(RD(tw->tw_flags) & SOCKTAB__TWF_TS))
		return false;
	if (port_was_bound)
		return true;
	/* The delay counts from the entry's last (re)arming: expire - tw_len. The kernel counts
	 * from tw_entry_stamp, set when the entry is made and again when the peer's FIN moves it
	 * to the TIME_WAIT substate (socktab_tw_fin re-arms then too); only socktab_tw_rearm()
	 * differs, which the kernel does not count as a new entry. */
	return reuse && now > expire - net->tw_len_ns +
				      (uint64_t)RD(net->tw_reuse_delay_ms) * 1000000ull;
}

/*
 * Unhash @tw from ehash (if still there) and from its bind bucket. Caller holds the bhash lock
 * of tw's port.
 */
void socktab__tw_kill_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, socktab__sk_num(tw)));
	if (!socktab__sk_bl(tw)->tb2)
		return;
	socktab__ehash_remove(net->tab, tw);
	socktab__bind_unhash_locked(net, tw);
	atomic_fetch_sub_explicit(&net->n_time_wait, 1, memory_order_relaxed);
}

#ifndef SOCKTAB_NAIVE_ORDER
#define NAIVE_TAKEOVER() false
#else
#define NAIVE_TAKEOVER() socktab__naive_takeover()
/*
 * The negative control of the check below (tests/stress/stress_tw_takeover.c): with
 * SOCKTAB_NAIVE_TAKEOVER in the environment, a passive insertion waits a while before it takes
 * the bhash lock (reqsk.c), and the takeover does not look whether a kill came first.
 */
bool socktab__naive_takeover(void)
{
	static _Atomic int on = -1;

	return socktab__naive_env(&on, "SOCKTAB_NAIVE_TAKEOVER");
}
#endif

/* Finish taking over @tw, whose place in ehash a new connection took
 * (socktab__check_established_locked, socktab__ehash_insert_passive): it leaves its bind bucket
 * and is counted as recycled, unless a kill came in between (a passive entry's insertion holds
 * no bhash lock until this call), which took it out and counted it gone then.
 * Caller holds the bhash lock of tw's port; socktab__tw_deschedule_put() follows, unlocked. */
void socktab__tw_takeover_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, socktab__sk_num(tw)));
	if (!socktab__sk_bl(tw)->tb2 && !NAIVE_TAKEOVER())
		return;
	socktab__bind_unhash_locked(net, tw);
	atomic_fetch_sub_explicit(&net->n_time_wait, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&net->n_tw_recycled, 1, memory_order_relaxed);
}

/*
 * Take @tw off the net's list (if the reaper has not already) and drop the list's reference, then
 * the caller's own reference (taken when the entry was found, so @tw cannot have been reused).
 */
void socktab__tw_deschedule_put(struct socktab_net *net, struct socktab_sock *tw)
{
	bool had;

	socktab__lock(&net->tw_lock);
	had = tw_on_list(tw);
	if (had)
		tw_list_del_locked(net, tw);
	socktab__unlock(&net->tw_lock);
	if (had)
		socktab_sock_put(tw);
	socktab_sock_put(tw);
}

/* Kill @tw now: out of ehash and its bind bucket, off the list (dropping the list's reference).
 * The caller keeps its own reference. Takes the bhash and TIME_WAIT list locks. */
static void tw_kill(struct socktab_net *net, struct socktab_sock *tw)
{
	pthread_mutex_t *l = socktab__bhash_lock(net, socktab__sk_num(tw));
	bool had;

	socktab__lock(l);
	socktab__tw_kill_locked(net, tw);
	socktab__unlock(l);
	socktab__lock(&net->tw_lock);
	had = tw_on_list(tw);
	if (had)
		tw_list_del_locked(net, tw);
	socktab__unlock(&net->tw_lock);
	if (had)
		socktab_sock_put(tw);
}

struct socktab_tw *socktab_sock_tw(struct socktab_sock *sk)
{
	if (!sk || RD(sk->state) != SOCKTAB_TCP_TIME_WAIT)
		return NULL;
	return (struct socktab_tw *)sk;
}

static struct socktab_sock *tw_sk(struct socktab_tw *tw)
{
	struct socktab_sock *sk = (struct socktab_sock *)tw;

	return sk && RD(sk->state) == SOCKTAB_TCP_TIME_WAIT ? sk : NULL;
}

/* @t as an entry that is still TIME_WAIT (not expired, killed or taken over), else NULL. */
static struct socktab_sock *tw_live(struct socktab_tw *t)
{
	struct socktab_sock *tw = tw_sk(t);

	return tw && !(RD(tw->tw_flags) & TWF_GONE) ? tw : NULL;
}

int socktab_tw_substate(struct socktab_tw *t)
{
	struct socktab_sock *tw = tw_live(t);

	return tw ? RD(tw->tw_flags) & SOCKTAB__TWF_SUBSTATE : -EINVAL;
}

void *socktab_tw_priv(struct socktab_tw *t)
{
	struct socktab_sock *tw = tw_sk(t);

	return tw && socktab__sk_net(tw)->tw_priv_size ? twof(tw)->priv : NULL;
}

/* A full period from now (inet_twsk_reschedule): back to the list's tail, the newest. An entry
 * gone meanwhile gives -EINVAL; one still being made (found in ehash, not on the list yet) takes
 * the substate and keeps the period its creation, a moment ago, gave it. */
static int tw_rearm(struct socktab_tw *t, bool fin)
{
	struct socktab_sock *tw = tw_live(t);
	struct socktab_net *net;
	int err = 0;

	if (!tw)
		return -EINVAL;
	net = socktab__sk_net(tw);
	socktab__lock(&net->tw_lock);
	if (RD(tw->tw_flags) & TWF_GONE) {
		err = -EINVAL;
	} else {
		if (tw_on_list(tw)) {
			tw_list_unlink_locked(net, tw);
			WR(twof(tw)->expire_ns, socktab__now(net) + net->tw_len_ns);
			tw_list_link_locked(net, tw);
		}
		if (fin)
			tw_flags_set(tw, SOCKTAB__TWF_SUBSTATE, SOCKTAB_TCP_TIME_WAIT);
	}
	socktab__unlock(&net->tw_lock);
	return err;
}

int socktab_tw_fin(struct socktab_tw *t)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_tw_fin()");
	return tw_rearm(t, true);
}

int socktab_tw_rearm(struct socktab_tw *t)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_tw_rearm()");
	return tw_rearm(t, false);
}

int socktab_tw_reset(struct socktab_tw *t)
{
	struct socktab_sock *tw = tw_live(t);
	struct socktab_net *net;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_tw_reset()");
	if (!tw)
		return -EINVAL;
	net = socktab__sk_net(tw);
	/* TIME_WAIT assassination (RFC 1337) unless the net refuses it; FIN_WAIT2 always dies. */
	if ((RD(tw->tw_flags) & SOCKTAB__TWF_SUBSTATE) == SOCKTAB_TCP_TIME_WAIT &&
	    RD(net->tcp_rfc1337))
		return 0;
	tw_kill(net, tw);
	return 1;
}

int socktab_tw_kill(struct socktab_tw *t)
{
	struct socktab_sock *tw = tw_live(t);

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_tw_kill()");
	if (!tw)
		return -EINVAL;
	tw_kill(socktab__sk_net(tw), tw);
	return 0;
}

/*
 * Remove at most @budget entries whose expiry is at or before @now, oldest first, and write the
 * expiry of the oldest entry left (UINT64_MAX: none) to *@next_due when it is not NULL. The list
 * is FIFO in expiry (every entry lives tw_len from its last arming, and re-arming moves it to the
 * tail), so the entries due are a prefix and nothing after the first one not due is read.
 *
 * The work is bounded by @budget, whatever the list holds: one hold of tw_lock for at most
 * @budget unlinks, then per entry its bhash lock and its ehash stripe lock (the unhash with its
 * port-index update, socktab__tw_kill_locked()); the dead entries go back to their pool 64 at a
 * time (the calling thread's cache takes them without a lock; a thread without a cache slot
 * holds the pool lock once per 64). Per entry at most an emptied bind bucket (to the thread's
 * bucket cache after a grace period, one call_rcu per 32), an emptied port index (call_rcu)
 * and an emptied address bucket (the thread's bucket cache); every 64 entries one limbo batch
 * goes to call_rcu (pool.c). Nothing else is walked.
 */
/* Dead entries handed back to their pools at once (at most what one run may be). */
#define TW_FREE_BATCH 64

int socktab__tw_expire(struct socktab_net *net, uint64_t now, unsigned int budget,
		       uint64_t *next_due)
{
	struct socktab_sock *batch = NULL, *tw, *dead[TW_FREE_BATCH];
	uint64_t due = RD(net->tw_head_expire);
	unsigned int n = 0, ndead = 0;

	SOCKTAB__ASSERT(budget <= INT_MAX);
	/* Nothing due: one load, never the net-wide tw_lock. */
	if (due > now || !budget) {
		if (next_due)
			*next_due = due;
		return 0;
	}
	socktab__lock(&net->tw_lock);
	while (n < budget && (tw = net->tw_head) && RD(twof(tw)->expire_ns) <= now) {
		tw_list_del_locked(net, tw);
		twof(tw)->next = batch;
		batch = tw;
		n++;
	}
	due = RD(net->tw_head_expire);
	socktab__unlock(&net->tw_lock);
	while ((tw = batch)) {
		struct socktab__bhead *head = socktab__bhash_head(net, socktab__sk_num(tw));

		batch = twof(tw)->next;
		twof(tw)->next = NULL;
		socktab__lock(socktab__bhead_lock(net->tab, head));
		socktab__tw_kill_locked(net, tw);
		socktab__unlock(socktab__bhead_lock(net->tab, head));
		/* The list's reference; a lookup may still hold one of its own. */
		if (socktab__sock_unref(tw))
			dead[ndead++] = tw;
		if (ndead == TW_FREE_BATCH || (!batch && ndead)) {
			socktab__pool_free_rcu_many(dead, ndead);
			ndead = 0;
		}
	}
	if (next_due)
		*next_due = due;
	return (int)n;
}

/* Control calls reap @budget entries on entry; when nothing has expired they only read
 * tw_head_expire, never the net-wide tw_lock. */
int socktab__tw_reap(struct socktab_net *net, unsigned int budget)
{
	return socktab__tw_expire(net, socktab__now(net), budget, NULL);
}

/* Drop every TIME_WAIT entry of @net now (net teardown). */
void socktab__tw_purge(struct socktab_net *net)
{
	struct socktab_sock *tw;

	for (;;) {
		socktab__lock(&net->tw_lock);
		tw = net->tw_head;
		if (tw)
			tw_list_del_locked(net, tw);
		socktab__unlock(&net->tw_lock);
		if (!tw)
			return;
		struct socktab__bhead *head = socktab__bhash_head(net, socktab__sk_num(tw));

		socktab__lock(socktab__bhead_lock(net->tab, head));
		socktab__tw_kill_locked(net, tw);
		socktab__unlock(socktab__bhead_lock(net->tab, head));
		socktab_sock_put(tw);
	}
}
