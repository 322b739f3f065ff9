/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The port feed (socktab/feed.h): the claims and releases a net tells for listeners, bound and
 * connect()ed TCP sockets, TIME_WAIT entries and bound UDP sockets; refusals (bind() gets
 * -EADDRINUSE, bind(0) and UDP's automatic bind walk past the port); the dump; bad input.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"

#define SEC 1000000000ull
#define T0 (10 * SEC)

/* What the feed was told, in order. */
struct ev {
	char what;                    /* 'c' claim, 'r' release */
	unsigned flags;
	struct socktab_port_key k;
};

struct rec {
	struct ev ev[64];
	int n;
	int refuse[8];                /* ports claim() refuses (0: none) */
	int refused;                  /* refusals made */
};

static int rec_claim(void *arg, const struct socktab_port_key *k, unsigned flags)
{
	struct rec *r = arg;

	for (int i = 0; i < 8; i++)
		if (r->refuse[i] && r->refuse[i] == k->port && !(flags & SOCKTAB_FEED_F_FORCED)) {
			r->refused++;
			return -EPERM;
		}
	if (r->n < 64)
		r->ev[r->n++] = (struct ev){ 'c', flags, *k };
	return 0;
}

static void rec_release(void *arg, const struct socktab_port_key *k)
{
	struct rec *r = arg;

	if (r->n < 64)
		r->ev[r->n++] = (struct ev){ 'r', 0, *k };
}

/* Is event @i (@what, @proto, @family, address @ip, @port)? */
static bool ev_is(const struct rec *r, int i, char what, int proto, int family, const char *ip,
		  int port)
{
	struct in6_addr a;

	if (i >= r->n)
		return false;
	if (family == AF_INET) {
		memset(&a, 0, sizeof(a));
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(&a.s6_addr[12], &(uint32_t){ check_ip4(ip) }, 4);
	} else {
		a = check_ip6(ip);
	}
	return r->ev[i].what == what && r->ev[i].k.proto == proto && r->ev[i].k.family == family &&
	       r->ev[i].k.port == port && !memcmp(&r->ev[i].k.addr, &a, 16);
}

static struct socktab_port_feed feed_of(struct rec *r)
{
	return (struct socktab_port_feed){ rec_claim, rec_release, r };
}

static int bound_buckets(struct socktab_net *net)
{
	struct socktab_net_stats st;

	if (socktab_net_stats(net, &st))
		return -1;
	return (int)st.bind_buckets;
}

/* bind, listen, close of a listener: one claim (refusable) before, one release after. */
TEST(listener_claim_release)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *sk, *sk6;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(sk, "0.0.0.0", 80), 0);
	CHECK_EQ(r.n, 1);
	CHECK(ev_is(&r, 0, 'c', SOCKTAB_TCP, AF_INET, "0.0.0.0", 80));
	CHECK_EQ(r.ev[0].flags, 0u);
	CHECK_EQ(socktab_listen(sk, 16), 0);
	CHECK_EQ(r.n, 1); /* the port was already owned */
	/* An IPv6 listener on the same port: another key (::, AF_INET6) when it may bind. */
	sk6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_setint(sk6, IPPROTO_IPV6, IPV6_V6ONLY, 1), 0);
	CHECK_EQ(check_bind6(sk6, "::1", 80), 0);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'c', SOCKTAB_TCP, AF_INET6, "::1", 80));
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(r.n, 3);
	CHECK(ev_is(&r, 2, 'r', SOCKTAB_TCP, AF_INET, "0.0.0.0", 80));
	CHECK_EQ(socktab_close(sk6), 0);
	CHECK(ev_is(&r, 3, 'r', SOCKTAB_TCP, AF_INET6, "::1", 80));
	CHECK_EQ(r.n, 4);
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* connect(): a forced claim of (source address, port) before it returns; the key stays through
 * TIME_WAIT and goes when the entry expires. */
