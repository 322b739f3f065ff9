/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket dumps (socktab/diag.h): every kind of entry reported once with its state and
 * addresses, the filters, bad input, and a dump running while another thread churns sockets.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "check.h"

/* Count the entries of a dump; checks that the dump ends and never fails. */
static int count(struct socktab_net *net, const struct socktab_diag_filter *f, int *tw,
		 int *listen, int *udp)
{
	struct socktab_diag_cursor *c = socktab_diag_open(net, f);
	struct socktab_diag_entry e;
	int n = 0, r;

	if (!c)
		return -1;
	*tw = *listen = *udp = 0;
	while ((r = socktab_diag_next(c, &e)) == 1) {
		n++;
		*tw += e.timewait;
		*listen += e.state == SOCKTAB_TCP_LISTEN;
		*udp += e.proto == SOCKTAB_UDP;
	}
	socktab_diag_close(c);
	return r == 0 ? n : -1;
}

TEST(diag_reports_every_kind)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln, *c1, *c2, *u1, *u2, *hit;
	struct socktab_diag_filter f;
	struct socktab_diag_cursor *cur;
	struct socktab_diag_entry e;
	int tw, listen, udp, found_tw = 0;

	CHECK(net);
	ln = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(ln, "127.0.0.1", 8080), 0);
	CHECK_EQ(socktab_listen(ln, 16), 0);
	c1 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c2 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_connect4(c1, "127.0.0.1", 8080), 0);
	CHECK_EQ(socktab_set_state(c1, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(check_connect6(c2, "::1", 9090), 0);
	u1 = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_bind4(u1, "127.0.0.1", 5353), 0);
	u2 = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_connect4(u2, "127.0.0.1", 5353), 0);
	/* A listener, two connections, two UDP sockets. */
	CHECK_EQ(count(net, NULL, &tw, &listen, &udp), 5);
	CHECK_EQ(listen, 1);
	CHECK_EQ(udp, 2);
	/* c1 closes actively: its entry becomes TIME_WAIT. */
	int c1port = check_port(c1);

	CHECK_EQ(socktab_close(c1), 0);
	CHECK_EQ(count(net, NULL, &tw, &listen, &udp), 5);
	CHECK_EQ(tw, 1);
	/* c1's entry waits for the peer's FIN: ss reports (and filters) it as FIN-WAIT-2. */
	memset(&f, 0, sizeof(f));
	f.states = 1u << SOCKTAB_TCP_TIME_WAIT;
	CHECK_EQ(count(net, &f, &tw, &listen, &udp), 0);
	f.states = 1u << SOCKTAB_TCP_FIN_WAIT2;
	cur = socktab_diag_open(net, &f);
	CHECK(cur);
	while (socktab_diag_next(cur, &e) == 1) {
		const struct sockaddr_in *l = (const void *)&e.local, *r = (const void *)&e.remote;

		CHECK_EQ(e.state, SOCKTAB_TCP_FIN_WAIT2);
		CHECK_EQ(e.timewait, 1);
		CHECK_EQ(l->sin_family, AF_INET);
		CHECK_EQ(ntohs(l->sin_port), c1port);
		CHECK_EQ(ntohs(r->sin_port), 8080);
		CHECK_EQ(r->sin_addr.s_addr, htonl(0x7f000001));
		CHECK(e.expires_ms > 0 && e.expires_ms <= 60000);
		found_tw++;
	}
	socktab_diag_close(cur);
	CHECK_EQ(found_tw, 1);
	/* Port and protocol filters. */
	memset(&f, 0, sizeof(f));
	f.lport = 8080;
	CHECK_EQ(count(net, &f, &tw, &listen, &udp), 1);
	CHECK_EQ(listen, 1);
	memset(&f, 0, sizeof(f));
	f.rport = 9090;
	CHECK_EQ(count(net, &f, &tw, &listen, &udp), 1);
	memset(&f, 0, sizeof(f));
	f.proto = SOCKTAB_UDP;
	CHECK_EQ(count(net, &f, &tw, &listen, &udp), 2);
	CHECK_EQ(udp, 2);
	memset(&f, 0, sizeof(f));
	f.family = AF_INET6;
	CHECK_EQ(count(net, &f, &tw, &listen, &udp), 1);
	/* The listener's entry has no remote address. */
	hit = NULL;
	memset(&f, 0, sizeof(f));
	f.states = 1u << SOCKTAB_TCP_LISTEN;
	cur = socktab_diag_open(net, &f);
	CHECK(cur);
	CHECK_EQ(socktab_diag_next(cur, &e), 1);
	CHECK_EQ(e.remote.ss_family, AF_UNSPEC);
	CHECK_EQ(socktab_diag_next(cur, &e), 0);
	socktab_diag_close(cur);
	(void)hit;
	socktab_close(ln);
	socktab_close(c2);
	socktab_close(u1);
	socktab_close(u2);
	socktab_net_free(net);
}

/* Nets sharing tables see only their own sockets. */
/* A connection to remote port 0 (Linux allows the connect()) is dumped with its peer, in SYN_SENT
 * and in TIME_WAIT, as inet_diag fills idiag_dst and idiag_dport for every TCP entry. */
