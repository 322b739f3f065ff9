/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_lookup_mixed(): a burst of TCP and UDP keys of both families gets, key for key, what
 * socktab_lookup_one4/6() gives (kinds, sockets, areas; the call's or the key's device; with and
 * without references; across chunks); a repeated 4-tuple whose earlier answer its handling may
 * change ends the call there, so a stack that handles the keys and calls again from there sees
 * what it would see one key at a time (a SYN and its retransmission, a data segment behind the
 * ACK that creates its socket, a v4-mapped repeat, a datagram that makes its peer a connected
 * socket); bad input leaves the results untouched.
 */
#include <stdbool.h>

#include "check.h"
#include "ehash.h"
#include "net.h"
#include "sock.h"
#include "udp.h"

#define LO SOCKTAB_LOOPBACK_IFINDEX
#define NKIDS 40

static struct socktab_net *new_net(void)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.sock_priv_size = 32;
	p.req_priv_size = 16;
	p.tw_priv_size = 16;
	p.tw_len_ms = 600000;
	return socktab_net_new(&p);
}

/* A key from remote @ra:@rport to local @la:@lport (text addresses of the key's family). */
static struct socktab_key key(int proto, int family, const char *ra, int rport, const char *la,
			      int lport)
{
	struct socktab_key k;

	memset(&k, 0, sizeof(k));
	k.proto = (uint8_t)proto;
	k.family = (uint8_t)family;
	if (family == AF_INET) {
		k.saddr.v4 = check_ip4(ra);
		k.daddr.v4 = check_ip4(la);
	} else {
		k.saddr.v6 = check_ip6(ra);
		k.daddr.v6 = check_ip6(la);
	}
	k.sport = htons((uint16_t)rport);
	k.dport = htons((uint16_t)lport);
	k.dif = SOCKTAB_KEY_CALL_DEV;
	return k;
}

/* The single lookup of @k (the device @dif, @sdif when the key takes the call's). */
static int one(struct socktab_net *net, const struct socktab_key *k, int dif, int sdif,
	       struct socktab_hit *h, unsigned int flags)
{
	bool own = k->dif != SOCKTAB_KEY_CALL_DEV;

	if (k->family == AF_INET) {
		struct socktab_tuple4 t = { k->saddr.v4, k->daddr.v4, k->sport, k->dport,
					    own ? k->dif : dif, own ? k->sdif : sdif };

		return socktab_lookup_one4(net, k->proto, &t, h, flags);
	}
	struct socktab_tuple6 t;

	memset(&t, 0, sizeof(t));
	t.saddr = k->saddr.v6;
	t.daddr = k->daddr.v6;
	t.sport = k->sport;
	t.dport = k->dport;
	t.dif = own ? k->dif : dif;
	t.sdif = own ? k->sdif : sdif;
	return socktab_lookup_one6(net, k->proto, &t, h, flags);
}

static uint32_t refs(const struct socktab_sock *sk)
{
	return atomic_load(&sk->refcnt);
}

