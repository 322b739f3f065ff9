/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench lookup: established-socket lookups in socktab's ehash against other libraries'
 * hash tables holding the same 4-tuples.
 *
 * N established IPv4 4-tuples: the local side is 127.0.0.1:80 (a server), the remote address is
 * a bijective 32-bit mix of the key's index and the seed (so keys are distinct), the remote port
 * is random. socktab gets them as children of a listener (socktab_sock_new_child, then
 * ESTABLISHED) in a net whose ehash has one slot per socket; each peer gets (key -> a 64-byte
 * object standing for the socket). Then one stream of lookups, the same keys in the same order
 * for every table, --misses PCT of them for keys that are not there, is timed on one thread:
 * every table is built first, then the tables are timed in turn, R rounds of L/R lookups each,
 * and each table's figure is its median round (a burst of load on a shared machine hits every
 * table alike). The result of each hit is read once: socktab returns the socket its walk already
 * read; a peer returns a pointer the caller must follow, as a stack would follow it to the
 * socket. socktab's lookup also takes and drops a reference (the API's contract); the peers take
 * none (their readers rely on RCU or on quiescent writers).
 *
 * --burst B: tables with a batch lookup (socktab_lookup_tcp_burst, rte_hash_lookup_bulk_data up
 * to 64 keys) take B keys per call; the others (lfht) do B single lookups.
 *
 * mem_latency_ns: a random pointer chase (one dependent load per 64-byte line) over as much
 * memory as socktab's table took, so a reader sees how far a lookup is from one DRAM miss.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "bench.h"
#include "opt.h"
#include "peers/peers.h"

