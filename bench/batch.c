/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench batch: a poll loop's lookups, one packet at a time against a batch at a time,
 * for TCP and UDP over IPv4 and IPv6. For each kind a net holds N sockets: TCP connections
 * (children of one listener, from N remote addresses) or connected UDP sockets (to N remote
 * ports of the loopback address). The loop looks up random keys of those sockets and reads
 * --touch bytes of each hit's caller area, as a stack reads its connection state:
 *   single: per key, a read-side section around one RCU-scoped lookup and socktab_sock_priv();
 *   batch:  per --batch keys, one section around socktab_lookup_batch4/6(..., NOREF), whose
 *           results carry the area.
 * Rounds of the two modes alternate in one run; each mode's figure is the median of its rounds,
 * and batch_speedup is single / batch in nanoseconds per lookup.
 *
 * --mixed: one net holds the four kinds, a quarter of N each, and every key is of a random kind.
 * Per --batch keys, one section around either socktab_lookup_mixed() on the burst as it came
 * (mixed), or the four per-kind calls socktab_lookup_batch4/6() on the same keys sorted by kind
 * beforehand, as a stack that parses into per-kind arrays has them (per_kind); both read the
 * areas. The modes take turns every 64 bursts, and swap turns from one round to the next, so
 * two rounds look every key up in each mode and a change of the machine's load falls on both
 * alike; each is timed by the thread's CPU time (preemptions fall in neither). mixed_vs_per_kind
 * is mixed / per_kind, the medians of the rounds' nanoseconds per key; mixed_vs_burst_limit is
 * mixed over bench lookup's burst limit (two loads per key at the memory-level parallelism a
 * 16-chain pointer chase over as much memory as the net took gets). A stack's keys are in the
 * cache, just parsed from its packets: each burst's keys are prefetched during the burst
 * before, in both modes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "bench.h"
#include "common.h"
#include "opt.h"
#include "socktab/socktab.h"

#define MAX_BATCH 256
#define MAX_ROUNDS 64

enum kind { TCP4, TCP6, UDP4, UDP6, NKINDS };
static const char *const kind_names[] = { "tcp4", "tcp6", "udp4", "udp6", NULL };

/* --hash4-slots: the UDP hash4 table's slots (0: as many as ehash's). */
static uint32_t udp4_slots;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: socktab bench batch [--sockets N] [--batch B] [--touch BYTES]\n"
		"                           [--kind tcp4|tcp6|udp4|udp6|all] [--lookups L]\n"
		"                           [--rounds R] [--seed S] [--mixed] [--hash4-slots H]\n"
		"Lookups of random keys of N sockets (TCP connections, or connected UDP sockets),\n"
		"one per read-side section (single) against B per section with\n"
		"socktab_lookup_batch4/6 (batch), reading BYTES of each hit's caller area.\n"
		"defaults: --sockets 100000 --batch 32 --touch 64 --kind all --lookups 2000000\n"
		"          --rounds 5 --hash4-slots 0\n"
		"The net's ehash has a power of two of slots at or above twice its sockets; UDP's\n"
		"hash and hash2 that many up to the kernel's maximum (65536), hash4 as many as\n"
		"ehash, or H (udp_hash4_entries; 65536: the kernel's hash4 at its maximum).\n"
		"Prints per kind: single_ns_per_lookup=, batch_ns_per_lookup= (medians of the\n"
		"rounds, which alternate) and batch_speedup= (single / batch).\n"
		"--mixed: one net with N sockets of the four kinds, keys of random kinds, looked up\n"
		"B at a time by socktab_lookup_mixed() against the same keys through the four\n"
		"per-kind calls; prints mixed_ns_per_key=, per_kind_ns_per_key= and\n"
		"mixed_vs_per_kind= (mixed / per_kind), and mixed_vs_burst_limit= (mixed over\n"
		"two loads per key at mem_parallel_ns=, bench lookup's yardstick over the memory\n"
		"the net took).\n");
}

/* The key of socket @i of a kind. Remote ends: TCP 10.0.0.0 + i or 2001:db8::(i + 1) port
 * 1024 + i % 50000; UDP the loopback address, port 1024 + i % 50000. Local ends: the loopback
 * address, TCP port 80, UDP port 8000 + i / 50000. */
