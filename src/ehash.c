/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ehash: the established table (R11, R19-R28).
 *
 * Key: (net, local address, local port, remote address, remote port), IPv4 or IPv6 (R5: a
 * dual-stack socket talking to a v4-mapped peer is keyed and found as IPv4). Slot = hash & mask,
 * hash = keyed jhash of the addresses and remote port, plus the local port added after hashing
 * (R3), so consecutive local ports land in consecutive slots.
 * Each slot is an hlist_nulls head whose chain ends in the slot's own nulls value, and beside it
 * a hint naming the chain's second entry (nulls.h), rewritten at the choke points below.
 * Writers hold the striped lock of the hash (socktab__ehash_lock()); readers take none (R21):
 * they filter on the cached hash, compare the key and restart when the walk ends on another
 * slot's nulls value (ehash.h); lookup.c pins a referenced lookup's match with
 * increment-if-not-zero (none inside the caller's RCU section). A socket
 * goes back to its pool only after a grace period, so the key that matched was that socket's at
 * that instant, and the answer is right as of then; the kernel's re-check after the reference
 * (R20) guards against reuse of the memory, which cannot happen here. Entries: SYN_SENT and
 * later states, and TIME_WAIT entries (R25).
 */
#include "dev.h"
#include "ehash.h"
#include "portmap.h"
#include "timewait.h"

bool socktab__ehash_hashed(const struct socktab_sock *sk)
{
	return socktab__hnode_hashed(&sk->node);
}

/*
 * The choke points of ehash membership: every link, replacement and unlink of an entry goes
 * through them, so the connect() port index (portmap.c) and each slot's second-entry hint
 * (nulls.h) are kept here.
 */

/* Rewrite the hint of @hash's slot after its chain changed: the first entry's next link, or the
 * chain's nulls marker when it is empty. Written only when it changes, so a slot whose first two
 * entries stay (an unlink further down) is not dirtied. Caller holds the ehash lock of @hash. */
static void slot_second_locked(struct socktab__tables *t, uint32_t hash)
{
	struct socktab__eslot *s = &t->ehash[hash & t->ehash_mask];
	uintptr_t f = socktab__chead_load(&s->head, memory_order_relaxed);
	uint32_t v = socktab__chead_enc(
		socktab__is_nulls(f)
			? f
			: atomic_load_explicit(&socktab__node_sk(f)->node.next, memory_order_relaxed));

	/* Release: a reader that acquires the hint may load the entry's slab header (lookup.c). */
	if (atomic_load_explicit(&s->second, memory_order_relaxed) != v)
		atomic_store_explicit(&s->second, v, memory_order_release);
}

/* Caller holds the ehash lock of sk->hash; sk's key and hash are written. */
void socktab__ehash_insert_locked(struct socktab__tables *t, struct socktab_sock *sk)
{
	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(t, RD(sk->hash)));
	socktab__hnode_add_chead_rcu(&sk->node, &t->ehash[RD(sk->hash) & t->ehash_mask].head);
	slot_second_locked(t, RD(sk->hash));
	socktab__portmap_ehash_add_locked(sk);
}

/*
 * @new takes hashed @old's place in its chain with one store (R22), so a reader finds one or
 * the other and never neither: the sk -> TIME_WAIT swap and the TIME_WAIT takeover. Both have
 * the same 4-tuple and hash; the port index changes only when their devices differ. Caller holds
 * the ehash lock of the hash; @new's key and hash are written.
 */
void socktab__ehash_replace_locked(struct socktab__tables *t, struct socktab_sock *old,
				   struct socktab_sock *new)
{
	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(t, RD(old->hash)));
	socktab__hnode_replace_rcu(&old->node, &new->node);
	slot_second_locked(t, RD(old->hash));
	if (RD(old->bound_dev_if) != RD(new->bound_dev_if)) {
		socktab__portmap_ehash_add_locked(new);
		socktab__portmap_ehash_del_locked(t, old);
	} else {
		socktab__portmap_ehash_pass_locked(old, new);
	}
}

