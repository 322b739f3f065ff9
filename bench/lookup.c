/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench lookup: what a stack does per packet, in socktab's tables against other
 * libraries' hash tables holding the same 4-tuples.
 *
 * N established IPv4 4-tuples: the local side is 127.0.0.1:80 (a server), the remote address is
 * a bijective 32-bit mix of the key's index and the seed (so keys are distinct), the remote port
 * is random. socktab gets them as children of a listener (socktab_sock_new_child, then
 * ESTABLISHED) in a net whose ehash has --slots-per-socket slots per socket (2 by default,
 * rounded up to a power of two); each peer gets (key -> an object standing for the socket).
 * Then one stream of lookups, the same keys in the same order for every table, --misses PCT of
 * them for keys that are not there, is timed: every table is built first, then the tables are
 * timed in turn, R rounds of L/R lookups each, and each table's figure is its median round (a
 * burst of load on a shared machine hits every table alike).
 *
 * -6 (--ipv6): the same with IPv6: remote addresses in 2001:db8::/32 (the low word of the
 * interface id the same bijective mix, so keys stay distinct), local [::1]:80, socktab's IPv6
 * children and lookups (socktab_lookup_established6_rcu, socktab_lookup_tcp6_rcu in listener
 * mode, socktab_lookup_batch6 for bursts; socktab hashes the 4-tuple as inet6_ehashfn() does),
 * and the peers' 37-byte key: addresses, ports and the protocol byte, as DPDK's l3fwd keys
 * IPv6 flows (struct ipv6_5tuple; peers.h). Every mode and table works with it.
 *
 * Per hit, the benchmark does what a stack does with the answer: --touch BYTES reads that many
 * bytes of the connection's own state (socktab: the socket's caller data, socktab_sock_priv();
 * a peer: the object its value points to, max(64, BYTES) bytes). With --touch 0 a peer's object
 * is still read once (the pointer a stack must follow) and socktab's answer is the socket its
 * walk already read.
 *
 * socktab's lookups are the RCU-scoped ones, which take no reference, as the peers take none
 * (their readers rely on RCU or on quiescent writers), on an online thread as a poll-mode core
 * runs them (socktab_thread_online; a quiescent state per 64 lookups, or per burst) with no
 * read-side section of their own. The socktab-sections row times the same table the way a thread
 * that is not online must (socktab_rcu_read_lock, ..._rcu lookup, unlock: one section per lookup,
 * one per burst). The socktab-ref row (--refs) times the referenced form (lookup, then
 * socktab_sock_put) on the same table.
 *
 * --burst B: tables with a batch lookup (socktab_lookup_tcp_burst, rte_hash_lookup_bulk_data up
 * to 64 keys) take B keys per call; the others (lfht) do B single lookups.
 *
 * --threads N: each round is also run by N reader threads at once, each registered with
 * socktab_thread_register() and looking up its own share of the round's queries, so the N-thread
 * pass does the same lookups as the one-thread pass; lookups_per_sec is then the round's lookups
 * over the wall time from the first thread's start to the last one's end, beside the one-thread
 * rate of the same rounds (scaling=). The queries are shared out by key, as RSS gives each flow
 * one queue and one CPU: a hash of the 4-tuple names the thread that takes all of that key's
 * queries, in the round's order (about 1/N of them), so each socket is looked up by one thread
 * only. An established lookup is a receipt (R107): the connection takes the looking-up thread's
 * CPU as its SO_INCOMING_CPU and is written when that changes, so keys drawn by every thread would
 * move sockets' values back and forth between the threads' CPUs, a write for about (N-1)/N of the
 * lookups, which no stack that steers its flows makes. So every thread of the benchmark (the one
 * that builds the table, the one-thread pass's, the readers) names one receive queue, 0, with
 * socktab_set_rx_cpu(), as the pollers of a stack whose flows each arrive on one queue do: a
 * connection takes that value when it is made, and its lookups only compare it. (Named by the
 * CPU they run on instead, the one-thread pass and the readers would move each socket's value
 * once per pass, and a reader that the scheduler moves would write each socket it then finds.)
 * Before every timed pass the
 * benchmark reads a buffer of twice the last-level cache, so no pass starts with the previous
 * pass's lines (the one-thread pass over the same keys, or socktab's pass over the table
 * socktab-ref shares).
 *
 * --mode listener: a SYN flood on one listener. The net holds the N established sockets and a
 * listener on 127.0.0.1:80; every lookup is a full TCP lookup (socktab_lookup_tcp4_rcu) of a
 * random 4-tuple toward it, which misses ehash and finds the listener. socktab tables only.
 *
 * mem_latency_ns: a random pointer chase (one dependent load per 64-byte line) over as much
 * memory as socktab's table took, so a reader sees how far a lookup is from one DRAM miss; each
 * table's misses_per_lookup is its ns per lookup over it, the figure that carries across
 * machines. mem_parallel_ns: the same memory chased by 16 independent chains at once, per load,
 * a yardstick of the memory's parallelism (burst_limit_ns_per_lookup: two such loads, slot and
 * socket). It is not a floor: prefetches keep more lines in flight than 16 chains do (a scratch
 * loop of 32 keys, each a slot then two prefetched lines of a 256-byte object over 256 MiB,
 * ran at 14.4-15.8 ns a key on the 2-vCPU AMD EPYC where the yardstick said 24.6). With one
 * thread and no writer the chase runs right after socktab's pass in every round, and
 * socktab_vs_burst_limit is the median of the rounds' ratios (socktab_vs_burst_limit_rounds:
 * their range), so both sides of each ratio are of one moment of a machine whose speed drifts;
 * otherwise it is measured once after the rounds. The header names the CPU and its L2 and L3
 * sizes.
 *
 * Memory: each table's bytes are the RSS the process grew by while building it (a peer's
 * includes its stand-in objects). bench_lookup_timewait() measures socktab's TIME_WAIT entries
 * in a child process, so its memory is gone before the tables are built.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/wait.h>

#include "bench.h"
#include "opt.h"
#include "peers/peers.h"

static const char *const table_names[BENCH_TABLE_COUNT] = {
	[BENCH_TABLE_SOCKTAB] = "socktab",
	[BENCH_TABLE_SOCKTAB_SHARED] = "socktab-shared",
	[BENCH_TABLE_SOCKTAB_REF] = "socktab-ref",
	[BENCH_TABLE_SOCKTAB_SECTIONS] = "socktab-sections",
	[BENCH_TABLE_RTE_HASH] = "rte_hash",
	[BENCH_TABLE_LFHT] = "lfht",
};

const char *bench_table_name(enum bench_table t)
{
	return table_names[t];
}

static const struct peer_ops *peer_of(enum bench_table t)
{
	switch (t) {
#ifdef SOCKTAB_HAVE_RTE_HASH
	case BENCH_TABLE_RTE_HASH:
		return &peer_rte_hash;
#endif
#ifdef SOCKTAB_HAVE_LFHT
	case BENCH_TABLE_LFHT:
		return &peer_lfht;
#endif
	default:
		return NULL;
	}
}

bool bench_table_is_socktab(enum bench_table t)
{
	return t == BENCH_TABLE_SOCKTAB || t == BENCH_TABLE_SOCKTAB_SHARED ||
	       t == BENCH_TABLE_SOCKTAB_REF || t == BENCH_TABLE_SOCKTAB_SECTIONS;
}

bool bench_table_available(enum bench_table t)
{
	return bench_table_is_socktab(t) || peer_of(t);
}

/* murmur3's finaliser: a bijection on 32 bits. */
static uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

static void key_of(uint64_t i, uint64_t seed, struct peer_key *k)
{
	uint64_t s = seed ^ (i * 0x9e3779b97f4a7c15ull);

	k->saddr = htonl(mix32((uint32_t)i + (uint32_t)seed));
	k->sport = htons((uint16_t)(1024 + bench_rand(&s) % 64512));
	k->daddr = htonl(INADDR_LOOPBACK);
	k->dport = htons(80);
}

/* The address family of `bench lookup`'s keys and sockets: AF_INET, or AF_INET6 with -6 (set by
 * bench_lookup_main() before anything is built; bench_lookup_run_many()'s other callers get
 * IPv4). */
static int lk_family = AF_INET;

static bool lk_v6(void)
{
	return lk_family == AF_INET6;
}

/* IPv6 key @i: remote 2001:db8::/32 with a 64-bit interface id whose low word is the same
 * bijective mix as key_of()'s IPv4 address (so keys are distinct) and whose high word is a mix
 * of that; the same random remote port as key_of()'s; local [::1]:80; the protocol byte TCP. */
static void key6_of(uint64_t i, uint64_t seed, struct peer_key6 *k)
{
	uint64_t s = seed ^ (i * 0x9e3779b97f4a7c15ull);
	uint32_t lo = mix32((uint32_t)i + (uint32_t)seed);

	memset(k, 0, sizeof(*k));
	k->saddr.s6_addr32[0] = htonl(0x20010db8u);
	k->saddr.s6_addr32[2] = htonl(mix32(lo ^ 0x9e3779b9u));
	k->saddr.s6_addr32[3] = htonl(lo);
	k->sport = htons((uint16_t)(1024 + bench_rand(&s) % 64512));
	k->daddr = in6addr_loopback;
	k->dport = htons(80);
	k->proto = IPPROTO_TCP;
}

/* Bytes of one key in the query stream (its stride) and of the key a peer hashes. */
static size_t key_size(void)
{
	return lk_v6() ? sizeof(struct peer_key6) : sizeof(struct peer_key);
}

static size_t key_len(void)
{
	return lk_v6() ? PEER_KEY6_LEN : sizeof(struct peer_key);
}