static void key_of(enum kind k, uint32_t i, struct socktab_tuple4 *t4, struct socktab_tuple6 *t6)
{
	uint16_t rport = htons((uint16_t)(1024 + i % 50000));
	uint16_t lport = htons(k == TCP4 || k == TCP6 ? 80 : (uint16_t)(8000 + i / 50000));

	if (k == TCP4 || k == UDP4) {
		*t4 = (struct socktab_tuple4){ k == TCP4 ? htonl(0x0a000000u + i) : htonl(INADDR_LOOPBACK),
					       htonl(INADDR_LOOPBACK), rport, lport,
					       SOCKTAB_LOOPBACK_IFINDEX, 0 };
		return;
	}
	memset(t6, 0, sizeof(*t6));
	t6->daddr = in6addr_loopback;
	t6->saddr = in6addr_loopback;
	if (k == TCP6) {
		t6->saddr.s6_addr32[0] = htonl(0x20010db8u);
		t6->saddr.s6_addr32[3] = htonl(i + 1);
	}
	t6->sport = rport;
	t6->dport = lport;
	t6->dif = SOCKTAB_LOOPBACK_IFINDEX;
}

static socklen_t sa_of(bool v6, const void *addr, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		memcpy(&a->sin_addr, addr, 4);
		a->sin_port = port;
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

	a->sin6_family = AF_INET6;
	memcpy(&a->sin6_addr, addr, 16);
	a->sin6_port = port;
	return sizeof(*a);
}

/* Socket @i of kind @k in @net (@ln: the TCP listener). */
static int add_socket(struct socktab_net *net, enum kind k, struct socktab_sock *ln, uint32_t i,
		      size_t area)
{
	/* key_of() fills one of the two; zeroed, so -O3's flow analysis sees no unset read */
	struct socktab_tuple4 t4 = { 0 };
	struct socktab_tuple6 t6 = { 0 };
	struct sockaddr_storage la, ra;
	bool v6 = k == TCP6 || k == UDP6;
	socklen_t len;
	struct socktab_sock *sk;
	void *priv;
	int one = 1, err;

	key_of(k, i, &t4, &t6);
	len = v6 ? sa_of(true, &t6.daddr, t6.dport, &la) : sa_of(false, &t4.daddr, t4.dport, &la);
	if (v6)
		sa_of(true, &t6.saddr, t6.sport, &ra);
	else
		sa_of(false, &t4.saddr, t4.sport, &ra);
	if (k == TCP4 || k == TCP6) {
		sk = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra, len,
					    SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (!sk)
			return -errno;
		socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	} else {
		sk = socktab_socket(net, SOCKTAB_UDP, v6 ? AF_INET6 : AF_INET);
		if (!sk)
			return -errno;
		socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		err = socktab_bind(sk, (struct sockaddr *)&la, len);
		if (!err)
			err = socktab_connect(sk, (struct sockaddr *)&ra, len);
		if (err)
			return err;
	}
	if ((priv = socktab_sock_priv(sk)))
		memset(priv, (int)(i & 0xff), area);
	return 0;
}

/* A net with @n sockets of each kind in @kinds (a bit per enum kind). */
static struct socktab_net *build(unsigned kinds, uint32_t n, size_t area)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	uint32_t slots = 1, total = n * (uint32_t)__builtin_popcount(kinds);

	while (slots < 2 * total && slots < (1u << 24))
		slots <<= 1;
	socktab_net_params_init(&p);
	p.ehash_entries = slots;
	p.udp_hash_entries = slots < 65536 ? slots : 65536; /* the kernel's maximum */
	p.udp_hash4_entries = udp4_slots ? udp4_slots : slots; /* hash4 as ehash */
	p.sock_priv_size = area;
	if (!(net = socktab_net_new(&p)))
		return NULL;
	for (int k = 0; k < NKINDS; k++) {
		struct socktab_sock *ln = NULL;
		bool v6 = k == TCP6 || k == UDP6;

		if (!(kinds & (1u << k)))
			continue;
		if (k == TCP4 || k == TCP6) {
			struct sockaddr_storage la;
			struct in6_addr lo6 = in6addr_loopback;
			uint32_t lo4 = htonl(INADDR_LOOPBACK);
			socklen_t len = v6 ? sa_of(true, &lo6, htons(80), &la)
					   : sa_of(false, &lo4, htons(80), &la);

			ln = socktab_socket(net, SOCKTAB_TCP, v6 ? AF_INET6 : AF_INET);
			if (!ln || socktab_bind(ln, (struct sockaddr *)&la, len) ||
			    socktab_listen(ln, 128))
				goto fail;
		}
		for (uint32_t i = 0; i < n; i++) {
			int err = add_socket(net, (enum kind)k, ln, i, area);

			if (err) {
				fprintf(stderr, "bench batch: %s socket %u: %s\n", kind_names[k],
					i, strerror(-err));
				goto fail;
			}
		}
	}
	return net;
