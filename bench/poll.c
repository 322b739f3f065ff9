/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench poll: the longest call a run-to-completion poll loop makes into socktab, for the
 * two kinds of work that used to grow without bound.
 *
 * Socket memory. Two nets, one without a reservation ("plain") and one with reserve_socks =
 * --children + 1 (IPv4, "reserved"), each with a listener on 0.0.0.0:80, get --children
 * socktab_sock_new_child() calls each (a 4-tuple of its own per call), in blocks of 1000 that
 * alternate between the nets, so a burst of load on the machine hits both; each call is timed,
 * and the slabs the pools gained and the minor page faults of each net's blocks are counted.
 * Each round runs in a fresh child process, so every round starts from unmapped memory as a
 * new process does (a slab freed by an earlier round would otherwise come back faulted in).
 *
 * TIME_WAIT expiry. A net on a clock of the benchmark's own (so every entry is due at once, as
 * after a burst of closes a minute ago) gets --entries entries, each left by a connect()ed,
 * established and closed socket toward 127.0.0.1:80, :81, ... (ports 1024-65535, so each entry
 * is one of at most two on its port: reaping it empties its address bucket, and every second
 * one its bind bucket, the costlier case). Each round expires them twice over: calls of
 * socktab_net_tick_budget(--budget) until the next expiry is in the future, each call timed,
 * then (refilled) one socktab_net_tick() that expires all of them, timed whole.
 *
 * Times are CLOCK_MONOTONIC around each call. A machine shared with other work delays some
 * calls by its own doing: a call during which the thread was preempted (RUSAGE_THREAD
 * ru_nivcsw moved, read outside the timed window) counts in *_preempted= and *_max_all_us= only,
 * not in the max and percentiles. A hypervisor's or an interrupt's delay is invisible to that
 * count; spin_20us_* measures it: windows that only read the clock for 20 us, as many as the
 * budgeted calls. *_worst_call_us= is the cost of the worst call position with such noise
 * filtered out: the largest, over call positions (the i-th call of a round), of the smallest
 * time that position took in any round. A call that slept (ru_nvcsw moved: it waited for a
 * lock) counts in *_blocked= and stays in every figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench.h"
#include "opt.h"
#include "socktab/socktab.h"

#define TICK_LIMIT_NS 100000ull  /* the bound a budgeted tick is held to: 100 us */
#define ALLOC_LIMIT_NS 50000ull  /* and a new child with a reservation: 50 us */
#define BLOCK 1000               /* new_child calls per block, alternating between the nets */
#define PROBE_NS 20000ull        /* the spin windows that measure the platform's delays */

static void help(void)
{
	printf("usage: socktab bench poll [--entries N] [--budget B] [--children N] [--rounds R]\n"
	       "                          [--seed S]\n"
	       "defaults: --entries 100000 --budget 64 --children 100000 --rounds 3\n"
	       "Times N socktab_sock_new_child() calls on a net without and one with a reservation,\n"
	       "and socktab_net_tick_budget() calls (B entries each) draining N due TIME_WAIT\n"
	       "entries against one socktab_net_tick() draining as many.\n");
}

/* Context switches of the calling thread so far. */
struct switches {
	long vol, invol; /* it slept (waited for a lock), it was preempted */
};

static struct switches thread_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (struct switches){ ru.ru_nvcsw, ru.ru_nivcsw };
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Timed calls of one kind: the calls that were not preempted, and the others. */
struct calls {
	struct bench_histo undisturbed; /* ns per call */
	uint64_t preempted, blocked;    /* calls the scheduler switched out; calls that slept */
	uint64_t max_all;               /* the max over all calls */
	uint64_t over;                  /* undisturbed calls above the kind's limit */
	uint64_t *pos_min;              /* per call position: the least ns over the rounds */
	size_t npos;
};

static int calls_init(struct calls *c, size_t npos)
{
	memset(c, 0, sizeof(*c));
	bench_histo_init(&c->undisturbed);
	c->npos = npos;
	c->pos_min = malloc((npos ? npos : 1) * sizeof(*c->pos_min));
	if (!c->pos_min)
		return -ENOMEM;
	for (size_t i = 0; i < npos; i++)
		c->pos_min[i] = UINT64_MAX;
	return 0;
}

