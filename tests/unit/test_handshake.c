/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_req_complete(), the handshake's final ACK in one call: each outcome with its tables
 * and counters (R115, R117-R121): a child in the accept queue or handed over at once, a full
 * accept queue (drop, or reset with abort-on-overflow), a request another thread completed
 * (stolen), one whose listener closed or that was dropped (reset), one that migrated to another
 * listener; and bad input that changes nothing.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "sock.h"

#define LO SOCKTAB_LOOPBACK_IFINDEX

static struct socktab_net *new_net(void)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.sock_priv_size = 64;
	p.req_priv_size = 16;
	return socktab_net_new(&p);
}

static struct socktab_sock *listener4(struct socktab_net *net, int port, int backlog, int rp)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (rp)
		check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (check_bind4(sk, "127.0.0.1", port) || socktab_listen(sk, backlog)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* A request of @l for the SYN from 127.0.0.2:@rport, found as a lookup finds it (@hit). */
static struct socktab_sock *req4(struct socktab_sock *l, int rport)
{
	struct sockaddr_in local = check_sin("127.0.0.1", check_port(l));
	struct sockaddr_in remote = check_sin("127.0.0.2", rport);

	return socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0);
}

/* The kind of what a lookup of 127.0.0.2:@rport -> 127.0.0.1:@lport finds, and the socket. */
static int lookup(struct socktab_net *net, int lport, int rport, struct socktab_sock **sk)
{
	struct socktab_tuple4 t = { check_ip4("127.0.0.2"), check_ip4("127.0.0.1"),
				    htons((uint16_t)rport), htons((uint16_t)lport), LO, 0 };
	struct socktab_hit h;

	socktab_rcu_read_lock();
	(void)socktab_lookup_one4(net, SOCKTAB_TCP, &t, &h, SOCKTAB_LOOKUP_NOREF);
	socktab_rcu_read_unlock();
	if (sk)
		*sk = h.sk;
	return h.kind;
}

static struct socktab_listen_info info(struct socktab_sock *l)
{
	struct socktab_listen_info i;

	memset(&i, 0xff, sizeof(i));
	(void)socktab_listen_info(l, &i);
	return i;
}

static uint32_t refs(const struct socktab_sock *sk)
{
	return atomic_load(&sk->refcnt);
}

static bool counted(const struct socktab_req_counters *c, uint64_t ovf, uint64_t drops,
		    uint64_t rsts)
{
	return c->listen_overflows == ovf && c->listen_drops == drops && c->embryonic_rsts == rsts;
}

/* The child takes the request's place and joins the accept queue; the listener comes back
 * referenced; the area is the request's. */
TEST(complete_child)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7100, 8, 0), *r, *c, *ln, *found;
	struct socktab_req_counters cnt = { 0 };
	uint32_t lrefs;

	CHECK(l);
	r = req4(l, 1000);
	CHECK(r);
	memcpy(socktab_req_priv(r), "handshake-state!", 16);
	CHECK_EQ(lookup(net, 7100, 1000, &found), SOCKTAB_HIT_REQUEST);
	CHECK(found == r);
	lrefs = refs(l);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0, &c, &ln, &cnt),
		 SOCKTAB_REQ_CHILD);
	CHECK(c && c != r);
	CHECK(ln == l);
	CHECK_EQ(refs(l), lrefs + 1);
	socktab_sock_put(ln);
	CHECK_EQ(socktab_get_state(c), SOCKTAB_TCP_ESTABLISHED);
	CHECK(!memcmp(socktab_sock_priv(c), "handshake-state!", 16));
	CHECK_EQ(lookup(net, 7100, 1000, &found), SOCKTAB_HIT_ESTABLISHED);
	CHECK(found == c);
	CHECK_EQ(info(l).qlen, 0);
	CHECK_EQ(info(l).ack_backlog, 1);
	CHECK(counted(&cnt, 0, 0, 0));
	CHECK(socktab_accept(l) == c);
	socktab_sock_put(c);
	CHECK_EQ(socktab_close(c), 0);
	/* SYN_RECV, and no listener asked for. */
	socktab_sock_put(r);
	r = req4(l, 1001);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_SYN_RECV, 0, &c, NULL, NULL),
		 SOCKTAB_REQ_CHILD);
	CHECK_EQ(socktab_get_state(c), SOCKTAB_TCP_SYN_RECV);
	socktab_sock_put(c);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* SOCKTAB_REQ_ACCEPT: the child never waits in the accept queue; its open reference is the
 * caller's, as from socktab_accept(). */