/* Key @i of the run's family into @k (key_size() bytes). */
static void key_at(uint64_t i, uint64_t seed, void *k)
{
	if (lk_v6())
		key6_of(i, seed, k);
	else
		key_of(i, seed, k);
}

static inline const void *qat(const void *q, uint64_t j)
{
	return (const unsigned char *)q + j * key_size();
}

/* The query stream: same for every table. rexp[rd] is the hits expected in round rd (of
 * c->lookups / rounds queries each). Established mode: --misses PCT of the keys are absent.
 * Listener mode: every key is absent from ehash (a new connection) and every lookup finds the
 * listener. */
static void make_queries(const struct bench_lookup_cfg *c, int rounds, void *q, uint64_t *rexp)
{
	uint64_t s = c->seed * 31 + 7, per = c->lookups / (uint64_t)rounds;
	bool listener = c->mode == BENCH_LOOKUP_LISTENER;

	memset(rexp, 0, (size_t)rounds * sizeof(*rexp));
	for (uint64_t j = 0; j < per * (uint64_t)rounds; j++) {
		/* The established draw stays the same with or without --misses. */
		bool miss = (int)(bench_rand(&s) % 100) < c->misses_pct || listener;

		void *k = (unsigned char *)q + j * key_size();

		if (miss)
			key_at(c->sockets + bench_rand(&s) % (UINT32_MAX - c->sockets), c->seed, k);
		else
			key_at(bench_rand(&s) % c->sockets, c->seed, k);
		if (!miss || listener)
			rexp[j / per]++;
	}
}

/* ---- the connection's own state ---- */

/* Bytes of each socket's caller data (socktab) or stand-in object (peers) for --touch: whole
 * cache lines, so the area read is always there. */
static size_t area_bytes(int touch)
{
	return ((size_t)touch + 63) & ~(size_t)63;
}

/* Fill an area with words derived from the key's index, so every line is really there (not the
 * shared zero page) and reads of it give data. */
static void area_fill(void *p, size_t bytes, uint64_t i)
{
	for (size_t w = 0; w < bytes / 8; w++) {
		uint64_t v = i * 0x9e3779b97f4a7c15ull + w;

		memcpy((unsigned char *)p + w * 8, &v, 8);
	}
}

/* Read @words 8-byte words of an area and sum them: the per-packet reads of a stack. */
static inline uint64_t area_touch(const void *p, unsigned words)
{
	uint64_t sum = 0;

	for (unsigned w = 0; w < words; w++) {
		uint64_t v;

		memcpy(&v, (const unsigned char *)p + (size_t)w * 8, 8);
		sum += v;
	}
	return sum;
}

/* Where the sums of the touched bytes end up, so the compiler keeps the loads. */
static _Atomic uint64_t touch_sink;

/* ---- socktab ---- */

struct st_table {
	struct socktab_net *owner, *net;
	struct socktab_sock *listener;
};

static uint32_t ehash_slots(uint64_t sockets)
{
	uint32_t slots = 1;

	while (slots < sockets && slots < (1u << 24))
		slots <<= 1;
	return slots;
}

static int slots_per_socket(const struct bench_lookup_cfg *c)
{
	return c->slots_per_socket ? c->slots_per_socket : 2;
}

/* The parameters of the benchmark's socktab nets. */
static void st_params(const struct bench_lookup_cfg *c, uint64_t sockets,
		      struct socktab_net_params *p)
{
	socktab_net_params_init(p);
	p->ehash_entries = ehash_slots(sockets * (uint64_t)slots_per_socket(c));
	p->fixed_secret = 1;
	memcpy(p->secret, &c->seed, sizeof(c->seed));
	p->sock_priv_size = area_bytes(c->touch);
}

/* The server's address of the run's family and a listener on it in @net: 127.0.0.1:80, or
 * [::1]:80 with -6. */
static struct socktab_sock *st_listen(struct socktab_net *net, struct sockaddr_storage *la)
{
	struct socktab_sock *ln;
	socklen_t len;

	memset(la, 0, sizeof(*la));
	if (lk_v6()) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)la;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(80);
		a6->sin6_addr = in6addr_loopback;
		len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)la;

		a4->sin_family = AF_INET;
		a4->sin_port = htons(80);
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a4);
	}
	ln = socktab_socket(net, SOCKTAB_TCP, lk_family);
	if (!ln || socktab_bind(ln, (struct sockaddr *)la, len) || socktab_listen(ln, 128))
		return NULL;
	return ln;
}

/* Connection @i of the listener @ln: a child in ESTABLISHED with its caller data filled. */
static struct socktab_sock *st_connection(const struct bench_lookup_cfg *c,
					  struct socktab_sock *ln, const struct sockaddr_storage *la,
					  uint64_t i)
{
	struct sockaddr_storage ra = { 0 };
	struct socktab_sock *child;
	socklen_t len;
	void *priv;

	if (lk_v6()) {
		struct sockaddr_in6 *r6 = (struct sockaddr_in6 *)&ra;
		struct peer_key6 k;

		key6_of(i, c->seed, &k);
		r6->sin6_family = AF_INET6;
		r6->sin6_addr = k.saddr;
		r6->sin6_port = k.sport;
		len = sizeof(*r6);
	} else {
		struct sockaddr_in *r4 = (struct sockaddr_in *)&ra;
		struct peer_key k;

		key_of(i, c->seed, &k);
		r4->sin_family = AF_INET;
		r4->sin_addr.s_addr = k.saddr;
		r4->sin_port = k.sport;
		len = sizeof(*r4);
	}
	child = socktab_sock_new_child(ln, (const struct sockaddr *)la, (struct sockaddr *)&ra,
				       len, SOCKTAB_LOOPBACK_IFINDEX, 0);
	if (!child)
		return NULL;
	socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED);
	if ((priv = socktab_sock_priv(child)))
		area_fill(priv, area_bytes(c->touch), i);
	return child;
}

/* A generous estimate of a socktab net of @sockets connections (a socket is 64 bytes, its
 * caller data and a 96-byte cold part, plus ehash slots; the estimate leaves room for a larger
 * layout). */
static uint64_t st_bytes_estimate(const struct bench_lookup_cfg *c, uint64_t sockets)
{
	return sockets * (512 + area_bytes(c->touch)) +
	       (uint64_t)ehash_slots(sockets * (uint64_t)slots_per_socket(c)) * 8;
}

/* Does @need fit in MemAvailable with 512 MiB to spare? If not, say why in @why. */
static bool fits(uint64_t need, char *why, size_t len)
{
	uint64_t avail = bench_mem_available_bytes();

	if (!avail || need + (512ull << 20) <= avail)
		return true;
	snprintf(why, len, "needs about %llu MiB, MemAvailable is %llu MiB",
		 (unsigned long long)(need >> 20), (unsigned long long)(avail >> 20));
	return false;
}

static int st_build(const struct bench_lookup_cfg *c, bool shared, struct st_table *st)
{
	struct socktab_net_params p;
	struct sockaddr_storage la;
	struct bench_progress prog;
	char why[128];
	void *priv;

	if (!fits(st_bytes_estimate(c, c->sockets), why, sizeof(why))) {
		fprintf(stderr, "bench lookup: %llu sockets in socktab: %s\n",
			(unsigned long long)c->sockets, why);
		return -ENOMEM;
	}
	st_params(c, c->sockets, &p);
	st->owner = socktab_net_new(&p);
	if (!st->owner)
		return -errno;
	st->net = st->owner;
	if (shared) {
		/* The sockets live in a second net that uses the first one's tables. */
		p.share_tables_with = st->owner;
		st->net = socktab_net_new(&p);
		if (!st->net)
			return -errno;
	}
	st->listener = st_listen(st->net, &la);
	if (!st->listener)
		return -EINVAL;
	if ((priv = socktab_sock_priv(st->listener)))
		area_fill(priv, area_bytes(c->touch), UINT32_MAX);
	bench_progress_init(&prog, 1000000000ull);
	for (uint64_t i = 0; i < c->sockets; i++) {
		if (!st_connection(c, st->listener, &la, i)) {
			int err = errno;

			fprintf(stderr, "bench lookup: socket %llu: %s\n", (unsigned long long)i,
				strerror(err));
			return -err;
		}
		if (c->progress && !(i & 0xffff))
			bench_progress(&prog, "lookup: %llu/%llu sockets in %s",
				       (unsigned long long)i, (unsigned long long)c->sockets,
				       shared ? "socktab-shared" : "socktab");
	}
	return 0;
}

static void st_free(struct st_table *st)
{
	if (st->net && st->net != st->owner)
		socktab_net_free(st->net);
	if (st->owner)
		socktab_net_free(st->owner);
}

/* One found socket: read its caller data (a NULL area, e.g. a TIME_WAIT entry's, reads
 * nothing). */
static inline uint64_t st_touch(struct socktab_sock *sk, unsigned words)
{
	const void *priv;

	if (!words || !(priv = socktab_sock_priv(sk)))
		return 0;
	return area_touch(priv, words);
}

/* The RCU-scoped lookup of @k: established, or the full TCP lookup of a SYN flood. */
static inline struct socktab_sock *st_lookup_rcu(struct socktab_net *net, const struct peer_key *k,
						 bool listener)
{
	return listener ? socktab_lookup_tcp4_rcu(net, k->saddr, k->sport, k->daddr, k->dport,
						  SOCKTAB_LOOPBACK_IFINDEX, 0)
			: socktab_lookup_established4_rcu(net, k->saddr, k->sport, k->daddr,
							  k->dport, SOCKTAB_LOOPBACK_IFINDEX, 0);
}