TEST(connect_and_time_wait)
{
	uint64_t clk = T0;
	struct socktab_net *net = check_net(40000, 40000, &clk);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *sk;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(r.n, 1);
	CHECK(ev_is(&r, 0, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.1", 40000));
	CHECK_EQ(r.ev[0].flags, 0); /* connect()'s walk may be refused (connect_walks_past) */
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_close(sk), 0); /* active close: a TIME_WAIT entry keeps the port */
	CHECK_EQ(r.n, 1);
	clk += 61 * SEC;
	CHECK(socktab_net_tick(net) >= 1);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.1", 40000));
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* connect()'s port walk passes over the ports the feed refuses, as over busy ones: each is
 * claimed (refusable) before it is taken, a refused one is not taken, and with every free port
 * refused connect() fails with -EADDRNOTAVAIL and leaves no bucket. */
TEST(connect_walks_past)
{
	struct socktab_net *net = check_net(40000, 40003, NULL);
	struct rec r = { .n = 0, .refuse = { 40000, 40001, 40002 } };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *a, *b;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(a), 40003);
	CHECK(r.refused >= 1);
	CHECK_EQ(r.n, 1);
	CHECK(ev_is(&r, 0, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.1", 40003));
	CHECK_EQ(bound_buckets(net), 1);
	/* 40003 is taken toward :80, the rest refused: another connect() there finds nothing. */
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_port(b), 0);
	CHECK_EQ(bound_buckets(net), 1);
	CHECK_EQ(r.n, 1);
	/* Toward another port the key (127.0.0.1, 40003) is owned already: no new claim. */
	CHECK_EQ(check_connect4(b, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(b), 40003);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.1", 40003));
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* connect() of a socket bound to the wildcard: its new source address is claimed (forced)
 * before the wildcard key goes; a listener's child on a new local address is claimed (forced)
 * and released with it, the listener's key staying. */
TEST(address_moves_and_children)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *sk, *l, *child;
	struct sockaddr_in loc = check_sin("127.0.0.1", 80), rem = check_sin("127.0.0.9", 5555);

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(sk, "0.0.0.0", 5000), 0);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(r.n, 3);
	CHECK(ev_is(&r, 0, 'c', SOCKTAB_TCP, AF_INET, "0.0.0.0", 5000));
	CHECK(ev_is(&r, 1, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.1", 5000));
	CHECK_EQ(r.ev[1].flags, SOCKTAB_FEED_F_FORCED);
	CHECK(ev_is(&r, 2, 'r', SOCKTAB_TCP, AF_INET, "0.0.0.0", 5000));
	CHECK_EQ(socktab_close(sk), 0); /* SYN_SENT: no TIME_WAIT entry */
	CHECK(ev_is(&r, 3, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.1", 5000));
	r.n = 0;
	l = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(l, "0.0.0.0", 80), 0);
	CHECK_EQ(socktab_listen(l, 8), 0);
	child = socktab_sock_new_child(l, (struct sockaddr *)&loc, (struct sockaddr *)&rem,
				       sizeof(loc), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(child);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.1", 80));
	CHECK_EQ(r.ev[1].flags, SOCKTAB_FEED_F_FORCED);
	CHECK_EQ(socktab_close(l), 0);
	CHECK_EQ(r.n, 3);
	CHECK(ev_is(&r, 2, 'r', SOCKTAB_TCP, AF_INET, "0.0.0.0", 80));
	if (child) {
		CHECK_EQ(socktab_set_state(child, SOCKTAB_TCP_CLOSE), 0);
		CHECK_EQ(socktab_close(child), 0);
	}
	CHECK_EQ(r.n, 4);
	CHECK(ev_is(&r, 3, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.1", 80));
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* UDP: one key per (address as bound, port), whatever the number of sockets on it; a connect()
 * of a wildcard-bound socket keeps its wildcard key. */
TEST(udp_claims)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *a, *b, *c;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	b = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_setint(a, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(a, "0.0.0.0", 53), 0);
	CHECK_EQ(check_bind4(b, "0.0.0.0", 53), 0);
	CHECK_EQ(r.n, 1);
	CHECK(ev_is(&r, 0, 'c', SOCKTAB_UDP, AF_INET, "0.0.0.0", 53));
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(r.n, 1); /* b still holds it */
	CHECK_EQ(check_connect4(b, "127.0.0.1", 5353), 0);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'r', SOCKTAB_UDP, AF_INET, "0.0.0.0", 53));
	/* Automatic bind by connect(): the wildcard key of the chosen port. */
	c = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 5353), 0);
	CHECK_EQ(r.n, 3);
	CHECK(ev_is(&r, 2, 'c', SOCKTAB_UDP, AF_INET, "0.0.0.0", 40000));
	CHECK_EQ(socktab_close(c), 0);
	CHECK_EQ(r.n, 4);
	CHECK(ev_is(&r, 3, 'r', SOCKTAB_UDP, AF_INET, "0.0.0.0", 40000));
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* UDP keys on a port shared by several addresses: a key with an address goes with the last
 * socket bound to it, though a connected wildcard-bound socket sits beside it in the address's
 * chain; the wildcard key stays while a connected socket holds it; bind(0) with SO_REUSEADDR
 * onto a port whose key is held claims nothing. */
TEST(udp_keys_by_address)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *s[6], *x, *y;
	const char *ip[6] = { "127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3", "0.0.0.0",
			      "0.0.0.0" };

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	for (int i = 0; i < 5; i++) {
		s[i] = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		CHECK_EQ(check_setint(s[i], SOL_SOCKET, SO_REUSEADDR, 1), 0);
		CHECK_EQ(check_bind4(s[i], ip[i], 53), 0);
	}
	CHECK_EQ(r.n, 4);
	CHECK(ev_is(&r, 3, 'c', SOCKTAB_UDP, AF_INET, "0.0.0.0", 53));
	/* The wildcard socket takes 127.0.0.1 as its source: its key stays the wildcard. */
	CHECK_EQ(check_connect4(s[4], "127.0.0.1", 9), 0);
	CHECK_EQ(r.n, 4);
	CHECK_EQ(socktab_close(s[0]), 0);
	CHECK_EQ(r.n, 4);
	CHECK_EQ(socktab_close(s[1]), 0);
	CHECK_EQ(r.n, 5);
	CHECK(ev_is(&r, 4, 'r', SOCKTAB_UDP, AF_INET, "127.0.0.1", 53));
	/* Another wildcard socket: the connected one holds the key. */
	s[5] = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_setint(s[5], SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(s[5], ip[5], 53), 0);
	CHECK_EQ(r.n, 5);
	CHECK_EQ(socktab_close(s[4]), 0);
	CHECK_EQ(r.n, 5);
	CHECK_EQ(socktab_close(s[5]), 0);
	CHECK_EQ(r.n, 6);
	CHECK(ev_is(&r, 5, 'r', SOCKTAB_UDP, AF_INET, "0.0.0.0", 53));
	CHECK_EQ(socktab_close(s[2]), 0);
	CHECK_EQ(socktab_close(s[3]), 0);
	CHECK_EQ(r.n, 8);
	CHECK(ev_is(&r, 6, 'r', SOCKTAB_UDP, AF_INET, "127.0.0.2", 53));
	CHECK(ev_is(&r, 7, 'r', SOCKTAB_UDP, AF_INET, "127.0.0.3", 53));
	/* bind(0) on a one-port range: the second SO_REUSEADDR socket shares the key. */
	x = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	y = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_setint(x, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(y, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(x, "127.0.0.1", 0), 0);
	CHECK_EQ(r.n, 9);
	CHECK(ev_is(&r, 8, 'c', SOCKTAB_UDP, AF_INET, "127.0.0.1", 40000));
	CHECK_EQ(check_bind4(y, "127.0.0.1", 0), 0);
	CHECK_EQ(check_port(y), 40000);
	CHECK_EQ(r.n, 9);
	CHECK_EQ(socktab_close(x), 0);
	CHECK_EQ(r.n, 9);
	CHECK_EQ(socktab_close(y), 0);
	CHECK_EQ(r.n, 10);
	CHECK(ev_is(&r, 9, 'r', SOCKTAB_UDP, AF_INET, "127.0.0.1", 40000));
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* A ledger of the keys the feed says a net owns: a claim must name a key not owned yet, a release
 * one that is; anything else counts in @bad. */
struct ledger {
	struct socktab_port_key k[16];
	int n;
	int bad;
};

static int ledger_find(const struct ledger *l, const struct socktab_port_key *k)
{
	for (int i = 0; i < l->n; i++)
		if (l->k[i].proto == k->proto && l->k[i].family == k->family &&
		    l->k[i].port == k->port && l->k[i].l3mdev == k->l3mdev &&
		    !memcmp(&l->k[i].addr, &k->addr, 16))
			return i;
	return -1;
}

static int ledger_claim(void *arg, const struct socktab_port_key *k, unsigned flags)
{
	struct ledger *l = arg;

	(void)flags;
	if (ledger_find(l, k) >= 0 || l->n == 16)
		l->bad++;
	else
		l->k[l->n++] = *k;
	return 0;
}

static void ledger_release(void *arg, const struct socktab_port_key *k)
{
	struct ledger *l = arg;
	int i = ledger_find(l, k);

	if (i < 0)
		l->bad++;
	else
		l->k[i] = l->k[--l->n];
}

/* Does the ledger own UDP key (@family, @ip, @port)? */
static bool ledger_has(const struct ledger *l, int family, const char *ip, int port)
{
	struct socktab_port_key k = { .proto = SOCKTAB_UDP, .family = family,
				      .port = (uint16_t)port };

	if (family == AF_INET) {
		k.addr.s6_addr[10] = k.addr.s6_addr[11] = 0xff;
		memcpy(&k.addr.s6_addr[12], &(uint32_t){ check_ip4(ip) }, 4);
	} else {
		k.addr = check_ip6(ip);
	}
	return ledger_find(l, &k) >= 0;
}

struct dumped {
	const struct ledger *l;
	unsigned seen;                /* ledger entries the dump gave */
	int n;
	bool stray;                   /* a key the ledger does not own, or one given twice */
};

static int dumped_key(void *arg, const struct socktab_port_key *k)
{
	struct dumped *d = arg;
	int i = ledger_find(d->l, k);

	if (i < 0 || ((d->seen >> i) & 1))
		d->stray = true;
	else
		d->seen |= 1u << i;
	d->n++;
	return 0;
}

/* No claim or release went wrong, and the dump gives exactly the keys the ledger owns: the key
 * a socket holds now is the one that was claimed for it. */
static bool ledger_agrees(struct socktab_net *net, const struct ledger *l)
{
	struct dumped d = { l, 0, 0, false };

	return !l->bad && socktab_net_port_feed_dump(net, dumped_key, &d) == 0 && !d.stray &&
	       d.n == l->n;
}

static int disconnect(struct socktab_sock *sk)
{
	struct sockaddr s = { .sa_family = AF_UNSPEC };

	return socktab_connect(sk, &s, sizeof(s));
}

/* @a (AF_INET6 with @v6, else AF_INET) bound to its IPv4 wildcard on port 0 holds that key;
 * connect() to 127.0.0.1:9 keeps it, and disconnect gives the port and the key back. */
static void wild_port0_round(struct socktab_net *net, const struct ledger *l,
			    struct socktab_sock *a, bool v6)
{
	int port;

	CHECK_EQ(v6 ? check_bind6(a, "::ffff:0.0.0.0", 0) : check_bind4(a, "0.0.0.0", 0), 0);
	port = check_port(a);
	CHECK(ledger_has(l, AF_INET, "0.0.0.0", port));
	CHECK_EQ(v6 ? check_connect6(a, "::ffff:127.0.0.1", 9) : check_connect4(a, "127.0.0.1", 9),
		 0);
	CHECK(ledger_agrees(net, l));
	CHECK_EQ(disconnect(a), 0);
	CHECK(ledger_agrees(net, l));
	CHECK_EQ(l->n, 0);
}

/* UDP: each key claimed is released once, and the socket holds that same key all along, through
 * bind (an address, a wildcard, port 0), connect(), disconnect (connect() with AF_UNSPEC), a bind
 * or automatic bind after the port was given back, and close, for IPv4 and IPv6 sockets. A
 * socket bound to a wildcard (0.0.0.0, ::, or ::ffff:0.0.0.0, which the binding locks like an
 * address) keeps the wildcard's key when connect() gives it a source address. */
TEST(udp_claims_pair)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct ledger l = { .n = 0 };
	struct socktab_port_feed f = { ledger_claim, ledger_release, &l };
	struct socktab_sock *a, *b;
	struct sockaddr_in6 name;
	struct in6_addr src;
	socklen_t len;
	int port;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);

	/* ::ffff:0.0.0.0 on a given port, connected to an IPv4 peer: its source 127.0.0.1 stays
	 * through disconnect, as the binding locked the address; its key stays the wildcard. An
	 * IPv4 socket bound to 127.0.0.1 on the same port has a key of its own. */
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	b = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_setint(a, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind6(a, "::ffff:0.0.0.0", 5000), 0);
	CHECK(ledger_has(&l, AF_INET, "0.0.0.0", 5000));
	CHECK_EQ(check_connect6(a, "::ffff:127.0.0.1", 9), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(check_bind4(b, "127.0.0.1", 5000), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK(ledger_has(&l, AF_INET, "127.0.0.1", 5000));
	CHECK_EQ(l.n, 2);
	CHECK_EQ(disconnect(a), 0);
	CHECK(ledger_agrees(net, &l));
	len = sizeof(name);
	CHECK_EQ(socktab_getsockname(a, (struct sockaddr *)&name, &len), 0);
	src = check_ip6("::ffff:127.0.0.1");
	CHECK(!memcmp(&name.sin6_addr, &src, 16));
	CHECK_EQ(check_connect6(a, "::ffff:127.0.0.1", 10), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(socktab_close(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 1);
	CHECK(ledger_has(&l, AF_INET, "127.0.0.1", 5000));
	CHECK_EQ(socktab_close(b), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 0);

	/* ::ffff:0.0.0.0 on port 0: disconnect gives the port back with the wildcard's key; the
	 * address connect() gave stays, so the next automatic bind claims that address. */
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	wild_port0_round(net, &l, a, true);
	CHECK_EQ(check_connect6(a, "::ffff:127.0.0.1", 9), 0);
	port = check_port(a);
	CHECK(ledger_has(&l, AF_INET, "127.0.0.1", port));
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(socktab_close(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 0);

	/* IPv4: 0.0.0.0 on port 0, connect(), disconnect (port and address given back), a bind to
	 * 127.0.0.1, connect() and disconnect (both kept), close. */
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	wild_port0_round(net, &l, a, false);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 5001), 0);
	CHECK(ledger_has(&l, AF_INET, "127.0.0.1", 5001));
	CHECK_EQ(check_connect4(a, "127.0.0.1", 9), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(disconnect(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 1);
	CHECK_EQ(socktab_close(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 0);

	/* IPv6 :: on a given port: connect() to an IPv4 peer, disconnect (back to ::, the port
	 * kept), connect() to an IPv6 one, close. */
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	CHECK_EQ(check_bind6(a, "::", 5002), 0);
	CHECK(ledger_has(&l, AF_INET6, "::", 5002));
	CHECK_EQ(check_connect6(a, "::ffff:127.0.0.1", 9), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(disconnect(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(check_connect6(a, "::1", 9), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 1);
	CHECK_EQ(socktab_close(a), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 0);

	/* IPv6: ::1 on a given port, and a socket bound by its connect(). */
	a = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	b = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	CHECK_EQ(check_bind6(a, "::1", 5003), 0);
	CHECK_EQ(check_connect6(a, "::1", 9), 0);
	CHECK_EQ(check_connect6(b, "::1", 9), 0);
	port = check_port(b);
	CHECK(ledger_has(&l, AF_INET6, "::1", 5003));
	CHECK(ledger_has(&l, AF_INET6, "::", port));
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(disconnect(a), 0);
	CHECK_EQ(disconnect(b), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 1);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(socktab_close(b), 0);
	CHECK(ledger_agrees(net, &l));
	CHECK_EQ(l.n, 0);

	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* A refused claim: bind() gets -EADDRINUSE and nothing is taken; bind(0) and UDP's automatic
 * bind walk past the refused ports. */
TEST(refusal)
{
	struct socktab_net *net = check_net(40000, 40003, NULL);
	struct rec r = { .n = 0, .refuse = { 80, 40000, 40001, 40003 } };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *sk, *u, *t;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 80), -EADDRINUSE);
	CHECK_EQ(bound_buckets(net), 0);
	CHECK_EQ(check_port(sk), 0);
	CHECK_EQ(r.n, 0);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 81), 0); /* the socket is still usable */
	CHECK_EQ(check_port(sk), 81);
	CHECK_EQ(socktab_close(sk), 0);
	/* listen() without bind(): bind(0) skips 40000, 40001 and 40003. */
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	r.refused = 0;
	CHECK_EQ(socktab_listen(sk, 4), 0);
	CHECK_EQ(check_port(sk), 40002);
	CHECK(r.refused >= 1);
	/* With every port refused, bind(0) fails as on a full range. */
	t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	r.refuse[4] = 40002;
	CHECK_EQ(check_bind4(t, "127.0.0.2", 0), -EADDRINUSE);
	CHECK_EQ(socktab_close(t), 0);
	r.refuse[4] = 0;
	/* UDP: an explicit bind on a refused port, then the automatic bind of sendto(). */
	u = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_bind4(u, "0.0.0.0", 80), -EADDRINUSE);
	{
		struct sockaddr_in d = check_sin("127.0.0.1", 9);

		CHECK_EQ(socktab_udp_sendto(u, (struct sockaddr *)&d, sizeof(d), NULL, NULL), 0);
	}
	CHECK_EQ(check_port(u), 40002);
	CHECK_EQ(socktab_close(u), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

/* One port, several addresses: a connect() or bind(0) onto a port whose bucket another address
 * made claims its own address once (refusable) and is refused like a busy port; a connect()
 * onto an address bucket that exists claims nothing. */
TEST(tcp_port_of_other_addresses)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_sock *a, *b, *c, *d, *e;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(r.n, 1);
	/* From 127.0.0.2 onto 40000, whose bucket 127.0.0.1's connect() made. */
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_setint(b, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.2", 0), 0);
	CHECK_EQ(r.n, 1);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(b), 40000);
	CHECK_EQ(r.n, 2);
	CHECK(ev_is(&r, 1, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.2", 40000));
	CHECK_EQ(r.ev[1].flags, 0u);
	/* Again from 127.0.0.2, elsewhere: its bucket is there, nothing to claim. */
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_setint(c, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
	CHECK_EQ(check_bind4(c, "127.0.0.2", 0), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 81), 0);
	CHECK_EQ(r.n, 2);
	/* From 127.0.0.3 with the port refused: no port, no bucket, no claim left behind. */
	r.refuse[0] = 40000;
	d = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_setint(d, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
	CHECK_EQ(check_bind4(d, "127.0.0.3", 0), 0);
	CHECK_EQ(check_connect4(d, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(r.n, 2);
	/* bind(0) on 127.0.0.4: refused, then taken once the feed lets it. */
	e = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(e, "127.0.0.4", 0), -EADDRINUSE);
	CHECK_EQ(check_port(e), 0);
	r.refuse[0] = 0;
	CHECK_EQ(check_bind4(e, "127.0.0.4", 0), 0);
	CHECK_EQ(check_port(e), 40000);
	CHECK_EQ(r.n, 3);
	CHECK(ev_is(&r, 2, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.4", 40000));
	CHECK_EQ(bound_buckets(net), 1);
	CHECK_EQ(socktab_close(e), 0);
	CHECK_EQ(r.n, 4);
	CHECK(ev_is(&r, 3, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.4", 40000));
	CHECK_EQ(socktab_close(d), 0);
	CHECK_EQ(socktab_close(c), 0);
	CHECK_EQ(r.n, 4); /* b still holds 127.0.0.2 */
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(r.n, 5);
	CHECK(ev_is(&r, 4, 'r', SOCKTAB_TCP, AF_INET, "127.0.0.2", 40000));
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(r.n, 6);
	CHECK_EQ(bound_buckets(net), 0);
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	socktab_net_free(net);
}

static int dump_rec(void *arg, const struct socktab_port_key *k)
{
	return rec_claim(arg, k, 0);
}

static int dump_stop(void *arg, const struct socktab_port_key *k)
{
	(void)k;
	++*(int *)arg;
	return 7;
}

/* The dump: every key owned now, once, TCP then UDP; a nonzero return stops it. */
TEST(dump)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct rec r = { .n = 0 };
	struct socktab_sock *l, *c, *u1, *u2;
	int calls = 0;

	CHECK(net);
	l = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_bind6(l, "::", 443), 0);
	CHECK_EQ(socktab_listen(l, 4), 0);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 443), 0);
	u1 = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	u2 = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_setint(u1, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(u2, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(u1, "127.0.0.1", 53), 0);
	CHECK_EQ(check_bind4(u2, "127.0.0.1", 53), 0);
	CHECK_EQ(socktab_net_port_feed_dump(net, dump_rec, &r), 0);
	CHECK_EQ(r.n, 3);
	int tcp443 = 0, tcpc = 0, udp = 0;

	for (int i = 0; i < r.n; i++) {
		tcp443 += ev_is(&r, i, 'c', SOCKTAB_TCP, AF_INET6, "::", 443);
		tcpc += ev_is(&r, i, 'c', SOCKTAB_TCP, AF_INET, "127.0.0.1", check_port(c));
		udp += ev_is(&r, i, 'c', SOCKTAB_UDP, AF_INET, "127.0.0.1", 53);
	}
	CHECK_EQ(tcp443, 1);
	CHECK_EQ(tcpc, 1);
	CHECK_EQ(udp, 1);
	CHECK(ev_is(&r, 2, 'c', SOCKTAB_UDP, AF_INET, "127.0.0.1", 53)); /* UDP last */
	CHECK_EQ(socktab_net_port_feed_dump(net, dump_stop, &calls), 7);
	CHECK_EQ(calls, 1);
	socktab_close(l);
	socktab_close(c);
	socktab_close(u1);
	socktab_close(u2);
	r.n = 0;
	CHECK_EQ(socktab_net_port_feed_dump(net, dump_rec, &r), 0);
	CHECK_EQ(r.n, 0);
	socktab_net_free(net);
}

/* Bad input: -EINVAL, and the feed in place stays in place. */
TEST(bad_input)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct rec r = { .n = 0 };
	struct socktab_port_feed f = feed_of(&r);
	struct socktab_port_feed half = { rec_claim, NULL, &r }, half2 = { NULL, rec_release, &r };
	struct socktab_sock *sk;

	CHECK(net);
	CHECK_EQ(socktab_net_set_port_feed(NULL, &f), -EINVAL);
	CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
	CHECK_EQ(socktab_net_set_port_feed(net, &half), -EINVAL);
	CHECK_EQ(socktab_net_set_port_feed(net, &half2), -EINVAL);
	CHECK_EQ(socktab_net_port_feed_dump(NULL, dump_rec, &r), -EINVAL);
	CHECK_EQ(socktab_net_port_feed_dump(net, NULL, &r), -EINVAL);
	CHECK_EQ(bound_buckets(net), 0);
	CHECK_EQ(r.n, 0);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(sk, "0.0.0.0", 8080), 0);
	CHECK_EQ(r.n, 1); /* the first feed still runs */
	/* Inside a read-side section of the caller's own: refused, nothing changes. */
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), -EDEADLK);
	socktab_rcu_read_unlock();
	/* Removed: no more calls. */
	CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(r.n, 1);
	socktab_net_free(net);
}

/* ---- replacing the feed while other threads bind and close ---- */

static atomic_int live;         /* 1 while the feed below may be called */
static atomic_int late_calls;   /* calls after socktab_net_set_port_feed() removed it */
static atomic_int calls;
static atomic_int stop;

static int race_claim(void *arg, const struct socktab_port_key *k, unsigned flags)
{
	(void)arg, (void)k, (void)flags;
	/* A call still running when the feed's removal returned is late too: stay a while. */
	for (volatile int spin = 0; spin < 5000; spin++)
		;
	if (!atomic_load(&live))
		atomic_fetch_add(&late_calls, 1);
	atomic_fetch_add(&calls, 1);
	return 0;
}

static void race_release(void *arg, const struct socktab_port_key *k)
{
	race_claim(arg, k, 0);
}

struct binder_arg {
	struct socktab_net *net;
	int base;
};

static void *binder(void *p)
{
	struct binder_arg *a = p;
	struct socktab_net *net = a->net;
	int base = a->base;

	socktab_thread_register();
	for (int i = 0; i < 2000000 && !atomic_load(&stop); i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		if (!sk)
			break;
		check_bind4(sk, "127.0.0.1", base + i % 500);
		socktab_close(sk);
	}
	socktab_thread_unregister();
	return NULL;
}

/* When socktab_net_set_port_feed() returns, no call of the feed it replaced runs any more. */
TEST(replace_under_writers)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct socktab_port_feed f = { race_claim, race_release, NULL };
	struct binder_arg args[2] = { { net, 20000 }, { net, 21000 } };
	pthread_t t[2];

	CHECK(net);
	atomic_store(&stop, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, binder, &args[i]), 0);
	/* 200 rounds, and on until the feed was called in some (at most 10,000 rounds). */
	for (int round = 0; round < 10000 && (round < 200 || !atomic_load(&calls)); round++) {
		atomic_store(&live, 1);
		CHECK_EQ(socktab_net_set_port_feed(net, &f), 0);
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		CHECK_EQ(socktab_net_set_port_feed(net, NULL), 0);
		atomic_store(&live, 0);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&calls) > 0);
	CHECK_EQ(atomic_load(&late_calls), 0);
	socktab_net_free(net);
}

CHECK_MAIN(listener_claim_release, connect_and_time_wait, connect_walks_past,
	   address_moves_and_children, udp_claims, udp_keys_by_address, udp_claims_pair,
	   refusal, tcp_port_of_other_addresses, dump, bad_input, replace_under_writers)