/* Unlink hashed @sk. Caller holds the ehash lock of sk->hash. */
void socktab__ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk)
{
	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(t, RD(sk->hash)));
	socktab__hnode_del_rcu(&sk->node);
	slot_second_locked(t, RD(sk->hash));
	socktab__portmap_ehash_del_locked(t, sk);
}

/* Takes the ehash lock. */
void socktab__ehash_remove(struct socktab__tables *t, struct socktab_sock *sk)
{
	pthread_mutex_t *l = socktab__ehash_lock(t, RD(sk->hash));

	socktab__lock(l);
	if (socktab__hnode_hashed(&sk->node))
		socktab__ehash_del_locked(t, sk);
	socktab__unlock(l);
}

uint32_t socktab__ehash_key6(struct socktab_net *net, const struct in6_addr *saddr, uint16_t sport,
			     const struct in6_addr *daddr, uint16_t dport, int dif, int sdif,
			     struct socktab__lookup_key *k)
{
	uint16_t lport = ntohs(dport);

	if (socktab__v6_is_mapped(saddr) && socktab__v6_is_mapped(daddr))
		return socktab__ehash_key4(net, saddr->s6_addr32[3], sport, daddr->s6_addr32[3],
					   dport, dif, sdif, k);
	k->v6 = true;
	k->ports = (uint32_t)sport | ((uint32_t)lport << 16);
	k->dev = socktab__dev_key(net, dif, sdif);
	memcpy(k->remote, saddr, 16);
	memcpy(k->local, daddr, 16);
	return socktab__ehashfn6(net, daddr, lport, saddr, sport);
}

/* Does the chain hold an entry with sk's 4-tuple on @lport (other than sk)? Key per R26. */
static inline bool same_tuple(const struct socktab_sock *sk2, const struct socktab_sock *sk,
			      uint32_t ports, const struct socktab__dev_key *d)
{
	struct socktab_net *net = socktab__sk_net(sk);

	if (RD(sk->v4key))
		return socktab__match4(sk2, net, RD(sk->addrpair), ports, d);
	const struct socktab__v6key *k = socktab__sk_v6(sk);
	uint64_t remote[2] = { RD(k->daddr[0]), RD(k->daddr[1]) };
	uint64_t local[2] = { RD(k->saddr[0]), RD(k->saddr[1]) };

	return socktab__match6(sk2, net, remote, local, ports, d);
}

/*
 * The device key of @sk's own 4-tuple check (__inet_check_established, R94): dif = its bound
 * device, sdif = that device's L3 master, so one 4-tuple may exist once per device.
 */
static struct socktab__dev_key sk_dev_key(struct socktab_net *net, const struct socktab_sock *sk)
{
	int dif = (int)RD(sk->bound_dev_if), sdif = 0;

	if (dif) {
		socktab__rcu_read_lock();
		sdif = socktab__l3mdev_master(socktab__ifcfg_rcu(net), dif);
		socktab__rcu_read_unlock();
	}
	return socktab__dev_key(net, dif, sdif);
}

/*
 * R24: lockless pre-check. SOCKTAB__NOT_UNIQUE if a live (non-TIME_WAIT) entry has the 4-tuple;
 * otherwise SOCKTAB__UNIQUE, meaning "worth a locked check". Caller is inside an RCU read-side
 * section. It only filters: no restart is needed, the locked check decides.
 */
