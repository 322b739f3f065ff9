/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Request entries, the SYN queue, SYN cookies' verdict, the accept queue and tcp_migrate_req
 * (R112-R124): the calls of socktab/sock.h from socktab_syn_decide() to socktab_listen_info(),
 * and the children a listener makes (socktab_sock_new_child()). An entry-point file: it takes
 * the listener's lock and calls the tables below (ehash.c, bind.c, timewait.c).
 *
 * A request entry (struct socktab__req, sock.h; the kernel's request_sock in TCP_NEW_SYN_RECV)
 * is a compact object of its own pool, like a TIME_WAIT entry: the socket's first line (lookups
 * walk and match it like any ehash entry and see state NEW_SYN_RECV), a link in its listener's
 * queue, the listener, the child that replaced it, and SOCKTAB__REQ_PRIV bytes for the caller.
 * It owns no port, as the kernel's owns none (the child joins the bind bucket, as
 * __inet_inherit_port does).
 *
 * Locks: every queue change is made under the listener's socket lock, which also covers the
 * request's `listener` and `where`. The counters are atomics, so socktab_syn_decide() reads them
 * with no lock (the kernel's qlen, young and sk_ack_backlog are atomics too).
 *
 * A request holds no reference on its listener (the kernel's request_sock holds one): instead,
 * one that leaves every queue stores NULL as its listener before the listener can drop its last
 * reference, so socktab_req_listener(), which runs in a read-side section, reads either NULL or
 * a listener whose memory a grace period still keeps (req_forget_listener()).
 *
 * Transitions, each a single publication in ehash (ordering guarantees):
 *  (A) SYN -> request: inserted at its chain's head with the release store of every insert.
 *  (B) request -> child (socktab_req_promote, inet_csk_complete_hashdance): the child's key is
 *      written, then it takes the request's place in its chain with one release store
 *      (socktab__ehash_replace_locked, inet_ehash_insert with an osk since the October 2025
 *      fix). A reader standing on the request still follows its next link onward; a reader at
 *      the head meets the child. Unlinking the request first and linking the child after would
 *      leave a window where a lookup of a live handshake finds neither, and the listener
 *      answers its ACK with a RST: the -Dnaive_order build restores that order.
 *  (C) migration (tcp_migrate_req): the request stays in ehash; only its `listener` changes,
 *      with one release store, so a lookup finds it throughout. The kernel clones the request
 *      (inet_reqsk_clone) and swaps the clone in with one store; socktab moves the entry itself,
 *      so the stack's handles stay valid. An unaccepted child never leaves ehash. The
 *      -Dnaive_order build unlinks the request and links it again instead.
 *
 * Departures: the kernel migrates or drops a closed listener's requests lazily, when their timer
 * fires or a segment reaches them (reqsk_timer_handler, tcp_v4_rcv); socktab has no timers, so a
 * listener's close does it at once, with the same choice of member (the 4-tuple hash over the
 * members left, reuseport_select_sock_by_hash) and the same refusals. Only the classic BPF
 * selector exists (R108), never of type BPF_SK_REUSEPORT_SELECT_OR_MIGRATE, so the sysctl alone
 * decides, as it does in the kernel with such a program attached.
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "addr.h"
#include "bind.h"
#include "dev.h"
#include "ehash.h"
#include "reqsk.h"
#include "reuseport.h"
#include "timewait.h"

_Static_assert(sizeof(struct socktab__req) == 2 * SOCKTAB__CACHELINE,
	       "an IPv4 request entry is two lines");
_Static_assert(offsetof(struct socktab__req, bl) == offsetof(struct socktab__tw, bl),
	       "socktab__sk_bl() finds both entries' links at one offset");
_Static_assert(sizeof(struct socktab__req6) <= 3 * SOCKTAB__CACHELINE,
	       "an IPv6 request entry is three lines");
_Static_assert(SOCKTAB__REQ_PRIV >= SOCKTAB_REQ_PRIV_MAX, "request caller area");

static struct socktab__req *reqof(struct socktab_sock *sk)
{
	return (struct socktab__req *)sk;
}

static struct socktab_sock *req_listener(struct socktab_sock *req)
{
	return atomic_load_explicit(&reqof(req)->listener, memory_order_acquire);
}

static uint8_t req_where(struct socktab_sock *req)
{
	return atomic_load_explicit((_Atomic uint8_t *)&reqof(req)->where, memory_order_relaxed);
}

static void req_set_where(struct socktab_sock *req, uint8_t w)
{
	atomic_store_explicit((_Atomic uint8_t *)&reqof(req)->where, w, memory_order_relaxed);
}

/*
 * @req leaves every queue (dropped, accepted, or given up at its listener's close): it forgets
 * its listener, so socktab_req_listener() answers NULL from now on. Called while the listener
 * still holds the reference its caller opened it with (under its lock, or in the close that
 * drops that reference only afterwards), so the listener's memory is freed, and reused, only a
 * grace period after this store: a reader that loaded the old pointer inside a section still
 * reads a live listener, one that loads after it reads NULL. Caller holds the listener's lock
 * or owns @req in transit.
 */
static void req_forget_listener(struct socktab_sock *req)
{
	req_set_where(req, SOCKTAB__REQ_NONE);
	atomic_store_explicit(&reqof(req)->listener, NULL, memory_order_release);
}

/* ---- queue links (caller holds the listener's lock, or owns the detached list) ---- */

static void synq_add(struct socktab__listenq *q, struct socktab_sock *req)
{
	struct socktab__bindlink *bl = socktab__sk_bl(req);

	bl->next = q->synq;
	bl->pprev = &q->synq;
	if (q->synq)
		socktab__sk_bl(q->synq)->pprev = &bl->next;
	q->synq = req;
}

static void synq_del(struct socktab_sock *req)
{
	struct socktab__bindlink *bl = socktab__sk_bl(req);

	*bl->pprev = bl->next;
	if (bl->next)
		socktab__sk_bl(bl->next)->pprev = bl->pprev;
	bl->next = NULL;
	bl->pprev = NULL;
}

static void accq_add(struct socktab__listenq *q, struct socktab_sock *req)
{
	struct socktab__bindlink *bl = socktab__sk_bl(req);

	bl->next = NULL;
	bl->pprev = q->acc_tailp;
	*q->acc_tailp = req;
	q->acc_tailp = &bl->next;
}

static struct socktab_sock *accq_pop(struct socktab__listenq *q)
{
	struct socktab_sock *req = q->acc_head;
	struct socktab__bindlink *bl;

	if (!req)
		return NULL;
	bl = socktab__sk_bl(req);
	q->acc_head = bl->next;
	if (q->acc_head)
		socktab__sk_bl(q->acc_head)->pprev = &q->acc_head;
	else
		q->acc_tailp = &q->acc_head;
	bl->next = NULL;
	bl->pprev = NULL;
	return req;
}

static void cnt_add(_Atomic uint32_t *c, int d)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint32_t)d,
			      memory_order_relaxed);
}