static const char *const table_names[BENCH_TABLE_COUNT] = {
	[BENCH_TABLE_SOCKTAB] = "socktab",
	[BENCH_TABLE_SOCKTAB_SHARED] = "socktab-shared",
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

bool bench_table_available(enum bench_table t)
{
	return t == BENCH_TABLE_SOCKTAB || t == BENCH_TABLE_SOCKTAB_SHARED || peer_of(t);
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

/* The query stream: same for every table. Returns the expected hit count. */
static uint64_t make_queries(const struct bench_lookup_cfg *c, struct peer_key *q)
{
	uint64_t s = c->seed * 31 + 7, hits = 0;

	for (uint64_t j = 0; j < c->lookups; j++) {
		if ((int)(bench_rand(&s) % 100) < c->misses_pct) {
			key_of(c->sockets + bench_rand(&s) % (UINT32_MAX - c->sockets), c->seed, &q[j]);
		} else {
			key_of(bench_rand(&s) % c->sockets, c->seed, &q[j]);
			hits++;
		}
	}
	return hits;
}

/* ---- socktab ---- */

struct st_table {
	struct socktab_net *owner, *net;
};

static int st_build(const struct bench_lookup_cfg *c, bool shared, struct st_table *st)
{
	struct socktab_net_params p;
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct socktab_sock *ln;
	struct bench_progress prog;
	uint32_t slots = 1;

	while (slots < c->sockets && slots < (1u << 24))
		slots <<= 1;
	socktab_net_params_init(&p);
	p.ehash_entries = slots;
	p.fixed_secret = 1;
	memcpy(p.secret, &c->seed, sizeof(c->seed));
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
	la.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ln = socktab_socket(st->net, SOCKTAB_TCP, AF_INET);
	if (!ln || socktab_bind(ln, (struct sockaddr *)&la, sizeof(la)) || socktab_listen(ln, 128))
		return -EINVAL;
	bench_progress_init(&prog, 1000000000ull);
	for (uint64_t i = 0; i < c->sockets; i++) {
		struct peer_key k;
		struct sockaddr_in ra = { .sin_family = AF_INET };
		struct socktab_sock *child;

		key_of(i, c->seed, &k);
		ra.sin_addr.s_addr = k.saddr;
		ra.sin_port = k.sport;
		child = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra,
					       sizeof(la), SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (!child) {
			fprintf(stderr, "bench lookup: socket %llu: %s\n", (unsigned long long)i,
				strerror(errno));
			return -errno;
		}
		socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED);
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

static uint64_t st_lookups(struct socktab_net *net, const struct peer_key *q, uint64_t n,
			   int burst)
{
	uint64_t hits = 0;

	if (burst > 1) {
		struct socktab_sock *out[256];
		struct socktab_tuple4 k[256];

		for (uint64_t j = 0; j < n; j += (uint64_t)burst) {
			unsigned b = n - j < (uint64_t)burst ? (unsigned)(n - j) : (unsigned)burst;

			/* socktab's burst key also carries the ingress device. */
			for (unsigned i = 0; i < b; i++)
				k[i] = (struct socktab_tuple4){ q[j + i].saddr, q[j + i].daddr,
								q[j + i].sport, q[j + i].dport,
								SOCKTAB_LOOPBACK_IFINDEX, 0 };
			socktab_lookup_tcp_burst(net, k, b, out, SOCKTAB_LOOKUP_ESTABLISHED);
			for (unsigned i = 0; i < b; i++)
				if (out[i]) {
					hits++;
					socktab_sock_put(out[i]);
				}
		}
		return hits;
	}
	for (uint64_t j = 0; j < n; j++) {
		struct socktab_sock *sk =
			socktab_lookup_established4(net, q[j].saddr, q[j].sport, q[j].daddr,
						    q[j].dport, SOCKTAB_LOOPBACK_IFINDEX, 0);

		if (sk) {
			hits++;
			socktab_sock_put(sk);
		}
	}
	return hits;
}

/* ---- peers ---- */

struct obj {
	uint64_t word[8]; /* 64 bytes: stands for the socket a lookup leads to */
};

static uint64_t peer_lookups(const struct peer_ops *ops, void *t, const struct peer_key *q,
			     uint64_t n, int burst, bool *native)
{
	uint64_t hits = 0, sum = 0;

	if (burst > 1 && ops->lookup_burst) {
		void *vals[256];

		if (burst > ops->burst_max)
			burst = ops->burst_max;
		*native = true;
		for (uint64_t j = 0; j < n; j += (uint64_t)burst) {
			int b = n - j < (uint64_t)burst ? (int)(n - j) : burst;

			ops->lookup_burst(t, &q[j], b, vals);
			for (int i = 0; i < b; i++)
				if (vals[i]) {
					hits++;
					sum += ((volatile struct obj *)vals[i])->word[0];
				}
		}
	} else {
		for (uint64_t j = 0; j < n; j++) {
			void *v = ops->lookup(t, &q[j]);

			if (v) {
				hits++;
				sum += ((volatile struct obj *)v)->word[0];
			}
		}
	}
	return hits + (sum & 0); /* sum keeps the loads */
}

/* A built table of any kind. */
struct built {
	enum bench_table t;
	struct st_table st;
	const struct peer_ops *ops;
	void *tab;
	struct obj *objs;
};

static int build(const struct bench_lookup_cfg *c, enum bench_table t, struct built *b)
{
	memset(b, 0, sizeof(*b));
	b->t = t;
	if (t == BENCH_TABLE_SOCKTAB || t == BENCH_TABLE_SOCKTAB_SHARED)
		return st_build(c, t == BENCH_TABLE_SOCKTAB_SHARED, &b->st);
	b->ops = peer_of(t);
	if (!b->ops)
		return -ENOTSUP;
	if (!(b->objs = calloc(c->sockets, sizeof(*b->objs))) ||
	    !(b->tab = b->ops->create(c->sockets)))
		return -ENOMEM;
	for (uint64_t i = 0; i < c->sockets; i++) {
		struct peer_key k;
		int err;

		key_of(i, c->seed, &k);
		b->objs[i].word[0] = i;
		if ((err = b->ops->insert(b->tab, &k, &b->objs[i]))) {
			fprintf(stderr, "bench lookup: %s insert %llu: %s\n", b->ops->name,
				(unsigned long long)i, strerror(-err));
			return err;
		}
	}
	return 0;
}

static void unbuild(struct built *b)
{
	if (b->t == BENCH_TABLE_SOCKTAB || b->t == BENCH_TABLE_SOCKTAB_SHARED) {
		st_free(&b->st);
		return;
	}
	if (b->tab)
		b->ops->destroy(b->tab);
	free(b->objs);
}

static uint64_t pass(const struct built *b, const struct peer_key *q, uint64_t n, int burst,
		     bool *native)
{
	if (b->ops)
		return peer_lookups(b->ops, b->tab, q, n, burst, native);
	*native = burst > 1;
	return st_lookups(b->st.net, q, n, burst);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define MAX_ROUNDS 64

int bench_lookup_run_many(const struct bench_lookup_cfg *c, const enum bench_table *t, int n,
			  struct bench_lookup_result *r)
{
	struct peer_key *q = malloc(c->lookups * sizeof(*q));
	struct built b[BENCH_TABLE_COUNT];
	double rate[BENCH_TABLE_COUNT][MAX_ROUNDS];
	int rounds = c->rounds < 1 ? 1 : c->rounds > MAX_ROUNDS ? MAX_ROUNDS : c->rounds;
	uint64_t expect, per = c->lookups / (uint64_t)rounds;
	int err = 0, nb = 0;

	if (!q || n > BENCH_TABLE_COUNT) {
		free(q);
		return -ENOMEM;
	}
	{
		struct bench_lookup_cfg timed = *c;

		timed.lookups = per * (uint64_t)rounds; /* the queries the rounds time */
		expect = make_queries(&timed, q);
	}
	/* Build every table first (each one's memory is the RSS it added), then time them in
	 * turn, round after round, so a burst of load on a shared machine hits all of them. */
	for (int i = 0; i < n && !err; i++) {
		uint64_t rss0 = bench_rss_bytes();

		memset(&r[i], 0, sizeof(r[i]));
		err = build(c, t[i], &b[i]);
		nb++;
		r[i].bytes = bench_rss_bytes() - rss0;
		if (!err) /* warm the code and the first chains */
			pass(&b[i], q, c->lookups < 100000 ? c->lookups : 100000, c->burst,
			     &r[i].burst_native);
	}
	for (int rd = 0; rd < rounds && !err; rd++)
		for (int i = 0; i < n; i++) {
			const struct peer_key *qq = q + (uint64_t)rd * per;
			uint64_t t0 = bench_now_ns();

			r[i].hits += pass(&b[i], qq, per, c->burst, &r[i].burst_native);
			rate[i][rd] = (double)per * 1e9 / (double)(bench_now_ns() - t0);
		}
	for (int i = 0; i < nb; i++)
		unbuild(&b[i]);
	free(q);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		qsort(rate[i], (size_t)rounds, sizeof(double), cmp_dbl);
		r[i].lookups_per_sec = rate[i][rounds / 2];
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

double bench_mem_latency_ns(uint64_t bytes, uint64_t seed)
{
	uint64_t n = bytes / 64, steps = 4000000, s = seed;
	struct line {
		struct line *next;
		char pad[56];
	} *lines;
	uint32_t *perm;
	volatile struct line *p;
	uint64_t t0, t1;

	if (n < 1024)
		n = 1024;
	lines = aligned_alloc(64, n * sizeof(*lines));
	perm = malloc(n * sizeof(*perm));
	if (!lines || !perm) {
		free(lines);
		free(perm);
		return 0;
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
		lines[perm[i]].next = &lines[perm[(i + 1) % n]];
	free(perm);
	p = &lines[0];
	for (uint64_t i = 0; i < steps / 4; i++) /* warm the TLB and caches a little */
		p = p->next;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < steps; i++)
		p = p->next;
	t1 = bench_now_ns();
	if (!p)
		fprintf(stderr, "unreachable\n");
	free(lines);
	return (double)(t1 - t0) / (double)steps;
}

/* ---- CLI ---- */

static void help(void)
{
	printf("usage: socktab bench lookup [--sockets N] [--peer socktab|rte_hash|lfht|all]\n"
	       "                            [--lookups L] [--burst B] [--misses PCT] [--seed S]\n"
	       "                            [--rounds R] [--json]\n"
	       "defaults: --sockets 1000000 --peer all --lookups 2*N (1M..4M) --burst 1 --misses 0\n"
	       "          --rounds 5 (every table is built first, then timed in turn R times on\n"
	       "          L/R lookups each; lookups_per_sec is the median round)\n"
	       "Prints lookups_per_sec per table, ratio_vs_<peer>= (socktab's rate over the "
	       "peer's)\nand mem_latency_ns= (a pointer chase over as much memory as socktab's "
	       "table).\nPeers built in: rte_hash %s, lfht %s; socktab-shared (a net sharing "
	       "another's tables) on request.\n",
	       bench_table_available(BENCH_TABLE_RTE_HASH) ? "yes" : "no (libdpdk-dev missing)",
	       bench_table_available(BENCH_TABLE_LFHT) ? "yes" : "no (liburcu-cds missing)");
}

int bench_lookup_main(int argc, char **argv)
{
	enum { O_SOCKETS = 256, O_LOOKUPS, O_PEER, O_BURST, O_MISSES, O_SEED, O_ROUNDS, O_JSON };
	static const struct option longopts[] = {
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "lookups", required_argument, NULL, O_LOOKUPS },
		{ "peer", required_argument, NULL, O_PEER },
		{ "burst", required_argument, NULL, O_BURST },
		{ "misses", required_argument, NULL, O_MISSES },
		{ "seed", required_argument, NULL, O_SEED },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* --peer: a table of enum bench_table, or "all" (index BENCH_TABLE_COUNT) */
	static const char *const peer_names[BENCH_TABLE_COUNT + 2] = {
		[BENCH_TABLE_SOCKTAB] = "socktab",
		[BENCH_TABLE_SOCKTAB_SHARED] = "socktab-shared",
		[BENCH_TABLE_RTE_HASH] = "rte_hash",
		[BENCH_TABLE_LFHT] = "lfht",
		[BENCH_TABLE_COUNT] = "all",
	};
	const struct opt_parser op = { "socktab bench lookup", "h", longopts };
	struct bench_lookup_cfg c = { .sockets = 1000000, .burst = 1, .rounds = 5 };
	struct bench_out o = { 0 };
	int peer = BENCH_TABLE_COUNT, opt;
	bool sel[BENCH_TABLE_COUNT] = { 0 };
	struct bench_lookup_result res[BENCH_TABLE_COUNT];

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
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &c.seed);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 64, &c.rounds);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		opt_fail(&op, "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (c.lookups && c.lookups < (uint64_t)c.rounds) {
		opt_fail(&op, "--lookups: %llu lookups for %d rounds (each round needs one)",
			 (unsigned long long)c.lookups, c.rounds);
		return 2;
	}
	if (!c.lookups) {
		c.lookups = 2 * c.sockets;
		c.lookups = c.lookups < 1000000 ? 1000000 : c.lookups > 4000000 ? 4000000 : c.lookups;
	}
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		if (peer == BENCH_TABLE_COUNT)
			sel[t] = t != BENCH_TABLE_SOCKTAB_SHARED;
		else
			sel[t] = peer == t;
	}
	sel[BENCH_TABLE_SOCKTAB] = true; /* the reference for every ratio */
	for (int t = 0; t < BENCH_TABLE_COUNT; t++)
		if (sel[t] && !bench_table_available((enum bench_table)t)) {
			fprintf(stderr, "bench lookup: peer %s not built in (its package was "
					"missing at build time)\n",
				table_names[t] ? table_names[t] : "?");
			if (peer != BENCH_TABLE_COUNT)
				return 2;
			sel[t] = false;
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
	bench_out_str(&o, "keys", "ipv4 established, local 127.0.0.1:80, random remote");
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
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		if (!sel[t])
			continue;
		bench_out_begin(&o);
		bench_out_str(&o, "peer", table_names[t]);
		bench_out_dbl(&o, "lookups_per_sec", "%.0f", res[t].lookups_per_sec);
		bench_out_dbl(&o, "ns_per_lookup", "%.1f", res[t].ns_per_lookup);
		bench_out_u64(&o, "hits", res[t].hits);
		bench_out_u64(&o, "table_bytes", res[t].bytes);
		bench_out_str(&o, "burst_native", res[t].burst_native ? "yes" : "no");
		bench_out_end(&o);
	}
	bench_out_begin(&o);
	bench_out_dbl(&o, "socktab_lookups_per_sec", "%.0f", res[BENCH_TABLE_SOCKTAB].lookups_per_sec);
	for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
		char key[64];

		if (!sel[t] || t == BENCH_TABLE_SOCKTAB)
			continue;
		snprintf(key, sizeof(key), "ratio_vs_%s", table_names[t]);
		bench_out_dbl(&o, key, "%.2f",
			      res[BENCH_TABLE_SOCKTAB].lookups_per_sec / res[t].lookups_per_sec);
	}
	bench_out_dbl(&o, "mem_latency_ns", "%.1f",
		      bench_mem_latency_ns(res[BENCH_TABLE_SOCKTAB].bytes, c.seed));
	bench_out_u64(&o, "mem_latency_bytes", res[BENCH_TABLE_SOCKTAB].bytes);
	bench_out_end(&o);
	bench_out_finish(&o);
	socktab_thread_unregister();
	return 0;
}