/* The RCU-scoped IPv6 lookup of @k: established, or the full TCP lookup of a SYN flood. */
static inline struct socktab_sock *st_lookup6_rcu(struct socktab_net *net,
						  const struct peer_key6 *k, bool listener)
{
	return listener ? socktab_lookup_tcp6_rcu(net, &k->saddr, k->sport, &k->daddr, k->dport,
						  SOCKTAB_LOOPBACK_IFINDEX, 0)
			: socktab_lookup_established6_rcu(net, &k->saddr, k->sport, &k->daddr,
							  k->dport, SOCKTAB_LOOPBACK_IFINDEX, 0);
}

/* Key @j of @q4 or @q6 (the other NULL), referenced or RCU-scoped. */
static inline __attribute__((always_inline)) struct socktab_sock *
st_one(struct socktab_net *net, const struct peer_key *q4, const struct peer_key6 *q6, uint64_t j,
       bool listener, bool ref)
{
	if (q6 && ref)
		return listener ? socktab_lookup_tcp6(net, &q6[j].saddr, q6[j].sport, &q6[j].daddr,
						      q6[j].dport, SOCKTAB_LOOPBACK_IFINDEX, 0)
				: socktab_lookup_established6(net, &q6[j].saddr, q6[j].sport,
							      &q6[j].daddr, q6[j].dport,
							      SOCKTAB_LOOPBACK_IFINDEX, 0);
	if (q6)
		return st_lookup6_rcu(net, &q6[j], listener);
	if (ref)
		return listener ? socktab_lookup_tcp4(net, q4[j].saddr, q4[j].sport, q4[j].daddr,
						      q4[j].dport, SOCKTAB_LOOPBACK_IFINDEX, 0)
				: socktab_lookup_established4(net, q4[j].saddr, q4[j].sport,
							      q4[j].daddr, q4[j].dport,
							      SOCKTAB_LOOPBACK_IFINDEX, 0);
	return st_lookup_rcu(net, &q4[j], listener);
}

/* How socktab's lookups are scoped: on an online thread with a quiescent state per ST_QS_EVERY
 * lookups or per burst, as a poll-mode core runs (socktab's own rows); one read-side section per
 * lookup or burst (socktab-sections); referenced lookups (socktab-ref). */
enum st_scope { ST_ONLINE, ST_SECTIONS, ST_REFS };
#define ST_QS_EVERY 64

/* The single lookups of st_lookups() and st_lookups6() (@q4 or @q6), one loop per scope: each
 * is inlined with its scope and family fixed, so the timed loop has no test of either. */
static inline __attribute__((always_inline)) void
st_singles_in(struct socktab_net *net, const struct peer_key *q4, const struct peer_key6 *q6,
	      uint64_t n, bool listener, enum st_scope scope, unsigned words, uint64_t *hits,
	      uint64_t *sum)
{
	for (uint64_t j = 0; j < n; j++) {
		struct socktab_sock *sk;

		if (scope == ST_SECTIONS)
			socktab_rcu_read_lock();
		sk = st_one(net, q4, q6, j, listener, scope == ST_REFS);
		if (sk) {
			++*hits;
			*sum += st_touch(sk, words);
			if (scope == ST_REFS)
				socktab_sock_put(sk);
		}
		if (scope == ST_SECTIONS)
			socktab_rcu_read_unlock();
		else if (scope == ST_ONLINE && j % ST_QS_EVERY == ST_QS_EVERY - 1)
			socktab_quiescent_state();
	}
}

static inline __attribute__((always_inline)) void
st_singles(struct socktab_net *net, const struct peer_key *q4, const struct peer_key6 *q6,
	   uint64_t n, bool listener, enum st_scope scope, unsigned words, uint64_t *hits,
	   uint64_t *sum)
{
	if (scope == ST_REFS)
		st_singles_in(net, q4, q6, n, listener, ST_REFS, words, hits, sum);
	else if (scope == ST_ONLINE)
		st_singles_in(net, q4, q6, n, listener, ST_ONLINE, words, hits, sum);
	else
		st_singles_in(net, q4, q6, n, listener, ST_SECTIONS, words, hits, sum);
}

static uint64_t st_lookups(struct socktab_net *net, const struct peer_key *q, uint64_t n,
			   int burst, bool listener, enum st_scope scope, unsigned words)
{
	uint64_t hits = 0, sum = 0;
	bool refs = scope == ST_REFS, online = scope == ST_ONLINE;

	if (online && socktab_thread_online()) {
		fprintf(stderr, "bench lookup: socktab_thread_online failed\n");
		exit(1);
	}
	if (burst > 1) {
		struct socktab_sock *out[256];
		struct socktab_tuple4 k[256];
		unsigned flags = (listener ? 0 : SOCKTAB_LOOKUP_ESTABLISHED) |
				 (refs ? 0 : SOCKTAB_LOOKUP_NOREF);

		for (uint64_t j = 0; j < n; j += (uint64_t)burst) {
			unsigned b = n - j < (uint64_t)burst ? (unsigned)(n - j) : (unsigned)burst;

			/* socktab's burst key also carries the ingress device. */
			for (unsigned i = 0; i < b; i++)
				k[i] = (struct socktab_tuple4){ q[j + i].saddr, q[j + i].daddr,
								q[j + i].sport, q[j + i].dport,
								SOCKTAB_LOOPBACK_IFINDEX, 0 };
			if (scope == ST_SECTIONS)
				socktab_rcu_read_lock(); /* one section for the whole burst */
			socktab_lookup_tcp_burst(net, k, b, out, flags);
			for (unsigned i = 0; i < b; i++)
				if (out[i]) {
					hits++;
					sum += st_touch(out[i], words);
					if (refs)
						socktab_sock_put(out[i]);
				}
			if (scope == ST_SECTIONS)
				socktab_rcu_read_unlock();
			else if (online)
				socktab_quiescent_state(); /* between bursts */
		}
	} else {
		st_singles(net, q, NULL, n, listener, scope, words, &hits, &sum);
	}
	if (online)
		socktab_thread_offline();
	atomic_fetch_add_explicit(&touch_sink, sum, memory_order_relaxed);
	return hits;
}

/* st_lookups() with -6: the IPv6 lookups, scoped the same way. A burst is
 * socktab_lookup_batch6() (the IPv6 form of the pipeline socktab_lookup_tcp_burst() runs for
 * IPv4), and a hit's caller data is the area the batch returns with it. */
static uint64_t st_lookups6(struct socktab_net *net, const struct peer_key6 *q, uint64_t n,
			    int burst, bool listener, enum st_scope scope, unsigned words)
{
	uint64_t hits = 0, sum = 0;
	bool refs = scope == ST_REFS, online = scope == ST_ONLINE;

	if (online && socktab_thread_online()) {
		fprintf(stderr, "bench lookup: socktab_thread_online failed\n");
		exit(1);
	}
	if (burst > 1) {
		struct socktab_hit out[256];
		struct socktab_tuple6 k[256];
		unsigned flags = (listener ? 0 : SOCKTAB_LOOKUP_ESTABLISHED) |
				 (refs ? 0 : SOCKTAB_LOOKUP_NOREF);

		for (uint64_t j = 0; j < n; j += (uint64_t)burst) {
			unsigned b = n - j < (uint64_t)burst ? (unsigned)(n - j) : (unsigned)burst;

			/* socktab's batch key also carries the ingress device. */
			for (unsigned i = 0; i < b; i++)
				k[i] = (struct socktab_tuple6){ q[j + i].saddr, q[j + i].daddr,
								q[j + i].sport, q[j + i].dport,
								SOCKTAB_LOOPBACK_IFINDEX, 0 };
			if (scope == ST_SECTIONS)
				socktab_rcu_read_lock(); /* one section for the whole burst */
			socktab_lookup_batch6(net, SOCKTAB_TCP, k, b, out, flags);
			for (unsigned i = 0; i < b; i++)
				if (out[i].sk) {
					hits++;
					if (words && out[i].priv)
						sum += area_touch(out[i].priv, words);
					if (refs)
						socktab_sock_put(out[i].sk);
				}
			if (scope == ST_SECTIONS)
				socktab_rcu_read_unlock();
			else if (online)
				socktab_quiescent_state(); /* between bursts */
		}
	} else {
		st_singles(net, NULL, q, n, listener, scope, words, &hits, &sum);
	}
	if (online)
		socktab_thread_offline();
	atomic_fetch_add_explicit(&touch_sink, sum, memory_order_relaxed);
	return hits;
}

/* ---- peers ---- */

/* @q: @n keys of @stride bytes each (the query stream). */
static uint64_t peer_lookups(const struct peer_ops *ops, void *t, const void *q, size_t stride,
			     uint64_t n, int burst, unsigned words, bool *native)
{
	const unsigned char *qb = q;

	uint64_t hits = 0, sum = 0;

	if (burst > 1 && ops->lookup_burst) {
		void *vals[256];

		if (burst > ops->burst_max)
			burst = ops->burst_max;
		*native = true;
		for (uint64_t j = 0; j < n; j += (uint64_t)burst) {
			int b = n - j < (uint64_t)burst ? (int)(n - j) : burst;

			ops->lookup_burst(t, qb + j * stride, stride, b, vals);
			for (int i = 0; i < b; i++)
				if (vals[i]) {
					hits++;
					sum += words ? area_touch(vals[i], words)
						     : *(volatile uint64_t *)vals[i];
				}
		}
	} else {
		for (uint64_t j = 0; j < n; j++) {
			void *v = ops->lookup(t, qb + j * stride);

			if (v) {
				hits++;
				sum += words ? area_touch(v, words) : *(volatile uint64_t *)v;
			}
		}
	}
	atomic_fetch_add_explicit(&touch_sink, sum, memory_order_relaxed);
	return hits;
}

