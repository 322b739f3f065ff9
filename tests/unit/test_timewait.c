/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TIME_WAIT: creation on active close (R62, R63), abortive close, expiry (socktab_net_tick,
 * socktab_net_tick_budget and lazy reaping), reuse by connect() (R56, R61: tcp_tw_reuse,
 * tcp_tw_reuse_delay, timestamps) and TIME_WAIT entries as bind owners (R48, R50, O8). Every test
 * drives a manual clock.
 */
#include <limits.h>
#include <unistd.h>

#include "check.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (10 * SEC) /* the clock starts here (a nonzero, boot-like time) */

#define LOOP4 0x7f000001u

/* Connect @sk to 127.0.0.1:@dport and mark it ESTABLISHED; returns 0 or the first error. */
static int establish4(struct socktab_sock *sk, int dport)
{
	int err = check_connect4(sk, "127.0.0.1", dport);

	if (err)
		return err;
	return socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
}

/* The ehash entry for 127.0.0.1:@lport <-> 127.0.0.1:@dport seen from an incoming segment. */
static int lookup_state4(struct socktab_net *net, int lport, int dport)
{
	struct socktab_sock *sk = socktab_lookup_tcp4(net, htonl(LOOP4), htons((uint16_t)dport),
						      htonl(LOOP4), htons((uint16_t)lport), SOCKTAB_LOOPBACK_IFINDEX, 0);
	int st;

	if (!sk)
		return 0;
	st = socktab_get_state(sk);
	socktab_sock_put(sk);
	return st;
}

static struct socktab_net_stats stats(struct socktab_net *net)
{
	struct socktab_net_stats st;

	memset(&st, 0xff, sizeof(st));
	if (socktab_net_stats(net, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* A 1-port net (40000) on a manual clock with tcp_tw_reuse = @reuse. */
static struct socktab_net *one_port_net(uint64_t *clk, int reuse)
{
	struct socktab_net *net;

	*clk = T0;
	net = check_net(40000, 40000, clk);
	if (net && socktab_net_set_tw_reuse(net, reuse)) {
		socktab_net_free(net);
		return NULL;
	}
	return net;
}

/* ---- creation (R62, R63) ---- */

/* R62: close() of an ESTABLISHED socket leaves a TIME_WAIT entry that keeps 4-tuple and port. */
TEST(tw_created_on_close)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(check_port(sk), 40000);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_ESTABLISHED);
	CHECK_EQ(stats(net).established, 1);
	CHECK_EQ(stats(net).time_wait, 0);

	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).established, 0);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(stats(net).bind_buckets, 1); /* R63: the TW still owns the port */
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	/* other tuples are not matched */
	CHECK_EQ(lookup_state4(net, 40000, 81), 0);
	socktab_net_free(net);
}

/* R62: the same for IPv6, found by the v6 lookup. */
TEST(tw_created_on_close_v6)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *sk, *tw;
	struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(sk);
	CHECK_EQ(check_connect6(sk, "::1", 443), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(check_port(sk), 40000);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	tw = socktab_lookup_tcp6(net, &lo, htons(443), &lo, htons(40000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(tw);
	CHECK_EQ(socktab_get_state(tw), SOCKTAB_TCP_TIME_WAIT);
	socktab_sock_put(tw);
	socktab_net_free(net);
}

/* R62: FIN_WAIT1 is an active close too. */
TEST(tw_created_from_fin_wait1)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_FIN_WAIT1), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	socktab_net_free(net);
}

/* SO_LINGER {1, 0}: abortive close, no TIME_WAIT; port and tuple are free at once. */
TEST(tw_linger_zero_no_tw)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *sk, *again;
	struct linger l = { 1, 0 };

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).established, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	/* the same 4-tuple is available immediately, even with tw_reuse 0 */
	again = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(again);
	CHECK_EQ(check_connect4(again, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(again), 40000);
	socktab_net_free(net);
}

/* Only {1, 0} is abortive: a nonzero linger time still leaves a TIME_WAIT. */
TEST(tw_linger_nonzero_keeps_tw)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *sk;
	struct linger l = { 1, 5 };

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	socktab_net_free(net);
}

/* R62: no TIME_WAIT without an active close (SYN_SENT, or the passive CLOSE_WAIT side). */
TEST(tw_not_from_passive_states)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *a, *b;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(socktab_get_state(a), SOCKTAB_TCP_SYN_SENT);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);

	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(establish4(b, 80), 0);
	CHECK_EQ(socktab_set_state(b, SOCKTAB_TCP_CLOSE_WAIT), 0);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	socktab_net_free(net);
}

/* ---- expiry ---- */