fail:
	socktab_net_free(net);
	return NULL;
}

/* The sum of @words 8-byte words at @p: the stack's reads of its connection state. */
static inline uint64_t touch(const void *p, unsigned words)
{
	uint64_t sum = 0, v;

	for (unsigned w = 0; p && w < words; w++) {
		memcpy(&v, (const unsigned char *)p + (size_t)w * 8, 8);
		sum += v;
	}
	return sum;
}

static _Atomic uint64_t sink;

/* One timed round of @n lookups of @q (one mode). Returns ns per lookup; *hits counts hits. */
static double round_run(struct socktab_net *net, enum kind k, bool batched, unsigned b,
			const struct socktab_tuple4 *q4, const struct socktab_tuple6 *q6, uint32_t n,
			unsigned words, uint64_t *hits)
{
	int proto = k == TCP4 || k == TCP6 ? SOCKTAB_TCP : SOCKTAB_UDP;
	struct socktab_hit out[MAX_BATCH];
	uint64_t t0 = bench_now_ns(), sum = 0, h = 0;

	if (batched) {
		for (uint32_t j = 0; j < n; j += b) {
			unsigned m = n - j < b ? n - j : b;
			int f;

			socktab_rcu_read_lock();
			f = q6 ? socktab_lookup_batch6(net, proto, q6 + j, m, out, SOCKTAB_LOOKUP_NOREF)
			       : socktab_lookup_batch4(net, proto, q4 + j, m, out, SOCKTAB_LOOKUP_NOREF);
			for (unsigned i = 0; i < m; i++)
				sum += touch(out[i].priv, words);
			socktab_rcu_read_unlock();
			h += f > 0 ? (uint64_t)f : 0;
		}
	} else {
		for (uint32_t j = 0; j < n; j++) {
			struct socktab_sock *sk;

			socktab_rcu_read_lock();
			switch (k) {
			case TCP4:
				sk = socktab_lookup_tcp4_rcu(net, q4[j].saddr, q4[j].sport, q4[j].daddr,
							     q4[j].dport, q4[j].dif, 0);
				break;
			case TCP6:
				sk = socktab_lookup_tcp6_rcu(net, &q6[j].saddr, q6[j].sport, &q6[j].daddr,
							     q6[j].dport, q6[j].dif, 0);
				break;
			case UDP4:
				sk = socktab_lookup_udp4_rcu(net, q4[j].saddr, q4[j].sport, q4[j].daddr,
							     q4[j].dport, q4[j].dif, 0);
				break;
			default:
				sk = socktab_lookup_udp6_rcu(net, &q6[j].saddr, q6[j].sport, &q6[j].daddr,
							     q6[j].dport, q6[j].dif, 0);
				break;
			}
			if (sk) {
				h++;
				sum += touch(socktab_sock_priv(sk), words);
			}
			socktab_rcu_read_unlock();
		}
	}
	atomic_fetch_add_explicit(&sink, sum, memory_order_relaxed);
	*hits = h;
	return (double)(bench_now_ns() - t0) / (double)n;
}