/* A built table of any kind. */
struct built {
	enum bench_table t;
	struct st_table own;   /* socktab tables built for this entry */
	struct st_table *st;   /* the socktab table it looks up (socktab-ref, -sections:
				* socktab's) */
	const struct peer_ops *ops;
	void *tab;
	unsigned char *objs;   /* peers: one object per key, obj_size bytes each */
	size_t obj_size;
};

static size_t peer_obj_size(const struct bench_lookup_cfg *c)
{
	return c->touch > 64 ? area_bytes(c->touch) : 64;
}

static int peer_build(const struct bench_lookup_cfg *c, struct built *b,
		      struct bench_lookup_result *r)
{
	uint64_t need = b->ops->bytes_estimate(c->sockets, key_len()) + c->sockets * b->obj_size;
	struct bench_progress prog;
	char why[128];

	/* A table that would not fit is skipped (with socktab's already built). */
	if (!fits(need, why, sizeof(why))) {
		snprintf(r->why, sizeof(r->why), "not built: %s", why);
		return -ENOMEM;
	}
	if (!(b->objs = aligned_alloc(64, c->sockets * b->obj_size))) {
		snprintf(r->why, sizeof(r->why), "not built: %llu objects: out of memory",
			 (unsigned long long)c->sockets);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < c->sockets; i++)
		area_fill(b->objs + i * b->obj_size, b->obj_size, i);
	if (!(b->tab = b->ops->create(c->sockets, key_len()))) {
		snprintf(r->why, sizeof(r->why), "not built: %s could not create a table of %llu",
			 b->ops->name, (unsigned long long)c->sockets);
		return -ENOMEM;
	}
	bench_progress_init(&prog, 1000000000ull);
	for (uint64_t i = 0; i < c->sockets; i++) {
		struct peer_key6 k; /* the larger of the two keys */
		int err;

		key_at(i, c->seed, &k);
		if ((err = b->ops->insert(b->tab, &k, b->objs + i * b->obj_size))) {
			snprintf(r->why, sizeof(r->why), "not built: insert %llu of %llu: %s",
				 (unsigned long long)i, (unsigned long long)c->sockets,
				 strerror(-err));
			return err;
		}
		if (c->progress && !(i & 0xffff))
			bench_progress(&prog, "lookup: %llu/%llu keys in %s", (unsigned long long)i,
				       (unsigned long long)c->sockets, b->ops->name);
	}
	return 0;
}

static void unbuild(struct built *b)
{
	if (bench_table_is_socktab(b->t)) {
		st_free(&b->own);
		return;
	}
	if (b->tab)
		b->ops->destroy(b->tab);
	free(b->objs);
	b->tab = NULL;
	b->objs = NULL;
}

/* Build @b; @socktab is the plain socktab table when already built (socktab-ref and
 * socktab-sections use it). */
static int build(const struct bench_lookup_cfg *c, enum bench_table t, struct built *b,
		 struct st_table *socktab, struct bench_lookup_result *r)
{
	memset(b, 0, sizeof(*b));
	b->t = t;
	b->st = &b->own;
	if ((t == BENCH_TABLE_SOCKTAB_REF || t == BENCH_TABLE_SOCKTAB_SECTIONS) && socktab) {
		b->st = socktab;
		return 0;
	}
	if (bench_table_is_socktab(t))
		return st_build(c, t == BENCH_TABLE_SOCKTAB_SHARED, &b->own);
	b->ops = peer_of(t);
	if (!b->ops)
		return -ENOTSUP;
	b->obj_size = peer_obj_size(c);
	return peer_build(c, b, r);
}

static unsigned touch_words(const struct bench_lookup_cfg *c)
{
	return (unsigned)(c->touch + 7) / 8;
}

static uint64_t pass(const struct built *b, const struct bench_lookup_cfg *c, const void *q,
		     uint64_t n, bool *native)
{
	enum st_scope scope = b->t == BENCH_TABLE_SOCKTAB_REF	       ? ST_REFS
			      : b->t == BENCH_TABLE_SOCKTAB_SECTIONS ? ST_SECTIONS
								     : ST_ONLINE;

	if (b->ops)
		return peer_lookups(b->ops, b->tab, q, key_size(), n, c->burst, touch_words(c),
				    native);
	*native = c->burst > 1;
	if (lk_v6())
		return st_lookups6(b->st->net, q, n, c->burst, c->mode == BENCH_LOOKUP_LISTENER,
				   scope, touch_words(c));
	return st_lookups(b->st->net, q, n, c->burst, c->mode == BENCH_LOOKUP_LISTENER, scope,
			  touch_words(c));
}

/* ---- reader threads ---- */

struct reader {
	pthread_t th;
	const struct built *b;
	const struct bench_lookup_cfg *c;
	const void *q; /* this thread's share of the round's queries (its keys) */
	uint64_t n;
	pthread_barrier_t *go;
	uint64_t hits, t0, t1, cpu_ns; /* cpu_ns: the thread's CPU time in its pass */
	bool native;
	bool counted; /* the library counts (-Dcontention_counters): the pass's counts below */
	struct socktab_thread_counts counts;
};

/* The library's counts of the calling thread since @c0 into @d (false: it does not count). */
static bool counts_since(const struct socktab_thread_counts *c0, struct socktab_thread_counts *d)
{
	struct socktab_thread_counts c1;

	if (socktab_thread_counts(&c1))
		return false;
	d->locks = c1.locks - c0->locks;
	d->locks_contended = c1.locks_contended - c0->locks_contended;
	d->atomic_rmw = c1.atomic_rmw - c0->atomic_rmw;
	d->atomic_stores = c1.atomic_stores - c0->atomic_stores;
	return true;
}

/*
 * The writer beside the readers (--writer): connections of its own come and go on the table the
 * readers look up (a child of the same listener, closed at once), from 198.51.100.0/24 (or
 * 2001:db8::/96), which no query's key has: every insert and removal takes the locks and writes
 * the slots readers walk.
 */
struct writer {
	pthread_t th;
	const struct built *b;
	_Atomic bool stop;
	uint64_t ops;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct st_table *st = w->b->st;
	struct sockaddr_storage la = { 0 }, ra = { 0 };
	socklen_t len;

	socktab_thread_register();
	if (lk_v6()) {
		struct sockaddr_in6 *l6 = (struct sockaddr_in6 *)&la, *r6 = (struct sockaddr_in6 *)&ra;

		l6->sin6_family = r6->sin6_family = AF_INET6;
		l6->sin6_port = htons(80);
		l6->sin6_addr = in6addr_loopback;
		inet_pton(AF_INET6, "2001:db8::", &r6->sin6_addr);
		len = sizeof(*l6);
	} else {
		struct sockaddr_in *l4 = (struct sockaddr_in *)&la, *r4 = (struct sockaddr_in *)&ra;

		l4->sin_family = r4->sin_family = AF_INET;
		l4->sin_port = htons(80);
		l4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*l4);
	}
	/* Bounded: the readers stop it, or 100 M connections do. */
	for (uint64_t j = 0; !atomic_load(&w->stop) && j < 100000000ull; j++) {
		uint32_t a = 0xc6336400u | (uint32_t)(j & 0xff); /* 198.51.100.x */
		uint16_t port = htons((uint16_t)(1024 + ((j >> 8) & 0x3ff)));
		struct socktab_sock *child;

		if (lk_v6()) {
			((struct sockaddr_in6 *)&ra)->sin6_addr.s6_addr32[3] = htonl(a);
			((struct sockaddr_in6 *)&ra)->sin6_port = port;
		} else {
			((struct sockaddr_in *)&ra)->sin_addr.s_addr = htonl(a);
			((struct sockaddr_in *)&ra)->sin_port = port;
		}
		child = socktab_sock_new_child(st->listener, (const struct sockaddr *)&la,
					       (const struct sockaddr *)&ra, len,
					       SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (child) {
			socktab_close(child);
			w->ops++;
		}
	}
	socktab_thread_unregister();
	return NULL;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	struct socktab_thread_counts c0;

	socktab_thread_register();
	socktab_set_rx_cpu(0); /* the table's queue (top comment) */
	pthread_barrier_wait(r->go);
	r->counted = socktab_thread_counts(&c0) == 0;
	r->cpu_ns = thread_cpu_ns();
	r->t0 = bench_now_ns();
	r->hits = pass(r->b, r->c, r->q, r->n, &r->native);
	r->t1 = bench_now_ns();
	r->cpu_ns = thread_cpu_ns() - r->cpu_ns;
	r->counted = r->counted && counts_since(&c0, &r->counts);
	socktab_thread_unregister();
	return NULL;
}

/* The reader thread of key @kp among @nt: a hash of the 4-tuple, as RSS picks a flow's queue. */
static int reader_of(const void *kp, int nt)
{
	uint32_t h;

	if (lk_v6()) {
		const struct peer_key6 *k = kp;

		h = mix32((uint32_t)k->sport << 16 | k->dport);
		for (int w = 0; w < 4; w++)
			h = mix32(h ^ k->saddr.s6_addr32[w] ^ mix32(k->daddr.s6_addr32[w]));
	} else {
		const struct peer_key *k = kp;

		h = mix32(k->saddr ^ mix32(k->daddr ^ ((uint32_t)k->sport << 16 | k->dport)));
	}
	return (int)(((uint64_t)h * (uint64_t)nt) >> 32);
}

/* Share the round's @n queries @q out among @nt reader threads by key (reader_of()): thread i's
 * are out[off[i]] to out[off[i + 1] - 1], in the round's order. */
static void share_by_key(const void *q, uint64_t n, int nt, void *out, uint64_t *off)
{
	uint64_t at[64] = { 0 };
	size_t sz = key_size();

	for (uint64_t j = 0; j < n; j++)
		at[reader_of(qat(q, j), nt)]++;
	off[0] = 0;
	for (int i = 0; i < nt; i++) {
		off[i + 1] = off[i] + at[i];
		at[i] = off[i];
	}
	for (uint64_t j = 0; j < n; j++)
		memcpy((unsigned char *)out + at[reader_of(qat(q, j), nt)]++ * sz, qat(q, j), sz);
}