/* R61 with tw_reuse 0: the TW blocks connect() to the same peer until TCP_TIMEWAIT_LEN (60 s). */
TEST(tw_reuse0_blocks_until_expiry)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *sk, *c;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 1);

	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	clk = T0 + 1500 * MS; /* past tw_reuse_delay, but reuse is off */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	clk = T0 + 59 * SEC;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);

	clk = T0 + 61 * SEC; /* past tw_len: the entry is gone (reaped lazily) */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c), 40000);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).tw_recycled, 0); /* expired, not taken over */
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_SYN_SENT);
	socktab_net_free(net);
}

/* socktab_net_tick removes expired entries and returns how many; the tuple is free afterwards. */
TEST(tw_tick_expires)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *sk, *c;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(socktab_net_tick(net), 0);
	clk = T0 + 30 * SEC;
	CHECK_EQ(socktab_net_tick(net), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	clk = T0 + 60 * SEC + 1 * MS;
	CHECK_EQ(socktab_net_tick(net), 1);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	CHECK_EQ(socktab_net_tick(net), 0);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c), 40000);
	socktab_net_free(net);
}

/* socktab_net_tick counts every entry it reaps; entries expire by their own creation time. */
TEST(tw_tick_counts)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);

	CHECK(net);
	for (int i = 0; i < 3; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK(sk);
		CHECK_EQ(establish4(sk, 80 + i), 0); /* R59: one port, three peers */
		CHECK_EQ(check_port(sk), 40000);
		CHECK_EQ(socktab_close(sk), 0);
	}
	clk = T0 + 20 * SEC;
	{
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK(sk);
		CHECK_EQ(establish4(sk, 90), 0);
		CHECK_EQ(socktab_close(sk), 0);
	}
	CHECK_EQ(stats(net).time_wait, 4);
	clk = T0 + 61 * SEC; /* the first three are due, the fourth is not */
	CHECK_EQ(socktab_net_tick(net), 3);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	CHECK_EQ(lookup_state4(net, 40000, 90), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(socktab_net_tick(net), 0);
	clk = T0 + 81 * SEC;
	CHECK_EQ(socktab_net_tick(net), 1);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	socktab_net_free(net);
}

/* Make a TIME_WAIT entry for 127.0.0.1:40000 -> 127.0.0.1:@dport at the clock's present time. */
static int make_tw(struct socktab_net *net, int dport)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	int err;

	if (!sk)
		return -ENOMEM;
	err = establish4(sk, dport);
	if (!err && check_port(sk) != 40000)
		err = -EADDRNOTAVAIL;
	if (err) {
		socktab_close(sk);
		return err;
	}
	return socktab_close(sk);
}

/*
 * socktab_net_tick_budget expires exactly min(budget, due) entries per call, oldest first,
 * leaves the entries not yet due alone, and reports the oldest remaining expiry: at or before
 * now while the budget ran out, the next entry's time after that, UINT64_MAX when none is left.
 */
