/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Network namespaces (struct socktab_net) and their tables.
 *
 * A net holds the settings the kernel keeps per netns (port range, reserved ports, tw_reuse...),
 * its hash secrets and netns mix (R1, R6), the connect() perturbation table (R54), a socket pool
 * and the TIME_WAIT list. Tables (ehash, bhash, bhash2) are either private or shared with other
 * nets (kernel: tcp_child_ehash_entries, R13); once tables are shared every key also compares
 * the net, so sharing changes only the layout, never an outcome.
 *
 * Departure from the kernel: the port-offset SipHash key (net_secret, R10) is per net, not global,
 * so two nets do not share an offset stream; nothing observable depends on it.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "bind.h"
#include "dev.h"
#include "layout.h"
#include "rss.h"
#include "sk_lookup.h"
#include "timewait.h"
#include "udp.h"

static uint64_t default_clock(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void socktab_net_params_init(struct socktab_net_params *p)
{
	if (!p)
		return;
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	p->ehash_entries = 65536;
	p->ehash_locks = 1024;
	p->bhash_entries = 65536;
	p->port_low = 32768;
	p->port_high = 60999;
	p->unprivileged_port_start = 1024;
	p->tw_reuse = 2;
	p->tw_reuse_delay_ms = 1000;
	p->tw_len_ms = 60000;
	p->tcp_timestamps = 1;
	p->privileged = 1;
	p->variant = SOCKTAB_VARIANT_SOCKTAB;
	p->rcu_precheck = -1;
	p->lport_hash_inside = -1;
	p->udp_hash_entries = 16384; /* the kernel's global UDP table on the reference machine (R17) */
	p->udp_hash4 = 1;
	p->net_raw = 1;
}

/* The largest table sizes socktab_net_new() accepts (socktab/net.h). */
#define EHASH_MAX (1u << 24)
#define BHASH_MAX 65536u
#define UDP_HASH_MAX 65536u
#define UDP_HASH4_MAX (1u << 24)
#define RESERVE_MAX (1u << 24) /* reserve_socks and reserve_tw, each */

/* The power of two at or above @v, for 1 <= v <= 1u << 31 (params_valid() keeps every size far
 * below that; a larger one would need a bit the result does not have). */
static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	assert(v <= (1u << 31));
	while (r < v)
		r <<= 1;
	return r;
}

static void tables_free(struct socktab__tables *t)
{
	if (!t)
		return;
	socktab__stripes_free(&t->ehash_locks);
	socktab__stripes_free(&t->bhash_locks);
	socktab__stripes_free(&t->bhash2_locks);
	socktab__stripes_free(&t->lhash2_locks);
	free(t->ehash);
	free(t->bhash);
	free(t->bhash2);
	free(t->lhash2);
	free(t);
}

/* Reserved families: 0, 1 or 2. */
static uint32_t reserve_families(const struct socktab_net_params *p)
{
	if (!p->reserve_socks && !p->reserve_tw)
		return 0;
	return p->reserve_family == AF_UNSPEC ? 2 : 1;
}

/*
 * ehash slots: the caller's size, or for the default (0 became it in params_copy()) the larger
 * of the default and one slot per reserved socket and TIME_WAIT entry, since every one of them
 * may be in ehash at once.
 */
static uint32_t ehash_slots(const struct socktab_net_params *p)
{
	struct socktab_net_params def;
	uint64_t want;

	socktab_net_params_init(&def);
	if (p->ehash_entries != def.ehash_entries)
		return p->ehash_entries;
	want = (uint64_t)reserve_families(p) * ((uint64_t)p->reserve_socks + p->reserve_tw);
	if (want > EHASH_MAX)
		want = EHASH_MAX;
	return want > p->ehash_entries ? (uint32_t)want : p->ehash_entries;
}

static struct socktab__tables *tables_new(const struct socktab_net_params *p)
{
	struct socktab__tables *t;
	uint32_t ne = roundup_pow2(ehash_slots(p));
	uint32_t nl = roundup_pow2(p->ehash_locks);
	uint32_t nb = roundup_pow2(p->bhash_entries);
	uint32_t nbl = nb < SOCKTAB__BIND_LOCKS ? nb : SOCKTAB__BIND_LOCKS;

	if (posix_memalign((void **)&t, SOCKTAB__CACHELINE, sizeof(*t)))
		return NULL;
	memset(t, 0, sizeof(*t));
	if (nl > ne)
		nl = ne;
	t->ehash_mask = ne - 1;
	t->bhash_mask = nb - 1;
	/* A large ehash is 2 MiB-aligned and offered to transparent huge pages, as the pool's
	 * slabs are: each lookup's slot miss would otherwise pay a page-table walk too. */
	size_t eb = sizeof(*t->ehash) * ne, ea = eb >= (2u << 20) ? (2u << 20) : SOCKTAB__CACHELINE;

	if (posix_memalign((void **)&t->ehash, ea, eb))
		t->ehash = NULL;
	else if (ea > SOCKTAB__CACHELINE)
		(void)madvise(t->ehash, eb, MADV_HUGEPAGE);
	/* bhash and bhash2 are one size decision (R82); two arrays keep their types apart. */
	t->bhash = calloc(nb, sizeof(*t->bhash));
	t->bhash2 = calloc(nb, sizeof(*t->bhash2));
	/* lhash2 takes the bind-hash size (the kernel sizes it separately, one slot per 2 MB). */
	t->lhash2_mask = nb - 1;
	t->lhash2 = calloc(nb, sizeof(*t->lhash2));
	/* Each set is tried even when an earlier one failed: tables_free() takes them all. */
	int locks_err = socktab__stripes_init(&t->ehash_locks, nl, ne);