TEST(complete_accept_at_once)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7101, 0, 0), *r1, *r2, *c1, *c2, *found;

	CHECK(l);
	r1 = req4(l, 1000);
	r2 = req4(l, 1001);
	CHECK(r1 && r2);
	CHECK_EQ(socktab_req_complete(r1, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ACCEPT, &c1, NULL,
				      NULL),
		 SOCKTAB_REQ_CHILD);
	CHECK_EQ(refs(c1), 1);
	CHECK_EQ(info(l).ack_backlog, 0);
	CHECK_EQ(info(l).qlen, 1);
	errno = 0;
	CHECK(socktab_accept(l) == NULL && errno == EAGAIN);
	/* With backlog 0 the queue would hold one child: at once, none is held, so both go. */
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ACCEPT, &c2, NULL,
				      NULL),
		 SOCKTAB_REQ_CHILD);
	CHECK_EQ(lookup(net, 7101, 1001, &found), SOCKTAB_HIT_ESTABLISHED);
	CHECK(found == c2);
	/* The request left every queue, completed: stolen for a second ACK. */
	CHECK_EQ(socktab_req_complete(r1, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ACCEPT, &found,
				      NULL, NULL),
		 SOCKTAB_REQ_STOLEN);
	CHECK(found == NULL);
	CHECK_EQ(socktab_close(c2), 0);
	CHECK_EQ(socktab_close(c1), 0); /* the caller's to close: an active close */
	CHECK_EQ(lookup(net, 7101, 1000, NULL), SOCKTAB_HIT_TIME_WAIT);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	{
		struct socktab_net_stats st;

		socktab_net_stats(net, &st);
		CHECK_EQ(st.requests, 0);
	}
	socktab_net_free(net);
}

/* R115: a full accept queue refuses the ACK (ListenOverflows, ListenDrops); the request stays,
 * and completes once there is room. */
TEST(complete_overflow_drops)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7102, 0, 0), *r1, *r2, *c, *ln = l, *found;
	struct socktab_req_counters cnt = { 0 };

	CHECK(l);
	r1 = req4(l, 1000);
	r2 = req4(l, 1001);
	CHECK_EQ(socktab_req_complete(r1, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt),
		 SOCKTAB_REQ_CHILD);
	socktab_sock_put(c);
	c = l;
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, 0, &c, &ln, &cnt),
		 SOCKTAB_REQ_DROP);
	CHECK(c == NULL && ln == NULL);
	CHECK(counted(&cnt, 1, 1, 0));
	CHECK_EQ(lookup(net, 7102, 1001, &found), SOCKTAB_HIT_REQUEST);
	CHECK(found == r2);
	CHECK_EQ(info(l).qlen, 1);
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt),
		 SOCKTAB_REQ_DROP);
	CHECK(counted(&cnt, 2, 2, 0));
	c = socktab_accept(l);
	CHECK(c);
	socktab_close(c);
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt),
		 SOCKTAB_REQ_CHILD);
	CHECK(counted(&cnt, 2, 2, 0));
	socktab_sock_put(c);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	socktab_net_free(net);
}

/* tcp_abort_on_overflow: the refused ACK is answered with a reset and the request dropped
 * (EmbryonicRsts besides ListenOverflows and ListenDrops). */
TEST(complete_overflow_aborts)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7103, 0, 0), *r1, *r2, *c;
	struct socktab_req_counters cnt = { 0 };
	struct socktab_net_stats st;

	CHECK(l);
	r1 = req4(l, 1000);
	r2 = req4(l, 1001);
	CHECK_EQ(socktab_req_complete(r1, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ABORT_ON_OVERFLOW,
				      &c, NULL, &cnt),
		 SOCKTAB_REQ_CHILD);
	socktab_sock_put(c);
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ABORT_ON_OVERFLOW,
				      &c, NULL, &cnt),
		 SOCKTAB_REQ_RESET);
	CHECK(c == NULL);
	CHECK(counted(&cnt, 1, 1, 1));
	CHECK_EQ(lookup(net, 7103, 1001, NULL), SOCKTAB_HIT_LISTENER);
	CHECK_EQ(info(l).qlen, 0);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 0);
	/* Gone without a child: a reset again, counted nowhere. */
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ABORT_ON_OVERFLOW,
				      &c, NULL, &cnt),
		 SOCKTAB_REQ_RESET);
	CHECK(counted(&cnt, 1, 1, 1));
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	socktab_net_free(net);
}