/* The round's queries by c->threads threads at once, thread i the keys of its own,
 * q[off[i]] to q[off[i + 1] - 1] (share_by_key()): the same lookups as the one-thread pass,
 * shared out. Returns the aggregate rate (all of them over the time from the first thread's
 * start to the last one's end), 0 if the threads could not be set up; *hits the hits of all
 * threads. */
static double run_readers(const struct built *b, const struct bench_lookup_cfg *c,
			  const void *q, const uint64_t *off, uint64_t *hits,
			  double *cpu_share, struct bench_lookup_result *r)
{
	struct reader rd[64];
	pthread_barrier_t go;
	struct writer w = { .b = b };
	int nt = c->threads;
	uint64_t n = off[nt], t0 = UINT64_MAX, t1 = 0, cpu = 0;
	bool writer = c->writer && b->st;

	*hits = 0;
	if (pthread_barrier_init(&go, NULL, (unsigned)nt))
		return 0;
	if (writer && pthread_create(&w.th, NULL, writer_main, &w)) {
		pthread_barrier_destroy(&go);
		return 0;
	}
	for (int i = 0; i < nt; i++) {
		rd[i] = (struct reader){
			.b = b, .c = c, .q = qat(q, off[i]), .n = off[i + 1] - off[i], .go = &go
		};
		if (pthread_create(&rd[i].th, NULL, reader_main, &rd[i])) {
			/* The barrier would never open for the threads already started. */
			fprintf(stderr, "bench lookup: pthread_create failed after %d threads\n", i);
			exit(1);
		}
	}
	for (int i = 0; i < nt; i++) {
		pthread_join(rd[i].th, NULL);
		*hits += rd[i].hits;
		cpu += rd[i].cpu_ns;
		if (rd[i].t0 < t0)
			t0 = rd[i].t0;
		if (rd[i].t1 > t1)
			t1 = rd[i].t1;
		r->counted = (i == 0 || r->counted) && rd[i].counted;
		r->reader_locks += rd[i].counts.locks;
		r->reader_rmw += rd[i].counts.atomic_rmw;
		r->reader_stores += rd[i].counts.atomic_stores;
		r->reader_ops += rd[i].n;
	}
	if (writer) {
		atomic_store(&w.stop, true);
		pthread_join(w.th, NULL);
		r->writer_ops_per_sec += (double)w.ops * 1e9 / (double)(t1 - t0);
	}
	pthread_barrier_destroy(&go);
	*cpu_share = (double)cpu / ((double)(t1 - t0) * nt);
	return (double)n * 1e9 / (double)(t1 - t0);
}

#define MLP_CHAINS 16

/* A random pointer chase through 64-byte lines: one cycle through every line, @chains chains
 * spread over it so they do not meet. */
struct chase {
	struct line {
		struct line *next;
		char pad[56];
	} *lines;
	unsigned chains;
	volatile struct line *ps[MLP_CHAINS];
};

static void chase_free(struct chase *ch)
{
	free(ch->lines);
	ch->lines = NULL;
}

/* Set @ch up over @bytes (at least 1024 lines). 0 or -ENOMEM / -EINVAL. */
static int chase_init(struct chase *ch, uint64_t bytes, uint64_t seed, unsigned chains)
{
	uint64_t n = bytes / 64, s = seed;
	uint32_t *perm;

	memset(ch, 0, sizeof(*ch));
	if (chains < 1 || chains > MLP_CHAINS)
		return -EINVAL;
	if (n < 1024)
		n = 1024;
	ch->lines = aligned_alloc(64, n * sizeof(*ch->lines));
	perm = malloc(n * sizeof(*perm));
	if (!ch->lines || !perm) {
		chase_free(ch);
		free(perm);
		return -ENOMEM;
	}
	/* Sattolo's shuffle: one cycle through every line. */
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = bench_rand(&s) % i;
		uint32_t tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (uint64_t i = 0; i < n; i++)
		ch->lines[perm[i]].next = &ch->lines[perm[(i + 1) % n]];
	ch->chains = chains;
	for (unsigned k = 0; k < chains; k++)
		ch->ps[k] = &ch->lines[perm[(n / chains) * k]];
	free(perm);
	return 0;
}

/* ns per load of @ch's chains, each taking 4,000,000 / chains steps (a quarter more first, to
 * warm the TLB and caches a little). */
static double chase_run(struct chase *ch)
{
	uint64_t steps = 4000000 / ch->chains, t0, t1;

	for (uint64_t i = 0; i < steps / 4; i++)
		for (unsigned k = 0; k < ch->chains; k++)
			ch->ps[k] = ch->ps[k]->next;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < steps; i++)
		for (unsigned k = 0; k < ch->chains; k++)
			ch->ps[k] = ch->ps[k]->next;
	t1 = bench_now_ns();
	for (unsigned k = 0; k < ch->chains; k++)
		if (!ch->ps[k])
			fprintf(stderr, "unreachable\n");
	return (double)(t1 - t0) / (double)(steps * ch->chains);
}

/* ns per load of @chains independent random pointer chases through @bytes of 64-byte lines. */
static double chase_ns(uint64_t bytes, uint64_t seed, unsigned chains)
{
	struct chase ch;
	double ns;

	if (chase_init(&ch, bytes, seed, chains))
		return 0;
	ns = chase_run(&ch);
	chase_free(&ch);
	return ns;
}

/*
 * A buffer swept before every timed pass to evict what the previous pass left in the caches and
 * the TLB: otherwise a pass right after another one over the same memory (the threads after the
 * one-thread pass over the same keys, socktab-ref after socktab on the same table) would start
 * warmer than the others. Twice the last-level cache, at least 64 MiB. A cache that keeps
 * re-used lines against a one-time sweep may still hold some of them.
 */
struct flusher {
	unsigned char *buf;
	size_t bytes;
};

static void flusher_init(struct flusher *f)
{
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);

	f->bytes = (size_t)64 << 20;
	if (l3 > 0 && (size_t)l3 * 2 > f->bytes)
		f->bytes = (size_t)l3 * 2;
	f->buf = malloc(f->bytes);
	if (f->buf)
		memset(f->buf, 1, f->bytes); /* real pages, not the shared zero page */
}

static void flush_caches(const struct flusher *f)
{
	uint64_t sum = 0;

	if (!f->buf)
		return;
	for (size_t i = 0; i < f->bytes; i += 64)
		sum += ((volatile unsigned char *)f->buf)[i];
	atomic_fetch_add_explicit(&touch_sink, sum, memory_order_relaxed);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	return v[n / 2];
}

#define MAX_ROUNDS 64

int bench_lookup_run_many(const struct bench_lookup_cfg *c, const enum bench_table *t, int n,
			  struct bench_lookup_result *r)
{
	int rounds = c->rounds < 1 ? 1 : c->rounds > MAX_ROUNDS ? MAX_ROUNDS : c->rounds;
	uint64_t per = c->lookups / (uint64_t)rounds, rexp[MAX_ROUNDS];
	struct bench_lookup_cfg cc = *c;
	void *q, *qt = NULL; /* qt: a round's queries shared out by key (threads) */
	uint64_t off[64 + 1];
	struct built b[BENCH_TABLE_COUNT];
	double rate[BENCH_TABLE_COUNT][MAX_ROUNDS], rate_n[BENCH_TABLE_COUNT][MAX_ROUNDS];
	double share[BENCH_TABLE_COUNT][MAX_ROUNDS];
	double par[MAX_ROUNDS], vs[MAX_ROUNDS];
	struct st_table *socktab = NULL;
	struct flusher fl = { 0 };
	struct chase ch = { 0 };
	int si = -1; /* socktab's table among t[] */
	cpu_set_t cpus;
	bool have_cpus;
	int err = 0, nb = 0;