	locks_err |= socktab__stripes_init(&t->bhash_locks, nbl, 0);
	locks_err |= socktab__stripes_init(&t->bhash2_locks, nbl, 0);
	locks_err |= socktab__stripes_init(&t->lhash2_locks, nbl, 0);
	if (!t->ehash || !t->bhash || !t->bhash2 || !t->lhash2 || locks_err) {
		tables_free(t);
		return NULL;
	}
	for (uint32_t i = 0; i < nb; i++)
		socktab__hhead_init(&t->lhash2[i].head, i + SOCKTAB__LISTENING_NULLS_BASE);
	for (uint32_t i = 0; i < ne; i++) {
		socktab__chead_init(&t->ehash[i].head, i);
		atomic_init(&t->ehash[i].second, (uint32_t)socktab__nulls(i));
	}
	atomic_init(&t->refs, 1);
	return t;
}

static int params_valid(const struct socktab_net_params *p)
{
	/* Sizes of 0 became their defaults in params_copy(). More locks than slots are
	 * clamped to the slots (tables_new()), but not beyond the largest table. */
	if (p->ehash_entries == 0 || p->ehash_entries > EHASH_MAX || p->ehash_locks == 0 ||
	    p->ehash_locks > EHASH_MAX || p->bhash_entries == 0 || p->bhash_entries > BHASH_MAX)
		return 0;
	if (p->port_low == 0 || p->port_high < p->port_low ||
	    p->port_low < p->unprivileged_port_start)
		return 0;
	if (p->tw_reuse < 0 || p->tw_reuse > 2 || p->tw_reuse_delay_ms < 1 ||
	    p->tw_reuse_delay_ms > 60000)
		return 0;
	if ((unsigned)p->variant > SOCKTAB_VARIANT_LINUX_6_1 || p->rcu_precheck < -1 ||
	    p->rcu_precheck > 1 || p->lport_hash_inside < -1 || p->lport_hash_inside > 1)
		return 0;
	if (p->sock_priv_size > (1u << 20) || p->tw_priv_size > SOCKTAB_TW_PRIV_MAX ||
	    p->tw_priv_size > p->sock_priv_size || p->req_priv_size > SOCKTAB_REQ_PRIV_MAX ||
	    p->req_priv_size > p->sock_priv_size)
		return 0;
	if (p->udp_hash_entries == 0 || p->udp_hash_entries > UDP_HASH_MAX ||
	    p->udp_hash4_entries > UDP_HASH4_MAX)
		return 0;
	if (p->reserve_socks > RESERVE_MAX || p->reserve_tw > RESERVE_MAX ||
	    (p->reserve_family != AF_UNSPEC && p->reserve_family != AF_INET &&
	     p->reserve_family != AF_INET6))
		return 0;
	return 1;
}

/* The smallest params a caller may pass: this version's first release had every field up to
 * udp_hash4. A caller built against a later header passes more; fields it knows beyond ours are
 * refused unless zero, so a setting is never silently dropped. */
#define PARAMS_V0_SIZE (offsetof(struct socktab_net_params, udp_hash4) + sizeof(int))
/* The largest size a later version's struct may have (socktab/net.h): the bytes past ours are
 * read, so a size no struct has (garbage, (size_t)-1) must be refused before that. */
#define PARAMS_MAX_SIZE 4096

static int params_copy(struct socktab_net_params *dst, const struct socktab_net_params *src)
{
	socktab_net_params_init(dst);
	if (!src)
		return 0;
	/* A struct's size is a multiple of its alignment, which a later version (appending
	 * fields) can only raise to a multiple of ours. */
	if (src->size < PARAMS_V0_SIZE || src->size > PARAMS_MAX_SIZE ||
	    src->size % _Alignof(struct socktab_net_params))
		return -EINVAL;
	for (size_t i = sizeof(*dst); i < src->size; i++)
		if (((const unsigned char *)src)[i])
			return -EINVAL;
	memcpy(dst, src, src->size < sizeof(*dst) ? src->size : sizeof(*dst));
	dst->size = sizeof(*dst);
	/* A table size of 0 asks for the default (socktab/net.h). */
	struct socktab_net_params def;

	socktab_net_params_init(&def);
	if (!dst->ehash_entries)
		dst->ehash_entries = def.ehash_entries;
	if (!dst->ehash_locks)
		dst->ehash_locks = def.ehash_locks;
	if (!dst->bhash_entries)
		dst->bhash_entries = def.bhash_entries;
	if (!dst->udp_hash_entries)
		dst->udp_hash_entries = def.udp_hash_entries;
	return 0;
}

/*
 * The reservation (socktab/net.h): the pools' slabs for the reserved sockets and TIME_WAIT
 * entries, allocated and faulted in; the bind tables, which calloc() left unmapped, faulted in
 * (a private net's only: shared ones were sized and touched by their first net's
 * reservation, or not at all); and this thread's spare bind buckets, so its first new port does
 * not allocate either. 0 or -ENOMEM.
 */