static int run_kind(struct bench_out *o, enum kind k, uint32_t n, unsigned b, int touch_bytes,
		    uint32_t lookups, int rounds, uint64_t seed)
{
	size_t area = ((size_t)touch_bytes + 63) & ~(size_t)63;
	struct socktab_net *net = build(1u << k, n, area);
	bool v6 = k == TCP6 || k == UDP6;
	uint32_t per = lookups / (uint32_t)rounds;
	struct socktab_tuple4 *q4 = NULL;
	struct socktab_tuple6 *q6 = NULL;
	double single[MAX_ROUNDS], batch[MAX_ROUNDS];
	uint64_t hits_single = 0, hits_batch = 0, h;
	struct socktab_udp_stats us;

	if (!net)
		return 1;
	if (v6)
		q6 = calloc(per, sizeof(*q6));
	else
		q4 = calloc(per, sizeof(*q4));
	if (!q4 && !q6) {
		socktab_net_free(net);
		return 1;
	}
	for (uint32_t j = 0; j < per; j++) {
		struct socktab_tuple4 t4;
		struct socktab_tuple6 t6;

		key_of(k, (uint32_t)(bench_rand(&seed) % n), &t4, &t6);
		if (v6)
			q6[j] = t6;
		else
			q4[j] = t4;
	}
	/* A warm-up pass of each mode, then the alternating timed rounds. */
	round_run(net, k, false, b, q4, q6, per, (unsigned)(touch_bytes + 7) / 8, &h);
	round_run(net, k, true, b, q4, q6, per, (unsigned)(touch_bytes + 7) / 8, &h);
	for (int r = 0; r < rounds; r++) {
		single[r] = round_run(net, k, false, b, q4, q6, per, (unsigned)(touch_bytes + 7) / 8,
				      &h);
		hits_single += h;
		batch[r] = round_run(net, k, true, b, q4, q6, per, (unsigned)(touch_bytes + 7) / 8,
				     &h);
		hits_batch += h;
	}
	qsort(single, (size_t)rounds, sizeof(double), bench_cmp_double);
	qsort(batch, (size_t)rounds, sizeof(double), bench_cmp_double);
	bench_out_begin(o);
	bench_out_str(o, "kind", kind_names[k]);
	bench_out_u64(o, "sockets", n);
	bench_out_u64(o, "batch", b);
	bench_out_u64(o, "touch", (uint64_t)touch_bytes);
	if ((k == UDP4 || k == UDP6) && !socktab_udp_stats(net, &us))
		bench_out_u64(o, "udp_hash4_slots", us.slots4);
	bench_out_dbl(o, "single_ns_per_lookup", "%.1f", single[rounds / 2]);
	bench_out_dbl(o, "batch_ns_per_lookup", "%.1f", batch[rounds / 2]);
	bench_out_dbl(o, "batch_speedup", "%.2f", single[rounds / 2] / batch[rounds / 2]);
	bench_out_u64(o, "hits_single", hits_single);
	bench_out_u64(o, "hits_batch", hits_batch);
	bench_out_u64(o, "lookups_per_mode", (uint64_t)per * (uint64_t)rounds);
	bench_out_end(o);
	free(q4);
	free(q6);
	socktab_net_free(net);
	/* Every key is a socket's: a miss in either mode is a bug, not noise. */
	return hits_single != (uint64_t)per * (uint64_t)rounds || hits_batch != hits_single;
}

/* ---- --mixed ---- */

/* The query stream of the mixed mode, and the same keys sorted by kind within each burst: the
 * keys of kind k of burst j are q4/q6[k][off[k][j] .. off[k][j + 1]). */
struct mixed_q {
	struct socktab_key *mk;
	struct socktab_tuple4 *q4[NKINDS];
	struct socktab_tuple6 *q6[NKINDS];
	uint32_t *off[NKINDS];
	uint32_t n, bursts;
	unsigned b;
};

static void mixed_q_free(struct mixed_q *q)
{
	free(q->mk);
	for (int k = 0; k < NKINDS; k++) {
		free(q->q4[k]);
		free(q->q6[k]);
		free(q->off[k]);
	}
}