/* Add the call at position @pos of its round, of @ns; it was @preempted, it @slept. */
static void calls_record(struct calls *c, size_t pos, uint64_t ns, bool preempted, bool slept,
			 uint64_t limit)
{
	c->blocked += slept;
	if (preempted) {
		c->preempted++;
	} else {
		bench_histo_add(&c->undisturbed, ns);
		c->over += ns > limit;
	}
	c->max_all = ns > c->max_all ? ns : c->max_all;
	if (pos < c->npos && ns < c->pos_min[pos])
		c->pos_min[pos] = ns;
}

/* The same for a call that began at switch counts @s0 and has just returned. */
static void calls_add(struct calls *c, size_t pos, uint64_t ns, struct switches s0,
		      uint64_t limit)
{
	struct switches s1 = thread_switches();

	calls_record(c, pos, ns, s1.invol != s0.invol, s1.vol != s0.vol, limit);
}

/* The worst call position's least time (0 when no position was seen). */
static uint64_t calls_worst(const struct calls *c)
{
	uint64_t w = 0;

	for (size_t i = 0; i < c->npos; i++)
		if (c->pos_min[i] != UINT64_MAX && c->pos_min[i] > w)
			w = c->pos_min[i];
	return w;
}

static void out_us(struct bench_out *o, const char *key, double ns)
{
	bench_out_dbl(o, key, "%.2f", ns / 1000.0);
}

/* PREFIX_max_us, _p99_us, _p999_us, _p50_us, _worst_call_us, _over_LIMIT, _preempted,
 * _blocked, _max_all_us. */
static void out_calls(struct bench_out *o, const char *prefix, const struct calls *c,
		      const char *over_key)
{
	char k[96];

#define OUT_US(suffix, v) (snprintf(k, sizeof(k), "%s_" suffix, prefix), out_us(o, k, (v)))
#define OUT_U64(suffix, v) (snprintf(k, sizeof(k), "%s_" suffix, prefix), bench_out_u64(o, k, (v)))
	OUT_US("max_us", (double)c->undisturbed.max);
	OUT_US("p99_us", bench_histo_percentile(&c->undisturbed, 99));
	OUT_US("p999_us", bench_histo_percentile(&c->undisturbed, 99.9));
	OUT_US("p50_us", bench_histo_percentile(&c->undisturbed, 50));
	if (c->npos)
		OUT_US("worst_call_us", (double)calls_worst(c));
	if (over_key) {
		snprintf(k, sizeof(k), "%s_%s", prefix, over_key);
		bench_out_u64(o, k, c->over);
	}
	OUT_U64("preempted", c->preempted);
	OUT_U64("blocked", c->blocked);
	OUT_US("max_all_us", (double)c->max_all);
#undef OUT_US
#undef OUT_U64
}

/* ---- socket memory: new_child with and without a reservation ---- */

struct alloc_side {
	struct socktab_net *net;
	struct socktab_sock *listener;
	uint64_t slabs0;
};

/* What one round's child process sends back per side, then its npos times. */
struct alloc_report {
	uint64_t slabs, faults; /* slabs the pools gained, minor faults in its blocks */
	int err;
};

static uint64_t stat_slabs(struct socktab_net *net)
{
	struct socktab_net_stats st;

	return socktab_net_stats(net, &st) ? 0 : st.pool_slabs;
}

static int alloc_side_init(struct alloc_side *a, uint32_t reserve, uint64_t seed)
{
	struct socktab_net_params p;
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(80) };

	memset(a, 0, sizeof(*a));
	socktab_net_params_init(&p);
	p.fixed_secret = 1;
	memcpy(p.secret, &seed, sizeof(seed));
	p.reserve_socks = reserve;
	p.reserve_family = AF_INET;
	a->net = socktab_net_new(&p);
	if (!a->net)
		return -errno;
	a->listener = socktab_socket(a->net, SOCKTAB_TCP, AF_INET);
	if (!a->listener || socktab_bind(a->listener, (struct sockaddr *)&any, sizeof(any)) ||
	    socktab_listen(a->listener, 4096))
		return -EPROTO;
	a->slabs0 = stat_slabs(a->net);
	return 0;
}