static int net_reserve(struct socktab_net *net, const struct socktab_net_params *p)
{
	struct socktab__bind_prealloc pa;
	int err = 0;

	if (!reserve_families(p))
		return 0;
	for (int f = 0; f < 2 && !err; f++) {
		int family = f ? AF_INET6 : AF_INET;

		if (p->reserve_family != AF_UNSPEC && p->reserve_family != family)
			continue;
		err = socktab__pool_reserve(socktab__sock_pool(net, SOCKTAB_TCP, family),
					    p->reserve_socks);
		if (!err)
			err = socktab__pool_reserve(socktab__tw_pool(net, family), p->reserve_tw);
	}
	if (err)
		return err;
	if (!p->share_tables_with) {
		size_t nb = (size_t)net->tab->bhash_mask + 1;

		socktab__prefault(net->tab->bhash, nb * sizeof(*net->tab->bhash));
		socktab__prefault(net->tab->bhash2, nb * sizeof(*net->tab->bhash2));
	}
	if (socktab__bind_prealloc(&pa))
		return -ENOMEM;
	socktab__bind_prealloc_free(&pa); /* into this thread's spare */
	return 0;
}

/* A socket that ever listened or took a reuseport member id keeps that memory (socktab_sock
 * cold->lq): freed with the pools, when no lookup can reach it. */
static void free_lq(struct socktab_sock *sk, void *arg)
{
	(void)arg;
	free(atomic_load_explicit(&sk->cold->lq, memory_order_relaxed));
	atomic_store_explicit(&sk->cold->lq, NULL, memory_order_relaxed);
}

static void net_free_pools(struct socktab_net *net)
{
	socktab__pool_walk(&net->pools[SOCKTAB__K_TCP4], free_lq, NULL);
	socktab__pool_walk(&net->pools[SOCKTAB__K_TCP6], free_lq, NULL);
	socktab__pool_walk(&net->pools[SOCKTAB__K_UDP4], free_lq, NULL);
	socktab__pool_walk(&net->pools[SOCKTAB__K_UDP6], free_lq, NULL);
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		socktab__pool_destroy(&net->pools[k]);
	socktab__stripes_free(&net->sk_locks);
}

/* The end of a net that no reader can reach and that has nothing left in call_rcu: its UDP
 * table and devices (a net whose creation failed before them has neither), locks, its share of
 * the tables, pools and the rest. socktab_net_free() after its grace periods, and
 * socktab_net_new() when it fails. */
static void net_release(struct socktab_net *net)
{
	if (net->udp) {
		socktab__udp_table_free(net->udp);
		socktab__dev_destroy(net);
	}
	pthread_mutex_destroy(&net->settings_lock);
	pthread_mutex_destroy(&net->tw_lock);
	pthread_mutex_destroy(&net->reuseport_lock);
	if (atomic_fetch_sub(&net->tab->refs, 1) == 1)
		tables_free(net->tab);
	net_free_pools(net);
	free(net->perturb);
	free(net->stat);
	free(net);
}

struct socktab_net *socktab_net_new(const struct socktab_net_params *params)
{
	struct socktab_net_params copy;
	const struct socktab_net_params *p = &copy;
	struct socktab_net *net;
	uint32_t secrets[8];

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_new()");
	if (params_copy(&copy, params) || !params_valid(p)) {
		errno = EINVAL;
		return NULL;
	}
	/* Aligned: the fields every lookup reads are the net's first line. */
	if (posix_memalign((void **)&net, SOCKTAB__CACHELINE, sizeof(*net))) {
		errno = ENOMEM;
		return NULL;
	}
	memset(net, 0, sizeof(*net));
	if (p->share_tables_with) {
		net->tab = p->share_tables_with->tab;
		atomic_fetch_add(&net->tab->refs, 1);
		uint32_t tag = atomic_fetch_add(&net->tab->next_tag, 1) + 1;

		net->tag = tag <= 255 ? (uint8_t)tag : 0;
	} else {
		net->tab = tables_new(p);
		if (net->tab) {
			atomic_store(&net->tab->next_tag, 1);
			net->tag = 1;
		}
	}
	net->perturb = calloc(SOCKTAB__PERTURB_SIZE, sizeof(*net->perturb));
	if (posix_memalign((void **)&net->stat, SOCKTAB__CACHELINE,
			   SOCKTAB__STAT_SLOTS * sizeof(*net->stat)))
		net->stat = NULL;
	else
		memset(net->stat, 0, SOCKTAB__STAT_SLOTS * sizeof(*net->stat));
	if (socktab__stripes_init(&net->sk_locks, SOCKTAB__SK_LOCKS, 0) || !net->tab || !net->perturb ||
	    !net->stat) {
		if (net->tab && atomic_fetch_sub(&net->tab->refs, 1) == 1)
			tables_free(net->tab);
		free(net->perturb);
		free(net->stat);
		socktab__stripes_free(&net->sk_locks);
		free(net);
		errno = ENOMEM;
		return NULL;
	}
	net->ehash = net->tab->ehash;
	net->ehash_mask = net->tab->ehash_mask;
	net->priv_size = (uint32_t)p->sock_priv_size;
	net->has_priv = p->sock_priv_size != 0;
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		socktab__pool_init(&net->pools[k], net, k, p->sock_priv_size);