/* reqsk_queue_added / reqsk_queue_removed. */
static void synq_count(struct socktab__listenq *q, struct socktab_sock *req, int d)
{
	cnt_add(&q->qlen, d);
	if (!reqof(req)->num_timeout)
		cnt_add(&q->young, d);
}

/* ---- listen() ---- */

int socktab__listenq_prepare(struct socktab_sock *sk)
{
	struct socktab__listenq *q;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (socktab__sk_lq(sk))
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->acc_tailp = &q->acc_head;
	q->rp_id = -1;
	atomic_store_explicit(&sk->cold->lq, q, memory_order_release);
	return 0;
}

void socktab__listenq_start(struct socktab_sock *sk, int backlog, bool fresh)
{
	struct socktab__listenq *q = socktab__sk_lq(sk);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (fresh) {
		WR(q->qlen, 0);
		WR(q->young, 0);
		WR(q->ack_backlog, 0);
		q->synq = q->acc_head = NULL;
		q->acc_tailp = &q->acc_head;
	}
	WR(q->max_ack_backlog, (uint32_t)backlog);
}

/* ---- the SYN's verdict ---- */

#define SYN_FLAGS (SOCKTAB_SYN_TW_RECYCLE | SOCKTAB_SYN_PEER_PROVEN)

int socktab_syn_decide(struct socktab_sock *listener, unsigned int flags)
{
	struct socktab__listenq *q;
	struct socktab_net *net;
	uint32_t qlen, max;
	bool want_cookie = false, isn = flags & SOCKTAB_SYN_TW_RECYCLE;
	int syncookies;

	if (!listener || (flags & ~SYN_FLAGS) || RD(listener->state) != SOCKTAB_TCP_LISTEN ||
	    socktab__sk_proto(listener) != SOCKTAB_TCP)
		return -EINVAL;
	q = socktab__sk_lq(listener);
	if (!q)
		return -EINVAL;
	net = socktab__sk_net(listener);
	syncookies = RD(net->tcp_syncookies);
	qlen = RD(q->qlen);
	max = RD(q->max_ack_backlog);
	/* R112, R113: inet_csk_reqsk_queue_is_full() is qlen > sk_max_ack_backlog; with
	 * syncookies 2 every SYN gets a cookie (tcp_syn_flood_action). */
	if ((syncookies == 2 || qlen > max) && !isn) {
		if (!syncookies)
			return SOCKTAB_SYN_DROP;
		want_cookie = true;
	}
	/* R115: sk_acceptq_is_full(), sk_ack_backlog > sk_max_ack_backlog, drops even a cookie. */
	if (RD(q->ack_backlog) > max)
		return SOCKTAB_SYN_DROP;
	if (want_cookie)
		return SOCKTAB_SYN_COOKIE;
	/* R114: without cookies the last quarter of tcp_max_syn_backlog is kept for peers proven
	 * alive. */
	if (!isn && !syncookies) {
		int msb = RD(net->max_syn_backlog);

		if (msb - (int)qlen < (msb >> 2) && !(flags & SOCKTAB_SYN_PEER_PROVEN))
			return SOCKTAB_SYN_DROP;
	}
	return SOCKTAB_SYN_QUEUE;
}

/* ---- children and requests: the key of a SYN ---- */

/* A SYN's addresses, checked against the listener. */
struct syn_key {
	struct in6_addr la, ra;
	uint16_t lport_be, rport_be;
	bool v4;
	int dev;                           /* the device the child and request are bound to */
};

/*
 * The device a child is bound to (R94): the listener's; for an unbound listener, the VRF of
 * the ingress device with tcp_l3mdev_accept (inet_request_bound_dev_if), and for IPv6 with a
 * link-local peer the ingress device itself (tcp_v6_init_req).
 */
static int child_dev(struct socktab_net *net, const struct socktab_sock *listener,
		     const struct in6_addr *remote, bool v4, int dif, int sdif)
{
	int bound = (int)RD(listener->bound_dev_if);

	if (bound)
		return bound;
	if (!v4 && socktab__v6_needs_scope(remote))
		return dif;
	return RD(net->tcp_l3mdev_accept) ? sdif : 0;
}

/* A SYN comes in on a device of the net (the kernel's skb has one): @dif and @sdif are 0 or
 * devices the net has now. */
static bool syn_devs_exist(struct socktab_net *net, int dif, int sdif)
{
	const struct socktab__ifcfg *c;
	bool ok;

	if (!dif && !sdif)
		return true;
	socktab__rcu_read_lock();
	c = socktab__ifcfg_rcu(net);
	ok = (!dif || socktab__dev_get(c, dif)) && (!sdif || socktab__dev_get(c, sdif));
	socktab__rcu_read_unlock();
	return ok;
}

/*
 * Parse and check a SYN's endpoints and devices for listener @l (locked, listening): 0 or
 * -EINVAL. A dual-stack listener (AF_INET6, IPV6_V6ONLY off) takes an IPv4 SYN's endpoints as
 * sockaddr_in, as they come off the wire, or in their v4-mapped sockaddr_in6 form: its child is
 * AF_INET6 with v4-mapped names either way, as the kernel's tcp_v6_syn_recv_sock() makes it.
 */
static int syn_key(struct socktab_sock *l, const struct sockaddr *local,
		   const struct sockaddr *remote, socklen_t len, int dif, int sdif,
		   struct syn_key *k)
{
	int family = l->family;

	if (family == AF_INET6 && !RD(l->v6only) && local->sa_family == AF_INET &&
	    remote->sa_family == AF_INET)
		family = AF_INET; /* parsed into their v4-mapped form */

	if (!syn_devs_exist(socktab__sk_net(l), dif, sdif) ||
	    socktab__parse_endpoint(family, local, len, &k->la, &k->lport_be) ||
	    socktab__parse_endpoint(family, remote, len, &k->ra, &k->rport_be) ||
	    ntohs(k->lport_be) != socktab__sk_num(l))
		return -EINVAL;
	/* No segment carries a v4-mapped address on one side and native IPv6 on the other. */
	if (family == AF_INET6 && socktab__v6_is_mapped(&k->la) != socktab__v6_is_mapped(&k->ra))
		return -EINVAL;
	k->v4 = family == AF_INET || socktab__v6_is_mapped(&k->la);
	k->dev = child_dev(socktab__sk_net(l), l, &k->ra, k->v4, dif, sdif);
	return 0;
}