/* A TCP child of @l from @ra:@rport, ESTABLISHED. */
static struct socktab_sock *child(struct socktab_sock *l, int family, const char *la, int lport,
				  const char *ra, int rport)
{
	struct sockaddr_storage a, b;
	socklen_t len;
	struct socktab_sock *sk;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (family == AF_INET) {
		*(struct sockaddr_in *)&a = check_sin(la, lport);
		*(struct sockaddr_in *)&b = check_sin(ra, rport);
		len = sizeof(struct sockaddr_in);
	} else {
		*(struct sockaddr_in6 *)&a = check_sin6(la, lport);
		*(struct sockaddr_in6 *)&b = check_sin6(ra, rport);
		len = sizeof(struct sockaddr_in6);
	}
	sk = socktab_sock_new_child(l, (struct sockaddr *)&a, (struct sockaddr *)&b, len, LO, 0);
	if (sk && socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static struct socktab_sock *tcp_listener(struct socktab_net *net, int family, const char *ip,
					 int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, family);

	if (!sk)
		return NULL;
	if ((family == AF_INET ? check_bind4(sk, ip, port) : check_bind6(sk, ip, port)) ||
	    socktab_listen(sk, 64)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static struct socktab_sock *udp_sock(struct socktab_net *net, int family, const char *ip,
				     int port, const char *peer, int pport)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, family);

	if (!sk)
		return NULL;
	check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1);
	if ((family == AF_INET ? check_bind4(sk, ip, port) : check_bind6(sk, ip, port)) ||
	    (peer && (family == AF_INET ? check_connect4(sk, peer, pport)
					: check_connect6(sk, peer, pport)))) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/*
 * The tables of the comparison: TCP listeners on port 80 of 127.0.0.1 and ::1, NKIDS children of
 * each (every fourth closed to TIME_WAIT), a request entry of each; UDP: an unconnected socket on
 * port 53 of each address and NKIDS connected ones to peers of it.
 */
struct world {
	struct socktab_net *net;
	struct socktab_sock *l4, *l6, *u4, *u6;
};

static int world_make(struct world *w)
{
	char ip[64];

	memset(w, 0, sizeof(*w));
	if (!(w->net = new_net()))
		return -1;
	w->l4 = tcp_listener(w->net, AF_INET, "127.0.0.1", 80);
	w->l6 = tcp_listener(w->net, AF_INET6, "::1", 80);
	w->u4 = udp_sock(w->net, AF_INET, "127.0.0.1", 53, NULL, 0);
	w->u6 = udp_sock(w->net, AF_INET6, "::1", 53, NULL, 0);
	if (!w->l4 || !w->l6 || !w->u4 || !w->u6)
		return -1;
	for (int i = 0; i < NKIDS; i++) {
		struct socktab_sock *a, *b;

		snprintf(ip, sizeof(ip), "10.0.0.%d", i + 1);
		a = child(w->l4, AF_INET, "127.0.0.1", 80, ip, 1000 + i);
		snprintf(ip, sizeof(ip), "2001:db8::%x", i + 1);
		b = child(w->l6, AF_INET6, "::1", 80, ip, 1000 + i);
		if (!a || !b)
			return -1;
		if (i % 4 == 0 && (socktab_close(a) || socktab_close(b)))
			return -1;
		if (!udp_sock(w->net, AF_INET, "127.0.0.1", 53, "127.0.0.1", 2000 + i) ||
		    !udp_sock(w->net, AF_INET6, "::1", 53, "::1", 2000 + i))
			return -1;
	}
	{
		struct sockaddr_in la = check_sin("127.0.0.1", 80), ra = check_sin("10.1.0.1", 3000);
		struct sockaddr_in6 la6 = check_sin6("::1", 80), ra6 = check_sin6("2001:db8::1:1", 3000);
		struct socktab_sock *r4 = socktab_req_new(w->l4, (struct sockaddr *)&la,
							  (struct sockaddr *)&ra, sizeof(la), LO, 0);
		struct socktab_sock *r6 = socktab_req_new(w->l6, (struct sockaddr *)&la6,
							  (struct sockaddr *)&ra6, sizeof(la6), LO, 0);

		if (!r4 || !r6)
			return -1;
		socktab_sock_put(r4);
		socktab_sock_put(r6);
	}
	return 0;
}

/* Key @i of a stream of every kind, 16 keys a group: children (established, TIME_WAIT), the
 * requests, listener hits (a new peer each), misses, connected and unconnected UDP. The
 * established flows and connected UDP peers come back every 40 keys (repeats that do not end
 * the call). */
static struct socktab_key stream_key(unsigned int i)
{
	char ip[64];
	unsigned int c = (i * 7) % NKIDS, g = i % 16;

	c = c % 4 == 0 ? c + 1 : c; /* an established child */
	switch (g) {
	case 0:
	case 1:
		snprintf(ip, sizeof(ip), "10.0.0.%u", c + 1);
		return key(SOCKTAB_TCP, AF_INET, ip, (int)(1000 + c), "127.0.0.1", 80);
	case 2:
	case 3:
		snprintf(ip, sizeof(ip), "2001:db8::%x", c + 1);
		return key(SOCKTAB_TCP, AF_INET6, ip, (int)(1000 + c), "::1", 80);
	case 4: /* TIME_WAIT, in one flow per call only: its repeat would end the call */
		return i < 16 ? key(SOCKTAB_TCP, AF_INET, "10.0.0.1", 1000, "127.0.0.1", 80)
			      : key(SOCKTAB_TCP, AF_INET6, "2001:db8::5", 1004, "::1", 80);
	case 5: /* the requests, likewise */
		return i < 16 ? key(SOCKTAB_TCP, AF_INET, "10.1.0.1", 3000, "127.0.0.1", 80)
			      : key(SOCKTAB_TCP, AF_INET6, "2001:db8::1:1", 3000, "::1", 80);
	case 6: /* the listeners, a new peer each */
		snprintf(ip, sizeof(ip), "10.2.%u.%u", i / 200, i % 200 + 1);
		return key(SOCKTAB_TCP, AF_INET, ip, 4000, "127.0.0.1", 80);
	case 7:
		snprintf(ip, sizeof(ip), "2001:db8::2:%x", i + 1);
		return key(SOCKTAB_TCP, AF_INET6, ip, 4000, "::1", 80);
	case 8: /* nothing */
		return key(SOCKTAB_TCP, AF_INET, "10.3.0.1", (int)(5000 + i), "127.0.0.1", 81);
	case 9:
		return key(SOCKTAB_TCP, AF_INET6, "2001:db8::3:1", (int)(5000 + i), "::1", 81);
	case 10:
	case 11:
		return key(SOCKTAB_UDP, AF_INET, "127.0.0.1", (int)(2000 + c), "127.0.0.1", 53);
	case 12:
		return key(SOCKTAB_UDP, AF_INET6, "::1", (int)(2000 + c), "::1", 53);
	case 13: /* unconnected */
		return key(SOCKTAB_UDP, AF_INET, "127.0.0.1", (int)(6000 + i), "127.0.0.1", 53);
	case 14:
		return key(SOCKTAB_UDP, AF_INET6, "::1", (int)(6000 + i), "::1", 53);
	default: /* nothing */
		return key(SOCKTAB_UDP, AF_INET6, "::1", (int)(6000 + i), "::1", 54);
	}
}

/* Check a mixed call over @n keys against the single lookups, with @flags. */
static void check_stream(struct world *w, const struct socktab_key *keys, unsigned int n,
			 unsigned int flags)
{
	static struct socktab_hit out[256];
	bool noref = flags & SOCKTAB_LOOKUP_NOREF;
	int r;

	if (noref)
		socktab_rcu_read_lock();
	r = socktab_lookup_mixed(w->net, keys, n, LO, 0, out, flags);
	CHECK_EQ(r, (int)n);
	for (unsigned int i = 0; i < n; i++) {
		struct socktab_hit h;
		int f = one(w->net, &keys[i], LO, 0, &h, flags & ~SOCKTAB_LOOKUP_UDP_ORDER);

		CHECK(f >= 0);
		CHECK(out[i].sk == h.sk);
		CHECK_EQ(out[i].kind, h.kind);
		CHECK(out[i].priv == h.priv);
		if (!noref) {
			socktab_sock_put(h.sk);
			socktab_sock_put(out[i].sk);
		}
	}
	if (noref)
		socktab_rcu_read_unlock();
}

/* Every kind, mixed, in bursts of 1 to 200 keys (chunks of 64 inside): each key's answer is the
 * single lookup's, with and without references. */
TEST(mixed_is_single_lookups)
{
	static struct socktab_key keys[200];
	struct world w;
	int seen[8] = { 0 };

	CHECK_EQ(world_make(&w), 0);
	for (unsigned int i = 0; i < 200; i++)
		keys[i] = stream_key(i);
	/* Every kind is in the stream. */
	socktab_rcu_read_lock();
	for (unsigned int i = 0; i < 16; i++) {
		struct socktab_hit h;

		CHECK(one(w.net, &keys[i], LO, 0, &h, SOCKTAB_LOOKUP_NOREF) >= 0);
		seen[h.kind]++;
	}
	socktab_rcu_read_unlock();
	for (int k = SOCKTAB_HIT_NONE; k <= SOCKTAB_HIT_REQUEST; k++)
		CHECK(seen[k] > 0);
	check_stream(&w, keys, 16, 0);
	check_stream(&w, keys, 16, SOCKTAB_LOOKUP_NOREF);
	check_stream(&w, keys, 16, SOCKTAB_LOOKUP_UDP_ORDER);
	check_stream(&w, keys, 1, 0);
	check_stream(&w, keys + 16, 1, SOCKTAB_LOOKUP_NOREF);
	/* Longer bursts, over chunks: from key 32 on, the TIME_WAIT and request keys become
	 * established flows again, so that keys 16 to 199 hold each of those flows once. */
	for (unsigned int i = 32; i < 200; i++)
		if (i % 16 == 4 || i % 16 == 5)
			keys[i] = stream_key(i - i % 16);
	check_stream(&w, keys + 16, 184, 0);
	check_stream(&w, keys + 16, 184, SOCKTAB_LOOKUP_NOREF);
	check_stream(&w, keys + 16, 184, SOCKTAB_LOOKUP_UDP_ORDER | SOCKTAB_LOOKUP_NOREF);
	/* The established-only form takes TCP keys (the first ten of a group). */
	check_stream(&w, keys, 10, SOCKTAB_LOOKUP_ESTABLISHED | SOCKTAB_LOOKUP_NOREF);
	check_stream(&w, keys, 10, SOCKTAB_LOOKUP_ESTABLISHED);
	socktab_net_free(w.net);
}

/*
 * Long chains on both sides of a burst, whose TCP and UDP keys go through their pipelines in
 * step: 128 ehash slots and the 128 hash4 slots of the smallest UDP table hold 200 children and
 * 200 connected UDP sockets of each family, so keys stand up to a dozen entries deep; beside
 * them listener hits, UDP keys that walk a chain to its end and get the unconnected socket, and
 * misses. Random kinds in bursts of 1 to 200: each answer is the single lookup's.
 */
TEST(mixed_long_chains)
{
	static struct socktab_key keys[200];
	struct socktab_net_params p;
	struct world w;
	char ip[64];
	uint32_t x = 777;

	memset(&w, 0, sizeof(w));
	socktab_net_params_init(&p);
	p.sock_priv_size = 32;
	p.ehash_entries = 128;
	p.udp_hash_entries = 128;
	p.fixed_secret = 1; /* the same chains every run */
	for (unsigned int i = 0; i < sizeof(p.secret); i++)
		p.secret[i] = (uint8_t)(i * 37 + 11);
	w.net = socktab_net_new(&p);
	CHECK(w.net);
	w.l4 = tcp_listener(w.net, AF_INET, "127.0.0.1", 80);
	w.l6 = tcp_listener(w.net, AF_INET6, "::1", 80);
	w.u4 = udp_sock(w.net, AF_INET, "127.0.0.1", 53, NULL, 0);
	w.u6 = udp_sock(w.net, AF_INET6, "::1", 53, NULL, 0);
	CHECK(w.l4 && w.l6 && w.u4 && w.u6);
	for (int i = 0; i < 200; i++) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 100, i % 100 + 1);
		CHECK(child(w.l4, AF_INET, "127.0.0.1", 80, ip, 1000 + i));
		snprintf(ip, sizeof(ip), "2001:db8::%x", i + 1);
		CHECK(child(w.l6, AF_INET6, "::1", 80, ip, 1000 + i));
		CHECK(udp_sock(w.net, AF_INET, "127.0.0.1", 53, "127.0.0.1", 2000 + i));
		CHECK(udp_sock(w.net, AF_INET6, "::1", 53, "::1", 2000 + i));
	}
	{ /* the chains are long on both sides */
		uint32_t l4 = 0, le = 0;

		CHECK_EQ(w.net->udp->mask4, 127);
		CHECK_EQ(w.net->ehash_mask, 127);
		for (uint32_t i = 0; i <= 127; i++) {
			uint32_t c = 0;

			if (atomic_load(&w.net->udp->hash4[i].count) > l4)
				l4 = atomic_load(&w.net->udp->hash4[i].count);
			socktab_rcu_read_lock();
			for (uintptr_t e = socktab__chead_load(&w.net->ehash[i].head, memory_order_acquire);
			     !socktab__is_nulls(e);
			     e = atomic_load_explicit(&socktab__node_sk(e)->node.next,
						      memory_order_acquire))
				c++;
			socktab_rcu_read_unlock();
			le = c > le ? c : le;
		}
		CHECK(l4 >= 6 && le >= 6);
	}
	for (unsigned int i = 0; i < 200; i++) {
		unsigned int c, kind;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		c = (x >> 8) % 200;
		kind = x % 7;
		switch (kind) {
		case 0:
			snprintf(ip, sizeof(ip), "10.0.%u.%u", c / 100, c % 100 + 1);
			keys[i] = key(SOCKTAB_TCP, AF_INET, ip, (int)(1000 + c), "127.0.0.1", 80);
			break;
		case 1:
			snprintf(ip, sizeof(ip), "2001:db8::%x", c + 1);
			keys[i] = key(SOCKTAB_TCP, AF_INET6, ip, (int)(1000 + c), "::1", 80);
			break;
		case 2: /* a listener hit: the chain walked to its end first */
			snprintf(ip, sizeof(ip), "10.5.0.%u", c + 1);
			keys[i] = key(SOCKTAB_TCP, AF_INET, ip, (int)(5000 + i), "127.0.0.1", 80);
			break;
		case 3:
			keys[i] = key(SOCKTAB_UDP, AF_INET, "127.0.0.1", (int)(2000 + c), "127.0.0.1",
				      53);
			break;
		case 4:
			keys[i] = key(SOCKTAB_UDP, AF_INET6, "::1", (int)(2000 + c), "::1", 53);
			break;
		case 5: /* no connected socket: the unconnected one */
			keys[i] = key(SOCKTAB_UDP, c % 2 ? AF_INET : AF_INET6,
				      c % 2 ? "127.0.0.1" : "::1", (int)(6000 + i),
				      c % 2 ? "127.0.0.1" : "::1", 53);
			break;
		default: /* nothing */
			keys[i] = key(c % 2 ? SOCKTAB_UDP : SOCKTAB_TCP, AF_INET, "127.0.0.1",
				      (int)(7000 + i), "127.0.0.1", 54);
			break;
		}
	}
	for (unsigned int n = 1; n <= 200; n += n < 40 ? 13 : 53) {
		check_stream(&w, keys, n, 0);
		check_stream(&w, keys + 200 - n, n, SOCKTAB_LOOKUP_NOREF);
	}
	socktab_net_free(w.net);
}