	if (p->fixed_secret)
		memcpy(secrets, p->secret, sizeof(secrets));
	else
		socktab__random_bytes(secrets, sizeof(secrets));
	net->hash_mix = secrets[0];
	net->ehash_secret = secrets[1];
	net->ehash6_secret = secrets[2];
	net->ipv6_hash_secret = secrets[3];
	memcpy(net->port_key, &secrets[4], sizeof(net->port_key));
	/* table_perturb starts random (kernel: get_random_sleepable_once); derive it from the
	 * secrets so a fixed_secret run is reproducible. */
	for (uint32_t i = 0; i < SOCKTAB__PERTURB_SIZE; i++) {
		uint32_t w = i;

		atomic_init(&net->perturb[i], (uint32_t)socktab__siphash(&w, sizeof(w), net->port_key));
	}

	net->variant = p->variant;
	net->lport_inside = p->lport_hash_inside >= 0 ? (uint8_t)p->lport_hash_inside
						      : p->variant == SOCKTAB_VARIANT_LINUX_6_1;
	net->rcu_precheck = p->rcu_precheck >= 0 ? (uint8_t)p->rcu_precheck
						 : p->variant != SOCKTAB_VARIANT_LINUX_6_1;
	net->tcp_timestamps = p->tcp_timestamps != 0;
	net->privileged = p->privileged != 0;
	net->clock = p->clock ? p->clock : default_clock;
	net->clock_arg = p->clock_arg;
	net->tw_len_ns = (uint64_t)p->tw_len_ms * 1000000ull;

	pthread_mutex_init(&net->settings_lock, NULL);
	socktab__mutex_init(&net->tw_lock);
	socktab__mutex_init(&net->reuseport_lock);
	atomic_init(&net->somaxconn, 4096);
	atomic_init(&net->tw_head_expire, UINT64_MAX); /* no TIME_WAIT entry yet */
	atomic_init(&net->port_range, ((uint32_t)p->port_high << 16) | p->port_low);
	atomic_init(&net->unprivileged_port_start, p->unprivileged_port_start);
	atomic_init(&net->tw_reuse, p->tw_reuse);
	atomic_init(&net->kvariant[SOCKTAB_KV_ROLE_LOCK], 1);
	atomic_init(&net->kvariant[SOCKTAB_KV_UDP_BIND_MATE_STOPS], 1);
	atomic_init(&net->tw_reuse_delay_ms, p->tw_reuse_delay_ms);
	atomic_init(&net->autobind_reuse, p->autobind_reuse != 0);
	net->net_raw = p->net_raw != 0;
	net->tw_priv_size = (uint32_t)p->tw_priv_size;
	net->req_priv_size = (uint32_t)p->req_priv_size;
	/* tcp_sk_init(): cookies when the SYN queue overflows; the SYN backlog scales with the
	 * established table (max(128, ehash slots / 128)); no migration. */
	atomic_init(&net->tcp_syncookies, 1);
	atomic_init(&net->tcp_migrate_req, 0);
	atomic_init(&net->max_syn_backlog,
		    (int)((net->ehash_mask + 1) / 128 > 128 ? (net->ehash_mask + 1) / 128 : 128));
	/* UDP table last: its secrets derive from the net's. */
	if (socktab__dev_init(net) == 0) {
		net->udp = socktab__udp_table_new(net, p->udp_hash_entries, p->udp_hash4_entries,
						  p->udp_hash4);
		if (!net->udp)
			socktab__dev_destroy(net);
	}
	/* A net that fails here was seen by no reader and handed nothing to call_rcu (a
	 * reservation only carves slabs): it is undone at once, without a grace period. */
	if (!net->udp || net_reserve(net, p)) {
		net_release(net);
		errno = ENOMEM;
		return NULL;
	}
	return net;
}

/* An open socket the caller forgot: close it abortively. */
static void close_forgotten(struct socktab_sock *sk, void *arg)
{
	(void)arg;
	if (RD(sk->state) == SOCKTAB__FREE)
		return;
	socktab__skf_set(sk, SOCKTAB__SKF_LINGER, true);
	sk->cold->linger_secs = 0;
	socktab_close(sk);
}

void socktab_net_free(struct socktab_net *net)
{
	bool left;

	if (!net)
		return;
	/* The grace period below would wait for this very section: a silent hang otherwise. An
	 * online thread's own section is left for the waits (a quiescent state). */
	left = socktab__rcu_wait_begin();
	if (socktab__rcu_read_ongoing())
		socktab__misuse("socktab_net_free inside an RCU read-side section");
	/* Drop TIME_WAIT entries first: they are owned by the net, not by any caller. */
	socktab__tw_purge(net);
	for (int k = SOCKTAB__K_TCP4; k <= SOCKTAB__K_UDP6; k++)
		socktab__pool_walk(&net->pools[k], close_forgotten, NULL);
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		socktab__pool_flush(&net->pools[k]);
	socktab__synchronize_rcu();
	/* Sockets and bind buckets are freed through call_rcu: wait for those callbacks to run. */
	socktab__rcu_barrier();
	/* Objects went back to their pools from call_rcu callbacks, each batch published by a
	 * release on the pool's returned stack; TSan cannot see the barrier, but it sees this
	 * acquire order them before the teardown below. */
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		(void)atomic_load_explicit(&net->pools[k].returned, memory_order_acquire);
	socktab__rss_free(net);
	socktab__sk_lookup_free(net);
	net_release(net);
	socktab__rcu_wait_end(left);
}