/* Write @k as @sk's key (its local port comes with its hash, when it is hashed). */
static void set_key(struct socktab_sock *sk, const struct syn_key *k)
{
	WR(sk->v4key, k->v4);
	WR(sk->addrpair, k->v4 ? ((uint64_t)k->ra.s6_addr32[3] |
				  (uint64_t)k->la.s6_addr32[3] << 32)
			       : ((uint64_t)SOCKTAB__LOOPBACK4_IPV6 << 32));
	socktab__sk_set_v6_saddr(sk, &k->la);
	socktab__sk_set_v6_daddr(sk, &k->ra);
	WR(sk->portpair, (uint32_t)k->rport_be);
	WR(sk->bound_dev_if, (uint32_t)k->dev);
}

/* A new child of listener @l (locked), private to the caller: fields of the listener, state
 * @state, @refs references; its key is the caller's to write. NULL: no memory. */
static struct socktab_sock *child_alloc(struct socktab_net *net, struct socktab_sock *l,
					int state, uint32_t refs)
{
	struct socktab_sock *child = socktab__pool_alloc(socktab__sock_pool(net, SOCKTAB_TCP,
									    l->family));

	if (!child)
		return NULL;
	/* The child is private until we return it: no lock of its own is needed (taking it under
	 * the listener's would also look like a lock-order inversion, since pool objects change
	 * roles). */
	socktab__sock_init_fields(child);
	memset(socktab__sk_priv(child), 0, net->priv_size);
	WR(child->reuse, RD(l->reuse)); /* children inherit SO_REUSEADDR (R48) */
	WR(child->reuseport, RD(l->reuseport));
	child->v6only = l->v6only;
	child->uid = l->uid;
	/* The kernel's child is a copy of the listener (sk_clone_lock): it keeps SO_LINGER, the
	 * socket-level options and SOCK_BINDADDR_LOCK (a disconnect keeps its address), but not
	 * SOCK_BINDPORT_LOCK: moving to CLOSE releases a child's port. */
	child->userlocks = l->userlocks & SOCKTAB__BINDADDR_LOCK;
	/* sk_clone_lock(): the child names the CPU that made it (R107). */
	socktab__sk_set_incoming_cpu(child, socktab__rx_cpu());
	/* A child never listens (R104). */
	socktab__sk_mark_role(child, SOCKTAB__SOCKF_ACTIVE | SOCKTAB__SOCKF_CHILD);
	atomic_store_explicit(&child->cold->flags,
			      atomic_load_explicit(&l->cold->flags, memory_order_relaxed) &
				      (SOCKTAB__SKF_FREEBIND | SOCKTAB__SKF_TRANSPARENT |
				       SOCKTAB__SKF_BROADCAST | SOCKTAB__SKF_NO_PORT |
				       SOCKTAB__SKF_LINGER),
			      memory_order_relaxed);
	child->cold->linger_secs = l->cold->linger_secs;
	child->cold->local_port_range = l->cold->local_port_range;
	WR(child->state, (uint8_t)state);
	if (state == SOCKTAB_TCP_ESTABLISHED)
		socktab__skf_set(child, SOCKTAB__SKF_CONNECTED, true);
	atomic_store_explicit(&child->refcnt, refs, memory_order_release);
	return child;
}

/* Free a child that was never published. */
static void child_discard(struct socktab_sock *child)
{
	WR(child->state, SOCKTAB__FREE);
	atomic_store_explicit(&child->refcnt, 1, memory_order_relaxed);
	socktab_sock_put(child);
}

/*
 * __inet_inherit_port: the child owns the listener's port on its own local address (the live
 * kernel shows this: after a wildcard listener closes, its children block 127.0.0.1:P but not
 * 127.0.0.2:P), so it joins the tb2 of (port, that address); a child in another VRF domain than
 * its listener's bucket owns the port in its own. The buckets come from @pa, so this cannot
 * fail. Caller holds the listener's lock and the bhash lock of @port.
 */
static void inherit_port_locked(struct socktab_net *net, struct socktab_sock *l,
				struct socktab_sock *child, struct socktab__bhead *head,
				uint16_t port, struct socktab__bind_prealloc *pa)
{
	struct socktab__tb2 *ltb2 = socktab__sk_bl(l)->tb2, *tb2;
	struct socktab__tb *tb = ltb2->tb;
	int l3mdev = socktab__sk_bound_l3mdev(child);
	bool created;

	SOCKTAB__ASSERT_LOCKED(socktab__bhead_lock(net->tab, head));
	if (tb->l3mdev != l3mdev) {
		tb = socktab__tb_find_locked(head, net, port, l3mdev);
		if (!tb)
			tb = socktab__tb_create_locked(head, net, port, l3mdev, pa);
	}
	/* A listener bound to an address gives its children its own bucket: no bhash2 walk (nor
	 * its lock, which every child of the port would take). */
	if (ltb2->tb == tb && socktab__tb2_addr_match(ltb2, child)) {
		tb2 = ltb2;
	} else {
		tb2 = socktab__tb2_find_or_create_locked(net, tb, child, pa, &created, false);
		if (created) {
			tb2->fastreuse = ltb2->fastreuse;
			tb2->fastreuseport = ltb2->fastreuseport;
		}
	}
	/* A child owns the port in its bucket's kids shards (bind.c). */
	socktab__bind_kid_hash_locked(tb2, child, port);
}

/*
 * @child joins the bucket inherit_port_locked() would give it, in the calling thread's kids
 * shard, without the port's bhash lock where that shard has an owner already (bind.c): true if
 * it did. The bucket is its listener @l's own (the listener's lock, which the caller holds, keeps
 * it) or, the listener's port in the same L3 domain, that of the child's address, looked up
 * under RCU (the shard's owner keeps it, which the join checks under the shard's lock).
 */
static bool kid_join(struct socktab_sock *l, struct socktab_sock *child, uint16_t port)
{
	struct socktab__tb2 *ltb2 = socktab__sk_bl(l)->tb2, *tb2;
	bool joined;

	SOCKTAB__ASSERT_SK_LOCKED(l);
	if (ltb2->tb->l3mdev != socktab__sk_bound_l3mdev(child))
		return false;
	if (socktab__tb2_addr_match(ltb2, child))
		return socktab__bind_kid_join(ltb2, child, port);
	socktab__rcu_read_lock();
	tb2 = socktab__tb2_find_rcu(ltb2->tb, child);
	joined = tb2 && socktab__bind_kid_join(tb2, child, port);
	socktab__rcu_read_unlock();
	return joined;
}