static int mixed_q_make(struct mixed_q *q, uint32_t n, unsigned b, uint32_t per_kind,
			uint64_t *seed)
{
	uint32_t cnt[NKINDS] = { 0 };

	memset(q, 0, sizeof(*q));
	q->n = n;
	q->b = b;
	q->bursts = (n + b - 1) / b;
	if (!(q->mk = calloc(n, sizeof(*q->mk))))
		return -1;
	for (int k = 0; k < NKINDS; k++) {
		q->q4[k] = calloc(n, sizeof(*q->q4[k]));
		q->q6[k] = calloc(n, sizeof(*q->q6[k]));
		q->off[k] = calloc(q->bursts + 1, sizeof(*q->off[k]));
		if (!q->q4[k] || !q->q6[k] || !q->off[k])
			return -1;
	}
	for (uint32_t j = 0; j < n; j++) {
		enum kind k = (enum kind)(bench_rand(seed) % NKINDS);
		struct socktab_key *m = &q->mk[j];
		struct socktab_tuple4 t4;
		struct socktab_tuple6 t6;

		if (j % b == 0)
			for (int x = 0; x < NKINDS; x++)
				q->off[x][j / b] = cnt[x];
		key_of(k, (uint32_t)(bench_rand(seed) % per_kind), &t4, &t6);
		m->proto = k == TCP4 || k == TCP6 ? SOCKTAB_TCP : SOCKTAB_UDP;
		m->dif = SOCKTAB_KEY_CALL_DEV;
		if (k == TCP4 || k == UDP4) {
			m->family = AF_INET;
			m->saddr.v4 = t4.saddr;
			m->daddr.v4 = t4.daddr;
			m->sport = t4.sport;
			m->dport = t4.dport;
			q->q4[k][cnt[k]++] = t4;
		} else {
			m->family = AF_INET6;
			m->saddr.v6 = t6.saddr;
			m->daddr.v6 = t6.daddr;
			m->sport = t6.sport;
			m->dport = t6.dport;
			q->q6[k][cnt[k]++] = t6;
		}
	}
	for (int x = 0; x < NKINDS; x++)
		q->off[x][q->bursts] = cnt[x];
	return 0;
}

/* Start the misses of @len bytes at @p (a stack's keys are in the cache: it has just written
 * them from the packets' headers). */
static inline void keys_prefetch(const void *p, size_t len)
{
	for (size_t o = 0; o < len; o += 64)
		__builtin_prefetch((const char *)p + o);
}

/* The calling thread's CPU time in nanoseconds: the mixed comparison's clock, so that the time
 * the thread spends preempted on a loaded machine falls in neither mode. */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Bursts @j0 to @j1 - 1 of @q in the mixed (@mixed) or per-kind mode. Returns the CPU ns they
 * took; *@hits counts hits. Each burst's keys are prefetched during the burst before it. */
static uint64_t mixed_span(struct socktab_net *net, const struct mixed_q *q, bool mixed,
			   uint32_t j0, uint32_t j1, unsigned words, uint64_t *hits)
{
	struct socktab_hit out[MAX_BATCH];
	uint64_t t0 = thread_ns(), sum = 0, h = 0;

	for (uint32_t j = j0; j < j1; j++) {
		uint32_t first = j * q->b, m = q->n - first < q->b ? q->n - first : q->b;

		if (j + 1 < j1) {
			uint32_t f2 = first + q->b, m2 = q->n - f2 < q->b ? q->n - f2 : q->b;

			if (mixed) {
				keys_prefetch(q->mk + f2, m2 * sizeof(*q->mk));
			} else {
				for (int k = 0; k < NKINDS; k++) {
					uint32_t o = q->off[k][j + 1], c = q->off[k][j + 2] - o;

					if (k == TCP4 || k == UDP4)
						keys_prefetch(q->q4[k] + o, c * sizeof(*q->q4[k]));
					else
						keys_prefetch(q->q6[k] + o, c * sizeof(*q->q6[k]));
				}
			}
		}
		socktab_rcu_read_lock();
		if (mixed) {
			for (uint32_t done = 0; done < m;) {
				int r = socktab_lookup_mixed(net, q->mk + first + done, m - done,
							     SOCKTAB_LOOPBACK_IFINDEX, 0, out,
							     SOCKTAB_LOOKUP_NOREF);

				if (r <= 0)
					break;
				for (int i = 0; i < r; i++) {
					h += out[i].kind != SOCKTAB_HIT_NONE;
					sum += touch(out[i].priv, words);
				}
				done += (uint32_t)r;
			}
		} else {
			for (int k = 0; k < NKINDS; k++) {
				uint32_t o = q->off[k][j], c = q->off[k][j + 1] - o;
				int proto = k == TCP4 || k == TCP6 ? SOCKTAB_TCP : SOCKTAB_UDP;

				if (!c)
					continue;
				if (k == TCP4 || k == UDP4)
					socktab_lookup_batch4(net, proto, q->q4[k] + o, c, out,
							      SOCKTAB_LOOKUP_NOREF);
				else
					socktab_lookup_batch6(net, proto, q->q6[k] + o, c, out,
							      SOCKTAB_LOOKUP_NOREF);
				for (uint32_t i = 0; i < c; i++) {
					h += out[i].kind != SOCKTAB_HIT_NONE;
					sum += touch(out[i].priv, words);
				}
			}
		}
		socktab_rcu_read_unlock();
	}
	atomic_fetch_add_explicit(&sink, sum, memory_order_relaxed);
	*hits += h;
	return thread_ns() - t0;
}