/* Children [from, to) of @a, 127.0.0.1:80 <- 10.x.y.z:1024 + (i % 60000); times into @t. */
static int alloc_block(struct alloc_side *a, uint32_t from, uint32_t to, uint64_t *t,
		       long *faults)
{
	struct sockaddr_in loc = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_in rem = { .sin_family = AF_INET };
	long f0 = minor_faults();

	loc.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (uint32_t i = from; i < to; i++) {
		rem.sin_addr.s_addr = htonl(0x0a000001u + i / 60000);
		rem.sin_port = htons((uint16_t)(1024 + i % 60000));
		struct switches cs = thread_switches();
		uint64_t t0 = bench_now_ns();
		struct socktab_sock *c = socktab_sock_new_child(a->listener, (struct sockaddr *)&loc,
							       (struct sockaddr *)&rem, sizeof(loc),
							       SOCKTAB_LOOPBACK_IFINDEX, 0);
		uint64_t dt = bench_now_ns() - t0;
		struct switches ce = thread_switches();

		if (!c)
			return -errno;
		/* Bit 63: preempted; bit 62: slept (calls_record()). */
		t[i] = dt | (uint64_t)(ce.invol != cs.invol) << 63 | (uint64_t)(ce.vol != cs.vol) << 62;
	}
	*faults += minor_faults() - f0;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One round in this (child) process: both sides, reports and times to @fd. */
static _Noreturn void alloc_round_child(uint32_t n, uint64_t seed, int fd)
{
	struct alloc_side side[2];
	struct alloc_report rep[2] = { { 0 } };
	uint64_t *t[2] = { calloc(n, sizeof(uint64_t)), calloc(n, sizeof(uint64_t)) };
	long faults[2] = { 0, 0 };
	int err = t[0] && t[1] ? 0 : -ENOMEM;

	/* Fault the time arrays in now: their pages must not count in the blocks' faults. */
	for (int s = 0; s < 2 && !err; s++)
		for (uint32_t i = 0; i < n; i++)
			t[s][i] = UINT64_MAX;
	socktab_thread_register();
	for (int s = 0; s < 2 && !err; s++)
		err = alloc_side_init(&side[s], s ? n + 1 : 0, seed);
	for (uint32_t i = 0; i < n && !err; i += BLOCK) {
		uint32_t to = i + BLOCK < n ? i + BLOCK : n;

		for (int s = 0; s < 2 && !err; s++)
			err = alloc_block(&side[s], i, to, t[s], &faults[s]);
	}
	for (int s = 0; s < 2; s++) {
		rep[s].err = err;
		if (!err) {
			rep[s].slabs = stat_slabs(side[s].net) - side[s].slabs0;
			rep[s].faults = (uint64_t)faults[s];
		}
	}
	if (write_all(fd, rep, sizeof(rep)) ||
	    (!err && (write_all(fd, t[0], n * sizeof(uint64_t)) ||
		      write_all(fd, t[1], n * sizeof(uint64_t)))))
		_exit(1);
	_exit(0);
}

struct alloc_result {
	struct calls calls[2];         /* plain, reserved */
	uint64_t slabs[2], faults[2];  /* the most any round gained / took */
};

/* @rounds rounds, each in a child process. Call before this process registers with RCU. */
static int bench_alloc(uint32_t n, int rounds, uint64_t seed, struct alloc_result *r)
{
	uint64_t *t = malloc(n * sizeof(uint64_t));
	int err = t ? 0 : -ENOMEM;

	memset(r, 0, sizeof(*r));
	for (int s = 0; s < 2 && !err; s++)
		err = calls_init(&r->calls[s], n);
	for (int round = 0; round < rounds && !err; round++) {
		struct alloc_report rep[2];
		int fd[2], status = 0;
		pid_t pid;

		if (pipe(fd)) {
			err = -errno;
			break;
		}
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			err = -errno;
			close(fd[0]);
			close(fd[1]);
			break;
		}
		if (pid == 0) {
			close(fd[0]);
			alloc_round_child(n, seed, fd[1]);
		}
		close(fd[1]);
		if (read_all(fd[0], rep, sizeof(rep)))
			err = -EPIPE;
		else if (rep[0].err)
			err = rep[0].err;
		for (int s = 0; s < 2 && !err; s++) {
			if (read_all(fd[0], t, n * sizeof(uint64_t))) {
				err = -EPIPE;
				break;
			}
			for (uint32_t i = 0; i < n; i++)
				calls_record(&r->calls[s], i, t[i] & ~(3ull << 62), t[i] >> 63,
					     (t[i] >> 62) & 1, ALLOC_LIMIT_NS);
			r->slabs[s] = rep[s].slabs > r->slabs[s] ? rep[s].slabs : r->slabs[s];
			r->faults[s] = rep[s].faults > r->faults[s] ? rep[s].faults : r->faults[s];
		}
		close(fd[0]);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			err = err ? err : -ECHILD;
	}
	free(t);
	return err;
}