	if (n > BENCH_TABLE_COUNT || per == 0)
		return -EINVAL;
	if (cc.threads < 1)
		cc.threads = 1;
	if (cc.threads > 64)
		return -EINVAL;
	cc.lookups = per * (uint64_t)rounds; /* the queries the rounds time */
	if (!(q = malloc(cc.lookups * key_size())))
		return -ENOMEM;
	if ((cc.threads > 1 || cc.writer) && !(qt = malloc(per * key_size()))) {
		free(q);
		return -ENOMEM;
	}
	make_queries(&cc, rounds, q, rexp);
	/* One receive queue for every thread (top comment): the connections are made with it. */
	socktab_set_rx_cpu(0);
	/* DPDK's EAL pins the thread that starts it to its lcore; every table is timed with the
	 * CPUs this thread had before (and the reader threads inherit them). */
	have_cpus = !sched_getaffinity(0, sizeof(cpus), &cpus);
	/* Build every table first (each one's memory is the RSS it added), then time them in
	 * turn, round after round, so a burst of load on a shared machine hits all of them. */
	for (int i = 0; i < n && !err; i++) {
		uint64_t rss0 = bench_rss_bytes(), t0 = bench_now_ns();

		memset(&r[i], 0, sizeof(r[i]));
		err = build(&cc, t[i], &b[i], socktab, &r[i]);
		nb++;
		r[i].build_s = (double)(bench_now_ns() - t0) / 1e9;
		r[i].bytes = bench_rss_bytes() - rss0;
		if (t[i] == BENCH_TABLE_SOCKTAB && !err)
			socktab = b[i].st;
		if ((t[i] == BENCH_TABLE_SOCKTAB_REF || t[i] == BENCH_TABLE_SOCKTAB_SECTIONS) &&
		    b[i].st != &b[i].own) {
			/* Same table as socktab's: its memory is that one's. */
			for (int j = 0; j < i; j++)
				if (t[j] == BENCH_TABLE_SOCKTAB)
					r[i].bytes = r[j].bytes, r[i].build_s = r[j].build_s;
		}
		r[i].bytes_per_socket = (double)r[i].bytes / (double)cc.sockets;
		if (err && !bench_table_is_socktab(t[i])) {
			/* A peer that cannot be built is reported, not fatal. */
			if (!r[i].why[0])
				snprintf(r[i].why, sizeof(r[i].why), "not built: %s", strerror(-err));
			r[i].skipped = true;
			unbuild(&b[i]);
			err = 0;
			continue;
		}
		if (!err) /* warm the code and the first chains */
			pass(&b[i], &cc, q, cc.lookups < 100000 ? cc.lookups : 100000,
			     &r[i].burst_native);
	}
	if (have_cpus)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	flusher_init(&fl); /* after the builds: not part of any table's memory */
	for (int i = 0; i < n && !err; i++)
		if (t[i] == BENCH_TABLE_SOCKTAB && !r[i].skipped)
			si = i;
	/* The memory-parallelism yardstick, timed beside socktab's pass in every round, so the
	 * ratio of the two is of one moment of a machine whose speed drifts. */
	if (cc.threads > 1 || cc.writer ||
	    (si >= 0 && chase_init(&ch, r[si].bytes, c->seed, MLP_CHAINS)))
		si = -1;
	for (int rd = 0; rd < rounds && !err; rd++) {
		const void *qq = qat(q, (uint64_t)rd * per);

		if (cc.threads > 1 || cc.writer)
			share_by_key(qq, per, cc.threads, qt, off);
		for (int i = 0; i < n && !err; i++) {
			uint64_t t0, h, hn;

			if (r[i].skipped)
				continue;
			struct socktab_thread_counts c0, d;
			bool counting;

			flush_caches(&fl);
			counting = !socktab_thread_counts(&c0);
			t0 = bench_now_ns();
			h = pass(&b[i], &cc, qq, per, &r[i].burst_native);
			rate[i][rd] = (double)per * 1e9 / (double)(bench_now_ns() - t0);
			if (i == si) {
				par[rd] = chase_run(&ch);
				vs[rd] = 1e9 / rate[i][rd] / (2 * par[rd]);
			}
			/* The one-thread pass counts only when it is the whole measurement: with
			 * reader threads or a writer, their rounds are (bench.h). */
			if (cc.threads == 1 && !cc.writer && counting && counts_since(&c0, &d)) {
				r[i].counted = true;
				r[i].reader_locks += d.locks;
				r[i].reader_rmw += d.atomic_rmw;
				r[i].reader_stores += d.atomic_stores;
				r[i].reader_ops += per;
			}
			r[i].hits += h;
			if (cc.threads == 1 && !cc.writer)
				continue;
			flush_caches(&fl);
			rate_n[i][rd] = run_readers(&b[i], &cc, qt, off, &hn, &share[i][rd], &r[i]);
			if (rate_n[i][rd] == 0) {
				err = -EAGAIN;
			} else if (hn != rexp[rd]) {
				fprintf(stderr, "bench lookup: %s: %d threads found %llu of %llu keys\n",
					table_names[t[i]], cc.threads, (unsigned long long)hn,
					(unsigned long long)rexp[rd]);
				err = -EIO;
			}
		}
	}
	socktab_set_rx_cpu(-1); /* the calling thread's default again */
	for (int i = nb; i-- > 0;) /* socktab-ref's table is socktab's: free it last */
		unbuild(&b[i]);
	free(fl.buf);
	free(qt);
	free(q);
	chase_free(&ch);
	if (err)
		return err;
	if (si >= 0) {
		double lo = vs[0], hi = vs[0];

		for (int rd = 1; rd < rounds; rd++) {
			lo = vs[rd] < lo ? vs[rd] : lo;
			hi = vs[rd] > hi ? vs[rd] : hi;
		}
		r[si].mem_parallel_ns = median(par, rounds);
		r[si].vs_burst_limit = median(vs, rounds);
		r[si].vs_burst_limit_min = lo;
		r[si].vs_burst_limit_max = hi;
	}
	uint64_t expect = 0;

	for (int rd = 0; rd < rounds; rd++)
		expect += rexp[rd];
	for (int i = 0; i < n; i++) {
		if (r[i].skipped)
			continue;
		r[i].lookups_per_sec = median(rate[i], rounds);
		r[i].writer_ops_per_sec /= rounds;
		if (cc.threads > 1 || cc.writer) {
			r[i].lookups_per_sec_1thread = r[i].lookups_per_sec;
			r[i].lookups_per_sec = median(rate_n[i], rounds);
			r[i].scaling = r[i].lookups_per_sec / r[i].lookups_per_sec_1thread;
			r[i].threads_cpu_share = median(share[i], rounds);
		}
		r[i].ns_per_lookup = 1e9 / r[i].lookups_per_sec;
		r[i].rounds = rounds;
		if (r[i].hits != expect) {
			fprintf(stderr, "bench lookup: %s found %llu of %llu keys\n",
				table_names[t[i]], (unsigned long long)r[i].hits,
				(unsigned long long)expect);
			return -EIO;
		}
	}
	return 0;
}

int bench_lookup_run(const struct bench_lookup_cfg *c, enum bench_table t,
		     struct bench_lookup_result *r)
{
	return bench_lookup_run_many(c, &t, 1, r);
}

/* ---- TIME_WAIT entries ---- */

/* A clock that never moves: no entry expires while they are counted. */
static uint64_t frozen_clock(void *arg)
{
	(void)arg;
	return 1000000000ull;
}

/* In the child: make the entries, measure, write the result to @fd. */
static void tw_child(const struct bench_lookup_cfg *c, uint64_t n, int fd)
{
	struct bench_timewait_result r = { 0 };
	struct socktab_net_params p;
	struct socktab_net_stats st;
	struct socktab_net *net;
	struct socktab_sock *ln;
	struct sockaddr_storage la;
	struct bench_progress prog;
	/* Connections closed before the baseline: the pool's spare sockets the loop reuses. */
	uint64_t warm = n < 4096 ? n : 4096, rss0;
	/* RSS after each 32nd of the entries, for the slope. */
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int ns = 0;
	ssize_t w;

	socktab_thread_register();
	st_params(c, n + warm, &p);
	p.clock = frozen_clock;
	net = socktab_net_new(&p);
	if (!net || !(ln = st_listen(net, &la))) {
		snprintf(r.why, sizeof(r.why), "not measured: net: %s", strerror(errno));
		goto out;
	}
	bench_progress_init(&prog, 1000000000ull);
	rss0 = 0;
	for (uint64_t i = 0; i < n + warm; i++) {
		struct socktab_sock *sk;

		if (i == warm)
			rss0 = bench_rss_bytes();
		if (n >= 128 && i > warm && (i - warm) % (n / 32) == 0 && i - warm >= n / 4) {
			double x = (double)(i - warm), y = (double)bench_rss_bytes();

			sx += x, sy += y, sxx += x * x, sxy += x * y, ns++;
		}
		/* Opened, established, actively closed: the socket leaves a TIME_WAIT entry and
		 * goes back to the pool, where the next connection takes it. */
		int err = (sk = st_connection(c, ln, &la, i)) ? socktab_close(sk) : -errno;

		if (err) {
			snprintf(r.why, sizeof(r.why), "not measured: connection %llu: %s",
				 (unsigned long long)i, strerror(-err));
			goto out;
		}
		if (c->progress && !(i & 0xffff))
			bench_progress(&prog, "lookup: %llu/%llu TIME_WAIT entries",
				       (unsigned long long)i, (unsigned long long)(n + warm));
	}
	r.bytes = bench_rss_bytes() - rss0;
	socktab_net_stats(net, &st);
	r.pool_socks = st.pool_socks;
	/* Only the entries made after the baseline count. */
	r.entries = st.time_wait > warm ? st.time_wait - warm : 0;
	if (st.time_wait != n + warm)
		snprintf(r.why, sizeof(r.why), "not measured: %llu TIME_WAIT entries of %llu",
			 (unsigned long long)st.time_wait, (unsigned long long)(n + warm));
	else {
		r.bytes_per_entry_all = (double)r.bytes / (double)n;
		/* The least-squares slope of RSS over the last three quarters of the loop: what
		 * one more entry costs, without the sockets waiting out their grace period at any
		 * moment (a number that depends on the close rate, not on the entries) and with the
		 * 2 MiB steps of the RSS averaged out. */
		r.bytes_per_entry = ns > 2 ? (ns * sxy - sx * sy) / (ns * sxx - sx * sx)
					   : r.bytes_per_entry_all;
	}
out:
	w = write(fd, &r, sizeof(r));
	_exit(w == (ssize_t)sizeof(r) ? 0 : 1);
}

int bench_lookup_timewait(const struct bench_lookup_cfg *c, uint64_t n,
			  struct bench_timewait_result *r)
{
	int fd[2], status = 0;
	pid_t pid;
	ssize_t got;
	char why[128];

	memset(r, 0, sizeof(*r));
	if (!fits(st_bytes_estimate(c, n), why, sizeof(why))) {
		snprintf(r->why, sizeof(r->why), "not measured: %s", why);
		return 0;
	}
	if (pipe(fd))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(fd[0]);
		close(fd[1]);
		return -err;
	}
	if (pid == 0) {
		close(fd[0]);
		tw_child(c, n, fd[1]);
	}
	close(fd[1]);
	got = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || got != (ssize_t)sizeof(*r)) {
		memset(r, 0, sizeof(*r));
		snprintf(r->why, sizeof(r->why), "not measured: the child process %s",
			 WIFSIGNALED(status) ? "was killed (out of memory?)" : "failed");
	}
	return 0;
}