int socktab_net_tick_budget(struct socktab_net *net, unsigned int max_entries,
			    uint64_t *next_due_ns)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_tick_budget()");
	if (!net || !next_due_ns || !max_entries || max_entries > INT_MAX)
		return -EINVAL;
	return socktab__tw_expire(net, socktab__now(net), max_entries, next_due_ns);
}

/* Entries socktab_net_tick() expires per round: each round takes tw_lock once, so other threads'
 * close() and connect() wait for at most one round's unlinks, not for all of them. */
#define TICK_ROUND 256u

int socktab_net_tick(struct socktab_net *net)
{
	uint64_t now, due;
	int n, total = 0;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_tick()");
	if (!net)
		return -EINVAL;
	/* One time for every round: what was due when the call began, and only that (a short
	 * round means nothing due is left, even if other threads keep adding due entries). */
	now = socktab__now(net);
	do {
		n = socktab__tw_expire(net, now, TICK_ROUND, &due);
		total = n > INT_MAX - total ? INT_MAX : total + n;
	} while (n == (int)TICK_ROUND && due <= now);
	return total;
}

int socktab_net_set_port_range(struct socktab_net *net, int lo, int hi)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_port_range()");
	if (!net)
		return -EINVAL;
	socktab__lock(&net->settings_lock);
	if (lo < 1 || hi > 65535 || hi < lo || lo < RD(net->unprivileged_port_start)) {
		socktab__unlock(&net->settings_lock);
		return -EINVAL;
	}
	atomic_store_explicit(&net->port_range, ((uint32_t)hi << 16) | (uint32_t)lo,
			      memory_order_relaxed);
	socktab__unlock(&net->settings_lock);
	return 0;
}

int socktab_net_get_port_range(struct socktab_net *net, int *lo, int *hi)
{
	uint32_t r;

	if (!net || !lo || !hi)
		return -EINVAL;
	r = RD(net->port_range);
	*lo = (int)(r & 0xffff);
	*hi = (int)(r >> 16);
	return 0;
}

/*
 * Up to @n integers of a sysctl write, as the kernel's __do_proc_dointvec() and
 * do_proc_douintvec() read them (proc_get_long()): white space skipped (the kernel's isspace(),
 * 0xa0 too), each an optional '-' (only when @sign) and a number in decimal, 0x hex or 0 octal
 * (strtoul with base 0), of fewer than 21 characters, ending at a space, tab or newline
 * (proc_wspace_sep) or the end; an int's range (0..UINT_MAX without @sign). Values
 * after the @n-th are left unread, which the kernel takes as a short write, not an error; fewer
 * than @n leave the rest of @out as it was. Returns how many were read (at least one), or
 * -EINVAL.
 */
static int parse_ints(const char *v, long *out, int n, bool sign)
{
	const char *p = v;
	int i;

	for (i = 0; i < n; i++) {
		const char *start;
		unsigned long long u;
		bool neg = false;
		char *end;

		while (socktab__kernel_isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		start = p;
		if (*p == '-') {
			neg = true;
			p++;
		}
		if (*p < '0' || *p > '9' || (neg && !sign))
			return -EINVAL;
		errno = 0;
		u = strtoull(p, &end, 0);
		if (errno || end - start >= 21 || (*end && !strchr(" \t\n", *end)))
			return -EINVAL;
		if (u > (!sign ? UINT32_MAX : neg ? (unsigned long long)INT32_MAX + 1 : INT32_MAX))
			return -EINVAL;
		out[i] = neg ? -(long)u : (long)u;
		p = end;
	}
	return i ? i : -EINVAL;
}

/*
 * One number of an ip_local_reserved_ports list, as the kernel's proc_get_long() reads it:
 * strtoul() with base 0 (decimal, 0x hex, 0 octal), no sign and no blank, fewer than 21
 * characters, then a character of @stops or the end of the text. Returns the port, or -1 for
 * anything else or a number above 65535.
 */
static long reserved_number(const char **pp, const char *stops)
{
	const char *p = *pp, *start = p;
	unsigned long v = 0;
	unsigned base = 10;

	if (*p < '0' || *p > '9')
		return -1;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    ((p[2] >= '0' && p[2] <= '9') || (p[2] >= 'a' && p[2] <= 'f') ||
	     (p[2] >= 'A' && p[2] <= 'F'))) {
		base = 16;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	for (;; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a') + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A') + 10;
		else
			break;
		if (d >= base)
			break;
		/* Saturate: past 65535 the value is refused anyway, and v cannot overflow. */
		if (v <= 65535)
			v = v * base + d;
	}
	if (p - start >= 21 || (*p && !strchr(stops, *p)) || v > 65535)
		return -1;
	*pp = p;
	return (long)v;
}

/*
 * Set ports [a, b] in @bm. Partial words at both ends are written at once; the whole words
 * between are counted in @cover (+1 at the first, -1 after the last) and filled by the caller in
 * one pass, so each range costs O(1) whatever its length.
 */
static void reserved_range(uint64_t *bm, int64_t *cover, unsigned a, unsigned b)
{
	unsigned wa = a >> 6, wb = b >> 6;
	uint64_t lo = ~0ull << (a & 63), hi = ~0ull >> (63 - (b & 63));

	if (wa == wb) {
		bm[wa] |= lo & hi;
		return;
	}
	bm[wa] |= lo;
	bm[wb] |= hi;
	if (wa + 1 < wb) {
		cover[wa + 1]++;
		cover[wb]--;
	}
}