/* Another thread completed the request first: stolen, whether its child still waits in the
 * accept queue or was accepted; the lookup finds the child. */
TEST(complete_stolen)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7104, 8, 0), *r, *c, *c2, *found;
	struct socktab_req_counters cnt = { 0 };

	CHECK(l);
	r = req4(l, 1000);
	CHECK_EQ(socktab_req_promote(r, SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0, &c2, NULL, &cnt),
		 SOCKTAB_REQ_STOLEN);
	CHECK(c2 == NULL);
	CHECK_EQ(lookup(net, 7104, 1000, &found), SOCKTAB_HIT_ESTABLISHED);
	CHECK(found == c);
	CHECK(socktab_accept(l) == c);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0, &c2, NULL, &cnt),
		 SOCKTAB_REQ_STOLEN);
	CHECK_EQ(info(l).ack_backlog, 0);
	CHECK(counted(&cnt, 0, 0, 0));
	socktab_sock_put(c);
	socktab_close(c);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* R119: the listener closed (no migration) or another thread dropped the request: a reset. */
TEST(complete_gone_resets)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7105, 8, 0), *r1, *r2, *c;
	struct socktab_req_counters cnt = { 0 };

	CHECK(l);
	r1 = req4(l, 1000);
	r2 = req4(l, 1001);
	CHECK(r1 && r2);
	CHECK_EQ(socktab_req_drop(r1), 0);
	CHECK_EQ(socktab_req_complete(r1, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt),
		 SOCKTAB_REQ_RESET);
	CHECK_EQ(socktab_close(l), 0);
	CHECK_EQ(socktab_req_complete(r2, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt),
		 SOCKTAB_REQ_RESET);
	CHECK(c == NULL);
	CHECK_EQ(lookup(net, 7105, 1001, NULL), SOCKTAB_HIT_NONE);
	CHECK(counted(&cnt, 0, 0, 0));
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_net_free(net);
}

/* R120-R124: a request moved to another member by tcp_migrate_req completes there, and the
 * call names that listener. */
TEST(complete_after_migration)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *a, *b, *r, *c, *ln;

	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "1"), 0);
	a = listener4(net, 7106, 8, 1);
	b = listener4(net, 7106, 8, 1);
	CHECK(a && b);
	r = req4(a, 1000);
	CHECK(r);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0, &c, &ln, NULL),
		 SOCKTAB_REQ_CHILD);
	CHECK(ln == b);
	CHECK_EQ(info(b).ack_backlog, 1);
	CHECK(socktab_accept(b) == c);
	socktab_sock_put(ln);
	socktab_sock_put(c);
	socktab_close(c);
	socktab_sock_put(r);
	socktab_close(b);
	socktab_net_free(net);
}

/* Two threads answer the same final ACK at once (a retransmission taken by another queue):
 * one makes the child, the other is told it was stolen. Or one closes the listener while the
 * other answers: the child (then forgotten by the close) or a reset. Bounded rounds. */
struct racer {
	atomic_int *ready;
	struct socktab_sock *req, *l;
	bool close;
	int v;
	struct socktab_sock *child;
};

/*
 * Wait, spinning, until both racers are here, so that their calls begin a few instructions
 * apart. A barrier lets its last thread go on at once while the other still wakes from its
 * sleep, microseconds later: often time enough for the first call to finish before the second
 * begins. It yields now and then, for a machine whose other CPU is busy.
 */
static void start_together(atomic_int *ready)
{
	atomic_fetch_add(ready, 1);
	for (unsigned int i = 1; atomic_load(ready) < 2; i++)
		if (i % 4096 == 0)
			sched_yield();
}

static const char *verdict(int v)
{
	static const char *const names[] = { "child", "drop", "reset", "stolen" };

	return v >= 0 && v < 4 ? names[v] : "an error";
}

static void *racer_run(void *arg)
{
	struct racer *r = arg;

	socktab_thread_register();
	start_together(r->ready);
	if (r->close)
		r->v = socktab_close(r->l);
	else
		r->v = socktab_req_complete(r->req, SOCKTAB_TCP_ESTABLISHED, 0, &r->child, NULL,
					    NULL);
	socktab_thread_unregister();
	return NULL;
}