double bench_mem_latency_ns(uint64_t bytes, uint64_t seed)
{
	return chase_ns(bytes, seed, 1);
}

double bench_mem_parallel_ns(uint64_t bytes, uint64_t seed)
{
	return chase_ns(bytes, seed, MLP_CHAINS);
}

/* A cache level's size in KiB (sysfs, as lscpu reads it), or 0. */
static uint64_t cache_kib(int index)
{
	char path[96], buf[32];
	unsigned long long v = 0;
	char unit = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu%c", &v, &unit) < 1)
		v = 0;
	else if (unit == 'M')
		v *= 1024;
	fclose(f);
	return v;
}

/* The CPU model as /proc/cpuinfo names it, into @buf. */
/* ---- CLI ---- */

static void help(void)
{
	printf("usage: socktab bench lookup [-6] [--sockets N]\n"
	       "                            [--peer socktab|rte_hash|lfht|socktab-shared|\n"
	       "                                   socktab-ref|socktab-sections|all] [--refs]\n"
	       "                            [--mode established|listener] [--touch BYTES]\n"
	       "                            [--slots-per-socket K]\n"
	       "                            [--threads T] [--lookups L] [--burst B] [--misses PCT]\n"
	       "                            [--timewait N] [--seed S] [--rounds R] [--json]\n"
	       "defaults: --sockets 1000000 --peer all --mode established --touch 0 --threads 1\n"
	       "          --slots-per-socket 2\n"
	       "          --lookups 2*N (1M..4M; with --threads, 2M per round) --burst 1 --misses 0\n"
	       "          --timewait N --rounds 5\n"
	       "          (every table is built first, then timed in turn R times on L/R lookups\n"
	       "          each; lookups_per_sec is the median round)\n"
	       "-6, --ipv6     IPv6 keys and sockets: remote 2001:db8::/32, local [::1]:80;\n"
	       "               socktab's IPv6 lookups (batch6 with --burst), the peers' 37-byte\n"
	       "               key (addresses, ports, protocol: DPDK l3fwd's IPv6 5-tuple);\n"
	       "               else IPv4, remote random, local 127.0.0.1:80, 12-byte key\n"
	       "--touch BYTES  after each hit read BYTES (0..256) of the connection's own state:\n"
	       "               socktab's caller data (sock_priv_size), a peer's object\n"
	       "--slots-per-socket K  socktab's ehash: the power of two >= K x N slots (1..4), as a\n"
	       "               stack sizes it for its connections (each slot is 4 bytes)\n"
	       "--refs         also time socktab's referenced lookups (lookup + socktab_sock_put)\n"
	       "               on the same table, as the row socktab-ref; socktab's own row uses\n"
	       "               the RCU-scoped lookups (no reference), as the peers take none, on an\n"
	       "               online thread (a quiescent state per 64 lookups or per burst); the\n"
	       "               row socktab-sections, always there, takes a read-side section per\n"
	       "               lookup or burst on the same table\n"
	       "--threads T    also run each round on T (1..64) reader threads at once, each\n"
	       "               looking up the keys of its own sockets (a hash of the 4-tuple\n"
	       "               picks the thread, as RSS a flow's CPU), so no two threads move a\n"
	       "               connection's SO_INCOMING_CPU back and forth (R107):\n"
	       "               lookups_per_sec is their aggregate, scaling= over one thread\n"
	       "--mode listener  a SYN flood: random 4-tuples toward one listener (every lookup\n"
	       "               misses ehash and finds it); socktab tables only\n"
	       "--timewait N   TIME_WAIT entries made in a separate net to measure\n"
	       "               bytes_per_timewait= (0: skip)\n"
	       "Prints lookups_per_sec, bytes_per_socket per table, ratio_vs_<peer>= (socktab's\n"
	       "rate over the peer's) and mem_latency_ns= (a pointer chase over as much memory as\n"
	       "socktab's table). Peers built in: rte_hash %s, lfht %s; socktab-shared (a net\n"
	       "sharing another's tables) on request.\n",
	       bench_table_available(BENCH_TABLE_RTE_HASH) ? "yes" : "no (libdpdk-dev missing)",
	       bench_table_available(BENCH_TABLE_LFHT) ? "yes" : "no (liburcu-cds missing)");
}

/* The figures of one table. */
static void print_table(struct bench_out *o, const struct bench_lookup_cfg *c, enum bench_table t,
			const struct bench_lookup_result *r, const struct bench_timewait_result *tw,
			uint64_t tw_n)
{
	bench_out_begin(o);
	bench_out_str(o, "peer", table_names[t]);
	if (r->skipped) {
		bench_out_str(o, "error", r->why);
		bench_out_end(o);
		return;
	}
	bench_out_dbl(o, "lookups_per_sec", "%.0f", r->lookups_per_sec);
	bench_out_dbl(o, "ns_per_lookup", "%.1f", r->ns_per_lookup);
	if (c->threads > 1) {
		bench_out_dbl(o, "lookups_per_sec_1thread", "%.0f", r->lookups_per_sec_1thread);
		bench_out_dbl(o, "scaling", "%.2f", r->scaling);
		bench_out_dbl(o, "threads_cpu_share", "%.2f", r->threads_cpu_share);
	}
	bench_out_u64(o, "hits", r->hits);
	bench_out_u64(o, "table_bytes", r->bytes);
	bench_out_dbl(o, "bytes_per_socket", "%.1f", r->bytes_per_socket);
	bench_out_dbl(o, "build_s", "%.2f", r->build_s);
	if (t == BENCH_TABLE_SOCKTAB_REF)
		bench_out_str(o, "table", "socktab's (the same net, looked up with references)");
	if (t == BENCH_TABLE_SOCKTAB_SECTIONS)
		bench_out_str(o, "table", "socktab's (the same net, one read-side section per "
					  "lookup or burst)");
	bench_out_str(o, "burst_native", r->burst_native ? "yes" : "no");
	if (t == BENCH_TABLE_SOCKTAB && tw_n) {
		bench_out_u64(o, "timewait_entries", tw->entries);
		if (tw->why[0]) {
			bench_out_str(o, "timewait_error", tw->why);
		} else {
			bench_out_u64(o, "timewait_bytes", tw->bytes);
			bench_out_dbl(o, "bytes_per_timewait", "%.1f", tw->bytes_per_entry);
			bench_out_dbl(o, "bytes_per_timewait_all", "%.1f", tw->bytes_per_entry_all);
			bench_out_u64(o, "timewait_pool_socks", tw->pool_socks);
		}
	}
	bench_out_end(o);
}