TEST(tw_tick_budget_counts)
{
	uint64_t clk, due;
	struct socktab_net *net = one_port_net(&clk, 0);

	CHECK(net);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(make_tw(net, 80 + i), 0); /* expire at T0 + 60 s */
	clk = T0 + 1 * SEC;
	for (int i = 5; i < 10; i++)
		CHECK_EQ(make_tw(net, 80 + i), 0); /* at T0 + 61 s */
	CHECK_EQ(stats(net).time_wait, 10);

	clk = T0 + 59 * SEC; /* nothing due yet */
	due = 0;
	CHECK_EQ(socktab_net_tick_budget(net, 100, &due), 0);
	CHECK_EQ(due, T0 + 60 * SEC);
	CHECK_EQ(stats(net).time_wait, 10);

	clk = T0 + 60 * SEC; /* the first five are due, to the nanosecond */
	CHECK_EQ(socktab_net_tick_budget(net, 2, &due), 2);
	CHECK_EQ(due, T0 + 60 * SEC); /* still due: call again */
	CHECK_EQ(stats(net).time_wait, 8);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	CHECK_EQ(lookup_state4(net, 40000, 81), 0);
	CHECK_EQ(lookup_state4(net, 40000, 82), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(socktab_net_tick_budget(net, 2, &due), 2);
	CHECK_EQ(due, T0 + 60 * SEC);
	CHECK_EQ(socktab_net_tick_budget(net, 2, &due), 1); /* one left of the due ones */
	CHECK_EQ(due, T0 + 61 * SEC);
	CHECK_EQ(stats(net).time_wait, 5);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(lookup_state4(net, 40000, 80 + i), 0);
	/* Not due: untouched, however large the budget. */
	CHECK_EQ(socktab_net_tick_budget(net, 1000, &due), 0);
	CHECK_EQ(due, T0 + 61 * SEC);
	for (int i = 5; i < 10; i++)
		CHECK_EQ(lookup_state4(net, 40000, 80 + i), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(stats(net).time_wait, 5);
	CHECK_EQ(stats(net).bind_buckets, 1);

	clk = T0 + 61 * SEC;
	CHECK_EQ(socktab_net_tick_budget(net, 5, &due), 5);
	CHECK_EQ(due, UINT64_MAX);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	CHECK_EQ(socktab_net_tick_budget(net, 5, &due), 0);
	CHECK_EQ(due, UINT64_MAX);
	socktab_net_free(net);
}

/* A re-armed entry leaves the head: the next expiry reported is the next entry's, and the
 * re-armed one expires a full period after its re-arming. */
TEST(tw_tick_budget_rearm)
{
	uint64_t clk, due;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *tw;

	CHECK(net);
	CHECK_EQ(make_tw(net, 80), 0);
	clk = T0 + 1 * SEC;
	CHECK_EQ(make_tw(net, 81), 0);
	clk = T0 + 30 * SEC;
	tw = socktab_lookup_tcp4(net, htonl(LOOP4), htons(80), htonl(LOOP4), htons(40000),
				 SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(tw && socktab_sock_tw(tw));
	CHECK_EQ(socktab_tw_rearm(socktab_sock_tw(tw)), 0);
	socktab_sock_put(tw);
	CHECK_EQ(socktab_net_tick_budget(net, 8, &due), 0);
	CHECK_EQ(due, T0 + 61 * SEC);
	clk = T0 + 61 * SEC;
	CHECK_EQ(socktab_net_tick_budget(net, 8, &due), 1);
	CHECK_EQ(lookup_state4(net, 40000, 81), 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(due, T0 + 90 * SEC);
	clk = T0 + 90 * SEC;
	CHECK_EQ(socktab_net_tick_budget(net, 8, &due), 1);
	CHECK_EQ(due, UINT64_MAX);
	socktab_net_free(net);
}

/* Bad input is -EINVAL and changes nothing: no entry expires, *next_due_ns is not written. */
TEST(tw_tick_budget_bad_input)
{
	uint64_t clk, due = 42;
	struct socktab_net *net = one_port_net(&clk, 0);

	CHECK(net);
	CHECK_EQ(make_tw(net, 80), 0);
	clk = T0 + 61 * SEC; /* due */
	CHECK_EQ(socktab_net_tick_budget(NULL, 1, &due), -EINVAL);
	CHECK_EQ(socktab_net_tick_budget(net, 1, NULL), -EINVAL);
	CHECK_EQ(socktab_net_tick_budget(net, 0, &due), -EINVAL);
	CHECK_EQ(socktab_net_tick_budget(net, (unsigned int)INT_MAX + 1, &due), -EINVAL);
	CHECK_EQ(socktab_net_tick_budget(net, UINT_MAX, &due), -EINVAL);
	CHECK_EQ(due, 42);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(socktab_net_tick_budget(net, INT_MAX, &due), 1);
	CHECK_EQ(due, UINT64_MAX);
	socktab_net_free(net);
}

/* socktab_net_tick still expires everything due in one call, past its internal rounds of 256,
 * and nothing that is not due. */
TEST(tw_tick_many)
{
	uint64_t clk = T0, due;
	struct socktab_net *net = check_net(40000, 40999, &clk);

	CHECK(net);
	for (int i = 0; i < 700; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK(sk);
		if (i == 600)
			clk = T0 + 1 * SEC; /* the last 100 expire a second later */
		CHECK_EQ(establish4(sk, 80), 0);
		CHECK_EQ(socktab_close(sk), 0);
	}
	CHECK_EQ(stats(net).time_wait, 700);
	clk = T0 + 60 * SEC;
	CHECK_EQ(socktab_net_tick(net), 600);
	CHECK_EQ(stats(net).time_wait, 100);
	CHECK_EQ(socktab_net_tick_budget(net, 1000, &due), 0);
	CHECK_EQ(due, T0 + 61 * SEC);
	clk = T0 + 61 * SEC;
	CHECK_EQ(socktab_net_tick(net), 100);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 0);
	socktab_net_free(net);
}

/* tw_len_ms is a parameter: a 5-s TIME_WAIT expires after 5 s. */
TEST(tw_len_param)
{
	uint64_t clk = T0;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *sk;

	socktab_net_params_init(&p);
	CHECK_EQ(p.tw_len_ms, 60000);
	CHECK_EQ(p.tw_reuse, 2);
	CHECK_EQ(p.tw_reuse_delay_ms, 1000);
	p.tw_len_ms = 5000;
	p.clock = check_clock;
	p.clock_arg = &clk;
	net = socktab_net_new(&p);
	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	clk = T0 + 4 * SEC;
	CHECK_EQ(socktab_net_tick(net), 0);
	clk = T0 + 5 * SEC + 1 * MS;
	CHECK_EQ(socktab_net_tick(net), 1);
	socktab_net_free(net);
}

/* ---- reuse by connect() port choice (R55, R56, R61) ---- */

static void tw_reuse_after_delay(int mode)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, mode);
	struct socktab_sock *sk, *c;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	/* Both FINs seen: the entry is in the TIME_WAIT substate (a FIN_WAIT2 one is never
	 * taken over by the port search, R102). */
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_CLOSING), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(stats(net).time_wait, 1);

	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	clk = T0 + 500 * MS; /* < tcp_tw_reuse_delay (1000 ms) */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(stats(net).tw_recycled, 0);
	CHECK_EQ(stats(net).time_wait, 1);

	clk = T0 + 1200 * MS; /* > delay: the TW is taken over (TIMEWAITRECYCLED) */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c), 40000);
	CHECK_EQ(stats(net).tw_recycled, 1);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(stats(net).bind_buckets, 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_SYN_SENT);
	/* the recycled entry is no longer on the expiry list */
	clk = T0 + 120 * SEC;
	CHECK_EQ(socktab_net_tick(net), 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_SYN_SENT);
	socktab_net_free(net);
}