/* The key's own device beside the call's: a socket bound to device 7 takes the keys that arrived
 * there, by the key's own dif or by the call's. */
TEST(mixed_devices)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *u = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_key k[3];
	struct socktab_hit out[3];
	int dev = 7;

	CHECK(net && u);
	CHECK_EQ(socktab_setsockopt(u, SOL_SOCKET, SO_BINDTOIFINDEX, &dev, sizeof(dev)), 0);
	CHECK_EQ(check_bind4(u, "0.0.0.0", 53), 0);
	k[0] = key(SOCKTAB_UDP, AF_INET, "192.0.2.1", 1000, "192.0.2.2", 53); /* the call's: lo */
	k[1] = k[0];
	k[1].dif = dev; /* its own: device 7 */
	k[1].sdif = 0;
	k[2] = k[0];
	CHECK_EQ(socktab_lookup_mixed(net, k, 3, LO, 0, out, 0), 3);
	CHECK_EQ(out[0].kind, SOCKTAB_HIT_NONE);
	CHECK(out[1].sk == u);
	CHECK_EQ(out[1].kind, SOCKTAB_HIT_UDP);
	CHECK_EQ(out[2].kind, SOCKTAB_HIT_NONE);
	socktab_sock_put(out[1].sk);
	/* The call on device 7: every key that takes the call's device finds it. */
	CHECK_EQ(socktab_lookup_mixed(net, k, 3, dev, 0, out, 0), 3);
	for (int i = 0; i < 3; i++) {
		CHECK(out[i].sk == u);
		socktab_sock_put(out[i].sk);
	}
	socktab_close(u);
	socktab_net_free(net);
}

