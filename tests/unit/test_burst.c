/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_lookup_tcp_burst(): every answer equals the single lookup's (established, TIME_WAIT,
 * listener fallback, misses), across chunk boundaries and with a tiny ehash (long chains);
 * argument errors; references are held and released.
 */
#include "check.h"

#define NSOCK 300

static struct socktab_net *new_net(uint32_t ehash)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	if (ehash)
		p.ehash_entries = ehash;
	p.tw_len_ms = 600000;
	return socktab_net_new(&p);
}

static void sa4(struct sockaddr_in *s, uint32_t a, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = a;
	s->sin_port = htons(port);
}

/* A listener on 127.0.0.1:80 and NSOCK children from 10.0.x.y:(1000 + i). */
static struct socktab_sock *fill(struct socktab_net *net, struct socktab_sock **kids)
{
	struct sockaddr_in la, ra;
	struct socktab_sock *ln = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	sa4(&la, htonl(INADDR_LOOPBACK), 80);
	if (!ln || socktab_bind(ln, (struct sockaddr *)&la, sizeof(la)) || socktab_listen(ln, 16))
		return NULL;
	for (int i = 0; i < NSOCK; i++) {
		sa4(&ra, htonl(0x0a000000u + (uint32_t)i * 7), (uint16_t)(1000 + i));
		kids[i] = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra,
						 sizeof(la), SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (!kids[i])
			return NULL;
		socktab_set_state(kids[i], SOCKTAB_TCP_ESTABLISHED);
	}
	return ln;
}

/* Keys: every child, a miss on the listener's port (listener fallback), a miss elsewhere. */
static unsigned make_keys(struct socktab_tuple4 *k)
{
	unsigned n = 0;

	for (int i = 0; i < NSOCK; i++) {
		k[n].saddr = htonl(0x0a000000u + (uint32_t)i * 7);
		k[n].sport = htons((uint16_t)(1000 + i));
		k[n].daddr = htonl(INADDR_LOOPBACK);
		k[n].dport = htons(80);
		n++;
		if (i % 10 == 0) {
			k[n] = k[n - 1];
			k[n].sport = htons(9); /* no such connection: the listener answers */
			n++;
			k[n] = k[n - 1];
			k[n].dport = htons(81); /* nothing at all */
			n++;
		}
	}
	return n;
}

static void compare(struct socktab_net *net, unsigned flags)
{
	static struct socktab_tuple4 k[NSOCK * 2];
	static struct socktab_sock *out[NSOCK * 2];
	unsigned n = make_keys(k);
	int found = socktab_lookup_tcp_burst(net, k, n, out, flags), expect = 0;

	CHECK(found >= 0);
	for (unsigned i = 0; i < n; i++) {
		struct socktab_sock *one =
			flags ? socktab_lookup_established4(net, k[i].saddr, k[i].sport, k[i].daddr,
							    k[i].dport, SOCKTAB_LOOPBACK_IFINDEX, 0)
			      : socktab_lookup_tcp4(net, k[i].saddr, k[i].sport, k[i].daddr,
						    k[i].dport, SOCKTAB_LOOPBACK_IFINDEX, 0);

		CHECK_EQ((uintptr_t)out[i], (uintptr_t)one);
		expect += one != NULL;
		if (one) {
			socktab_sock_put(one);
			socktab_sock_put(out[i]);
		}
	}
	CHECK_EQ(found, expect);
}

TEST(burst_matches_single)
{
	static struct socktab_sock *kids[NSOCK];
	struct socktab_net *net = new_net(0);

	CHECK(net);
	CHECK(fill(net, kids));
	compare(net, 0);
	compare(net, SOCKTAB_LOOKUP_ESTABLISHED);
	socktab_net_free(net);
}

TEST(burst_long_chains_and_time_wait)
{
	static struct socktab_sock *kids[NSOCK];
	struct socktab_net *net = new_net(16); /* ~19 entries per chain */

	CHECK(net);
	CHECK(fill(net, kids));
	/* Some children close actively: TIME_WAIT entries answer for their 4-tuples. */
	for (int i = 0; i < NSOCK; i += 3) {
		CHECK_EQ(socktab_close(kids[i]), 0);
		kids[i] = NULL;
	}
	compare(net, 0);
	compare(net, SOCKTAB_LOOKUP_ESTABLISHED);
	socktab_net_free(net);
}

/* A slot's second-entry hint (nulls.h) only starts misses: with every hint wrong, naming another
 * chain's live entry, the slot's own first entry, its third (past the second, which a walk that
 * trusted the hint would skip), or nothing, every answer is still the single lookup's. Internal
 * access (src headers) writes the hints. */
#include "net.h"
TEST(burst_wrong_hints)
{
	static struct socktab_sock *kids[NSOCK];
	struct socktab_net *net = new_net(16);

	CHECK(net);
	CHECK(fill(net, kids));
	for (int i = 0; i < NSOCK; i += 4) {
		CHECK_EQ(socktab_close(kids[i]), 0); /* TIME_WAIT entries among them */
		kids[i] = NULL;
	}
	struct socktab__tables *t = net->tab;

	for (int how = 0; how < 4; how++) {
		unsigned wrong = 0;

		for (uint32_t s = 0; s <= t->ehash_mask; s++) {
			uint32_t own = atomic_load(&t->ehash[s].head.first);
			uint32_t other = atomic_load(&t->ehash[(s + 1) & t->ehash_mask].head.first);
			uint32_t v = how == 0 ? other : how == 1 ? own : (uint32_t)socktab__nulls(s);

			if (how == 3) { /* the third entry: the chains hold about 19 */
				uintptr_t p = socktab__chead_dec(own);

				for (int step = 0; step < 2 && !socktab__is_nulls(p); step++)
					p = atomic_load(&socktab__node_sk(p)->node.next);
				v = socktab__chead_enc(p);
			}

			wrong += v != atomic_load(&t->ehash[s].second);
			atomic_store(&t->ehash[s].second, v);
		}
		CHECK(wrong > t->ehash_mask / 2); /* most hints were changed */
		compare(net, 0);
		compare(net, SOCKTAB_LOOKUP_ESTABLISHED);
	}
	socktab_net_free(net);
}

TEST(burst_errors_and_empty)
{
	struct socktab_net *net = new_net(0);
	struct socktab_tuple4 k = { 0 };
	struct socktab_sock *out = (void *)&k;

	CHECK(net);
	CHECK_EQ(socktab_lookup_tcp_burst(NULL, &k, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_tcp_burst(net, NULL, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_tcp_burst(net, &k, 1, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_tcp_burst(net, &k, 1, &out, 0x80), -EINVAL);
	CHECK_EQ(socktab_lookup_tcp_burst(net, NULL, 0, NULL, 0), 0);
	CHECK_EQ(socktab_lookup_tcp_burst(net, &k, 1, &out, 0), 0);
	CHECK(out == NULL);
	socktab_net_free(net);
}

CHECK_MAIN(burst_matches_single, burst_long_chains_and_time_wait, burst_wrong_hints,
	   burst_errors_and_empty)