/* ---- TIME_WAIT expiry: budgeted and unbudgeted ---- */

static uint64_t bench_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

static uint64_t stat_tw(struct socktab_net *net)
{
	struct socktab_net_stats st;

	return socktab_net_stats(net, &st) ? 0 : st.time_wait;
}

/* Fill @net with @n TIME_WAIT entries at the clock's present time. 0 or a negative errno. */
static int fill_timewait(struct socktab_net *net, uint32_t n)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };

	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (uint32_t i = 0; i < n; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int err;

		if (!sk)
			return -ENOMEM;
		dst.sin_port = htons((uint16_t)(80 + i / 64000));
		err = socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst));
		if (!err)
			err = socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
		socktab_close(sk);
		if (err)
			return err;
	}
	return stat_tw(net) == n ? 0 : -EPROTO;
}

struct tick_result {
	struct calls calls;         /* socktab_net_tick_budget() calls */
	uint64_t entries, ncalls;   /* expired by them, and how many calls */
	uint64_t drain_ns;          /* the budgeted calls' time, summed */
	uint64_t full_max_ns, full_min_ns, full_entries, full_ns; /* socktab_net_tick() */
};

static int bench_tick(uint32_t n, unsigned budget, int rounds, uint64_t seed,
		      struct tick_result *r)
{
	struct socktab_net_params p;
	uint64_t clk = 1000000000ull, tw_len;
	struct socktab_net *net;
	int err;

	memset(r, 0, sizeof(*r));
	err = calls_init(&r->calls, n / budget + 2);
	if (err)
		return err;
	r->full_min_ns = UINT64_MAX;
	socktab_net_params_init(&p);
	p.port_low = 1024;
	p.port_high = 65535;
	p.clock = bench_clock;
	p.clock_arg = &clk;
	p.fixed_secret = 1;
	memcpy(p.secret, &seed, sizeof(seed));
	p.reserve_socks = n;
	p.reserve_tw = n;
	p.reserve_family = AF_INET;
	tw_len = (uint64_t)p.tw_len_ms * 1000000ull;
	net = socktab_net_new(&p);
	if (!net)
		return -errno;
	for (int round = 0; round < 2 * rounds && !err; round++) {
		err = fill_timewait(net, n);
		if (err)
			break;
		clk += tw_len + 1000000000ull; /* every entry due */
		if (round % 2 == 0) {
			uint64_t due = 0;
			size_t pos = 0;

			do {
				struct switches cs = thread_switches();
				uint64_t t0 = bench_now_ns();
				int got = socktab_net_tick_budget(net, budget, &due);
				uint64_t dt = bench_now_ns() - t0;

				if (got < 0) {
					err = got;
					break;
				}
				calls_add(&r->calls, pos++, dt, cs, TICK_LIMIT_NS);
				r->drain_ns += dt;
				r->entries += (uint64_t)got;
				r->ncalls++;
			} while (due <= clk);
		} else {
			uint64_t t0 = bench_now_ns();
			int got = socktab_net_tick(net);
			uint64_t dt = bench_now_ns() - t0;

			if (got < 0) {
				err = got;
				break;
			}
			r->full_entries += (uint64_t)got;
			r->full_ns += dt;
			r->full_max_ns = dt > r->full_max_ns ? dt : r->full_max_ns;
			r->full_min_ns = dt < r->full_min_ns ? dt : r->full_min_ns;
		}
		if (!err && stat_tw(net))
			err = -EPROTO; /* a drain that left due entries */
	}
	socktab_net_free(net);
	return err;
}