/*
 * A small stack over the answers: a SYN that found its listener makes a request entry; an ACK
 * that found a request completes the handshake (the child takes the 4-tuple); a datagram that
 * found the unconnected socket on port 53 opens a socket connected to its peer (with
 * @udp_connect). Segments and datagrams that found a connection change nothing.
 */
enum seg { SYN, ACK, DATA, DGRAM };

static void handle(struct socktab_net *net, const struct socktab_key *k, enum seg s,
		   const struct socktab_hit *h, bool udp_connect)
{
	if (h->kind == SOCKTAB_HIT_LISTENER && s == SYN) {
		struct sockaddr_storage la, ra;
		socklen_t len;

		memset(&la, 0, sizeof(la));
		memset(&ra, 0, sizeof(ra));
		if (k->family == AF_INET) {
			struct sockaddr_in *a = (void *)&la, *b = (void *)&ra;

			a->sin_family = b->sin_family = AF_INET;
			a->sin_addr.s_addr = k->daddr.v4;
			a->sin_port = k->dport;
			b->sin_addr.s_addr = k->saddr.v4;
			b->sin_port = k->sport;
			len = sizeof(*a);
		} else {
			struct sockaddr_in6 *a = (void *)&la, *b = (void *)&ra;

			a->sin6_family = b->sin6_family = AF_INET6;
			a->sin6_addr = k->daddr.v6;
			a->sin6_port = k->dport;
			b->sin6_addr = k->saddr.v6;
			b->sin6_port = k->sport;
			len = sizeof(*a);
		}
		socktab_sock_put(socktab_req_new(h->sk, (struct sockaddr *)&la,
						 (struct sockaddr *)&ra, len, LO, 0));
	} else if (h->kind == SOCKTAB_HIT_REQUEST && s == ACK) {
		struct socktab_sock *c;

		if (!socktab_req_promote(h->sk, SOCKTAB_TCP_ESTABLISHED, &c))
			socktab_sock_put(c);
	} else if (h->kind == SOCKTAB_HIT_UDP && s == DGRAM && udp_connect) {
		struct socktab_sock *u = socktab_socket(net, SOCKTAB_UDP, k->family);
		char ip[64];

		check_setint(u, SOL_SOCKET, SO_REUSEADDR, 1);
		inet_ntop(k->family, k->family == AF_INET ? (const void *)&k->saddr.v4
							  : (const void *)&k->saddr.v6,
			  ip, sizeof(ip));
		if (k->family == AF_INET) {
			check_bind4(u, "127.0.0.1", ntohs(k->dport));
			check_connect4(u, ip, ntohs(k->sport));
		} else {
			check_bind6(u, "::1", ntohs(k->dport));
			check_connect6(u, ip, ntohs(k->sport));
		}
	}
}