/*
 * Hash new entry @sk (a child or a request, key written) with the uniqueness check of its
 * 4-tuple (R56: a TIME_WAIT entry that may be taken over is, R61), and with @child give it the
 * listener's port. 0 or -EADDRINUSE. Caller holds the listener's lock.
 *
 * The check and the insertion hold only the 4-tuple's ehash lock, as the kernel's
 * inet_ehash_insert() does: the port is the listener's and stays taken while it listens, so
 * unlike connect() there is no port choice to keep atomic with them. The port's bhash lock is
 * held only for the bind bucket: the child's place among the port's owners, and a TIME_WAIT
 * entry's leaving them; a child whose thread's kids shard of its bucket has an owner already
 * joins it under the shard's lock alone (bind.c).
 */
static int hash_new_entry(struct socktab_net *net, struct socktab_sock *l, struct socktab_sock *sk,
			  bool child, struct socktab__bind_prealloc *pa)
{
	uint16_t port = socktab__sk_num(l);
	struct socktab_sock *tw = NULL;

	if (socktab__ehash_insert_passive(net, sk, port, socktab__sk_ehashfn(net, sk, port),
					  &tw) != SOCKTAB__UNIQUE)
		return -EADDRINUSE;
#ifdef SOCKTAB_NAIVE_ORDER
	if (tw && socktab__naive_takeover())
		for (volatile int i = 0; i < 20000; i++)
			;
#endif
	/* A child whose thread's kids shard of its bucket has owners joins it without the port's
	 * bhash lock (bind.c); else below, as the first of its shard. */
	if (child && !tw && kid_join(l, sk, port))
		return 0;
	if (child || tw) {
		struct socktab__bhead *head = socktab__bhash_head(net, port);
		pthread_mutex_t *lock = socktab__bhead_lock(net->tab, head);

		socktab__lock(lock);
		if (child)
			inherit_port_locked(net, l, sk, head, port, pa);
		if (tw)
			socktab__tw_takeover_locked(net, tw);
		socktab__unlock(lock);
	}
	if (tw)
		socktab__tw_deschedule_put(net, tw);
	return 0;
}

/*
 * The entry of the listener-side calls (a child, a request, a cookie's child, accept, the queue
 * counts): 0 with @sk locked, a TCP listener, its queues in *@qp; -EINVAL, nothing locked, for
 * NULL, a TIME_WAIT or request entry, or a socket that does not listen. unlock_listener() ends
 * what it began.
 */
static int lock_listener(struct socktab_sock *sk, struct socktab__listenq **qp)
{
	if (!sk || socktab__sk_is_tw(sk) || socktab__sk_is_req(sk))
		return -EINVAL;
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("a listener's call");
	socktab__lock(socktab__sk_lock(sk));
	*qp = socktab__sk_lq(sk);
	if (RD(sk->state) != SOCKTAB_TCP_LISTEN || !*qp) {
		socktab__unlock(socktab__sk_lock(sk));
		return -EINVAL;
	}
	return 0;
}

static void unlock_listener(struct socktab_sock *sk)
{
	socktab__unlock(socktab__sk_lock(sk));
}

struct socktab_sock *socktab_sock_new_child(struct socktab_sock *listener,
					    const struct sockaddr *local,
					    const struct sockaddr *remote, socklen_t len, int dif,
					    int sdif)
{
	struct socktab_net *net;
	struct socktab_sock *child;
	struct socktab__bind_prealloc pa;
	struct socktab__listenq *q;
	struct syn_key k;
	int err = -EINVAL;
	bool nomem;

	if (!local || !remote || dif < 0 || sdif < 0) {
		errno = EINVAL;
		return NULL;
	}
	/* The child's address bucket may be new: allocated before the listener's lock (which
	 * every SYN to the listener takes, from every thread), so nothing fails once the child is
	 * in ehash. */
	nomem = socktab__bind_prealloc(&pa) != 0; /* on failure both blocks are NULL */
	if (lock_listener(listener, &q)) {
		socktab__bind_prealloc_free(&pa);
		errno = EINVAL;
		return NULL;
	}
	if (syn_key(listener, local, remote, len, dif, sdif, &k))
		goto out;
	net = socktab__sk_net(listener);
	err = -ENOMEM;
	if (nomem)
		goto out;
	child = child_alloc(net, listener, SOCKTAB_TCP_SYN_RECV, 1);
	if (!child)
		goto out;
	set_key(child, &k);
	err = hash_new_entry(net, listener, child, true, &pa);
	if (err) {
		child_discard(child);
		goto out;
	}
	SOCKTAB__STAT_ADD(net, established, 1);
	unlock_listener(listener);
	socktab__bind_prealloc_free(&pa);
	return child;
out:
	unlock_listener(listener);
	socktab__bind_prealloc_free(&pa);
	errno = -err;
	return NULL;
}

/* ---- request entries ---- */

static bool is_req(const struct socktab_sock *sk)
{
	return sk && socktab__sk_is_req(sk);
}

struct socktab_sock *socktab_req_new(struct socktab_sock *listener, const struct sockaddr *local,
				     const struct sockaddr *remote, socklen_t len, int dif,
				     int sdif)
{
	struct socktab_net *net;
	struct socktab_sock *req;
	struct socktab__listenq *q;
	struct syn_key k;
	int err = -EINVAL;

	if (!local || !remote || dif < 0 || sdif < 0 || lock_listener(listener, &q)) {
		errno = EINVAL;
		return NULL;
	}
	if (syn_key(listener, local, remote, len, dif, sdif, &k))
		goto out;
	net = socktab__sk_net(listener);
	err = -ENOMEM;
	req = socktab__pool_alloc(socktab__req_pool(net, listener->family));
	if (!req)
		goto out;
	atomic_store_explicit(&req->node.pprev, NULL, memory_order_relaxed);
	set_key(req, &k);
	WR(req->tw_flags, 0);
	req->uid = listener->uid;
	req->sport = socktab__sk_num(listener);
	atomic_store_explicit(&reqof(req)->listener, listener, memory_order_relaxed);
	reqof(req)->child = NULL;
	reqof(req)->num_timeout = 0;
	req_set_where(req, SOCKTAB__REQ_NONE);
	memset(reqof(req)->priv, 0, sizeof(reqof(req)->priv));
	WR(req->state, SOCKTAB_TCP_NEW_SYN_RECV);
	/* The queue's reference and the caller's; published by the chain's release store. */
	atomic_store_explicit(&req->refcnt, 2, memory_order_release);
	err = hash_new_entry(net, listener, req, false, NULL);
	if (err) {
		WR(req->state, SOCKTAB__FREE);
		atomic_store_explicit(&req->refcnt, 1, memory_order_relaxed);
		socktab_sock_put(req);
		goto out;
	}
	/* inet_csk_reqsk_queue_hash_add: in ehash and counted in the SYN queue (R112). */
	synq_add(q, req);
	req_set_where(req, SOCKTAB__REQ_SYNQ);
	synq_count(q, req, 1);
	SOCKTAB__STAT_ADD(net, requests, 1);
	unlock_listener(listener);
	return req;
out:
	unlock_listener(listener);
	errno = -err;
	return NULL;
}