/* R61, O8: tcp_tw_reuse = 1: blocked before 1 s, recycled after. */
TEST(tw_reuse1_after_delay)
{
	tw_reuse_after_delay(1);
}

/* R61, O8: tcp_tw_reuse = 2 (loopback only): loopback TWs behave like mode 1. */
TEST(tw_reuse2_after_delay)
{
	tw_reuse_after_delay(2);
}

/* R61: the default net has tcp_tw_reuse = 2 and a 1000-ms delay. */
TEST(tw_reuse_default_is_2)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct socktab_sock *sk, *c;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk && c);
	CHECK_EQ(establish4(sk, 80), 0);
	/* Both FINs seen: the entry is in the TIME_WAIT substate (a FIN_WAIT2 one is never
	 * taken over by the port search, R102). */
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_CLOSING), 0);
	CHECK_EQ(socktab_close(sk), 0);
	clk = T0 + 999 * MS;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	clk = T0 + 1001 * MS;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(stats(net).tw_recycled, 1);
	socktab_net_free(net);
}

/* R61: tcp_tw_reuse_delay = 1 ms allows reuse almost at once. */
TEST(tw_reuse_short_delay)
{
	uint64_t clk = T0;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *sk, *c;

	socktab_net_params_init(&p);
	p.port_low = p.port_high = 40000;
	p.tw_reuse_delay_ms = 1;
	p.clock = check_clock;
	p.clock_arg = &clk;
	net = socktab_net_new(&p);
	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk && c);
	CHECK_EQ(establish4(sk, 80), 0);
	/* Both FINs seen: the entry is in the TIME_WAIT substate (a FIN_WAIT2 one is never
	 * taken over by the port search, R102). */
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_CLOSING), 0);
	CHECK_EQ(socktab_close(sk), 0);
	clk = T0 + 2 * MS;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(stats(net).tw_recycled, 1);
	socktab_net_free(net);
}

/* A connection to 127.0.0.1:80 on the net's one port, closed (a FIN_WAIT2 entry keeps the
 * port); 5 s later a new socket's connect() finds no port. *cp: that socket, once all held. */
static void closed_then_refused(struct socktab_net *net, uint64_t *clk, struct socktab_sock **cp)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK(sk && c);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	*clk = T0 + 5 * SEC;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	*cp = c;
}

/* R102: an entry in the FIN_WAIT2 substate (the peer has not closed) is never taken over by
 * the port search, whatever tcp_tw_reuse says; the peer's FIN (TIME_WAIT substate) allows it a
 * delay later. */
TEST(tw_fin_wait2_not_reused_by_search)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 1);
	struct socktab_sock *c = NULL, *found;

	CHECK(net);
	closed_then_refused(net, &clk, &c);
	CHECK(c);
	found = socktab_lookup_tcp4(net, htonl(LOOP4), htons(80), htonl(LOOP4), htons(40000),
				    SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(found);
	CHECK_EQ(socktab_tw_substate(socktab_sock_tw(found)), SOCKTAB_TCP_FIN_WAIT2);
	CHECK_EQ(socktab_tw_fin(socktab_sock_tw(found)), 0);
	socktab_sock_put(found);
	clk = T0 + 5 * SEC + 500 * MS;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	clk = T0 + 6 * SEC + 1 * MS;
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(stats(net).tw_recycled, 1);
	socktab_net_free(net);
}