/*
 * net.ipv4.ip_local_reserved_ports, with the rules of the kernel's proc_do_large_bitmap(): ports
 * and ranges "A-B" (A <= B <= 65535) separated by ',' or newlines, no blanks, newlines skipped
 * before each item, a trailing ',' allowed. "" (or only newlines) clears every port. All or
 * nothing: on -EINVAL the bitmap is unchanged. Linear in the length of @v.
 */
static int set_reserved_list(struct socktab_net *net, const char *v)
{
	uint64_t bm[65536 / 64] = { 0 };
	int64_t cover[65536 / 64] = { 0 };
	const char *p = v;
	int64_t depth = 0;

	while (*p == '\n')
		p++;
	while (*p) {
		long a, b;

		a = reserved_number(&p, "-,\n");
		if (a < 0)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			b = reserved_number(&p, ",\n");
			if (b < a)
				return -EINVAL;
		}
		reserved_range(bm, cover, (unsigned)a, (unsigned)b);
		if (*p)
			p++; /* the ',' or newline after the item */
		while (*p == '\n')
			p++;
	}
	for (int i = 0; i < 65536 / 64; i++) {
		depth += cover[i];
		WR(net->reserved[i], depth > 0 ? ~0ull : bm[i]);
	}
	return 0;
}

int socktab_net_sysctl(struct socktab_net *net, const char *key, const char *value)
{
	long v[2];
	int err;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_sysctl()");
	if (!net || !key || !value)
		return -EINVAL;
	if (!strcmp(key, "net.ipv4.ip_local_port_range")) {
		int lo, hi;

		/* ipv4_local_port_range(): a value not written keeps its setting. */
		socktab_net_get_port_range(net, &lo, &hi);
		v[0] = lo;
		v[1] = hi;
		err = parse_ints(value, v, 2, true);
		if (err < 0 || v[0] < 1 || v[0] > 65535 || v[1] < 1 || v[1] > 65535)
			return -EINVAL;
		return socktab_net_set_port_range(net, (int)v[0], (int)v[1]);
	}
	if (!strcmp(key, "net.ipv4.ip_local_reserved_ports"))
		return set_reserved_list(net, value);
	if (!strcmp(key, "net.ipv4.tcp_tw_reuse")) {
		err = parse_ints(value, v, 1, false);
		return err < 0 ? err : socktab_net_set_tw_reuse(net, v[0] > 2 ? -1 : (int)v[0]);
	}
	/* proc_dointvec (signed) for these, do_proc_douintvec (unsigned) for the rest. */
	err = parse_ints(value, v, 1,
			 !strcmp(key, "net.ipv4.ip_unprivileged_port_start") ||
				 !strcmp(key, "net.core.somaxconn") ||
				 !strcmp(key, "net.ipv4.tcp_max_syn_backlog") ||
				 !strcmp(key, "net.ipv4.tcp_fastopen"));
	err = err < 0 ? err : 0;
	if (!strcmp(key, "net.ipv4.ip_autobind_reuse")) {
		if (err || v[0] > 1)
			return -EINVAL;
		WR(net->autobind_reuse, (int)v[0]);
		return 0;
	}
	if (!strcmp(key, "net.ipv4.ip_unprivileged_port_start")) {
		int ret = -EINVAL;

		socktab__lock(&net->settings_lock);
		/* It may not exceed the low end of the ephemeral range (R65). */
		if (!err && v[0] >= 0 && v[0] <= 65535 &&
		    v[0] <= (long)(RD(net->port_range) & 0xffff)) {
			WR(net->unprivileged_port_start, (int)v[0]);
			ret = 0;
		}
		socktab__unlock(&net->settings_lock);
		return ret;
	}
	if (!strcmp(key, "net.ipv4.tcp_tw_reuse_delay")) {
		if (err || v[0] < 1 || v[0] > 60000)
			return -EINVAL;
		WR(net->tw_reuse_delay_ms, (uint32_t)v[0]);
		return 0;
	}
	if (!strcmp(key, "net.core.somaxconn")) {
		if (err || v[0] < 0) /* proc_dointvec_minmax, extra1 = SYSCTL_ZERO */
			return -EINVAL;
		WR(net->somaxconn, (int)v[0]);
		return 0;
	}
	if (!strcmp(key, "net.ipv4.tcp_max_syn_backlog")) {
		if (err) /* proc_dointvec: any int */
			return err;
		WR(net->max_syn_backlog, (int)v[0]);
		return 0;
	}
	/* u8 sysctls (proc_dou8vec_minmax): 0..255, or 0..1 where the kernel bounds them. */
	static const struct {
		const char *key;
		size_t off;
		long max;
	} u8[] = {
		{ "net.ipv4.ip_nonlocal_bind", offsetof(struct socktab_net, ip_nonlocal_bind), 255 },
		{ "net.ipv6.ip_nonlocal_bind", offsetof(struct socktab_net, ip6_nonlocal_bind), 255 },
		{ "net.ipv4.tcp_l3mdev_accept", offsetof(struct socktab_net, tcp_l3mdev_accept), 1 },
		{ "net.ipv4.udp_l3mdev_accept", offsetof(struct socktab_net, udp_l3mdev_accept), 1 },
		{ "net.ipv4.tcp_rfc1337", offsetof(struct socktab_net, tcp_rfc1337), 255 },
		{ "net.ipv4.tcp_syncookies", offsetof(struct socktab_net, tcp_syncookies), 255 },
		{ "net.ipv4.tcp_migrate_req", offsetof(struct socktab_net, tcp_migrate_req), 1 },
	};

	for (size_t i = 0; i < sizeof(u8) / sizeof(u8[0]); i++) {
		if (strcmp(key, u8[i].key))
			continue;
		if (err || v[0] > u8[i].max)
			return -EINVAL;
		WR(*(_Atomic uint8_t *)((char *)net + u8[i].off), (uint8_t)v[0]);
		return 0;
	}
	if (!strcmp(key, "net.ipv4.tcp_fastopen"))
		return err;
	return -ENOENT;
}