struct socktab_sock *socktab_req_listener(struct socktab_sock *req)
{
	SOCKTAB__ASSERT_RCU();
	return is_req(req) ? req_listener(req) : NULL;
}

void *socktab_req_priv(struct socktab_sock *req)
{
	if (!is_req(req) || !socktab__sk_net(req)->req_priv_size)
		return NULL;
	return reqof(req)->priv;
}

/*
 * Lock the listener of @req and return it, with the request in a queue of that listener (not
 * in transit between two): the request's `where` is then stable until the unlock. A close that
 * is moving the request holds it only for its own loop, so the wait is short. Returns NULL (no
 * lock held) when the request is in no queue any more.
 */
static struct socktab_sock *lock_req_listener(struct socktab_sock *req)
{
	for (;;) {
		struct socktab_sock *l = req_listener(req);
		uint8_t w;

		if (!l)
			return NULL;
		socktab__lock(socktab__sk_lock(l));
		w = req_where(req);
		if (req_listener(req) == l && w != SOCKTAB__REQ_TRANSIT) {
			if (w == SOCKTAB__REQ_NONE) {
				socktab__unlock(socktab__sk_lock(l));
				return NULL;
			}
			return l;
		}
		socktab__unlock(socktab__sk_lock(l));
		if (w == SOCKTAB__REQ_TRANSIT)
			sched_yield();
	}
}

#ifdef SOCKTAB_NAIVE_ORDER
/*
 * The negative control of the check below (tests/unit/test_handshake.c, complete_races): with
 * SOCKTAB_NAIVE_COMPLETE in the environment, lock_synq_req() reads the request's queue before
 * it takes the listener's lock, sleeps for a millisecond, and trusts what it read. Two threads
 * with the same final ACK then both find the request in the SYN queue, and both make it a
 * child.
 */
static bool naive_complete(void)
{
	static _Atomic int on = -1;

	return socktab__naive_env(&on, "SOCKTAB_NAIVE_COMPLETE");
}
#endif

/*
 * The entry of the calls on a request entry (drop, retransmit, promote, complete): 0 with the
 * listener whose SYN queue holds @req locked (*@lp; unlock_listener() ends it); -EINVAL for
 * anything but a request entry, -ENOENT when it is in no SYN queue any more; nothing locked
 * then. The queue is read under the lock: another thread may complete, drop or move the
 * request up to then, and only one call may take it out of the SYN queue.
 */
static int lock_synq_req(struct socktab_sock *req, struct socktab_sock **lp)
{
	struct socktab_sock *l;
	uint8_t w;

	if (!is_req(req))
		return -EINVAL;
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("a request entry's call");
#ifdef SOCKTAB_NAIVE_ORDER
	bool naive = naive_complete();
	uint8_t early = naive ? req_where(req) : SOCKTAB__REQ_NONE;

	if (naive) {
		/* A sleep, not a spin: the other thread gets this CPU if it has no other. */
		struct timespec pause = { 0, 1000000 };

		nanosleep(&pause, NULL);
	}
#endif
	l = lock_req_listener(req);
	if (!l)
		return -ENOENT;
	w = req_where(req);
#ifdef SOCKTAB_NAIVE_ORDER
	if (naive)
		w = early;
#endif
	if (w != SOCKTAB__REQ_SYNQ) {
		unlock_listener(l);
		return -ENOENT;
	}
	*lp = l;
	return 0;
}

/* Take @req (in the SYN queue of @l, locked) out of ehash and the queue; the queue's reference
 * is the caller's to drop. */
static void req_unqueue_locked(struct socktab_sock *l, struct socktab_sock *req)
{
	struct socktab_net *net = socktab__sk_net(req);

	SOCKTAB__ASSERT_SK_LOCKED(l);
	synq_del(req);
	synq_count(socktab__sk_lq(l), req, -1);
	req_forget_listener(req);
	socktab__ehash_remove(net->tab, req);
	SOCKTAB__STAT_ADD(net, requests, -1);
}

int socktab_req_drop(struct socktab_sock *req)
{
	struct socktab_sock *l;
	int err = lock_synq_req(req, &l);

	if (err)
		return err;
	req_unqueue_locked(l, req);
	unlock_listener(l);
	socktab_sock_put(req); /* the queue's */
	return 0;
}

int socktab_req_retransmit(struct socktab_sock *req)
{
	struct socktab_sock *l;
	int n = lock_synq_req(req, &l);

	if (n)
		return n;
	/* reqsk_timer_handler: the first timeout makes the request old. */
	if (reqof(req)->num_timeout == 0)
		cnt_add(&socktab__sk_lq(l)->young, -1);
	if (reqof(req)->num_timeout < UINT8_MAX)
		reqof(req)->num_timeout++;
	n = reqof(req)->num_timeout;
	unlock_listener(l);
	return n;
}

/* The key of request @req as a syn_key (the child takes it over). */
static void req_key(struct socktab_sock *req, struct syn_key *k)
{
	k->la = socktab__sk_v6_saddr(req);
	k->ra = socktab__sk_v6_daddr(req);
	k->v4 = RD(req->v4key);
	if (k->v4 && req->family == AF_INET6) {
		socktab__v6_map(&k->la, socktab__sk_rcv_saddr(req));
		socktab__v6_map(&k->ra, socktab__sk_daddr(req));
	}
	k->rport_be = socktab__sk_dport(req);
	k->lport_be = htons(socktab__sk_num(req));
	k->dev = (int)RD(req->bound_dev_if);
}