/* Bursts per span of one mode: the modes take turns span by span, so a change in the machine's
 * load falls on both alike. */
#define MIXED_SPAN 64

/*
 * One round over @q: spans of MIXED_SPAN bursts, the mixed mode taking every other one (the
 * even ones when @odd is false), the per-kind mode the rest; a round with @odd true swaps them,
 * so two rounds look up every key in each mode. ns[1] and ns[0]: CPU ns per key of the mixed
 * and the per-kind mode; hits[] and keys[] add up each mode's.
 */
static void mixed_round(struct socktab_net *net, const struct mixed_q *q, bool odd,
			unsigned words, double ns[2], uint64_t hits[2], uint64_t keys[2])
{
	uint64_t t[2] = { 0, 0 }, k[2] = { 0, 0 };

	for (uint32_t j = 0, s = 0; j < q->bursts; j += MIXED_SPAN, s++) {
		uint32_t j1 = q->bursts - j < MIXED_SPAN ? q->bursts : j + MIXED_SPAN;
		uint32_t last = j1 * q->b < q->n ? j1 * q->b : q->n;
		int mixed = (int)((s & 1) ^ odd);

		t[mixed] += mixed_span(net, q, mixed, j, j1, words, &hits[mixed]);
		k[mixed] += last - j * q->b;
	}
	for (int x = 0; x < 2; x++) {
		ns[x] = k[x] ? (double)t[x] / (double)k[x] : 0;
		keys[x] += k[x];
	}
}

static int run_mixed(struct bench_out *o, uint32_t n, unsigned b, int touch_bytes,
		     uint32_t lookups, int rounds, uint64_t seed)
{
	size_t area = ((size_t)touch_bytes + 63) & ~(size_t)63;
	uint32_t per_kind = n / NKINDS ? n / NKINDS : 1, per = lookups / (uint32_t)rounds;
	unsigned words = (unsigned)(touch_bytes + 7) / 8;
	uint64_t rss0 = bench_rss_bytes();
	struct socktab_net *net = build((1u << NKINDS) - 1, per_kind, area);
	uint64_t bytes = bench_rss_bytes() - rss0;
	double mixed[MAX_ROUNDS], kinds[MAX_ROUNDS], ns[2], par;
	uint64_t hits[2] = { 0, 0 }, keys[2] = { 0, 0 }, h[2] = { 0, 0 }, k[2] = { 0, 0 };
	struct socktab_udp_stats us;
	struct mixed_q q;

	if (!net)
		return 1;
	if (mixed_q_make(&q, per, b, per_kind, &seed)) {
		mixed_q_free(&q);
		socktab_net_free(net);
		return 1;
	}
	mixed_round(net, &q, false, words, ns, h, k); /* warm-up */
	for (int r = 0; r < rounds; r++) {
		mixed_round(net, &q, r & 1, words, ns, hits, keys);
		kinds[r] = ns[0];
		mixed[r] = ns[1];
	}
	qsort(mixed, (size_t)rounds, sizeof(double), bench_cmp_double);
	qsort(kinds, (size_t)rounds, sizeof(double), bench_cmp_double);
	bench_out_begin(o);
	bench_out_str(o, "kind", "mixed");
	bench_out_u64(o, "sockets", (uint64_t)per_kind * NKINDS);
	if (!socktab_udp_stats(net, &us))
		bench_out_u64(o, "udp_hash4_slots", us.slots4);
	bench_out_u64(o, "batch", b);
	bench_out_u64(o, "touch", (uint64_t)touch_bytes);
	bench_out_dbl(o, "mixed_ns_per_key", "%.1f", mixed[rounds / 2]);
	bench_out_dbl(o, "per_kind_ns_per_key", "%.1f", kinds[rounds / 2]);
	bench_out_dbl(o, "mixed_vs_per_kind", "%.2f", mixed[rounds / 2] / kinds[rounds / 2]);
	bench_out_u64(o, "hits_mixed", hits[1]);
	bench_out_u64(o, "hits_per_kind", hits[0]);
	bench_out_u64(o, "lookups_mixed", keys[1]);
	bench_out_u64(o, "lookups_per_kind", keys[0]);
	/* bench lookup's yardstick for a burst, over the memory this net took: two loads per key
	 * (slot and socket) at the machine's memory-level parallelism. */
	par = bench_mem_parallel_ns(bytes, seed);
	bench_out_u64(o, "table_bytes", bytes);
	bench_out_dbl(o, "mem_parallel_ns", "%.1f", par);
	bench_out_dbl(o, "burst_limit_ns_per_lookup", "%.1f", 2 * par);
	if (par > 0)
		bench_out_dbl(o, "mixed_vs_burst_limit", "%.2f", mixed[rounds / 2] / (2 * par));
	bench_out_end(o);
	mixed_q_free(&q);
	socktab_net_free(net);
	/* Every key is a socket's: a miss in either mode is a bug, not noise. */
	return hits[0] != keys[0] || hits[1] != keys[1];
}