/* A net for the ordered runs: TCP listeners on port 80 of 127.0.0.1 and ::1, a request of
 * 10.1.0.1:3000, an established flow from 10.0.0.1:1000, an unconnected UDP socket on port 53
 * of 127.0.0.1. */
static struct socktab_net *ordered_net(void)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l4, *l6, *r;
	struct sockaddr_in la = check_sin("127.0.0.1", 80), ra = check_sin("10.1.0.1", 3000);

	if (!net || !(l4 = tcp_listener(net, AF_INET, "127.0.0.1", 80)) ||
	    !(l6 = tcp_listener(net, AF_INET6, "::1", 80)) ||
	    !child(l4, AF_INET, "127.0.0.1", 80, "10.0.0.1", 1000) ||
	    !udp_sock(net, AF_INET, "127.0.0.1", 53, NULL, 0))
		return NULL;
	r = socktab_req_new(l4, (struct sockaddr *)&la, (struct sockaddr *)&ra, sizeof(la), LO, 0);
	if (!r)
		return NULL;
	socktab_sock_put(r);
	return net;
}

#define NB 12

/* The burst: a SYN and its retransmission with an established segment between them; the final
 * ACK of the request and the data segment behind it; the same for IPv6; two datagrams of a new
 * UDP peer. */
static void ordered_burst(struct socktab_key *k, enum seg *s)
{
	k[0] = key(SOCKTAB_TCP, AF_INET, "10.9.0.1", 4000, "127.0.0.1", 80), s[0] = SYN;
	k[1] = key(SOCKTAB_TCP, AF_INET, "10.0.0.1", 1000, "127.0.0.1", 80), s[1] = DATA;
	k[2] = k[0], s[2] = SYN;
	k[3] = key(SOCKTAB_TCP, AF_INET, "10.1.0.1", 3000, "127.0.0.1", 80), s[3] = ACK;
	k[4] = k[3], s[4] = DATA;
	k[5] = k[1], s[5] = DATA;
	k[6] = key(SOCKTAB_TCP, AF_INET6, "2001:db8::9", 4000, "::1", 80), s[6] = SYN;
	k[7] = k[6], s[7] = ACK;
	k[8] = k[7], s[8] = DATA;
	k[9] = key(SOCKTAB_UDP, AF_INET, "127.0.0.1", 7000, "127.0.0.1", 53), s[9] = DGRAM;
	k[10] = k[9], s[10] = DGRAM;
	k[11] = k[1], s[11] = DATA;
}