static bool child_state_ok(int state)
{
	return state == SOCKTAB_TCP_SYN_RECV || state == SOCKTAB_TCP_ESTABLISHED;
}

/* sk_acceptq_is_full() (R115). */
static bool acceptq_full(const struct socktab__listenq *q)
{
	return RD(q->ack_backlog) > RD(q->max_ack_backlog);
}

/* inet_csk_reqsk_queue_add: the child behind accept-queue entry @req joins @l's queue. */
static void accq_queue_locked(struct socktab_sock *l, struct socktab_sock *req)
{
	struct socktab__listenq *q = socktab__sk_lq(l);

	SOCKTAB__ASSERT_SK_LOCKED(l);
	accq_add(q, req);
	req_set_where(req, SOCKTAB__REQ_ACCEPTQ);
	cnt_add(&q->ack_backlog, 1);
}

/*
 * tcp_v4_syn_recv_sock -> inet_ehash_nolisten, and the SYN queue's half of
 * inet_csk_complete_hashdance: the child of @req (in the SYN queue of @l, locked, whose accept
 * queue has room) in @state with @refs references takes the request's place in ehash with one
 * store (R117, transition B above) and the listener's port, and the request leaves the SYN
 * queue, remembering its child. NULL: no memory, nothing changed. @pa holds the port's buckets.
 */
static struct socktab_sock *promote_locked(struct socktab_sock *l, struct socktab_sock *req,
					   int state, uint32_t refs,
					   struct socktab__bind_prealloc *pa)
{
	struct socktab_net *net = socktab__sk_net(l);
	struct socktab__tables *t = net->tab;
	struct socktab_sock *child;
	struct syn_key k;
	pthread_mutex_t *el, *bl;
	uint16_t port;

	child = child_alloc(net, l, state, refs);
	if (!child)
		return NULL;
	req_key(req, &k);
	set_key(child, &k);
	WR(child->portpair, RD(req->portpair));
	WR(child->hash, RD(req->hash));
	memcpy(socktab__sk_priv(child), reqof(req)->priv, net->req_priv_size);

	port = socktab__sk_num(l);
	struct socktab__bhead *head = socktab__bhash_head(net, port);

	bl = socktab__bhead_lock(t, head);
	socktab__lock(bl);
	el = socktab__ehash_lock(t, RD(req->hash));
	socktab__lock(el);
#ifdef SOCKTAB_NAIVE_ORDER
	/*
	 * The negative control: the order before the October 2025 fix (unlink, then link). A
	 * request a first completion took out of ehash is not unlinked again: only the naive
	 * order of lock_synq_req() completes one twice, and complete_races is to see the two
	 * children that makes, not a crash on the second unlink.
	 */
	if (socktab__ehash_hashed(req))
		socktab__ehash_del_locked(t, req);
	socktab__ehash_insert_locked(t, child);
#else
	/* R117: the child takes the request's place with one store (transition B above). */
	socktab__ehash_replace_locked(t, req, child);
#endif
	socktab__unlock(el);
	inherit_port_locked(net, l, child, head, port, pa);
	socktab__unlock(bl);

	synq_del(req);
	synq_count(socktab__sk_lq(l), req, -1);
	reqof(req)->child = child;
	SOCKTAB__STAT_ADD(net, requests, -1);
	SOCKTAB__STAT_ADD(net, established, 1);
	return child;
}

int socktab_req_promote(struct socktab_sock *req, int state, struct socktab_sock **childp)
{
	struct socktab__bind_prealloc pa;
	struct socktab_sock *l, *child;
	int err;

	if (!is_req(req) || !child_state_ok(state) || !childp)
		return -EINVAL;
	if (socktab__bind_prealloc(&pa))
		return -ENOMEM;
	err = lock_synq_req(req, &l);
	if (err)
		goto out;
	/* tcp_v4_syn_recv_sock: a full accept queue drops the ACK (exit_overflow), the request
	 * stays for the peer's retransmission. */
	err = -EAGAIN;
	if (acceptq_full(socktab__sk_lq(l)))
		goto out_unlock;
	/* The open reference (the accept queue's until socktab_accept() hands it over), the one
	 * the accept queue entry holds, and the caller's. */
	err = -ENOMEM;
	child = promote_locked(l, req, state, 3, &pa);
	if (!child)
		goto out_unlock;
	/* inet_csk_complete_hashdance: into the accept queue (R118). */
	accq_queue_locked(l, req);
	*childp = child;
	err = 0;
out_unlock:
	unlock_listener(l);
out:
	socktab__bind_prealloc_free(&pa); /* what the child's port did not need, or all of it */
	return err;
}

#define REQ_COMPLETE_FLAGS (SOCKTAB_REQ_ABORT_ON_OVERFLOW | SOCKTAB_REQ_ACCEPT)

/*
 * tcp_v4_rcv on a request entry (TCP_NEW_SYN_RECV) with an acceptable final ACK, through
 * tcp_check_req, syn_recv_sock and inet_csk_complete_hashdance, in one call under the
 * listener's lock, so its outcome is that of one instant: the request in no queue (its
 * listener closed, or another thread dropped or completed it), in the accept queue (another
 * thread completed it), or in the SYN queue, where this call completes it or refuses.
 */
int socktab_req_complete(struct socktab_sock *req, int state, unsigned int flags,
			 struct socktab_sock **childp, struct socktab_sock **listenerp,
			 struct socktab_req_counters *cnt)
{
	struct socktab__bind_prealloc pa;
	struct socktab_sock *l, *child = NULL;
	bool accept = flags & SOCKTAB_REQ_ACCEPT, nomem, full;
	int v;