/* R61: without a recorded peer timestamp a TW is never taken over before it expires. */
TEST(tw_no_timestamps_no_reuse)
{
	uint64_t clk = T0;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *c = NULL;

	socktab_net_params_init(&p);
	p.port_low = p.port_high = 40000;
	p.tcp_timestamps = 0;
	p.tw_reuse = 1;
	p.clock = check_clock;
	p.clock_arg = &clk;
	net = socktab_net_new(&p);
	CHECK(net);
	closed_then_refused(net, &clk, &c);
	CHECK(c);
	CHECK_EQ(stats(net).tw_recycled, 0);
	socktab_net_free(net);
}

/* R59: a connect() to a different peer shares the port despite the TW (it is connect()-bound). */
TEST(tw_other_peer_shares_port)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *sk, *c1, *c2, *c3;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	c1 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c2 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c3 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c1 && c2 && c3);
	CHECK_EQ(check_connect4(c1, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(c1), 40000);
	CHECK_EQ(check_connect4(c2, "127.0.0.2", 80), 0);
	CHECK_EQ(check_port(c2), 40000);
	CHECK_EQ(check_connect4(c3, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(stats(net).tw_recycled, 0);
	socktab_net_free(net);
}

/* ---- TIME_WAIT as a bind owner (R48, R50, R53, R61, O8) ---- */

/* Close a socket bound explicitly to 127.0.0.1:40000 (SO_REUSEADDR @reuse) after connecting it. */
static int make_bound_tw(struct socktab_net *net, int reuse)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	int err;

	if (!sk)
		return -ENOMEM;
	if (reuse && (err = check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1)))
		return err;
	if ((err = check_bind4(sk, "127.0.0.1", 40000)))
		return err;
	if ((err = establish4(sk, 80)))
		return err;
	if (check_port(sk) != 40000)
		return -EPROTO;
	return socktab_close(sk);
}

/*
 * R61, O8: an explicit bind over a TW port + connect to the same peer works with SO_REUSEADDR on
 * the old and the new socket; the bound-port path ignores tcp_tw_reuse and its delay.
 */
TEST(tw_bind_over_tw_reuseaddr_both)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(50000, 50100, &clk);
	struct socktab_sock *c;

	CHECK(net);
	CHECK_EQ(socktab_net_set_tw_reuse(net, 0), 0);
	CHECK_EQ(make_bound_tw(net, 1), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), 0); /* R42 step 2, R48 */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0); /* R53: twp == NULL, no delay */
	CHECK_EQ(check_port(c), 40000);
	CHECK_EQ(stats(net).tw_recycled, 1);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_SYN_SENT);
	socktab_net_free(net);
}

/* R48, O8: without SO_REUSEADDR on the old socket the TW blocks the rebind. */
TEST(tw_bind_old_without_reuseaddr)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(50000, 50100, &clk);
	struct socktab_sock *c, *d, *e;

	CHECK(net);
	CHECK_EQ(make_bound_tw(net, 0), 0);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	d = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	e = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c && d && e);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), -EADDRINUSE);
	CHECK_EQ(check_bind4(d, "127.0.0.1", 40000), -EADDRINUSE);
	CHECK_EQ(check_bind4(e, "0.0.0.0", 40000), -EADDRINUSE);
	CHECK_EQ(check_port(c), 0);
	/* a different specific address does not overlap */
	CHECK_EQ(check_bind4(d, "127.0.0.2", 40000), 0);
	/* once the TW expires, the port is free */
	clk = T0 + 61 * SEC;
	CHECK_EQ(socktab_net_tick(net), 1);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), 0);
	socktab_net_free(net);
}

/* R48, O8: SO_REUSEADDR on the old socket only is not enough either. */
TEST(tw_bind_new_without_reuseaddr)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(50000, 50100, &clk);
	struct socktab_sock *c;

	CHECK(net);
	CHECK_EQ(make_bound_tw(net, 1), 0);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), -EADDRINUSE);
	socktab_net_free(net);
}

/* R42, R48: SO_REUSEPORT on both also passes a TW owner, and the uid is not compared. */
TEST(tw_bind_reuseport_other_uid)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(50000, 50100, &clk);
	struct socktab_sock *old, *c;

	CHECK(net);
	old = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(old);
	CHECK_EQ(check_setint(old, SOL_SOCKET, SO_REUSEPORT, 1), 0);
	CHECK_EQ(check_setint(old, SOCKTAB_SOL, SOCKTAB_SO_UID, 1000), 0);
	CHECK_EQ(check_bind4(old, "127.0.0.1", 40000), 0);
	CHECK_EQ(establish4(old, 80), 0);
	CHECK_EQ(socktab_close(old), 0);
	CHECK_EQ(stats(net).time_wait, 1);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEPORT, 1), 0);
	CHECK_EQ(check_setint(c, SOCKTAB_SOL, SOCKTAB_SO_UID, 1001), 0);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), 0);
	socktab_net_free(net);
}