int socktab__check_established_rcu(struct socktab_net *net, struct socktab_sock *sk,
				   uint16_t lport, uint32_t hash)
{
	struct socktab__tables *t = net->tab;
	uint32_t ports = (uint32_t)socktab__sk_dport(sk) | ((uint32_t)lport << 16);
	struct socktab__dev_key d = sk_dev_key(net, sk);

	SOCKTAB__ASSERT_RCU();
	uintptr_t p;

	socktab__chlist_for_each(p, &t->ehash[hash & t->ehash_mask].head, memory_order_acquire) {
		struct socktab_sock *sk2 = socktab__node_sk(p);

		if (RD(sk2->hash) != hash || !same_tuple(sk2, sk, ports, &d))
			continue;
		if (RD(sk2->state) == SOCKTAB_TCP_TIME_WAIT)
			break;
		return SOCKTAB__NOT_UNIQUE;
	}
	return SOCKTAB__UNIQUE;
}

/*
 * R56: locked uniqueness check of sk's 4-tuple on @lport. If unique, sets sk's local port and
 * hash and inserts sk into ehash (publishing it), and unlinks a matching TIME_WAIT entry that may
 * be taken over (R61; an expired one always may) and returns it in *twp with a reference (the
 * caller finishes the takeover under the bhash lock of @lport and drops the reference).
 * @port_was_bound: the caller bound the port (R53: no tw_reuse delay).
 */
static int check_established(struct socktab_net *net, struct socktab_sock *sk, uint16_t lport,
			     uint32_t hash, bool port_was_bound, struct socktab_sock **twp)
{
	struct socktab__tables *t = net->tab;
	pthread_mutex_t *l = socktab__ehash_lock(t, hash);
	uint32_t ports = (uint32_t)socktab__sk_dport(sk) | ((uint32_t)lport << 16);
	struct socktab__dev_key d = sk_dev_key(net, sk);
	struct socktab_sock *tw = NULL;

	*twp = NULL;
	socktab__lock(l);
	uintptr_t p;

	socktab__chlist_for_each(p, &t->ehash[hash & t->ehash_mask].head, memory_order_relaxed) {
		struct socktab_sock *sk2 = socktab__node_sk(p);

		if (RD(sk2->hash) != hash || !same_tuple(sk2, sk, ports, &d))
			continue;
		/* Taking the entry over needs a reference (R61): it pins this incarnation until
		 * the caller has descheduled it, even if the reaper drops the list's reference. */
		if (RD(sk2->state) == SOCKTAB_TCP_TIME_WAIT &&
		    socktab__tw_unique(net, sk2, port_was_bound) &&
		    socktab__sock_hold_not_zero(sk2)) {
			tw = sk2;
			break;
		}
		socktab__unlock(l);
		return SOCKTAB__NOT_UNIQUE;
	}
	WR(sk->portpair, ports);
	WR(sk->hash, hash);
#ifdef SOCKTAB_NAIVE_ORDER
	socktab__ehash_insert_locked(t, sk);
	if (tw)
		socktab__ehash_del_locked(t, tw);
#else
	/* The new connection takes the entry's place (inet_ehash_insert with an osk): inserting
	 * at the head first and unlinking the entry after would leave a reader past the head,
	 * standing between the two, with neither. */
	if (tw)
		socktab__ehash_replace_locked(t, tw, sk);
	else
		socktab__ehash_insert_locked(t, sk);
#endif
	socktab__unlock(l);
	*twp = tw;
	return SOCKTAB__UNIQUE;
}

/* check_established() for connect(), which holds the bhash lock of @lport across its port
 * choice and the check, and finishes a takeover under it. */
int socktab__check_established_locked(struct socktab_net *net, struct socktab_sock *sk,
				      uint16_t lport, uint32_t hash, bool port_was_bound,
				      struct socktab_sock **twp)
{
	SOCKTAB__ASSERT_LOCKED(socktab__bhash_lock(net, lport)); /* a TIME_WAIT taken over leaves it */
	return check_established(net, sk, lport, hash, port_was_bound, twp);
}

int socktab__ehash_insert_passive(struct socktab_net *net, struct socktab_sock *sk, uint16_t lport,
				  uint32_t hash, struct socktab_sock **twp)
{
	return check_established(net, sk, lport, hash, true, twp);
}
