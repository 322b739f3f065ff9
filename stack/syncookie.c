/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Request entries (the kernel's request_sock, socktab/sock.h), the SYN-ACK timers, and SYN
 * cookies.
 *
 * What a SYN gets is the library's decision: socktab_syn_decide() (tcp_in.c) counts the
 * listener's SYN queue and accept queue and applies net.ipv4.tcp_syncookies (--syncookies),
 * the listen() backlog (--backlog) and net.ipv4.tcp_max_syn_backlog, in the order of the
 * kernel's tcp_conn_request. SOCKTAB_SYN_QUEUE: req_open() makes a request entry in ehash
 * (socktab_req_new), with our ISN, the peer's ISN and the MSS in its area (struct req_part),
 * and sends the SYN-ACK; the final ACK finds the entry (tcp_in.c) and socktab_req_promote()
 * makes the child. SOCKTAB_SYN_COOKIE: syncookie_send() below, nothing is kept.
 *
 * SYN-ACK timers. Every request the stack made sits on one timer ring, the one of its
 * retransmission count: all timers of a ring have the same timeout (1 s doubled per
 * retransmission, at most --rto-max-ms), so a ring is in firing order and req_timers() only
 * looks at the oldest. A ring is a queue of blocks of ST_REQ_BLOCK slots, allocated as the
 * tail enters one and freed as the head leaves it, so it holds little more than its timers. A
 * ring slot holds socktab_req_new()'s reference and the peer's address
 * and ports (a request's area is too small for an IPv6 address; our address is the stack's
 * one of that family); the area says which slot, so a request that completes or is reset
 * leaves its ring at once (req_done). A request the library dropped by itself (its listener
 * closed) is found when its timer fires: socktab_req_retransmit() says -ENOENT.
 *
 * Expiry: a request is dropped (socktab_req_drop) after ST_SYNACK_RETRIES SYN-ACK
 * retransmissions (the kernel's tcp_synack_retries, 5), or ST_SYNACK_RETRIES_LOADED (2) when
 * its listener's SYN queue is more than half full (socktab_listen_info). The kernel lowers the
 * count in that case too, down to 2, but only for requests whose SYN-ACK was retransmitted
 * while the queue held more young ones; this stack drops old requests at once. With the
 * backoff ceiling of 10 s that is 35 s (1+2+4+8+10+10) or 7 s (1+2+4) instead of the kernel's
 * 63 s: under a flood the queue empties sooner.
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
 */
#include <errno.h>
#include <stdlib.h>
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

/* ---- request entries and their SYN-ACK timers ---- */

#define REQ_TIMER_BUDGET 4096   /* timers fired per req_timers() call at most */
#define BLK_MASK (0xffffffffu / ST_REQ_BLOCK) /* block numbers wrap with the positions */

static uint32_t now_ms(const struct stack *st)
{
	return (uint32_t)(st->now_ns / 1000000u);
}

/* The timeout after @retries retransmissions: ST_RTO_SYN_MS, then doubled up to
 * --rto-max-ms (what a SYN_SENT connection's timer does, tcp_out.c). */
static uint32_t req_timeout_ms(const struct stack *st, unsigned retries)
{
	uint64_t ms = (uint64_t)ST_RTO_SYN_MS << retries;

	if (retries && ms > (uint64_t)st->cfg.rto_max_ms)
		ms = (uint64_t)st->cfg.rto_max_ms;
	return (uint32_t)ms;
}

/* The slot of position @pos, which lies in [head, tail). */
static struct req_timer *ring_slot(const struct req_ring *q, uint32_t pos)
{
	return &q->blk[(pos / ST_REQ_BLOCK) & (q->nblk - 1)][pos % ST_REQ_BLOCK];
}

/* Block numbers of the oldest slot's block and one past the newest slot's. */
static uint32_t blk_first(const struct req_ring *q)
{
	return q->head / ST_REQ_BLOCK;
}

static uint32_t blk_end(const struct req_ring *q)
{
	return (q->tail / ST_REQ_BLOCK + (q->tail % ST_REQ_BLOCK != 0)) & BLK_MASK;
}

/* Append @t to @q; its position in *@pos. False: no memory. */
static bool ring_push(struct req_ring *q, const struct req_timer *t, uint32_t *pos)
{
	if (q->tail % ST_REQ_BLOCK == 0) { /* the tail starts a block */
		uint32_t first = blk_first(q), used = (blk_end(q) - first) & BLK_MASK;
		struct req_timer *b;

		if (used + 1 > q->nblk) {
			uint32_t n = q->nblk ? q->nblk * 2 : 2;
			struct req_timer **nb = n ? calloc(n, sizeof(*nb)) : NULL;

			if (!nb)
				return false;
			/* Each block moves to its number's index in the larger table. */
			for (uint32_t i = 0; i < used; i++) {
				uint32_t k = (first + i) & BLK_MASK;

				nb[k & (n - 1)] = q->blk[k & (q->nblk - 1)];
			}
			free(q->blk);
			q->blk = nb;
			q->nblk = n;
		}
		b = malloc(ST_REQ_BLOCK * sizeof(*b));
		if (!b)
			return false;
		q->blk[(q->tail / ST_REQ_BLOCK) & (q->nblk - 1)] = b;
	}
	*pos = q->tail;
	*ring_slot(q, q->tail++) = *t;
	return true;
}

/* Take the oldest timer off @q (not empty), freeing a block it leaves behind. */
static struct req_timer ring_pop(struct req_ring *q)
{
	struct req_timer t = *ring_slot(q, q->head);

	if (++q->head % ST_REQ_BLOCK == 0) {
		uint32_t k = (q->head / ST_REQ_BLOCK - 1) & BLK_MASK;

		free(q->blk[k & (q->nblk - 1)]);
		q->blk[k & (q->nblk - 1)] = NULL;
	}
	return t;
}

static void local_addr(const struct stack *st, int family, union st_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (family == AF_INET)
		a->v4 = st->cfg.addr4;
	else
		a->v6 = st->cfg.addr6;
}

void req_synack(struct stack *st, int family, const union st_addr *raddr, uint16_t rport,
		uint16_t lport, const struct req_part *r)
{
	union st_addr la;

	local_addr(st, family, &la);
	tcp_send_raw(st, family, &la, raddr, lport, rport, r->iss, r->irs + 1, TH_SYN | TH_ACK,
		     ST_RCV_WND, NULL, 0);
}

/*
 * The SYN @s to @listener got SOCKTAB_SYN_QUEUE: a request entry with our ISN @iss and the MSS
 * @mss, a timer, and the SYN-ACK. 0, or a negative errno (nothing is left behind).
 */
int req_open(struct stack *st, const struct pkt *p, const struct seg *s,
	     struct socktab_sock *listener, uint32_t iss, uint16_t mss)
{
	socklen_t len = p->family == AF_INET ? sizeof(struct sockaddr_in)
					     : sizeof(struct sockaddr_in6);
	struct sockaddr_storage local, remote;
	struct socktab_sock *req;
	struct req_timer t;
	struct req_part *r;

	sockaddr_make(&local, p->family, &p->dst, s->dport);
	sockaddr_make(&remote, p->family, &p->src, s->sport);
	req = socktab_req_new(listener, (struct sockaddr *)&local, (struct sockaddr *)&remote, len,
			      st->ifindex, 0);
	if (!req)
		return -errno;
	r = socktab_req_priv(req);
	r->iss = iss;
	r->irs = s->seq;
	r->mss = mss;
	r->family = (uint8_t)p->family;
	r->retries = 0;
	memset(&t, 0, sizeof(t));
	t.req = req;
	t.raddr = p->src;
	t.rport = s->sport;
	t.lport = s->dport;
	t.at_ms = now_ms(st) + req_timeout_ms(st, 0);
	if (!ring_push(&st->req_rings[0], &t, &r->pos)) {
		socktab_req_drop(req);
		socktab_sock_put(req);
		return -ENOMEM;
	}
	if (++st->synq_total > st->c.tcp_synq_peak)
		st->c.tcp_synq_peak = st->synq_total;
	req_synack(st, p->family, &p->src, s->sport, s->dport, r);
	return 0;
}

/* @req (area @r, as it was before any promotion) was promoted or dropped by the stack: its
 * timer goes, with the reference it held. The caller holds a reference of its own. */
void req_done(struct stack *st, struct socktab_sock *req, const struct req_part *r)
{
	struct req_ring *q = &st->req_rings[r->retries];
	struct req_timer *t;

	if (r->retries > ST_SYNACK_RETRIES || r->pos - q->head >= q->tail - q->head)
		return;
	t = ring_slot(q, r->pos);
	if (t->req != req)
		return;
	t->req = NULL;
	st->synq_total--;
	socktab_sock_put(req);
}

/* How many retransmissions the request of @req's listener may have (see the top). */
static unsigned req_retries_max(struct socktab_sock *req)
{
	struct socktab_listen_info li;
	struct socktab_sock *l;
	unsigned max = ST_SYNACK_RETRIES;

	socktab_rcu_read_lock();
	l = socktab_req_listener(req);
	if (l && socktab_sock_hold(l))
		l = NULL;
	socktab_rcu_read_unlock();
	if (!l)
		return max;
	if (!socktab_listen_info(l, &li) &&
	    (uint64_t)li.qlen * 2 > (li.max_ack_backlog > 8 ? li.max_ack_backlog : 8))
		max = ST_SYNACK_RETRIES_LOADED;
	socktab_sock_put(l);
	return max;
}

/* Timer @t (off its ring) fired: retransmit the SYN-ACK onto the next ring, or give up. */
static void req_fire(struct stack *st, struct req_timer *t)
{
	struct socktab_sock *req = t->req;
	struct req_part *r = socktab_req_priv(req);
	unsigned max = req_retries_max(req);
	int n = socktab_req_retransmit(req);

	if (n < 0 || !r) { /* no longer queued: the library dropped it (its listener closed) */
		st->synq_total--;
		socktab_sock_put(req);
		return;
	}
	if ((unsigned)n > max) {
		st->c.tcp_synrecv_expired++;
		goto drop;
	}
	r->retries = (uint8_t)n;
	t->at_ms = now_ms(st) + req_timeout_ms(st, (unsigned)n);
	if (!ring_push(&st->req_rings[n], t, &r->pos)) {
		st->c.tcp_syn_dropped++;
		goto drop;
	}
	st->c.tcp_retransmits++;
	req_synack(st, r->family, &t->raddr, t->rport, t->lport, r);
	return;
drop:
	socktab_req_drop(req);
	st->synq_total--;
	socktab_sock_put(req);
}

void req_timers(struct stack *st)
{
	uint32_t now = now_ms(st);
	int budget = REQ_TIMER_BUDGET;

	/* Ring n only feeds ring n + 1, which comes later in this loop. */
	for (unsigned lv = 0; lv <= ST_SYNACK_RETRIES; lv++) {
		struct req_ring *q = &st->req_rings[lv];

		while (q->head != q->tail && budget > 0) {
			const struct req_timer *h = ring_slot(q, q->head);
			struct req_timer t;

			if (h->req && (int32_t)(now - h->at_ms) < 0)
				break;
			t = ring_pop(q);
			if (t.req) {
				budget--;
				req_fire(st, &t);
			}
		}
	}
}

/* At exit: each request's peer gets a reset (as each connection's does, tcp_out.c), and the
 * timers give their references back. */
void req_free_all(struct stack *st)
{
	for (unsigned lv = 0; lv <= ST_SYNACK_RETRIES; lv++) {
		struct req_ring *q = &st->req_rings[lv];

		while (q->head != q->tail) {
			struct req_timer t = ring_pop(q);
			const struct req_part *r;
			union st_addr la;

			if (!t.req)
				continue;
			r = socktab_req_priv(t.req);
			if (r) {
				local_addr(st, r->family, &la);
				tcp_send_raw(st, r->family, &la, &t.raddr, t.lport, t.rport,
					     r->iss + 1, 0, TH_RST, 0, NULL, 0);
			}
			socktab_sock_put(t.req);
		}
		for (uint32_t i = 0; i < q->nblk; i++) /* the block of an empty ring's head */
			free(q->blk[i]);
		free(q->blk);
		memset(q, 0, sizeof(*q));
	}
	st->synq_total = 0;
}

/* --syncookies as net.ipv4.tcp_syncookies, and net.ipv4.tcp_max_syn_backlog as
 * ST_MAX_SYN_BACKLOG, for socktab_syn_decide(); --backlog is the listeners' listen() backlog
 * (serve.c). 0 or a negative errno. */
int syn_sysctls(struct stack *st)
{
	char v[16];
	int err;

	snprintf(v, sizeof(v), "%d", st->cfg.syncookies);
	err = socktab_net_sysctl(st->net, "net.ipv4.tcp_syncookies", v);
	if (err)
		return err;
	snprintf(v, sizeof(v), "%d", ST_MAX_SYN_BACKLOG);
	return socktab_net_sysctl(st->net, "net.ipv4.tcp_max_syn_backlog", v);
}