	if (!is_req(req) || !child_state_ok(state) || !childp || (flags & ~REQ_COMPLETE_FLAGS))
		return -EINVAL;
	*childp = NULL;
	if (listenerp)
		*listenerp = NULL;
	nomem = socktab__bind_prealloc(&pa) != 0;
	if (lock_synq_req(req, &l)) {
		/*
		 * In no SYN queue. Completed by another thread: in the accept queue (its child was
		 * written under the listener's lock, which this call took after) or accepted
		 * already (its child was written before the request forgot its listener, and the
		 * acquire load that read NULL orders this read after that). Or dropped: a RST or
		 * timeout on another thread, or its listener's close without migration. The
		 * kernel drops the request and looks the segment up again (tcp_v4_rcv: a closed
		 * listener, a stolen request); what it finds then is the child, or nothing, which
		 * answers an ACK with a reset.
		 */
		v = reqof(req)->child ? SOCKTAB_REQ_STOLEN : SOCKTAB_REQ_RESET;
		goto out;
	}
	/* tcp_v4_syn_recv_sock: a full accept queue (exit_overflow: ListenOverflows) or no
	 * memory for the child (exit_nonewsk) is ListenDrops, and no child. */
	full = acceptq_full(socktab__sk_lq(l));
	if (!full && !nomem)
		child = promote_locked(l, req, state, accept ? 1 : 3, &pa);
	if (!child) {
		if (cnt) {
			cnt->listen_overflows += full;
			cnt->listen_drops++;
		}
		if (!(flags & SOCKTAB_REQ_ABORT_ON_OVERFLOW)) {
			/* tcp_check_req, listen_overflow: the request stays (acked) for the peer's
			 * next ACK. */
			unlock_listener(l);
			v = SOCKTAB_REQ_DROP;
			goto out;
		}
		/* tcp_abort_on_overflow: embryonic_reset, the request dropped (EmbryonicRsts). */
		req_unqueue_locked(l, req);
		unlock_listener(l);
		socktab_sock_put(req); /* the queue's */
		if (cnt)
			cnt->embryonic_rsts++;
		v = SOCKTAB_REQ_RESET;
		goto out;
	}
	if (listenerp) {
		(void)socktab__sock_hold_not_zero(l); /* it listens: a reference is open */
		*listenerp = l;
	}
	if (accept) {
		/* Handed over at once, as socktab_accept() would: the request leaves every
		 * queue, and the child's one reference, the open one, is the caller's. */
		req_forget_listener(req);
		unlock_listener(l);
		socktab_sock_put(req); /* the queue's */
	} else {
		accq_queue_locked(l, req); /* R118 */
		unlock_listener(l);
	}
	*childp = child;
	v = SOCKTAB_REQ_CHILD;
out:
	if (!nomem)
		socktab__bind_prealloc_free(&pa);
	return v;
}

struct socktab_sock *socktab_req_cookie_child(struct socktab_sock *listener,
					      const struct sockaddr *local,
					      const struct sockaddr *remote, socklen_t len,
					      int dif, int sdif, int state)
{
	struct socktab__bind_prealloc pa;
	struct socktab_sock *child, *node;
	struct socktab__listenq *q;
	struct socktab_net *net;
	struct syn_key k;
	int err = -EINVAL;

	if (!local || !remote || dif < 0 || sdif < 0 || !child_state_ok(state) ||
	    lock_listener(listener, &q)) {
		errno = EINVAL;
		return NULL;
	}
	if (syn_key(listener, local, remote, len, dif, sdif, &k))
		goto out;
	err = -EAGAIN;
	if (acceptq_full(q))
		goto out;
	net = socktab__sk_net(listener);
	err = -ENOMEM;
	/* The accept queue's entry: a request entry that never enters ehash (the kernel's
	 * cookie_v4_check allocates one too). */
	node = socktab__pool_alloc(socktab__req_pool(net, listener->family));
	if (!node)
		goto out;
	if (socktab__bind_prealloc(&pa)) {
		socktab__pool_free_rcu(node);
		goto out;
	}
	child = child_alloc(net, listener, state, 3);
	if (!child) {
		socktab__bind_prealloc_free(&pa);
		socktab__pool_free_rcu(node);
		goto out;
	}
	set_key(child, &k);
	err = hash_new_entry(net, listener, child, true, &pa);
	socktab__bind_prealloc_free(&pa);
	if (err) {
		child_discard(child);
		socktab__pool_free_rcu(node);
		goto out;
	}
	atomic_store_explicit(&node->node.pprev, NULL, memory_order_relaxed);
	set_key(node, &k);
	WR(node->state, SOCKTAB_TCP_NEW_SYN_RECV);
	atomic_store_explicit(&reqof(node)->listener, listener, memory_order_relaxed);
	reqof(node)->child = child;
	reqof(node)->num_timeout = 0;
	atomic_store_explicit(&node->refcnt, 1, memory_order_release);
	accq_queue_locked(listener, node);
	SOCKTAB__STAT_ADD(net, established, 1);
	unlock_listener(listener);
	return child;
out:
	unlock_listener(listener);
	errno = -err;
	return NULL;
}

/* ---- accept() ---- */

struct socktab_sock *socktab_accept(struct socktab_sock *listener)
{
	for (;;) {
		struct socktab_sock *node, *child;
		struct socktab__listenq *q;

		if (lock_listener(listener, &q)) {
			errno = EINVAL;
			return NULL;
		}
		node = accq_pop(q);
		if (!node) {
			unlock_listener(listener);
			errno = EAGAIN;
			return NULL;
		}
		cnt_add(&q->ack_backlog, -1); /* sk_acceptq_removed */
		req_forget_listener(node);
		child = reqof(node)->child;
		unlock_listener(listener);
		socktab_sock_put(node);
		if (RD(child->state) == SOCKTAB__FREE) {
			/* The stack closed it before it was accepted: the queue's reference was
			 * all that kept it. */
			socktab_sock_put(child);
			continue;
		}
		socktab_sock_put(child); /* the entry's; the caller has the open one now */
		return child;
	}
}

int socktab_listen_info(struct socktab_sock *listener, struct socktab_listen_info *info)
{
	struct socktab__listenq *q;

	if (!info || lock_listener(listener, &q))
		return -EINVAL;
	info->qlen = RD(q->qlen);
	info->young = RD(q->young);
	info->ack_backlog = RD(q->ack_backlog);
	info->max_ack_backlog = RD(q->max_ack_backlog);
	unlock_listener(listener);
	return 0;
}

/* ---- a listener's stop and tcp_migrate_req ---- */

/*
 * reuseport_stop_listen(): with tcp_migrate_req a closing member keeps its group for the
 * migration, which chooses among the members that still listen; the kernel's detach has moved
 * the last member into the closing one's slot, and so does this copy. Caller holds @sk's lock.
 */
static void migrate_targets_locked(struct socktab_sock *sk, struct socktab__orphans *o)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	uint32_t n, j = 0;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!RD(net->tcp_migrate_req)) /* R120: the sysctl at the close decides */
		return;
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	n = g ? atomic_load_explicit(&g->num, memory_order_relaxed) : 0;
	/* R121: no other member, no migration. */
	if (n >= 2 && (o->targets = calloc(n - 1, sizeof(*o->targets)))) {
		struct socktab_sock *last = atomic_load_explicit(&g->socks[n - 1],
								 memory_order_relaxed);

		for (uint32_t i = 0; i < n - 1; i++) {
			struct socktab_sock *m = atomic_load_explicit(&g->socks[i],
								      memory_order_relaxed);

			if (m == sk)
				m = last;
			if (!socktab__sock_hold_not_zero(m))
				continue;
			o->targets[j++] = m;
			o->incpu += socktab__sk_incoming_cpu(m) >= 0;
		}
		o->ntargets = j;
	}
	socktab__unlock(&net->reuseport_lock);
}