/* O8: explicit bind over a TW + connect to the same peer fails without timestamps (R61). */
TEST(tw_bind_over_tw_no_timestamps)
{
	uint64_t clk = T0;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *c;

	socktab_net_params_init(&p);
	p.port_low = 50000;
	p.port_high = 50100;
	p.tcp_timestamps = 0;
	p.clock = check_clock;
	p.clock_arg = &clk;
	net = socktab_net_new(&p);
	CHECK(net);
	CHECK_EQ(make_bound_tw(net, 1), 0);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 40000), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(stats(net).time_wait, 1);
	CHECK_EQ(stats(net).tw_recycled, 0);
	/* another peer is fine */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(c), 40000);
	socktab_net_free(net);
}

/* O8: a client-side TW (connect()-chosen port) blocks rebinding that port without SO_REUSEADDR. */
TEST(tw_client_blocks_rebind)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 2);
	struct socktab_sock *sk, *a, *b, *w;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	w = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a && b && w);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 40000), -EADDRINUSE);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 40000), -EADDRINUSE); /* old socket lacked it */
	CHECK_EQ(check_bind4(w, "0.0.0.0", 40000), -EADDRINUSE);
	/* R50: a wildcard bind(0) avoids the TW's port */
	CHECK_EQ(check_bind4(w, "0.0.0.0", 0), -EADDRINUSE);
	CHECK_EQ(stats(net).bind_buckets, 1);
	socktab_net_free(net);
}

/* O8: with SO_REUSEADDR on the client and on the new socket the rebind works. */
TEST(tw_client_reuseaddr_rebind)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 2);
	struct socktab_sock *sk, *b;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 40000), 0);
	/* R53: the bound port may take the TW over at once (timestamps on) */
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), 0);
	CHECK_EQ(stats(net).tw_recycled, 1);
	CHECK_EQ(stats(net).time_wait, 0);
	socktab_net_free(net);
}

/* R63: expiry removes the TW from its bind buckets; the port is explicitly bindable again. */
TEST(tw_expiry_frees_port_for_bind)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 2);
	struct socktab_sock *sk, *b;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	clk = T0 + 61 * SEC;
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(socktab_net_tick(net), 1);
	CHECK_EQ(check_bind4(b, "0.0.0.0", 40000), 0);
	socktab_net_free(net);
}

/* R62: the kernel's timer removes the TW at 60 s; with no tick, a bind after expiry still works. */
TEST(tw_expiry_lazy_for_bind)
{
	uint64_t clk;
	struct socktab_net *net = one_port_net(&clk, 0);
	struct socktab_sock *sk, *b;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 40000), -EADDRINUSE);
	clk = T0 + 61 * SEC;
	CHECK_EQ(check_bind4(b, "127.0.0.1", 40000), 0);
	CHECK_EQ(stats(net).time_wait, 0);
	socktab_net_free(net);
}

/* ---- the TIME_WAIT API: type, caller state, substate, RST (R100), kill ---- */

/* A 1-port net with 16 bytes of caller data per socket, 8 of them kept in TIME_WAIT. */
static struct socktab_net *tw_priv_net(uint64_t *clk)
{
	struct socktab_net_params p;

	*clk = T0;
	socktab_net_params_init(&p);
	p.port_low = p.port_high = 40000;
	p.clock = check_clock;
	p.clock_arg = clk;
	p.sock_priv_size = 16;
	p.tw_priv_size = 8;
	return socktab_net_new(&p);
}

/* The TIME_WAIT entry of 127.0.0.1:40000 <-> 127.0.0.1:80, referenced, or NULL. */
static struct socktab_sock *tw_lookup(struct socktab_net *net)
{
	struct socktab_sock *sk = socktab_lookup_established4(net, htonl(LOOP4), htons(80),
							      htonl(LOOP4), htons(40000),
							      SOCKTAB_LOOPBACK_IFINDEX, 0);

	if (sk && !socktab_sock_tw(sk)) {
		socktab_sock_put(sk);
		return NULL;
	}
	return sk;
}

/* close() keeps tw_priv_size bytes of the caller's data, never more, and the socket's own
 * data is unreachable through the entry. */
TEST(tw_api_priv)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *sk, *tw;
	unsigned char *p;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk && !socktab_sock_tw(sk));
	p = socktab_sock_priv(sk);
	CHECK(p);
	memset(p, 0xab, 16);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	tw = tw_lookup(net);
	CHECK(tw);
	CHECK(socktab_sock_priv(tw) == NULL);
	p = socktab_tw_priv(socktab_sock_tw(tw));
	CHECK(p);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(p[i], 0xab);
	CHECK(socktab_tw_priv(NULL) == NULL);
	socktab_sock_put(tw);
	socktab_net_free(net);
}

