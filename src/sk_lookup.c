/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The dispatch hook: the kernel's BPF_PROG_TYPE_SK_LOOKUP attach point (net/core/filter.c,
 * include/linux/filter.h, kernel/bpf/net_namespace.c) with C callbacks in place of BPF programs.
 * Rules R125-R131 (docs/rules.md).
 *
 * Where it runs (R125): listen.c calls socktab__sk_lookup_run_rcu() first thing in the listener
 * lookup (__inet_lookup_listener / inet6_lookup_listener: after the established table missed,
 * before lhash2); udp.c after the exact-address hash2 pass unless that found a connected socket
 * (__udp4_lib_lookup / __udp6_lib_lookup: after hash4 and that pass, before the result of the
 * pass and the wildcard one). Both test socktab__sk_lookup_on() first, so a net without callbacks
 * pays one test of a byte of the net's first line (which the hashes read anyway) and one
 * predictable branch there, and nothing on an established hit.
 *
 * The list: a net holds an array of (callback, argument, id), replaced whole under the net's
 * settings lock (attach appends, detach removes) and freed after a grace period; a lookup loads
 * the pointer once and runs that array to its end, as the kernel's run array is loaded once per
 * lookup. At most SOCKTAB_SK_LOOKUP_MAX callbacks (netns_bpf_max_progs: 64).
 *
 * The run (R127, BPF_PROG_SK_LOOKUP_RUN_ARRAY): every callback runs, in attach order. Before
 * each, the context's selection is reset to the last one a callback made and returned PASS for;
 * a PASS with a selection replaces it; a DROP only marks the packet dropped. At the end a
 * selection wins (PASS with that socket), else a DROP by any callback drops the packet, else
 * it passes to the tables. So a later callback sees the earlier selection and may replace it
 * (SOCKTAB_SK_LOOKUP_F_REPLACE); a selection made by a callback that then returns DROP is
 * forgotten.
 *
 * Drop (R128): bpf_sk_lookup_run_v4/v6 turn it into ERR_PTR(-ECONNREFUSED), which the listener
 * and UDP lookups return as "no socket" without looking further: the caller answers as for a
 * closed port.
 *
 * A selection (R129, inet_lookup_run_sk_lookup): with the no-reuseport flag, or a socket in no
 * group, the packet goes to it; otherwise to the member its group selects for the table's hash
 * of the 4-tuple (the group's selector first, R110), as after any other match.
 *
 * Assign (R126, bpf_sk_lookup_assign): the kernel's checks in its order, with socktab's
 * sockets: a context a running callback was given (the kernel's verifier makes sure of that;
 * here the thread's runs in progress are searched, so a copy or a caller's own struct is
 * -EINVAL before anything behind its public fields is read); known flags; an RCU-freed, hashed socket (the kernel refuses refcounted ones: a TCP
 * socket that never listened, an unbound UDP socket, TIME_WAIT and request sockets); TCP in
 * LISTEN, UDP unconnected (TCP_CLOSE); the packet's protocol; its family (an AF_INET6 socket
 * without IPV6_V6ONLY takes IPv4); no selection yet unless REPLACE. Departure: a socket of
 * another net is refused with -EINVAL (the kernel's sockmaps may hold one; socktab's tables of
 * another net are not this lookup's).
 *
 * Callbacks run inside the lookup's read-side section; what they may call is in
 * docs/concurrency.md. socktab_sk_lookup_detach() waits for a grace period, so when it returns
 * no lookup still runs the callback it removed.
 */
#include <stdlib.h>

#include "reuseport.h"
#include "sk_lookup.h"

_Static_assert(offsetof(struct socktab_net, sk_lookup_on) < 64,
	       "the hook's flag shares the first line of the net with the hash secrets");

/* The run's own state beside what a callback sees: the selection is kept here, so a callback
 * that writes ctx->sk selects nothing. */
struct sk_lookup_kern {
	struct socktab_sk_lookup pub;
	struct socktab_sock *selected;
	bool no_reuseport;
	struct socktab_net *net;
	struct sk_lookup_kern *outer;      /* the run this one is nested in (a callback's lookup) */
};

/*
 * The runs in progress on this thread, innermost first: a context socktab_sk_lookup_assign()
 * is given is one of theirs, or it is none a lookup made (a copy, or a struct the caller
 * filled in) and has nothing behind its public fields to read.
 */
static _Thread_local struct sk_lookup_kern *runs __attribute__((tls_model("initial-exec")));

static struct sk_lookup_kern *run_of(const struct socktab_sk_lookup *ctx)
{
	for (struct sk_lookup_kern *k = runs; k; k = k->outer)
		if (&k->pub == ctx)
			return k;
	return NULL;
}

static void array_free_rcu(struct rcu_head *head)
{
	struct socktab__sk_lookup_array *a =
		caa_container_of(head, struct socktab__sk_lookup_array, rcu);

	socktab__rcu_cb_enter(a);
	free(a);
}

int socktab_sk_lookup_attach(struct socktab_net *net, socktab_sk_lookup_fn fn, void *arg)
{
	struct socktab__sk_lookup_array *old, *a;
	uint32_t n;
	int id;

	if (!net || !fn)
		return -EINVAL;
	socktab__lock(&net->settings_lock);
	old = atomic_load_explicit(&net->sk_lookup, memory_order_relaxed);
	n = 0;
	for (uint32_t i = 0; old && i < old->n; i++)
		n += old->cb[i].id != 0;
	if (n >= SOCKTAB_SK_LOOKUP_MAX) {
		socktab__unlock(&net->settings_lock);
		return -E2BIG;
	}
	a = malloc(sizeof(*a) + (n + 1) * sizeof(a->cb[0]));
	if (!a) {
		socktab__unlock(&net->settings_lock);
		return -ENOMEM;
	}
	/* The attachments left, without the slots detached in place. */
	for (uint32_t i = 0, j = 0; old && i < old->n; i++)
		if (old->cb[i].id)
			a->cb[j++] = old->cb[i];
	/* Ids count up and are never given twice in a net's life (wrapping after 2^31 - 1). */
	id = net->sk_lookup_next_id == INT32_MAX ? 1 : net->sk_lookup_next_id + 1;
	net->sk_lookup_next_id = id;
	atomic_init(&a->cb[n].fn, fn);
	a->cb[n].arg = arg;
	a->cb[n].id = id;
	a->n = n + 1;
	/* Publishes the entries written above to every lookup that loads the pointer. */
	atomic_store_explicit(&net->sk_lookup, a, memory_order_release);
	atomic_store_explicit(&net->sk_lookup_on, 1, memory_order_relaxed);
	socktab__unlock(&net->settings_lock);
	if (old)
		socktab__call_rcu(old, &old->rcu, array_free_rcu);
	return id;
}

static int detach(struct socktab_net *net, int id)
{
	struct socktab__sk_lookup_array *old, *a = NULL;
	uint32_t i, n;

	socktab__lock(&net->settings_lock);
	old = atomic_load_explicit(&net->sk_lookup, memory_order_relaxed);
	n = old ? old->n : 0;
	for (i = 0; i < n && old->cb[i].id != id; i++)
		;
	if (i == n) {
		socktab__unlock(&net->settings_lock);
		return -ENOENT;
	}
	if (n > 1) {
		a = malloc(sizeof(*a) + (n - 1) * sizeof(a->cb[0]));
		if (!a) {
			/* No memory for a shorter list: the slot stays, dead, as the kernel's
			 * bpf_prog_array_delete_safe_at() leaves it; lookups skip it, and the next
			 * attach drops it. A detach never fails for want of memory. */
			old->cb[i].id = 0;
			atomic_store_explicit(&old->cb[i].fn, NULL, memory_order_relaxed);
			socktab__unlock(&net->settings_lock);
			socktab__synchronize_rcu();
			return 0;
		}
		memcpy(a->cb, old->cb, i * sizeof(a->cb[0]));
		memcpy(a->cb + i, old->cb + i + 1, (n - 1 - i) * sizeof(a->cb[0]));
		a->n = n - 1;
	}
	/* The last one gone: NULL, and lookups are back to the one untaken branch. */
	if (!a)
		atomic_store_explicit(&net->sk_lookup_on, 0, memory_order_relaxed);
	atomic_store_explicit(&net->sk_lookup, a, memory_order_release);
	socktab__unlock(&net->settings_lock);
#ifdef SOCKTAB_NAIVE_ORDER
	/* The negative control: return without waiting, so a callback may still run after its
	 * detach returned (tests/unit/test_sk_lookup.c attach_races_lookups sees it). */
	socktab__call_rcu(old, &old->rcu, array_free_rcu);
#else
	/* Lookups that loaded @old may still be calling the callback: wait for them. */
	socktab__synchronize_rcu();
	free(old);
#endif
	return 0;
}

int socktab_sk_lookup_detach(struct socktab_net *net, int id)
{
	bool left;
	int err;

	if (!net)
		return -EINVAL;
	/* An online thread passes a quiescent state here; a section of the caller's own would
	 * make the wait below wait for itself. */
	left = socktab__rcu_wait_begin();
	err = socktab__rcu_read_ongoing() ? -EDEADLK : detach(net, id);
	socktab__rcu_wait_end(left);
	return err;
}

void socktab__sk_lookup_free(struct socktab_net *net)
{
	free(atomic_load_explicit(&net->sk_lookup, memory_order_relaxed));
	atomic_store_explicit(&net->sk_lookup, NULL, memory_order_relaxed);
}

/* A socket the kernel would not call refcounted (SOCK_RCU_FREE): a listener, or a UDP socket
 * with a port; both are in a table. Closed sockets are FREE and in none. */
static bool rcu_freed_hashed(const struct socktab_sock *sk)
{
	uint8_t st = RD(sk->state);

	if (socktab__sk_is_tw(sk) || st == SOCKTAB__FREE)
		return false;
	if (socktab__sk_proto(sk) == SOCKTAB_UDP)
		return socktab__sk_num(sk) != 0;
	return st == SOCKTAB_TCP_LISTEN;
}

int socktab_sk_lookup_assign(struct socktab_sk_lookup *ctx, struct socktab_sock *sk,
			     unsigned int flags)
{
	struct sk_lookup_kern *k = ctx ? run_of(ctx) : NULL;

	if (!k || (flags & ~(SOCKTAB_SK_LOOKUP_F_REPLACE | SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT)))
		return -EINVAL;
	if (sk && socktab__sk_net(sk) != k->net)
		return -EINVAL;
	if (sk && !rcu_freed_hashed(sk))
		return -ESOCKTNOSUPPORT; /* the kernel's "non-RCU freed sockets" */
	if (sk && socktab__sk_proto(sk) == SOCKTAB_TCP && RD(sk->state) != SOCKTAB_TCP_LISTEN)
		return -ESOCKTNOSUPPORT;
	if (sk && socktab__sk_proto(sk) == SOCKTAB_UDP && RD(sk->state) != SOCKTAB_TCP_CLOSE)
		return -ESOCKTNOSUPPORT; /* connected */
	if (sk && socktab__sk_proto(sk) != k->pub.protocol)
		return -EPROTOTYPE;
	if (sk && sk->family != k->pub.family &&
	    (sk->family == AF_INET || socktab__ipv6_only(sk)))
		return -EAFNOSUPPORT;
	if (k->selected && !(flags & SOCKTAB_SK_LOOKUP_F_REPLACE))
		return -EEXIST;
	k->selected = sk;
	k->no_reuseport = flags & SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT;
	k->pub.sk = sk;
	return 0;
}

struct socktab_sock *socktab__sk_lookup_run_rcu(struct socktab_net *net, int proto, bool v6,
						const void *saddr, uint16_t sport,
						const void *daddr, uint16_t hnum, int dif,
						uint32_t rp_hash)
{
	struct socktab__sk_lookup_array *a =
		atomic_load_explicit(&net->sk_lookup, memory_order_acquire);
	struct socktab_sk_lookup pkt = { .family = v6 ? AF_INET6 : AF_INET, .protocol = proto,
					 .remote_port = sport, .local_port = hnum,
					 .ingress_ifindex = dif };
	struct socktab_sock *selected = NULL, *pick;
	struct sk_lookup_kern k = { .net = net, .outer = runs };
	bool no_reuseport = false, all_pass = true;
	int cpu = SOCKTAB__CPU_UNASKED;

	SOCKTAB__ASSERT_RCU();
	if (!a)
		return NULL;
	if (v6) {
		memcpy(&pkt.remote_ip6, saddr, sizeof(pkt.remote_ip6));
		memcpy(&pkt.local_ip6, daddr, sizeof(pkt.local_ip6));
	} else {
		memcpy(&pkt.remote_ip4, saddr, 4);
		memcpy(&pkt.local_ip4, daddr, 4);
	}
	runs = &k; /* until the last callback returns: the context is a lookup's */
	socktab__dispatch_depth++;
	for (uint32_t i = 0; i < a->n; i++) {
		int ret;

		/* The packet fields afresh, and the most recent selection restored. */
		k.pub = pkt;
		k.pub.sk = selected;
		k.selected = selected;
		k.no_reuseport = no_reuseport;
		socktab_sk_lookup_fn fn = atomic_load_explicit(&a->cb[i].fn, memory_order_relaxed);

		if (!fn)
			continue; /* detached in place */
		ret = fn(&k.pub, a->cb[i].arg);
		if (ret == SOCKTAB_SK_PASS && k.selected) {
			selected = k.selected;
			no_reuseport = k.no_reuseport;
		} else if (ret == SOCKTAB_SK_DROP) {
			all_pass = false;
		}
	}
	runs = k.outer;
	socktab__dispatch_depth--;
	if (!all_pass && !selected)
		return SOCKTAB__SK_LOOKUP_DROP;
	if (!selected || no_reuseport || !RD(selected->reuseport))
		return selected;
	pick = socktab__reuseport_select_rcu(selected, rp_hash, &cpu);
	return pick ? pick : selected;
}