int bench_batch_main(int argc, char **argv)
{
	enum { O_SOCKETS = 256, O_BATCH, O_TOUCH, O_KIND, O_LOOKUPS, O_ROUNDS, O_SEED, O_MIXED,
	       O_HASH4 };
	static const struct option longopts[] = {
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "touch", required_argument, NULL, O_TOUCH },
		{ "kind", required_argument, NULL, O_KIND },
		{ "lookups", required_argument, NULL, O_LOOKUPS },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "mixed", no_argument, NULL, O_MIXED },
		{ "hash4-slots", required_argument, NULL, O_HASH4 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const kinds[] = { "tcp4", "tcp6", "udp4", "udp6", "all", NULL };
	const struct opt_parser op = { "socktab bench batch", "h", longopts };
	int sockets = 100000, b = 32, touch_bytes = 64, which = NKINDS, lookups = 2000000, rounds = 5;
	uint64_t seed = 1;
	struct bench_out o = { 0 };
	char model[128];
	int opt, rc = 0, h4 = 0;
	bool mixed = false;

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case O_SOCKETS:
			bad = opt_count_int(&op, "--sockets", optarg, 1, 4000000, &sockets);
			break;
		case O_BATCH:
			bad = opt_count_int(&op, "--batch", optarg, 1, MAX_BATCH, &b);
			break;
		case O_TOUCH:
			bad = opt_count_int(&op, "--touch", optarg, 0, 256, &touch_bytes);
			break;
		case O_KIND:
			bad = opt_choice(&op, "--kind", optarg, kinds, &which);
			break;
		case O_LOOKUPS:
			bad = opt_count_int(&op, "--lookups", optarg, 1000, 100000000, &lookups);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, MAX_ROUNDS, &rounds);
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		case O_MIXED:
			mixed = true;
			break;
		case O_HASH4:
			bad = opt_count_int(&op, "--hash4-slots", optarg, 0, 1 << 24, &h4);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (!mixed && (which == UDP4 || which == UDP6 || which == NKINDS) && sockets > 1000000) {
		opt_fail(&op, "--sockets: at most 1000000 UDP sockets (20 local ports of 50000 peers)");
		return 2;
	}
	udp4_slots = (uint32_t)h4;
	socktab_thread_register();
	bench_cpu_model(model, sizeof(model));
	bench_out_begin(&o);
	bench_out_str(&o, "cpu", model);
	bench_out_end(&o);
	if (mixed)
		rc = run_mixed(&o, (uint32_t)sockets, (unsigned)b, touch_bytes, (uint32_t)lookups,
			       rounds, seed);
	for (int k = 0; k < NKINDS && !mixed; k++)
		if (which == NKINDS || which == k)
			rc |= run_kind(&o, (enum kind)k, (uint32_t)sockets, (unsigned)b, touch_bytes,
				       (uint32_t)lookups, rounds, seed);
	bench_out_finish(&o);
	socktab_thread_unregister();
	return rc;
}