TEST(complete_races)
{
	struct socktab_net *net = new_net();
	int seen[2][4] = { { 0 } };

	CHECK(net);
	for (int round = 0; round < 400; round++) {
		bool close = round % 2;
		struct socktab_sock *l = listener4(net, 7200 + round, 8, 0), *req;
		atomic_int ready = 0;
		struct racer a, b;
		pthread_t ta, tb;

		CHECK(l);
		req = req4(l, 1000);
		CHECK(req);
		a = (struct racer){ &ready, req, l, false, -1, NULL };
		b = (struct racer){ &ready, req, l, close, -1, NULL };
		CHECK_EQ(pthread_create(&ta, NULL, racer_run, &a), 0);
		CHECK_EQ(pthread_create(&tb, NULL, racer_run, &b), 0);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		if (!close) {
			/* Exactly one child; the other answer is "stolen". */
			if ((a.v == SOCKTAB_REQ_CHILD) == (b.v == SOCKTAB_REQ_CHILD))
				fprintf(stderr, "complete_races: round %d: the two ACKs were "
					"answered %s and %s\n", round, verdict(a.v), verdict(b.v));
			CHECK((a.v == SOCKTAB_REQ_CHILD) != (b.v == SOCKTAB_REQ_CHILD));
			CHECK(a.v == SOCKTAB_REQ_STOLEN || b.v == SOCKTAB_REQ_STOLEN);
			seen[0][a.v]++;
			CHECK(socktab_accept(l) == (a.child ? a.child : b.child));
			socktab_sock_put(a.child ? a.child : b.child);
			socktab_close(a.child ? a.child : b.child);
			socktab_close(l);
		} else {
			/* Before the close: a child the close then forgets; after: a reset. */
			CHECK_EQ(b.v, 0);
			CHECK(a.v == SOCKTAB_REQ_CHILD || a.v == SOCKTAB_REQ_RESET);
			seen[1][a.v]++;
			if (a.v == SOCKTAB_REQ_CHILD) {
				CHECK_EQ(socktab_get_state(a.child), -EBADF);
				socktab_sock_put(a.child);
			}
		}
		/* The child's own close left a TIME_WAIT entry; the listener's close
		 * forgets its child abortively. */
		CHECK_EQ(lookup(net, 7200 + round, 1000, NULL),
			 close ? SOCKTAB_HIT_NONE : SOCKTAB_HIT_TIME_WAIT);
		socktab_sock_put(req);
	}
	printf("complete_races: two ACKs: the first thread made the child %d times, was told "
	       "stolen %d; a close beside an ACK: child %d, reset %d\n",
	       seen[0][SOCKTAB_REQ_CHILD], seen[0][SOCKTAB_REQ_STOLEN], seen[1][SOCKTAB_REQ_CHILD],
	       seen[1][SOCKTAB_REQ_RESET]);
	socktab_net_free(net);
}

/* Bad input: -EINVAL and nothing changed. */
TEST(complete_bad_input)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7107, 8, 0), *r, *c = NULL;
	struct socktab_req_counters cnt = { 0 };

	CHECK(l);
	r = req4(l, 1000);
	CHECK(r);
	CHECK_EQ(socktab_req_complete(NULL, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt), -EINVAL);
	CHECK_EQ(socktab_req_complete(l, SOCKTAB_TCP_ESTABLISHED, 0, &c, NULL, &cnt), -EINVAL);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_LISTEN, 0, &c, NULL, &cnt), -EINVAL);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0, NULL, NULL, &cnt), -EINVAL);
	CHECK_EQ(socktab_req_complete(r, SOCKTAB_TCP_ESTABLISHED, 0x10, &c, NULL, &cnt), -EINVAL);
	CHECK(c == NULL);
	CHECK(counted(&cnt, 0, 0, 0));
	CHECK_EQ(lookup(net, 7107, 1000, NULL), SOCKTAB_HIT_REQUEST);
	CHECK_EQ(info(l).qlen, 1);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

CHECK_MAIN(complete_child, complete_accept_at_once, complete_overflow_drops,
	   complete_overflow_aborts, complete_stolen, complete_gone_resets,
	   complete_after_migration, complete_races, complete_bad_input)