int bench_poll_main(int argc, char **argv)
{
	enum { O_ENTRIES = 256, O_BUDGET, O_CHILDREN, O_ROUNDS, O_SEED };
	static const struct option longopts[] = {
		{ "entries", required_argument, NULL, O_ENTRIES },
		{ "budget", required_argument, NULL, O_BUDGET },
		{ "children", required_argument, NULL, O_CHILDREN },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench poll", "h", longopts };
	int entries = 100000, budget = 64, children = 100000, rounds = 3, opt, err;
	uint64_t seed = 1;
	struct alloc_result ar;
	struct tick_result tr;
	struct calls spin;
	struct bench_out o = { 0 };
	char cpu[128];

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case O_ENTRIES:
			bad = opt_count_int(&op, "--entries", optarg, 1, 1000000, &entries);
			break;
		case O_BUDGET:
			bad = opt_count_int(&op, "--budget", optarg, 1, 1000000, &budget);
			break;
		case O_CHILDREN:
			bad = opt_count_int(&op, "--children", optarg, 1, 1000000, &children);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 100, &rounds);
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	bench_cpu_model(cpu, sizeof(cpu));
	bench_out_begin(&o);
	bench_out_str(&o, "cpu", cpu);
	bench_out_u64(&o, "seed", seed);
	bench_out_u64(&o, "entries", (uint64_t)entries);
	bench_out_u64(&o, "budget", (uint64_t)budget);
	bench_out_u64(&o, "children", (uint64_t)children);
	bench_out_u64(&o, "rounds", (uint64_t)rounds);

	/* Child processes first: this one registers with RCU (and starts its threads) after. */
	err = bench_alloc((uint32_t)children, rounds, seed, &ar);
	if (err) {
		fprintf(stderr, "socktab bench poll: new_child rounds: %s\n", strerror(-err));
		return 1;
	}
	for (int s = 0; s < 2; s++) {
		const char *name = s ? "alloc_reserved" : "alloc_plain";
		char k[64];

		snprintf(k, sizeof(k), "%s_new_child", name);
		out_calls(&o, k, &ar.calls[s], "over_50us");
		snprintf(k, sizeof(k), "%s_slabs_allocated", name);
		bench_out_u64(&o, k, ar.slabs[s]);
		snprintf(k, sizeof(k), "%s_minor_faults", name);
		bench_out_u64(&o, k, ar.faults[s]);
	}
	bench_out_str(&o, "alloc_reserved_within_50us",
		      calls_worst(&ar.calls[1]) <= ALLOC_LIMIT_NS ? "yes" : "no");

	socktab_thread_register();
	err = bench_tick((uint32_t)entries, (unsigned)budget, rounds, seed, &tr);
	if (err) {
		fprintf(stderr, "socktab bench poll: TIME_WAIT rounds: %s\n", strerror(-err));
		return 1;
	}
	bench_out_u64(&o, "tick_budget_calls", tr.ncalls);
	bench_out_dbl(&o, "tick_budget_entries_per_call", "%.1f",
		      (double)tr.entries / (double)tr.ncalls);
	out_calls(&o, "tick_budget", &tr.calls, "over_100us");
	bench_out_dbl(&o, "tick_budget_ns_per_entry", "%.1f",
		      (double)tr.drain_ns / (double)tr.entries);
	bench_out_str(&o, "tick_budget_within_100us",
		      calls_worst(&tr.calls) <= TICK_LIMIT_NS ? "yes" : "no");
	bench_out_dbl(&o, "tick_full_max_ms", "%.2f", (double)tr.full_max_ns / 1e6);
	bench_out_dbl(&o, "tick_full_min_ms", "%.2f", (double)tr.full_min_ns / 1e6);
	bench_out_dbl(&o, "tick_full_ns_per_entry", "%.1f",
		      (double)tr.full_ns / (double)tr.full_entries);

	/* The platform's own delays, for scale: as many windows as budgeted calls, each spinning
	 * PROBE_NS on the clock, timed and filtered the same way. */
	if (calls_init(&spin, 0))
		return 1;
	for (uint64_t i = 0; i < tr.ncalls; i++) {
		struct switches cs = thread_switches();
		uint64_t t0 = bench_now_ns(), t;

		while ((t = bench_now_ns()) - t0 < PROBE_NS)
			;
		calls_add(&spin, 0, t - t0, cs, TICK_LIMIT_NS);
	}
	out_calls(&o, "spin_20us", &spin, "over_100us");
	bench_out_end(&o);
	bench_out_finish(&o);
	socktab_thread_unregister();
	return 0;
}