int socktab_net_set_reserved(struct socktab_net *net, int lo, int hi, int on)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_reserved()");
	if (!net || lo < 0 || hi > 65535 || hi < lo)
		return -EINVAL;
	for (int port = lo; port <= hi; port++) {
		uint64_t bit = 1ull << (port & 63);

		if (on)
			atomic_fetch_or_explicit(&net->reserved[port >> 6], bit, memory_order_relaxed);
		else
			atomic_fetch_and_explicit(&net->reserved[port >> 6], ~bit,
						  memory_order_relaxed);
	}
	return 0;
}

static const char *const kvariant_names[SOCKTAB_KV_COUNT] = {
	[SOCKTAB_KV_ROLE_LOCK] = "role_lock",
	[SOCKTAB_KV_UDP_BIND_ALL_OWNERS] = "udp_bind_all_owners",
	[SOCKTAB_KV_CBPF_LISTENED] = "cbpf_listened",
	[SOCKTAB_KV_UDP_BIND_MATE_STOPS] = "udp_bind_mate_stops",
};

int socktab_net_set_kernel_variant(struct socktab_net *net, int variant, int on)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_kernel_variant()");
	if (!net || variant < 0 || variant >= SOCKTAB_KV_COUNT || on < 0 || on > 1)
		return -EINVAL;
	WR(net->kvariant[variant], (uint8_t)on);
	return 0;
}

int socktab_net_get_kernel_variant(const struct socktab_net *net, int variant)
{
	if (!net || variant < 0 || variant >= SOCKTAB_KV_COUNT)
		return -EINVAL;
	/* The load reads, never writes: the cast only satisfies atomic_load's prototype. */
	return RD(((struct socktab_net *)net)->kvariant[variant]);
}

const char *socktab_kernel_variant_name(int variant)
{
	return variant >= 0 && variant < SOCKTAB_KV_COUNT ? kvariant_names[variant] : NULL;
}

int socktab_kernel_variant_by_name(const char *name)
{
	for (int v = 0; name && v < SOCKTAB_KV_COUNT; v++)
		if (!strcmp(name, kvariant_names[v]))
			return v;
	return -EINVAL;
}

int socktab_net_set_tcp_role_lock(struct socktab_net *net, int on)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_tcp_role_lock()");
	return socktab_net_set_kernel_variant(net, SOCKTAB_KV_ROLE_LOCK, on);
}

int socktab_net_set_tw_reuse(struct socktab_net *net, int mode)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_tw_reuse()");
	if (!net || mode < 0 || mode > 2)
		return -EINVAL;
	WR(net->tw_reuse, mode);
	return 0;
}

int socktab_net_stats(struct socktab_net *net, struct socktab_net_stats *st)
{
	if (!net || !st)
		return -EINVAL;
	int64_t est = 0, tb = 0, req = 0, tried = 0, conn = 0;

	for (int i = 0; i < SOCKTAB__STAT_SLOTS; i++) {
		est += RD(net->stat[i].established);
		tb += RD(net->stat[i].bind_buckets);
		req += RD(net->stat[i].requests);
		tried += RD(net->stat[i].ports_tried);
		conn += RD(net->stat[i].connects);
	}
	/* The slots are read one after another while calls go on: a sum caught between a
	 * socket's count on one slot and its close on another may dip below zero. */
	st->established = est > 0 ? (uint64_t)est : 0;
	st->time_wait = RD(net->n_time_wait);
	st->bind_buckets = tb > 0 ? (uint64_t)tb : 0;
	st->tw_recycled = RD(net->n_tw_recycled);
	st->connect_ports_tried = (uint64_t)tried;
	st->connects = (uint64_t)conn;
	st->pool_socks = 0;
	st->ehash_slots = (uint64_t)net->ehash_mask + 1;
	st->connect_rss_rejected = RD(net->n_rss_rejected);
	st->requests = req > 0 ? (uint64_t)req : 0;
	st->tw_overflow = RD(net->n_tw_overflow);
	st->pool_slabs = 0;
	for (int k = 0; k < SOCKTAB__K_NR; k++) {
		st->pool_socks += RD(net->pools[k].nobjs);
		st->pool_slabs += RD(net->pools[k].nslabs_made);
	}
	memset(st->reserved, 0, sizeof(st->reserved));
	return 0;
}

const char *socktab_version(void)
{
	return SOCKTAB_VERSION_STRING;
}

unsigned int socktab_version_num(void)
{
	return SOCKTAB_VERSION_NUM;
}