void socktab__listen_stop_locked(struct socktab_sock *sk, struct socktab__orphans *o)
{
	struct socktab__listenq *q = socktab__sk_lq(sk);
	struct socktab_sock *r;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	memset(o, 0, sizeof(*o));
	if (!q || (!q->synq && !q->acc_head))
		return;
	migrate_targets_locked(sk, o);
	/* The requests: off the queue, in transit (the close owns them now). */
	while ((r = q->synq)) {
		synq_del(r);
		req_set_where(r, SOCKTAB__REQ_TRANSIT);
		socktab__sk_bl(r)->next = o->synq;
		o->synq = r;
	}
	struct socktab_sock **tail = &o->accq;

	while ((r = accq_pop(q))) {
		req_set_where(r, SOCKTAB__REQ_TRANSIT);
		*tail = r;
		tail = &socktab__sk_bl(r)->next;
	}
	WR(q->qlen, 0);
	WR(q->young, 0);
	WR(q->ack_backlog, 0);
}

/* reuseport_select_sock_by_hash() over the targets, with the closing thread's CPU for
 * SO_INCOMING_CPU (R122). */
static struct socktab_sock *migrate_pick(struct socktab__orphans *o, uint32_t hash, int *cpu)
{
	struct socktab_sock *first = NULL;
	uint32_t n = o->ntargets, i, j;

	if (!n)
		return NULL;
	i = j = (uint32_t)(((uint64_t)hash * n) >> 32);
	do {
		struct socktab_sock *m = o->targets[i];

		if (!o->incpu || socktab__incpu_match(socktab__sk_incoming_cpu(m), cpu))
			return m;
		if (!first)
			first = m;
		if (++i >= n)
			i = 0;
	} while (i != j);
	return first;
}

/* Lock @m if it still listens (0), else leave it unlocked (-1): a member that closed meanwhile
 * refuses the migration (inet_csk_reqsk_queue_add, R123). */
static int lock_listening(struct socktab_sock *m)
{
	socktab__lock(socktab__sk_lock(m));
	if (RD(m->state) == SOCKTAB_TCP_LISTEN && socktab__sk_lq(m))
		return 0;
	socktab__unlock(socktab__sk_lock(m));
	return -1;
}

/* A request that found no new listener: out of ehash, back to the pool once unreferenced. */
static void req_give_up(struct socktab_sock *req)
{
	struct socktab_net *net = socktab__sk_net(req);

	socktab__ehash_remove(net->tab, req);
	SOCKTAB__STAT_ADD(net, requests, -1);
	req_forget_listener(req);
	socktab_sock_put(req);
}

/* inet_child_forget(): close an unaccepted child at once, abortively (the kernel sends the peer
 * a RST): out of ehash and its port, as socktab_close() with SO_LINGER {1, 0} does, then drop
 * its open reference and the accept-queue entry's. A child the stack closed already only loses
 * the entry's reference. */
static void child_forget(struct socktab_sock *child)
{
	struct socktab_net *net = socktab__sk_net(child);
	pthread_mutex_t *l = socktab__sk_lock(child);
	bool open;

	socktab__lock(l);
	open = RD(child->state) != SOCKTAB__FREE;
	if (open) {
		if (socktab__ehash_hashed(child)) {
			socktab__ehash_remove(net->tab, child);
			SOCKTAB__STAT_ADD(net, established, -1);
		}
		socktab__put_port(child);
		WR(child->state, SOCKTAB__FREE);
	}
	socktab__unlock(l);
	if (open)
		socktab_sock_put(child);
	socktab_sock_put(child);
}

/* Move request @req (in transit) to @m's SYN queue (R124). Caller holds @m's lock. */
static void req_migrate_locked(struct socktab_sock *m, struct socktab_sock *req)
{
	struct socktab__listenq *q = socktab__sk_lq(m);

	SOCKTAB__ASSERT_SK_LOCKED(m);
#ifdef SOCKTAB_NAIVE_ORDER
	/* The negative control: unlink the request and link it again. */
	{
		struct socktab__tables *t = socktab__sk_net(req)->tab;
		pthread_mutex_t *el = socktab__ehash_lock(t, RD(req->hash));

		socktab__lock(el);
		socktab__ehash_del_locked(t, req);
		socktab__ehash_insert_locked(t, req);
		socktab__unlock(el);
	}
#endif
	/* Transition C: the entry stays in ehash; one store names its new listener. */
	atomic_store_explicit(&reqof(req)->listener, m, memory_order_release);
	synq_add(q, req);
	req_set_where(req, SOCKTAB__REQ_SYNQ);
	synq_count(q, req, 1);
}

void socktab__listen_stop_finish(struct socktab__orphans *o)
{
	struct socktab_sock *r, *next;
	int cpu = SOCKTAB__CPU_UNASKED;

	for (r = o->synq; r; r = next) {
		struct socktab_sock *m = migrate_pick(o, RD(r->hash), &cpu);

		next = socktab__sk_bl(r)->next;
		socktab__sk_bl(r)->next = NULL;
		if (m && !lock_listening(m)) {
			req_migrate_locked(m, r);
			socktab__unlock(socktab__sk_lock(m));
		} else {
			req_give_up(r);
		}
	}
	for (r = o->accq; r; r = next) {
		struct socktab_sock *child = reqof(r)->child;
		struct socktab_sock *m = migrate_pick(o, RD(child->hash), &cpu);

		next = socktab__sk_bl(r)->next;
		socktab__sk_bl(r)->next = NULL;
		if (m && !lock_listening(m)) {
			/* The child stays in ehash; the kernel queues it whatever the new
			 * listener's backlog (inet_csk_listen_stop -> inet_csk_reqsk_queue_add). */
			atomic_store_explicit(&reqof(r)->listener, m, memory_order_release);
			accq_queue_locked(m, r);
			socktab__unlock(socktab__sk_lock(m));
		} else {
			req_forget_listener(r);
			child_forget(child);
			socktab_sock_put(r);
		}
	}
	for (uint32_t i = 0; i < o->ntargets; i++)
		socktab_sock_put(o->targets[i]);
	free(o->targets);
	memset(o, 0, sizeof(*o));
}