/*
 * Repeated 4-tuples: one net takes the burst one key at a time (socktab_lookup_one4/6, then the
 * handling), another the whole burst through socktab_lookup_mixed(), handling out[0..r) and
 * calling again from r. The kinds come out the same, key for key, and the mixed call ends
 * exactly at the repeats whose earlier answer the handling changes.
 */
static void ordered_case(bool udp_connect, unsigned int flags, const int *want_kinds,
			 const int *want_stops, int nstops)
{
	struct socktab_key k[NB];
	enum seg s[NB];
	struct socktab_net *a = ordered_net(), *b = ordered_net();
	int kinds_one[NB], kinds_mixed[NB], stops[NB], ns = 0;
	unsigned int uflags = udp_connect ? SOCKTAB_LOOKUP_UDP_ORDER : 0;

	CHECK(a && b);
	ordered_burst(k, s);
	for (int i = 0; i < NB; i++) {
		struct socktab_hit h;

		CHECK(one(a, &k[i], LO, 0, &h, flags) >= 0);
		kinds_one[i] = h.kind;
		handle(a, &k[i], s[i], &h, udp_connect);
		socktab_sock_put(h.sk);
	}
	for (int i = 0; i < NB;) {
		struct socktab_hit out[NB];
		int r = socktab_lookup_mixed(b, k + i, (unsigned int)(NB - i), LO, 0, out,
					     flags | uflags);

		CHECK(r >= 1 && r <= NB - i);
		/* The answers before the stop are the single lookups' now. */
		for (int j = 0; j < r; j++) {
			struct socktab_hit h;

			CHECK(one(b, &k[i + j], LO, 0, &h, flags) >= 0);
			CHECK(h.sk == out[j].sk);
			CHECK_EQ(h.kind, out[j].kind);
			socktab_sock_put(h.sk);
		}
		for (int j = 0; j < r; j++) {
			kinds_mixed[i + j] = out[j].kind;
			handle(b, &k[i + j], s[i + j], &out[j], udp_connect);
			socktab_sock_put(out[j].sk);
		}
		i += r;
		if (i < NB)
			stops[ns++] = i;
	}
	for (int i = 0; i < NB; i++) {
		CHECK_EQ(kinds_mixed[i], kinds_one[i]);
		CHECK_EQ(kinds_one[i], want_kinds[i]);
	}
	CHECK_EQ(ns, nstops);
	for (int i = 0; i < ns; i++)
		CHECK_EQ(stops[i], want_stops[i]);
	socktab_net_free(a);
	socktab_net_free(b);
}