int bench_lookup_main(int argc, char **argv)
{
	enum { O_SOCKETS = 256, O_LOOKUPS, O_PEER, O_BURST, O_MISSES, O_SEED, O_ROUNDS, O_JSON,
	       O_TOUCH, O_REFS, O_THREADS, O_MODE, O_TIMEWAIT, O_SLOTS, O_IPV6 };
	static const struct option longopts[] = {
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "lookups", required_argument, NULL, O_LOOKUPS },
		{ "peer", required_argument, NULL, O_PEER },
		{ "burst", required_argument, NULL, O_BURST },
		{ "misses", required_argument, NULL, O_MISSES },
		{ "seed", required_argument, NULL, O_SEED },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "json", no_argument, NULL, O_JSON },
		{ "touch", required_argument, NULL, O_TOUCH },
		{ "slots-per-socket", required_argument, NULL, O_SLOTS },
		{ "refs", no_argument, NULL, O_REFS },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "mode", required_argument, NULL, O_MODE },
		{ "timewait", required_argument, NULL, O_TIMEWAIT },
		{ "ipv6", no_argument, NULL, O_IPV6 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* --peer: a table of enum bench_table, or "all" (index BENCH_TABLE_COUNT) */
	static const char *const peer_names[BENCH_TABLE_COUNT + 2] = {
		[BENCH_TABLE_SOCKTAB] = "socktab",
		[BENCH_TABLE_SOCKTAB_SHARED] = "socktab-shared",
		[BENCH_TABLE_SOCKTAB_REF] = "socktab-ref",
		[BENCH_TABLE_SOCKTAB_SECTIONS] = "socktab-sections",
		[BENCH_TABLE_RTE_HASH] = "rte_hash",
		[BENCH_TABLE_LFHT] = "lfht",
		[BENCH_TABLE_COUNT] = "all",
	};
	static const char *const mode_names[] = { [BENCH_LOOKUP_ESTABLISHED] = "established",
						  [BENCH_LOOKUP_LISTENER] = "listener", NULL };
	const struct opt_parser op = { "socktab bench lookup", "h6", longopts };
	struct bench_lookup_cfg c = { .sockets = 1000000, .burst = 1, .rounds = 5, .threads = 1,
				      .slots_per_socket = 2 };
	struct bench_out o = { 0 };
	int peer = BENCH_TABLE_COUNT, opt;
	bool sel[BENCH_TABLE_COUNT] = { 0 }, refs = false, misses_set = false;
	uint64_t tw_n = UINT64_MAX;
	struct bench_lookup_result res[BENCH_TABLE_COUNT];
	struct bench_timewait_result tw = { 0 };

	c.seed = (uint64_t)time(NULL);
	c.progress = true;
	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case O_JSON:
			o.json = true;
			break;
		case O_REFS:
			refs = true;
			break;
		case '6':
		case O_IPV6:
			lk_family = AF_INET6;
			break;
		case O_SOCKETS:
			bad = opt_count(&op, "--sockets", optarg, 1, 1u << 26, &c.sockets);
			break;
		case O_LOOKUPS:
			bad = opt_count(&op, "--lookups", optarg, 1, 1000000000, &c.lookups);
			break;
		case O_PEER:
			bad = opt_choice(&op, "--peer", optarg, peer_names, &peer);
			break;
		case O_BURST:
			bad = opt_count_int(&op, "--burst", optarg, 1, 256, &c.burst);
			break;
		case O_MISSES:
			bad = opt_count_int(&op, "--misses", optarg, 0, 100, &c.misses_pct);
			misses_set = true;
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &c.seed);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 64, &c.rounds);
			break;
		case O_TOUCH:
			bad = opt_count_int(&op, "--touch", optarg, 0, 256, &c.touch);
			break;
		case O_SLOTS:
			bad = opt_count_int(&op, "--slots-per-socket", optarg, 1, 4,
					    &c.slots_per_socket);
			break;
		case O_THREADS:
			bad = opt_count_int(&op, "--threads", optarg, 1, 64, &c.threads);
			break;
		case O_MODE:
			bad = opt_choice(&op, "--mode", optarg, mode_names, &c.mode);
			break;
		case O_TIMEWAIT:
			bad = opt_count(&op, "--timewait", optarg, 0, 1u << 26, &tw_n);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (c.lookups && c.lookups < (uint64_t)c.rounds) {
		opt_fail(&op, "--lookups: %llu lookups for %d rounds (each round needs one)",
			 (unsigned long long)c.lookups, c.rounds);
		return 2;
	}
	if (c.mode == BENCH_LOOKUP_LISTENER) {
		if (misses_set && c.misses_pct) {
			opt_fail(&op, "--misses: not with --mode listener (every lookup misses ehash "
				      "and finds the listener)");
			return 2;
		}
		if (peer != BENCH_TABLE_COUNT && !bench_table_is_socktab((enum bench_table)peer)) {
			opt_fail(&op, "--peer %s: not with --mode listener (the peers have no "
				      "listeners; socktab, socktab-shared and socktab-ref do)",
				 peer_names[peer]);
			return 2;
		}
	}
	if (!c.lookups) {
		c.lookups = 2 * c.sockets;
		c.lookups = c.lookups < 1000000 ? 1000000 : c.lookups > 4000000 ? 4000000 : c.lookups;
		/* Reader threads need rounds that outlast their start-up and the machine's other
		 * work: 2M lookups per round (about 0.2 s on two vCPUs) by default. */
		if (c.threads > 1 && c.lookups < 2000000ull * (uint64_t)c.rounds)
			c.lookups = 2000000ull * (uint64_t)c.rounds;
	}
	if (tw_n == UINT64_MAX)
		tw_n = c.sockets;
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		if (peer == BENCH_TABLE_COUNT)
			sel[t] = t != BENCH_TABLE_SOCKTAB_SHARED && t != BENCH_TABLE_SOCKTAB_REF &&
				 (c.mode == BENCH_LOOKUP_ESTABLISHED ||
				  bench_table_is_socktab((enum bench_table)t));
		else
			sel[t] = peer == t;
	}
	sel[BENCH_TABLE_SOCKTAB] = true; /* the reference for every ratio */
	sel[BENCH_TABLE_SOCKTAB_SECTIONS] = true; /* what going online buys, same table */
	if (refs)
		sel[BENCH_TABLE_SOCKTAB_REF] = true;
	for (int t = 0; t < BENCH_TABLE_COUNT; t++)
		if (sel[t] && !bench_table_available((enum bench_table)t)) {
			fprintf(stderr, "bench lookup: peer %s not built in (its package was "
					"missing at build time)\n",
				table_names[t] ? table_names[t] : "?");
			if (peer != BENCH_TABLE_COUNT)
				return 2;
			sel[t] = false;
		}
	/* Before this process registers with RCU or starts a thread: the entries are made in a
	 * child process, whose memory is gone before the tables are built. */
	if (tw_n) {
		int err = bench_lookup_timewait(&c, tw_n, &tw);

		if (err)
			snprintf(tw.why, sizeof(tw.why), "not measured: %s", strerror(-err));
	}
	socktab_thread_register();
	bench_out_begin(&o);
	bench_out_str(&o, "test", "socktab_lookup");
	bench_out_u64(&o, "seed", c.seed);
	bench_out_u64(&o, "sockets", c.sockets);
	bench_out_u64(&o, "lookups", c.lookups);
	bench_out_u64(&o, "burst", (uint64_t)c.burst);
	bench_out_u64(&o, "misses_pct", (uint64_t)c.misses_pct);
	bench_out_u64(&o, "rounds", (uint64_t)c.rounds);
	bench_out_str(&o, "mode", mode_names[c.mode]);
	bench_out_str(&o, "family", lk_v6() ? "ipv6" : "ipv4");
	bench_out_u64(&o, "touch", (uint64_t)c.touch);
	bench_out_u64(&o, "slots_per_socket", (uint64_t)c.slots_per_socket);
	bench_out_u64(&o, "threads", (uint64_t)c.threads);
	bench_out_str(&o, "refs", refs ? "yes" : "no");
	if (lk_v6())
		bench_out_str(&o, "keys", c.mode == BENCH_LOOKUP_LISTENER
						  ? "ipv6 SYN flood: random remote in 2001:db8::/32 -> "
						    "listener [::1]:80 (ehash miss), beside N established"
						  : "ipv6 established, local [::1]:80, random remote in "
						    "2001:db8::/32");
	else
		bench_out_str(&o, "keys", c.mode == BENCH_LOOKUP_LISTENER
						  ? "ipv4 SYN flood: random remote -> listener 127.0.0.1:80 "
						    "(ehash miss), beside N established"
						  : "ipv4 established, local 127.0.0.1:80, random remote");
	bench_out_u64(&o, "peer_key_bytes", (uint64_t)key_len());
	{
		char model[128];

		bench_cpu_model(model, sizeof(model));
		bench_out_str(&o, "cpu", model);
		bench_out_u64(&o, "l2_kib", cache_kib(2));
		bench_out_u64(&o, "l3_kib", cache_kib(3));
	}
	bench_out_end(&o);
	enum bench_table which[BENCH_TABLE_COUNT];
	struct bench_lookup_result got[BENCH_TABLE_COUNT];
	int nw = 0, err;

	for (int t = 0; t < BENCH_TABLE_COUNT; t++)
		if (sel[t])
			which[nw++] = (enum bench_table)t;
	if ((err = bench_lookup_run_many(&c, which, nw, got))) {
		fprintf(stderr, "bench lookup: %s\n", strerror(-err));
		socktab_thread_unregister();
		return 1;
	}
	for (int i = 0; i < nw; i++)
		res[which[i]] = got[i];
	for (int t = 0; t < BENCH_TABLE_COUNT; t++)
		if (sel[t])
			print_table(&o, &c, (enum bench_table)t, &res[t], &tw, tw_n);
	bench_out_begin(&o);
	bench_out_dbl(&o, "socktab_lookups_per_sec", "%.0f", res[BENCH_TABLE_SOCKTAB].lookups_per_sec);
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		char key[64];

		if (!sel[t] || t == BENCH_TABLE_SOCKTAB || res[t].skipped)
			continue;
		snprintf(key, sizeof(key), "ratio_vs_%s", table_names[t]);
		bench_out_dbl(&o, key, "%.2f",
			      res[BENCH_TABLE_SOCKTAB].lookups_per_sec / res[t].lookups_per_sec);
	}
	/* The same against the peers for a section per lookup, as a thread that is not online. */
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		const struct bench_lookup_result *sec = &res[BENCH_TABLE_SOCKTAB_SECTIONS];
		char key[80];

		if (!sel[t] || bench_table_is_socktab((enum bench_table)t) || res[t].skipped ||
		    sec->skipped || !(sec->lookups_per_sec > 0))
			continue;
		snprintf(key, sizeof(key), "socktab-sections_ratio_vs_%s", table_names[t]);
		bench_out_dbl(&o, key, "%.2f", sec->lookups_per_sec / res[t].lookups_per_sec);
	}
	const struct bench_lookup_result *st = &res[BENCH_TABLE_SOCKTAB];
	double lat = bench_mem_latency_ns(st->bytes, c.seed);
	double par = st->mem_parallel_ns > 0 ? st->mem_parallel_ns
					     : bench_mem_parallel_ns(st->bytes, c.seed);

	bench_out_dbl(&o, "mem_latency_ns", "%.1f", lat);
	bench_out_u64(&o, "mem_latency_bytes", res[BENCH_TABLE_SOCKTAB].bytes);
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		char key[64];

		if (!sel[t] || res[t].skipped || !(res[t].lookups_per_sec > 0) || !(lat > 0))
			continue;
		snprintf(key, sizeof(key), "%s_misses_per_lookup", table_names[t]);
		bench_out_dbl(&o, key, "%.2f", 1e9 / res[t].lookups_per_sec / lat);
	}
	bench_out_dbl(&o, "mem_parallel_ns", "%.1f", par);
	bench_out_u64(&o, "mem_parallel_chains", MLP_CHAINS);
	bench_out_dbl(&o, "burst_limit_ns_per_lookup", "%.1f", 2 * par);
	if (st->vs_burst_limit > 0) {
		char range[64];

		bench_out_dbl(&o, "socktab_vs_burst_limit", "%.2f", st->vs_burst_limit);
		snprintf(range, sizeof(range), "%.2f-%.2f", st->vs_burst_limit_min,
			 st->vs_burst_limit_max);
		bench_out_str(&o, "socktab_vs_burst_limit_rounds", range);
	} else if (par > 0 && st->lookups_per_sec > 0) {
		bench_out_dbl(&o, "socktab_vs_burst_limit", "%.2f",
			      1e9 / st->lookups_per_sec / (2 * par));
	}
	bench_out_end(&o);
	bench_out_finish(&o);
	socktab_thread_unregister();
	return 0;
}