TEST(diag_remote_port_zero)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_diag_entry e;
	struct socktab_diag_cursor *c;
	int seen = 0;

	CHECK_EQ(check_connect4(s, "127.0.0.7", 0), 0);
	for (int pass = 0; pass < 2; pass++) {
		if (pass) { /* established, then actively closed: a TIME_WAIT entry */
			CHECK_EQ(socktab_set_state(s, SOCKTAB_TCP_ESTABLISHED), 0);
			CHECK_EQ(socktab_close(s), 0);
		}
		c = socktab_diag_open(net, NULL);
		CHECK(c);
		while (socktab_diag_next(c, &e) == 1) {
			const struct sockaddr_in *r = (const void *)&e.remote;

			CHECK_EQ(e.timewait, pass);
			CHECK_EQ(r->sin_family, AF_INET);
			CHECK_EQ(ntohl(r->sin_addr.s_addr), 0x7f000007);
			CHECK_EQ(r->sin_port, 0);
			seen++;
		}
		socktab_diag_close(c);
	}
	CHECK_EQ(seen, 2);
	socktab_net_free(net);
}

TEST(diag_shared_tables)
{
	struct socktab_net_params p;
	struct socktab_net *a = socktab_net_new(NULL), *b;
	struct socktab_sock *sa, *sb;
	int tw, listen, udp;

	CHECK(a);
	socktab_net_params_init(&p);
	p.share_tables_with = a;
	b = socktab_net_new(&p);
	CHECK(b);
	sa = socktab_socket(a, SOCKTAB_TCP, AF_INET);
	sb = socktab_socket(b, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(sa, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(sb, "127.0.0.1", 80), 0);
	CHECK_EQ(count(a, NULL, &tw, &listen, &udp), 1);
	CHECK_EQ(count(b, NULL, &tw, &listen, &udp), 1);
	socktab_net_free(b);
	socktab_net_free(a);
}

TEST(diag_bad_input)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_diag_filter f;
	struct socktab_diag_entry e;
	struct socktab_diag_cursor *c;

	CHECK(net);
	errno = 0;
	CHECK(!socktab_diag_open(NULL, NULL));
	CHECK_EQ(errno, EINVAL);
	memset(&f, 0, sizeof(f));
	f.proto = 7;
	CHECK(!socktab_diag_open(net, &f));
	f.proto = 0;
	f.family = AF_UNIX;
	CHECK(!socktab_diag_open(net, &f));
	c = socktab_diag_open(net, NULL);
	CHECK(c);
	CHECK_EQ(socktab_diag_next(c, NULL), -EINVAL);
	CHECK_EQ(socktab_diag_next(NULL, &e), -EINVAL);
	CHECK_EQ(socktab_diag_next(c, &e), 0); /* an empty net */
	CHECK_EQ(socktab_diag_next(c, &e), 0);
	socktab_diag_close(c);
	socktab_diag_close(NULL);
	socktab_net_free(net);
}

/* A dump racing with connects and closes on another thread: it ends, every entry it reports is
 * well formed, and the long-lived sockets are each reported exactly once. */
#define STABLE 64

static struct socktab_net *churn_net;
static _Atomic int churn_stop;

static void *churner(void *arg)
{
	struct socktab_sock *s[32] = { 0 };
	unsigned i = 0;

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&churn_stop)) {
		unsigned k = i++ % 32;

		if (s[k]) {
			socktab_close(s[k]);
			s[k] = NULL;
		} else {
			s[k] = socktab_socket(churn_net, SOCKTAB_TCP, AF_INET);
			if (s[k] && !check_connect4(s[k], "127.0.0.2", 7000 + (int)(k % 4)))
				socktab_set_state(s[k], SOCKTAB_TCP_ESTABLISHED);
		}
	}
	for (unsigned k = 0; k < 32; k++)
		if (s[k])
			socktab_close(s[k]);
	socktab_thread_unregister();
	return NULL;
}

TEST(diag_concurrent_churn)
{
	struct socktab_sock *stable[STABLE];
	static int seen[65536];
	struct socktab_diag_entry e;
	pthread_t th;
	time_t t0;
	int dumps = 0;

	churn_net = socktab_net_new(NULL);
	CHECK(churn_net);
	for (int i = 0; i < STABLE; i++) {
		stable[i] = socktab_socket(churn_net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(stable[i], "127.0.0.3", 9000), 0);
	}
	atomic_store(&churn_stop, 0);
	CHECK_EQ(pthread_create(&th, NULL, churner, NULL), 0);
	t0 = time(NULL);
	/* At least one dump however slow the machine, then up to a second of them. */
	while (dumps == 0 || (time(NULL) - t0 < 1 && dumps < 200)) {
		struct socktab_diag_cursor *c = socktab_diag_open(churn_net, NULL);
		int n = 0, r;

		if (!c)
			break;
		memset(seen, 0, sizeof(seen));
		while ((r = socktab_diag_next(c, &e)) == 1) {
			const struct sockaddr_in *l = (const void *)&e.local;
			const struct sockaddr_in *rm = (const void *)&e.remote;

			if (e.proto != SOCKTAB_TCP || l->sin_family != AF_INET)
				break;
			if (rm->sin_addr.s_addr == htonl(0x7f000003))
				seen[ntohs(l->sin_port)]++;
			n++;
		}
		socktab_diag_close(c);
		if (r != 0)
			break;
		for (int i = 0; i < STABLE; i++)
			if (seen[check_port(stable[i])] != 1)
				r = -1;
		if (r)
			break;
		dumps++;
	}
	atomic_store(&churn_stop, 1);
	pthread_join(th, NULL);
	CHECK(dumps > 0);
	CHECK(time(NULL) - t0 >= 1 || dumps == 200); /* every dump passed */
	for (int i = 0; i < STABLE; i++)
		socktab_close(stable[i]);
	socktab_net_free(churn_net);
}

CHECK_MAIN(diag_reports_every_kind, diag_remote_port_zero, diag_shared_tables, diag_bad_input, diag_concurrent_churn)