/*
 * An entry's caller area is its own: over 200 connections closed one after another (entries
 * killed as they go, so objects are recycled), each entry shows exactly the tw_priv_size bytes
 * its own socket held and zeros after them, and socktab_sock_priv() gives nothing.
 */
TEST(tw_priv_never_stale)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *seen[200];
	int bad = 0, reused = 0;

	CHECK(net);
	for (int i = 0; i < 200; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET), *tw;
		unsigned char *p = sk ? socktab_sock_priv(sk) : NULL;

		CHECK(p);
		memset(p, 0x20 + i, 16);
		CHECK_EQ(establish4(sk, 80), 0);
		CHECK_EQ(socktab_close(sk), 0);
		tw = tw_lookup(net);
		CHECK(tw);
		seen[i] = tw;
		for (int j = 0; j < i; j++)
			if (seen[j] == tw) {
				reused++;
				break;
			}
		p = socktab_tw_priv(socktab_sock_tw(tw));
		CHECK(p);
		for (int k = 0; k < SOCKTAB_TW_PRIV_MAX; k++)
			bad += p[k] != (k < 8 ? 0x20 + i : 0);
		bad += socktab_sock_priv(tw) != NULL;
		memset(p, 0xee, SOCKTAB_TW_PRIV_MAX); /* the caller's to update: must not outlive it */
		CHECK_EQ(socktab_tw_kill(socktab_sock_tw(tw)), 0);
		socktab_sock_put(tw);
		if (i % 32 == 31)
			usleep(50000); /* let a batch's grace period end, so objects are reused */
	}
	CHECK_EQ(bad, 0);
	CHECK(reused > 0); /* else the test saw no recycled entry and showed nothing */
	socktab_net_free(net);
}

TEST(tw_api_priv_limits)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.sock_priv_size = 128;
	p.tw_priv_size = SOCKTAB_TW_PRIV_MAX + 1;
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
	p.sock_priv_size = 4;
	p.tw_priv_size = 8; /* more than the socket has */
	CHECK(!socktab_net_new(&p));
}

/* An ESTABLISHED close waits for the peer's FIN (FIN_WAIT2 substate); the FIN makes it
 * TIME_WAIT for a full period from then on. */
TEST(tw_api_fin)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *sk, *tw;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_close(sk), 0);
	tw = tw_lookup(net);
	CHECK(tw);
	CHECK_EQ(socktab_tw_substate(socktab_sock_tw(tw)), SOCKTAB_TCP_FIN_WAIT2);
	clk += 50 * SEC;
	CHECK_EQ(socktab_tw_fin(socktab_sock_tw(tw)), 0);
	CHECK_EQ(socktab_tw_substate(socktab_sock_tw(tw)), SOCKTAB_TCP_TIME_WAIT);
	socktab_sock_put(tw);
	clk += 30 * SEC; /* 80 s after close, 30 s after the FIN: still there */
	CHECK_EQ(socktab_net_tick(net), 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	clk += 31 * SEC;
	CHECK_EQ(socktab_net_tick(net), 1);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	CHECK_EQ(socktab_tw_fin(NULL), -EINVAL);
	socktab_net_free(net);
}

/* A CLOSING socket's close is TIME_WAIT at once. */
TEST(tw_api_closing)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *sk, *tw;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_CLOSING), 0);
	CHECK_EQ(socktab_close(sk), 0);
	tw = tw_lookup(net);
	CHECK(tw);
	CHECK_EQ(socktab_tw_substate(socktab_sock_tw(tw)), SOCKTAB_TCP_TIME_WAIT);
	socktab_sock_put(tw);
	socktab_net_free(net);
}

/* R100: RST kills a FIN_WAIT2 entry whatever tcp_rfc1337 says, a TIME_WAIT entry only with
 * tcp_rfc1337 = 0; the killed entry's port is free for bind() at once. */
TEST(tw_api_reset)
{
	for (int rfc1337 = 0; rfc1337 <= 1; rfc1337++) {
		for (int closing = 0; closing <= 1; closing++) {
			uint64_t clk;
			struct socktab_net *net = tw_priv_net(&clk);
			struct socktab_sock *sk, *tw, *b;
			int died;

			CHECK(net);
			CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_rfc1337",
						    rfc1337 ? "1" : "0"),
				 0);
			sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(establish4(sk, 80), 0);
			if (closing)
				CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_CLOSING), 0);
			CHECK_EQ(socktab_close(sk), 0);
			tw = tw_lookup(net);
			CHECK(tw);
			died = socktab_tw_reset(socktab_sock_tw(tw));
			CHECK_EQ(died, !(closing && rfc1337));
			socktab_sock_put(tw);
			CHECK_EQ(lookup_state4(net, 40000, 80), died ? 0 : SOCKTAB_TCP_TIME_WAIT);
			CHECK_EQ(stats(net).time_wait, died ? 0 : 1);
			b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(check_bind4(b, "127.0.0.1", 40000), died ? 0 : -EADDRINUSE);
			socktab_close(b);
			socktab_net_free(net);
		}
	}
}