/* The worker socktab_rcu_reclaim_cpu() made, for the threads registered after it. */
static struct call_rcu_data *_Atomic reclaim_worker;

/*
 * A thread that exits registered: liburcu's list of readers would keep its entry, which lives
 * in the dead thread's thread-local memory, and every later grace period would read it there (a
 * crash once that memory is gone, a hang while it still shows a section, as an online thread's
 * does, and a corrupt list once a new thread gets the same memory and registers). A key whose
 * value is set while the thread is registered has its destructor run at the thread's exit
 * (thread-local variables are still there then): it ends the thread's sections, the online one
 * and any of its own, and unregisters it, as socktab_thread_unregister() would.
 */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_err;

static void thread_exit(void *arg)
{
	(void)arg;
	if (socktab__registered <= 0)
		return;
#ifdef SOCKTAB_TSAN
	/* Its sections end here: what they read happened before later reclaims (rcu.h). */
	if (socktab__rcu_read_ongoing())
		socktab__tsan_release(&socktab__tsan_gp_token);
#endif
	socktab__online = 0; /* its section ends with the unregistration below */
	socktab__registered = 1;
	socktab__bucket_cache_release();
	socktab__stat_give_back();
	socktab__rcu_unregister_thread();
	socktab__registered = 0;
}

static void exit_key_make(void)
{
	exit_key_err = pthread_key_create(&exit_key, thread_exit);
}

void socktab_thread_register(void)
{
	if (socktab__registered++ == 0) {
		struct call_rcu_data *w = atomic_load(&reclaim_worker);

		pthread_once(&exit_key_once, exit_key_make);
		if (exit_key_err || pthread_setspecific(exit_key, &exit_key))
			socktab__misuse("socktab_thread_register: no thread-exit hook (pthread "
					"key): a thread exiting registered would stop every grace "
					"period");
		socktab__rcu_register_thread();
		if (w)
			socktab__rcu_worker_use(w);
	}
}

/* The thread that makes a reclaim worker: liburcu's worker starts with its creator's CPU
 * affinity (liburcu itself applies the cpu hint only every few hundred grace periods), so it is
 * made from a thread already placed where the worker must run. */
struct worker_maker {
	int cpu;
	struct call_rcu_data *w;
};

static void *make_worker(void *arg)
{
	struct worker_maker *m = arg;

	m->w = socktab__rcu_worker_new(m->cpu);
	return NULL;
}

int socktab_rcu_reclaim_cpu(int cpu)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int worker_cpu = -2; /* none made yet */
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct worker_maker m = { cpu, NULL };
	struct call_rcu_data *w;

	if (cpu < -1 || ncpu <= 0 || cpu >= ncpu || ncpu > CPU_SETSIZE)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	w = atomic_load(&reclaim_worker);
	if (!w || worker_cpu != cpu) {
		/* One worker per placement asked for; one asked for before keeps serving the
		 * threads that use it (liburcu frees it at exit). */
		pthread_attr_t a;
		cpu_set_t set;
		pthread_t t;
		int err;

		CPU_ZERO(&set);
		for (long c = 0; c < ncpu; c++)
			if (cpu < 0 || c == cpu)
				CPU_SET((int)c, &set);
		err = pthread_attr_init(&a);
		if (!err) {
			err = pthread_attr_setaffinity_np(&a, sizeof(set), &set);
			if (!err)
				err = pthread_create(&t, &a, make_worker, &m);
			pthread_attr_destroy(&a);
		}
		if (!err)
			pthread_join(t, NULL);
		if (err || !m.w) {
			pthread_mutex_unlock(&lock);
			return err == EINVAL ? -EINVAL : -ENOMEM;
		}
		w = m.w;
		atomic_store(&reclaim_worker, w);
		worker_cpu = cpu;
	}
	pthread_mutex_unlock(&lock);
	if (socktab__registered)
		socktab__rcu_worker_use(w);
	return 0;
}

void socktab_thread_unregister(void)
{
	if (socktab__registered > 0 && --socktab__registered == 0) {
		socktab_thread_offline();
		socktab__bucket_cache_release();
		socktab__stat_give_back();
		socktab__rcu_unregister_thread();
		(void)pthread_setspecific(exit_key, NULL); /* nothing left for its exit to do */
	}
}

int socktab_thread_online(void)
{
	if (!socktab__registered)
		return -EPERM;
	if (socktab__online)
		return -EALREADY;
	/* Inside a section of its own the thread could not pass a quiescent state. */
	if (socktab__rcu_read_ongoing())
		return -EBUSY;
#ifdef SOCKTAB_NAIVE_ORDER
	/* The negative control (with SOCKTAB_NAIVE_ONLINE set): online without a section, so a
	 * grace period ends under the thread's lookups (tests/unit/test_online.c sees it). */
	if (getenv("SOCKTAB_NAIVE_ONLINE")) {
		socktab__online = 2;
		return 0;
	}
#endif
	socktab__online = 1;
	socktab__rcu_read_lock();
	return 0;
}

void socktab_quiescent_state(void)
{
	if (socktab__online != 1)
		return;
	socktab__rcu_read_unlock_online();
	socktab__rcu_read_lock();
}

void socktab_thread_offline(void)
{
	int was = socktab__online;

	socktab__online = 0;
	if (was == 1)
		socktab__rcu_read_unlock_online();
}