TEST(mixed_repeats_in_order)
{
	static const int kinds[NB] = {
		SOCKTAB_HIT_LISTENER, SOCKTAB_HIT_ESTABLISHED, SOCKTAB_HIT_REQUEST,
		SOCKTAB_HIT_REQUEST, SOCKTAB_HIT_ESTABLISHED, SOCKTAB_HIT_ESTABLISHED,
		SOCKTAB_HIT_LISTENER, SOCKTAB_HIT_REQUEST, SOCKTAB_HIT_ESTABLISHED,
		SOCKTAB_HIT_UDP, SOCKTAB_HIT_UDP, SOCKTAB_HIT_ESTABLISHED,
	};
	static const int kinds_connect[NB] = {
		SOCKTAB_HIT_LISTENER, SOCKTAB_HIT_ESTABLISHED, SOCKTAB_HIT_REQUEST,
		SOCKTAB_HIT_REQUEST, SOCKTAB_HIT_ESTABLISHED, SOCKTAB_HIT_ESTABLISHED,
		SOCKTAB_HIT_LISTENER, SOCKTAB_HIT_REQUEST, SOCKTAB_HIT_ESTABLISHED,
		SOCKTAB_HIT_UDP, SOCKTAB_HIT_UDP_CONNECTED, SOCKTAB_HIT_ESTABLISHED,
	};
	/* The calls end at the retransmitted SYN (2), the data behind the ACK (4), the IPv6 ACK
	 * behind its SYN (7) and the data behind that ACK (8); with the UDP peer connected on its
	 * first datagram, also at its second (10). */
	static const int stops[] = { 2, 4, 7, 8 };
	static const int stops_connect[] = { 2, 4, 7, 8, 10 };

	ordered_case(false, 0, kinds, stops, 4);
	ordered_case(true, 0, kinds_connect, stops_connect, 5);
}

/* A v4-mapped IPv6 key repeats its IPv4 flow: a SYN to a dual-stack listener and its
 * retransmission seen as v4-mapped end the call; the devices do not matter. */
TEST(mixed_v4mapped_repeat)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = tcp_listener(net, AF_INET6, "::", 80);
	struct socktab_key k[3];
	struct socktab_hit out[3];

	CHECK(l);
	k[0] = key(SOCKTAB_TCP, AF_INET, "192.0.2.1", 1000, "192.0.2.2", 80);
	k[1] = key(SOCKTAB_TCP, AF_INET6, "::ffff:192.0.2.9", 1000, "::ffff:192.0.2.2", 80);
	k[2] = key(SOCKTAB_TCP, AF_INET6, "::ffff:192.0.2.1", 1000, "::ffff:192.0.2.2", 80);
	k[2].dif = 0; /* another device: still a repeat */
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_lookup_mixed(net, k, 3, LO, 0, out, SOCKTAB_LOOKUP_NOREF), 2);
	CHECK(out[0].sk == l && out[1].sk == l);
	CHECK_EQ(out[0].kind, SOCKTAB_HIT_LISTENER);
	CHECK_EQ(out[1].kind, SOCKTAB_HIT_LISTENER);
	/* From the repeat on: the same answer, once per call. */
	CHECK_EQ(socktab_lookup_mixed(net, k + 2, 1, LO, 0, out, SOCKTAB_LOOKUP_NOREF), 1);
	CHECK(out[0].sk == l);
	socktab_rcu_read_unlock();
	socktab_close(l);
	socktab_net_free(net);
}

/* Which answers end the call at their flow's repeat: a listener, a request, a TIME_WAIT entry;
 * with SOCKTAB_LOOKUP_ESTABLISHED a TCP miss; with SOCKTAB_LOOKUP_UDP_ORDER an unconnected UDP
 * socket. A connection, a connected UDP socket and any other miss do not. */
TEST(mixed_stop_kinds)
{
	static const struct {
		int g;          /* stream_key() group */
		unsigned flags;
		int kind, r;    /* the first key's kind; what a pair of it returns */
	} c[] = {
		{ 0, 0, SOCKTAB_HIT_ESTABLISHED, 2 },
		{ 4, 0, SOCKTAB_HIT_TIME_WAIT, 1 },
		{ 5, 0, SOCKTAB_HIT_REQUEST, 1 },
		{ 6, 0, SOCKTAB_HIT_LISTENER, 1 },
		{ 6, SOCKTAB_LOOKUP_ESTABLISHED, SOCKTAB_HIT_NONE, 1 },
		{ 8, 0, SOCKTAB_HIT_NONE, 2 },
		{ 8, SOCKTAB_LOOKUP_ESTABLISHED, SOCKTAB_HIT_NONE, 1 },
		{ 10, 0, SOCKTAB_HIT_UDP_CONNECTED, 2 },
		{ 10, SOCKTAB_LOOKUP_UDP_ORDER, SOCKTAB_HIT_UDP_CONNECTED, 2 },
		{ 13, 0, SOCKTAB_HIT_UDP, 2 },
		{ 13, SOCKTAB_LOOKUP_UDP_ORDER, SOCKTAB_HIT_UDP, 1 },
		{ 15, 0, SOCKTAB_HIT_NONE, 2 },
		{ 15, SOCKTAB_LOOKUP_UDP_ORDER, SOCKTAB_HIT_NONE, 2 },
	};
	struct world w;

	CHECK_EQ(world_make(&w), 0);
	socktab_rcu_read_lock();
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct socktab_key k[3];
		struct socktab_hit out[3];

		k[0] = stream_key((unsigned int)c[i].g);
		k[1] = key(SOCKTAB_TCP, AF_INET, "192.0.2.7", 9, "192.0.2.8", 9); /* between */
		k[2] = k[0];
		CHECK_EQ(socktab_lookup_mixed(w.net, k, 3, LO, 0, out,
					      c[i].flags | SOCKTAB_LOOKUP_NOREF),
			 c[i].r == 1 ? 2 : 3);
		CHECK_EQ(out[0].kind, c[i].kind);
		if (c[i].r == 2)
			CHECK(out[2].sk == out[0].sk && out[2].kind == out[0].kind);
	}
	socktab_rcu_read_unlock();
	socktab_net_free(w.net);
}