/* socktab_tw_kill() removes the entry; the API refuses what is not a TIME_WAIT entry. */
TEST(tw_api_kill)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *sk, *tw;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK(!socktab_sock_tw(sk));
	CHECK_EQ(socktab_tw_kill(socktab_sock_tw(sk)), -EINVAL);
	CHECK_EQ(socktab_close(sk), 0);
	tw = tw_lookup(net);
	CHECK(tw);
	CHECK_EQ(socktab_tw_kill(socktab_sock_tw(tw)), 0);
	CHECK_EQ(stats(net).time_wait, 0);
	CHECK_EQ(lookup_state4(net, 40000, 80), 0);
	/* The caller's reference still pins the memory; the entry is no longer TIME_WAIT-hashed
	 * but a second kill finds nothing to do. */
	socktab_sock_put(tw);
	CHECK_EQ(socktab_tw_reset(NULL), -EINVAL);
	CHECK_EQ(socktab_tw_substate(NULL), -EINVAL);
	socktab_net_free(net);
}

/* socktab_set_state(TIME_WAIT) on a socket the stack still holds (tcp_time_wait, then tcp_done):
 * the entry owns the port; the socket gives it back unless bind() locked it, so a later
 * connect() picks a port again; with the lock both own it. */
TEST(tw_held_socket_port)
{
	uint64_t clk;
	struct socktab_net *net = tw_priv_net(&clk);
	struct socktab_sock *sk, *b;
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(establish4(sk, 80), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_FIN_WAIT2), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_TIME_WAIT), 0);
	CHECK_EQ(socktab_get_state(sk), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(lookup_state4(net, 40000, 80), SOCKTAB_TCP_TIME_WAIT);
	CHECK_EQ(socktab_getsockname(sk, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(ntohs(a.sin_port), 40000); /* inet_sport stays */
	/* Still SS_CONNECTED until a disconnect. Not locked: the port went with the entry, so
	 * connect() autobinds. The only port is the entry's, toward the same peer: none is left
	 * (tw_reuse is off). */
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 81), -EISCONN);
	CHECK_EQ(socktab_connect(sk, &(struct sockaddr){ .sa_family = AF_UNSPEC },
				 sizeof(struct sockaddr)), 0);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 81), 0);
	CHECK_EQ(lookup_state4(net, 40000, 81), SOCKTAB_TCP_SYN_SENT);
	CHECK_EQ(socktab_close(sk), 0);

	/* Locked by bind(): the socket still owns 40001 beside the entry. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40000 40001"), 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 40001), 0);
	CHECK_EQ(establish4(sk, 82), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_FIN_WAIT1), 0);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_TIME_WAIT), 0);
	CHECK_EQ(lookup_state4(net, 40001, 82), SOCKTAB_TCP_TIME_WAIT);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 40001), -EADDRINUSE); /* the socket, not the entry */
	CHECK_EQ(socktab_connect(sk, &(struct sockaddr){ .sa_family = AF_UNSPEC },
				 sizeof(struct sockaddr)), 0);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 83), 0);
	CHECK_EQ(lookup_state4(net, 40001, 83), SOCKTAB_TCP_SYN_SENT);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(socktab_close(b), 0);
	socktab_net_free(net);
}

CHECK_MAIN(tw_api_priv, tw_priv_never_stale, tw_held_socket_port, tw_api_priv_limits, tw_api_fin, tw_api_closing, tw_api_reset,
	   tw_api_kill, tw_created_on_close, tw_created_on_close_v6, tw_created_from_fin_wait1,
	   tw_linger_zero_no_tw, tw_linger_nonzero_keeps_tw, tw_not_from_passive_states,
	   tw_reuse0_blocks_until_expiry, tw_tick_expires, tw_tick_counts, tw_tick_budget_counts,
	   tw_tick_budget_rearm, tw_tick_budget_bad_input, tw_tick_many, tw_len_param,
	   tw_reuse1_after_delay, tw_reuse2_after_delay, tw_reuse_default_is_2,
	   tw_reuse_short_delay, tw_fin_wait2_not_reused_by_search, tw_no_timestamps_no_reuse,
	   tw_other_peer_shares_port,
	   tw_bind_over_tw_reuseaddr_both, tw_bind_old_without_reuseaddr,
	   tw_bind_new_without_reuseaddr, tw_bind_reuseport_other_uid, tw_bind_over_tw_no_timestamps,
	   tw_client_blocks_rebind, tw_client_reuseaddr_rebind, tw_expiry_frees_port_for_bind,
	   tw_expiry_lazy_for_bind)
