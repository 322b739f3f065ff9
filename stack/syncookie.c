/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SYN queue of each listener, the decision what a SYN gets, and SYN cookies.
 *
 * SYN queue. Every SYN_RECV child counts in its listener's u.lst.synq_len from the SYN that
 * makes it until it is established or dropped (synq_enter, synq_leave). The limit is the
 * listen() backlog, as the kernel's sk_max_ack_backlog.
 *
 * The decision (syn_decide), in the order of the kernel's tcp_conn_request (tcp_input.c) with
 * net.ipv4.tcp_syncookies as --syncookies:
 *   - a SYN that takes over a TIME_WAIT entry always gets a child (the kernel passes it an
 *     ISN and never a cookie);
 *   - tcp_syncookies=2, or a full queue (inet_csk_reqsk_queue_is_full: more children than the
 *     backlog; kernels before 6.14 said "as many"), asks tcp_syn_flood_action: a cookie if
 *     tcp_syncookies is 1 or 2, a drop if 0;
 *   - with tcp_syncookies=0, the last quarter of tcp_max_syn_backlog is kept for peers proven
 *     alive; this stack remembers no peer, so that quarter is never filled (a drop).
 * The one call that decides is syn_decide(): an embedder whose socktab counts request sockets
 * itself would make it the library's decision call and keep the rest of this file.
 *
 * SYN cookies: the SYN-ACK's sequence number encodes the connection, and nothing is kept
 * (syncookie_send). The layout is the kernel's (syncookies.c, secure_tcp_syn_cookie):
 *   cookie = H0(4-tuple) + peer ISN + (minute << 24) + ((H1(4-tuple, minute) + MSS index)
 *            mod 2^24)
 * with H0, H1 SipHash-2-4 under two random keys. The ACK that matches no connection but a
 * listener is checked (syncookie_check): strip H0 and the ISN, read the minute from the top
 * byte (this minute or the one before, the kernel's MAX_SYNCOOKIE_AGE of 2), strip H1 of that
 * minute, and what is left must be an MSS index (4 possible values of 2^24). As the kernel's
 * tcp_synq_no_recent_overflow, a cookie is only taken from a listener that sent one in the
 * last two minutes. No timestamps, window scaling or SACK to encode: this stack offers none.
 *
 * SipHash is written here because no library the build already uses offers it (Nettle 3.8
 * has no siphash24; OpenSSL's EVP_MAC costs a context per call, too much per SYN).
 *
 * Expiry (synack_retries): a child that never completes is dropped after ST_SYNACK_RETRIES
 * SYN-ACK retransmissions (the kernel's tcp_synack_retries, 5), or ST_SYNACK_RETRIES_LOADED (2)
 * when its listener's queue is more than half full. The kernel lowers the count in that case
 * too, down to 2, but only for requests whose SYN-ACK was retransmitted while the queue held
 * more young ones; this stack keeps no young count and drops old children at once. With the
 * backoff ceiling of 10 s that is 35 s (1+2+4+8+10+10) or 7 s (1+2+4) instead of the kernel's
 * 63 s: under a flood the queue empties sooner.
 */
#include <string.h>
#include <sys/random.h>

#include "stack.h"

#define COOKIE_BITS 24
#define COOKIE_MASK ((1u << COOKIE_BITS) - 1)
#define COOKIE_PERIOD_NS 60000000000ull  /* the counter ticks once a minute */
#define COOKIE_MAX_AGE 2                 /* this minute or the last */
#define COOKIE_VALID_NS (COOKIE_MAX_AGE * COOKIE_PERIOD_NS)

/* MSS values a cookie can encode (the kernel's msstab, one per family). */
static const uint16_t mss_v4[] = { 536, 1300, 1440, 1460 };
static const uint16_t mss_v6[] = { 1280 - 60, 1480 - 60, 1500 - 60, 9000 - 60 };

static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND()                                                                                 \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl(v1, 13) ^ v0;                                                            \
		v0 = rotl(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = rotl(v3, 16) ^ v2;                                                            \
		v0 += v3;                                                                          \
		v3 = rotl(v3, 21) ^ v0;                                                            \
		v2 += v1;                                                                          \
		v1 = rotl(v1, 17) ^ v2;                                                            \
		v2 = rotl(v2, 32);                                                                 \
	} while (0)

/* SipHash-2-4 (Aumasson and Bernstein, 2012) of @len bytes under @key. */
uint64_t st_siphash(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *m = data;
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
	uint64_t last = (uint64_t)len << 56;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w = 0;

		for (int j = 7; j >= 0; j--) /* little endian */
			w = w << 8 | m[i + (size_t)j];
		v3 ^= w;
		SIPROUND();
		SIPROUND();
		v0 ^= w;
	}
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)m[i + j] << (8 * j);
	v3 ^= last;
	SIPROUND();
	SIPROUND();
	v0 ^= last;
	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIPROUND();
	return v0 ^ v1 ^ v2 ^ v3;
}

void syncookie_keys(struct stack *st)
{
	if (st->cookie_keyed)
		return;
	/* getrandom() does not fail for 32 bytes once the pool is ready; if it ever does, the
	 * clock and the ISN generator's state still make the keys unknown off this host. */
	if (getrandom(st->cookie_key, sizeof(st->cookie_key), 0) != (ssize_t)sizeof(st->cookie_key))
		for (int i = 0; i < 4; i++)
			st->cookie_key[i / 2][i % 2] ^= st_now_ns() * 0x9e3779b97f4a7c15ull ^
							tcp_isn(st);
	st->cookie_keyed = true;
}

/* H0 (@which 0, @count 0) or H1 (@which 1) of the segment's 4-tuple. */
static uint32_t cookie_hash(const struct stack *st, const struct pkt *p, const struct seg *s,
			    uint32_t count, int which)
{
	uint8_t b[16 + 16 + 2 + 2 + 4];
	size_t al = p->family == AF_INET ? 4 : 16, n = 0;

	memcpy(b, &p->src, al);
	memcpy(b + al, &p->dst, al);
	n = 2 * al;
	memcpy(b + n, &s->sport, 2);
	memcpy(b + n + 2, &s->dport, 2);
	memcpy(b + n + 4, &count, 4);
	return (uint32_t)st_siphash(st->cookie_key[which], b, n + 8);
}

static uint32_t cookie_count(const struct stack *st)
{
	return (uint32_t)(st->now_ns / COOKIE_PERIOD_NS);
}

enum syn_verdict syn_decide(const struct stack *st, const struct conn *l, bool tw_reuse)
{
	int cookies = st->cfg.syncookies;
	uint32_t qlen = l->u.lst.synq_len;

	if (tw_reuse)
		return SYN_CHILD;
	if (cookies == 2 || qlen > (uint32_t)st->cfg.backlog)
		return cookies ? SYN_COOKIE : SYN_DROP;
	if (!cookies && ST_MAX_SYN_BACKLOG - (int)qlen < ST_MAX_SYN_BACKLOG >> 2)
		return SYN_DROP;
	return SYN_CHILD;
}

void synq_enter(struct stack *st, struct conn *l, struct conn *c)
{
	c->u.syn.listener = l;
	c->xflags |= XF_SYNQ;
	l->u.lst.synq_len++;
	if (++st->synq_total > st->c.tcp_synq_peak)
		st->c.tcp_synq_peak = st->synq_total;
}

void synq_leave(struct stack *st, struct conn *c)
{
	if (!(c->xflags & XF_SYNQ))
		return;
	c->u.syn.listener->u.lst.synq_len--;
	st->synq_total--;
	c->xflags &= (uint8_t)~XF_SYNQ;
	memset(&c->u, 0, sizeof(c->u));
}

unsigned synack_retries(const struct stack *st, const struct conn *c)
{
	uint32_t half = st->cfg.backlog > 8 ? (uint32_t)st->cfg.backlog : 8;

	if ((c->xflags & XF_SYNQ) && c->u.syn.listener->u.lst.synq_len * 2 > half)
		return ST_SYNACK_RETRIES_LOADED;
	return ST_SYNACK_RETRIES;
}

void syncookie_send(struct stack *st, const struct pkt *p, const struct seg *s, struct conn *l)
{
	const uint16_t *tab = p->family == AF_INET ? mss_v4 : mss_v6;
	uint16_t mss = s->mss ? s->mss : tab[0];
	uint32_t count, idx = 3, cookie;

	syncookie_keys(st);
	while (idx && mss < tab[idx])
		idx--;
	count = cookie_count(st);
	cookie = cookie_hash(st, p, s, 0, 0) + s->seq + (count << COOKIE_BITS) +
		 ((cookie_hash(st, p, s, count, 1) + idx) & COOKIE_MASK);
	l->u.lst.overflow_ns = st->now_ns ? st->now_ns : 1;
	tcp_send_raw(st, p->family, &p->dst, &p->src, s->dport, s->sport, cookie, s->seq + 1,
		     TH_SYN | TH_ACK, ST_RCV_WND, NULL, 0);
	st->c.tcp_cookies_sent++;
}

uint16_t syncookie_check(struct stack *st, const struct pkt *p, const struct seg *s,
			 const struct conn *l)
{
	const uint16_t *tab = p->family == AF_INET ? mss_v4 : mss_v6;
	uint32_t cookie = s->ack - 1, seq = s->seq - 1, count, diff, idx;

	if (!st->cfg.syncookies || !l->u.lst.overflow_ns ||
	    st->now_ns - l->u.lst.overflow_ns > COOKIE_VALID_NS)
		return 0;
	if ((s->flags & (TH_SYN | TH_RST | TH_ACK)) != TH_ACK)
		return 0;
	count = cookie_count(st);
	cookie -= cookie_hash(st, p, s, 0, 0) + seq;
	diff = (count - (cookie >> COOKIE_BITS)) & (0xffffffffu >> COOKIE_BITS);
	if (diff >= COOKIE_MAX_AGE) {
		st->c.tcp_cookies_bad++;
		return 0;
	}
	idx = (cookie - cookie_hash(st, p, s, count - diff, 1)) & COOKIE_MASK;
	if (idx >= 4) {
		st->c.tcp_cookies_bad++;
		return 0;
	}
	return tab[idx];
}