/* The answers from the stop on are dropped with their references, and out[] past the stop is
 * not written. */
TEST(mixed_stop_releases)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = tcp_listener(net, AF_INET, "127.0.0.1", 80);
	struct socktab_sock *c = child(l, AF_INET, "127.0.0.1", 80, "10.0.0.1", 1000);
	struct socktab_key k[4];
	struct socktab_hit out[4];
	uint32_t rl, rc;

	CHECK(l && c);
	k[0] = key(SOCKTAB_TCP, AF_INET, "10.9.0.1", 4000, "127.0.0.1", 80);
	k[1] = k[0];
	k[2] = key(SOCKTAB_TCP, AF_INET, "10.0.0.1", 1000, "127.0.0.1", 80);
	k[3] = k[2];
	rl = refs(l);
	rc = refs(c);
	memset(out, 0x5a, sizeof(out));
	CHECK_EQ(socktab_lookup_mixed(net, k, 4, LO, 0, out, 0), 1);
	CHECK(out[0].sk == l);
	CHECK_EQ(refs(l), rl + 1);
	CHECK_EQ(refs(c), rc); /* keys 2 and 3 found it; their references went back */
	for (int i = 1; i < 4; i++)
		CHECK_EQ(out[i].kind, 0x5a5a5a5a);
	socktab_sock_put(out[0].sk);
	CHECK_EQ(refs(l), rl);
	/* Without the listener's flow: the connection's repeat does not end the call. */
	CHECK_EQ(socktab_lookup_mixed(net, k + 2, 2, LO, 0, out, 0), 2);
	CHECK(out[0].sk == c && out[1].sk == c);
	CHECK_EQ(refs(c), rc + 2);
	socktab_sock_put(out[0].sk);
	socktab_sock_put(out[1].sk);
	socktab_close(c);
	socktab_close(l);
	socktab_net_free(net);
}

/* Bad input: -EINVAL, out[] untouched, nothing looked up (a bad key past the first chunk
 * included). */
TEST(mixed_errors)
{
	static struct socktab_key k[100];
	static struct socktab_hit out[100], before[100];
	struct socktab_net *net = new_net();

	CHECK(net);
	for (int i = 0; i < 100; i++)
		k[i] = key(i % 2 ? SOCKTAB_UDP : SOCKTAB_TCP, AF_INET, "192.0.2.1",
			   1000 + i, "192.0.2.2", 80);
	memset(out, 0x5a, sizeof(out));
	memcpy(before, out, sizeof(out));
	CHECK_EQ(socktab_lookup_mixed(NULL, k, 1, LO, 0, out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_mixed(net, NULL, 1, LO, 0, out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_mixed(net, k, 1, LO, 0, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_mixed(net, k, 1, -1, 0, out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_mixed(net, k, 1, LO, -2, out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_mixed(net, k, 1, LO, 0, out, 0x80), -EINVAL);
	/* SOCKTAB_LOOKUP_ESTABLISHED with a UDP key (key 1). */
	CHECK_EQ(socktab_lookup_mixed(net, k, 2, LO, 0, out, SOCKTAB_LOOKUP_ESTABLISHED), -EINVAL);
	k[70].proto = 17;
	CHECK_EQ(socktab_lookup_mixed(net, k, 100, LO, 0, out, 0), -EINVAL);
	k[70].proto = SOCKTAB_TCP;
	k[3].family = AF_UNIX;
	CHECK_EQ(socktab_lookup_mixed(net, k, 100, LO, 0, out, 0), -EINVAL);
	k[3].family = AF_INET;
	CHECK(!memcmp(out, before, sizeof(out)));
	/* Nothing to do, and an empty net. */
	CHECK_EQ(socktab_lookup_mixed(net, NULL, 0, LO, 0, NULL, 0), 0);
	CHECK_EQ(socktab_lookup_mixed(net, k, 100, LO, 0, out, 0), 100);
	for (int i = 0; i < 100; i++) {
		CHECK(out[i].sk == NULL);
		CHECK_EQ(out[i].kind, SOCKTAB_HIT_NONE);
	}
	socktab_net_free(net);
}

CHECK_MAIN(mixed_is_single_lookups, mixed_long_chains, mixed_devices, mixed_repeats_in_order,
	   mixed_v4mapped_repeat, mixed_stop_kinds, mixed_stop_releases, mixed_errors)
