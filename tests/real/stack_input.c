/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The serve stack without a TUN device and without root: its "device" is one end of a
 * socketpair, so this test writes packets in and reads the stack's answers out.
 *
 * Part 1, exchanges: a TCP echo connection from SYN to the end of the passive close; an HTTP
 * connection that the stack closes first, its TIME_WAIT entry, a retransmitted FIN re-ACKed
 * from the entry; a SYN and a datagram to closed ports (RST|ACK, ICMP port unreachable); the
 * same in IPv6.
 * A SYN makes a request entry (socktab_req_new), not a connection; its final ACK promotes it.
 * Part 2, SYN cookies and the SYN queue: --syncookies 2 answers with a cookie and keeps
 * nothing, the cookie's ACK makes an established connection (socktab_req_cookie_child), a
 * wrong or stale cookie gets a RST; --syncookies 1 gives request entries until the backlog is
 * passed (the library's socktab_syn_decide), then cookies; a request that never completes
 * expires; the handshake of a request: a retransmitted SYN, a wrong ACK, an ACK while
 * --max-conns are open. SipHash-2-4 against its reference vectors.
 * Part 3, malformed input: 300,000 packets made from valid ones by flipping bytes, cutting or
 * extending them, with checksums mostly fixed up so the damage reaches the TCP and UDP parsers;
 * the stack must not crash, and every packet it sends must carry valid checksums.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stack.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static struct stack st;
static int wire;          /* our end of the socketpair: what the stack sends arrives here */
static uint8_t out[65536];
static size_t out_len;
static uint64_t skew_ns;  /* added to the clock: the cookie tests let minutes pass */

static const char *A4 = "192.0.2.1", *B4 = "192.0.2.2", *A6 = "2001:db8::1",
		  *B6 = "2001:db8::2";

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* An IP packet around @l4 (@len bytes, @proto) from the peer to the stack, checksums set. */
static size_t ip_wrap(int family, uint8_t proto, const uint8_t *l4, size_t len, uint8_t *pkt)
{
	union st_addr s, d;
	size_t hl = family == AF_INET ? 20 : 40;

	inet_pton(family, family == AF_INET ? A4 : A6, &s);
	inet_pton(family, family == AF_INET ? B4 : B6, &d);
	memset(pkt, 0, hl);
	memcpy(pkt + hl, l4, len);
	if (family == AF_INET) {
		pkt[0] = 0x45;
		put16(pkt + 2, (unsigned)(hl + len));
		pkt[8] = 64;
		pkt[9] = proto;
		memcpy(pkt + 12, &s.v4, 4);
		memcpy(pkt + 16, &d.v4, 4);
		put16(pkt + 10, csum_fold(csum_add(0, pkt, 20)));
	} else {
		pkt[0] = 0x60;
		put16(pkt + 4, (unsigned)len);
		pkt[6] = proto;
		pkt[7] = 64;
		memcpy(pkt + 8, &s.v6, 16);
		memcpy(pkt + 24, &d.v6, 16);
	}
	uint8_t *t = pkt + hl;
	int off = proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2;
	uint32_t sum = proto == IPPROTO_ICMP ? 0 : csum_pseudo(family, &s, &d, proto, len);

	if ((size_t)off + 2 <= len) {
		put16(t + off, 0);
		put16(t + off, csum_fold(csum_add(sum, t, len)));
	}
	return hl + len;
}

/* Request entries in the net (TCP_NEW_SYN_RECV). */
static uint64_t n_requests(void)
{
	struct socktab_net_stats ns;

	socktab_net_stats(st.net, &ns);
	return ns.requests;
}

/* The listener of port @port in @family, referenced. */
static struct socktab_sock *listener_of(int family, uint16_t port)
{
	struct pkt p;

	memset(&p, 0, sizeof(p));
	p.family = family;
	inet_pton(family, family == AF_INET ? A4 : A6, &p.src);
	inet_pton(family, family == AF_INET ? B4 : B6, &p.dst);
	return lk_tcp_listener(&st, &p, htons(41000), htons(port));
}

/* What --syncookies and --backlog set: net.ipv4.tcp_syncookies, and the echo listener's
 * listen() backlog. */
static void set_syncookies(int v)
{
	st.cfg.syncookies = v;
	CHECK(syn_sysctls(&st) == 0, "net.ipv4.tcp_syncookies=%d", v);
}

static void set_backlog(int family, int backlog)
{
	struct socktab_sock *l = listener_of(family, 7);

	st.cfg.backlog = backlog;
	CHECK(l && socktab_listen(l, backlog) == 0, "listen(echo, %d)", backlog);
	socktab_sock_put(l);
}

/* Feed one packet and collect the last thing the stack sent in response (out/out_len). */
static int feed(const uint8_t *pkt, size_t len)
{
	ssize_t n;
	int count = 0;

	st.now_ns = st_now_ns() + skew_ns;
	ip_input(&st, pkt, len);
	out_len = 0;
	while ((n = read(wire, out, sizeof(out))) > 0) {
		out_len = (size_t)n;
		count++;
	}
	return count;
}

static size_t tcp_seg(int family, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
		      uint8_t flags, const char *data, uint8_t *pkt)
{
	uint8_t t[256];
	size_t dl = data ? strlen(data) : 0;

	memset(t, 0, 20);
	put16(t, sport);
	put16(t + 2, dport);
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = 5 << 4;
	t[13] = flags;
	put16(t + 14, 65535);
	if (dl)
		memcpy(t + 20, data, dl);
	return ip_wrap(family, IPPROTO_TCP, t, 20 + dl, pkt);
}

/* The TCP header of the stack's last packet. */
static const uint8_t *out_tcp(int family)
{
	return out + (family == AF_INET ? 20 : 40);
}

static void exchanges(int family)
{
	uint8_t pkt[2048];
	const uint8_t *t;
	uint32_t isn, c = 1000;
	size_t hl = family == AF_INET ? 20 : 40;
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";

	/* Echo: SYN -> SYN-ACK with MSS, and a request entry, no connection yet. */
	feed(pkt, tcp_seg(family, 40000, 7, c, 0, TH_SYN, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == (TH_SYN | TH_ACK) && get32(t + 8) == c + 1 && t[12] >> 4 == 6,
	      "%s: SYN to the echo port gets a SYN-ACK with an MSS option", fam);
	CHECK(n_requests() == 1 && st.synq_total == 1 && st.n_conns == 0,
	      "%s: the SYN made a request entry, no connection", fam);
	isn = get32(t + 4);
	/* ACK + data -> the request is promoted, the same bytes back. */
	uint64_t accepted = st.c.tcp_accepted;

	feed(pkt, tcp_seg(family, 40000, 7, c + 1, isn + 1, TH_ACK | TH_PSH, "hello", pkt));
	t = out_tcp(family);
	CHECK(out_len == hl + 25 && !memcmp(t + 20, "hello", 5) && get32(t + 8) == c + 6,
	      "%s: echo of 'hello' acknowledging it", fam);
	CHECK(st.c.tcp_accepted == accepted + 1 && n_requests() == 0 && st.synq_total == 0 &&
		      st.n_conns == 1,
	      "%s: the final ACK promoted the request to an accepted connection", fam);
	struct socktab_sock *l7 = listener_of(family, 7);
	struct socktab_listen_info li = { 1, 1, 1, 0 };

	CHECK(l7 && socktab_listen_info(l7, &li) == 0 && li.qlen == 0 && li.ack_backlog == 0 &&
		      li.max_ack_backlog == ST_BACKLOG,
	      "%s: the listener's SYN and accept queues are empty again", fam);
	socktab_sock_put(l7);
	/* The peer closes: the echo app closes after it (FIN|ACK, LAST_ACK)... */
	feed(pkt, tcp_seg(family, 40000, 7, c + 6, isn + 6, TH_ACK | TH_FIN, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && (t[13] & TH_FIN) && get32(t + 8) == c + 7,
	      "%s: the peer's FIN is answered with our FIN", fam);
	/* ... and the ACK of our FIN ends the connection without TIME_WAIT. */
	feed(pkt, tcp_seg(family, 40000, 7, c + 7, isn + 7, TH_ACK, NULL, pkt));
	CHECK(st.n_conns == 0, "%s: passive close leaves no connection", fam);
	/* A late segment now matches nothing: RST with seq = its ack. */
	feed(pkt, tcp_seg(family, 40000, 7, c + 7, isn + 7, TH_ACK, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == TH_RST && get32(t + 4) == isn + 7,
	      "%s: a segment with ACK to nothing gets RST seq=ack", fam);

	/* HTTP: the stack closes first and keeps TIME_WAIT. */
	c = 5000;
	feed(pkt, tcp_seg(family, 40001, 80, c, 0, TH_SYN, NULL, pkt));
	isn = get32(out_tcp(family) + 4);
	feed(pkt, tcp_seg(family, 40001, 80, c + 1, isn + 1, TH_ACK, "GET / HTTP/1.0\r\n\r\n",
			  pkt));
	t = out_tcp(family);
	CHECK(out_len > hl + 20 && (t[13] & TH_FIN) && !memcmp(t + 20, "HTTP/1.1 200 OK\r\n", 17),
	      "%s: HTTP response with FIN", fam);
	uint32_t fin_end = isn + 1 + (uint32_t)(out_len - hl - 20) + 1;
	uint32_t req_end = c + 1 + 18;

	feed(pkt, tcp_seg(family, 40001, 80, req_end, fin_end, TH_ACK, NULL, pkt));
	struct socktab_net_stats ns;

	socktab_net_stats(st.net, &ns);
	CHECK(ns.time_wait == 1 && st.n_conns == 0,
	      "%s: our FIN acknowledged: a TIME_WAIT entry (FIN_WAIT2 substate)", fam);
	feed(pkt, tcp_seg(family, 40001, 80, req_end, fin_end, TH_ACK | TH_FIN, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == TH_ACK && get32(t + 8) == req_end + 1 && get32(t + 4) == fin_end,
	      "%s: the peer's FIN is ACKed from the TIME_WAIT entry", fam);
	uint64_t acks = st.c.tcp_tw_acks;

	feed(pkt, tcp_seg(family, 40001, 80, req_end, fin_end, TH_ACK | TH_FIN, NULL, pkt));
	CHECK(out_len && st.c.tcp_tw_acks == acks + 1 && get32(out_tcp(family) + 8) == req_end + 1,
	      "%s: a retransmitted FIN is ACKed again", fam);
	/* A new SYN above rcv_nxt takes the 4-tuple over, with isn = snd_nxt + 65537. */
	feed(pkt, tcp_seg(family, 40001, 80, req_end + 100000, 0, TH_SYN, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == (TH_SYN | TH_ACK) && get32(t + 4) == fin_end + 65537,
	      "%s: a new SYN reuses the TIME_WAIT 4-tuple", fam);
	CHECK(n_requests() == 1 && st.synq_total == 1 && st.n_conns == 0,
	      "%s: the SYN made a request entry in the TIME_WAIT entry's place", fam);
	/* A RST elsewhere leaves the request; one at the peer's next sequence number drops it. */
	feed(pkt, tcp_seg(family, 40001, 80, req_end + 100005, 0, TH_RST, NULL, pkt));
	CHECK(n_requests() == 1, "%s: a RST out of sequence leaves the request", fam);
	feed(pkt, tcp_seg(family, 40001, 80, req_end + 100001, 0, TH_RST, NULL, pkt));
	CHECK(st.n_conns == 0 && n_requests() == 0 && st.synq_total == 0,
	      "%s: RST at the peer's next sequence number drops the request", fam);

	/* Closed TCP port: RST|ACK, ack = seq + 1. */
	feed(pkt, tcp_seg(family, 40002, 81, 777, 0, TH_SYN, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == (TH_RST | TH_ACK) && get32(t + 8) == 778 && get32(t + 4) == 0,
	      "%s: SYN to a closed port gets RST|ACK ack=seq+1", fam);

	/* UDP: echo, and port unreachable for a closed port. */
	uint8_t u[64] = { 0 };

	put16(u, 50000);
	put16(u + 2, 9);
	put16(u + 4, 8 + 4);
	memcpy(u + 8, "ping", 4);
	feed(pkt, ip_wrap(family, IPPROTO_UDP, u, 12, pkt));
	CHECK(out_len == hl + 12 && !memcmp(out + hl + 8, "ping", 4), "%s: UDP echo", fam);
	put16(u + 2, 99);
	feed(pkt, ip_wrap(family, IPPROTO_UDP, u, 12, pkt));
	CHECK(out_len > hl + 8 && out[hl] == (family == AF_INET ? 3 : 1) &&
		      out[hl + 1] == (family == AF_INET ? 3 : 4),
	      "%s: UDP to a closed port gets port unreachable", fam);
}

/* Are the checksums of a packet the stack sent right? */
static bool sent_ok(const uint8_t *p, size_t len)
{
	int family = len && p[0] >> 4 == 4 ? AF_INET : AF_INET6;
	size_t hl = family == AF_INET ? 20 : 40;
	union st_addr s, d;

	if (len < hl + 8)
		return false;
	if (family == AF_INET) {
		if (csum_fold(csum_add(0, p, 20)))
			return false;
		memcpy(&s.v4, p + 12, 4);
		memcpy(&d.v4, p + 16, 4);
	} else {
		memcpy(&s.v6, p + 8, 16);
		memcpy(&d.v6, p + 24, 16);
	}
	uint8_t proto = p[family == AF_INET ? 9 : 6];
	uint32_t sum = proto == IPPROTO_ICMP ? 0 : csum_pseudo(family, &s, &d, proto, len - hl);

	return csum_fold(csum_add(sum, p + hl, len - hl)) == 0;
}

static uint64_t rng = 88172645463325252ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void malformed(void)
{
	uint8_t base[2048], pkt[2048], t[128];
	unsigned long bad_out = 0, sent = 0;

	for (int i = 0; i < 300000; i++) {
		int family = rnd(2) ? AF_INET : AF_INET6, kind = (int)rnd(4);
		size_t len, l4len;
		uint8_t proto;

		memset(t, 0, sizeof(t));
		put16(t, 1024 + rnd(64));                     /* a few peers: connections form */
		if (kind <= 1) { /* TCP to the echo or http port, random flags, an MSS option */
			static const uint16_t ports[] = { 7, 80, 81, 11111 };

			put16(t + 2, ports[rnd(4)]);
			put32(t + 4, rnd(3) ? 1000 + rnd(100) : (uint32_t)rng);
			put32(t + 8, (uint32_t)rng);
			t[12] = 6 << 4;
			t[13] = (uint8_t)rnd(64);
			put16(t + 14, rnd(65536));
			t[20] = 2, t[21] = 4, put16(t + 22, rnd(2000));
			l4len = 24 + rnd(40);
			proto = IPPROTO_TCP;
		} else if (kind == 2) { /* UDP: echo, sockperf, closed */
			static const uint16_t ports[] = { 9, 11111, 99 };

			put16(t + 2, ports[rnd(3)]);
			l4len = 8 + rnd(60);
			put16(t + 4, rnd(4) ? (unsigned)l4len : rnd(100));
			t[17] = 2; /* a sockperf pong request, when it goes there */
			proto = IPPROTO_UDP;
		} else { /* ICMP echo request */
			t[0] = family == AF_INET ? 8 : 128;
			l4len = 8 + rnd(40);
			proto = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
		}
		len = ip_wrap(family, proto, t, l4len, base);
		memcpy(pkt, base, len);
		/* Damage: flip bytes anywhere, and maybe cut or extend the packet. */
		for (int k = (int)rnd(4); k > 0; k--)
			pkt[rnd((uint32_t)len)] ^= (uint8_t)(1 + rnd(255));
		if (!rnd(8))
			len = rnd((uint32_t)len + 1);
		else if (!rnd(8))
			len += rnd(64);
		/* Mostly fix the transport checksum, so the damage gets past it. */
		if (rnd(4) && len > 40 + 8 && (pkt[0] >> 4 == 4 || pkt[0] >> 4 == 6)) {
			size_t hl = pkt[0] >> 4 == 4 ? 20 : 40;

			memcpy(t, pkt + hl, len - hl < sizeof(t) ? len - hl : sizeof(t));
			if (len - hl <= sizeof(t))
				ip_wrap(pkt[0] >> 4 == 4 ? AF_INET : AF_INET6, pkt[hl == 20 ? 9 : 6],
					t, len - hl, pkt);
		}
		ip_input(&st, pkt, len);
		ssize_t n;

		while ((n = read(wire, out, sizeof(out))) > 0) {
			sent++;
			if (!sent_ok(out, (size_t)n))
				bad_out++;
		}
		if (i % 1000 == 999) { /* time passes: retransmissions, TIME_WAIT expiry */
			st.now_ns += 300000000u;
			tcp_timers(&st);
			socktab_net_tick(st.net);
		}
	}
	CHECK(bad_out == 0, "%lu of %lu packets sent had a bad checksum", bad_out, sent);
	CHECK(sent > 10000, "the stack answered malformed input (%lu packets)", sent);
	printf("malformed: 300000 packets in, %lu out, rx_invalid=%llu, conns=%u\n", sent,
	       (unsigned long long)st.c.rx_invalid, st.n_conns);
}

static void cookies(int family)
{
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";
	size_t hl = family == AF_INET ? 20 : 40;
	uint8_t pkt[2048];
	const uint8_t *t;
	uint32_t cookie, old, c = 7000, conns = st.n_conns;
	uint64_t sent = st.c.tcp_cookies_sent, ok = st.c.tcp_cookies_ok;

	set_syncookies(2);
	feed(pkt, tcp_seg(family, 41000, 7, c, 0, TH_SYN, NULL, pkt));
	t = out_tcp(family);
	cookie = get32(t + 4);
	CHECK(out_len && t[13] == (TH_SYN | TH_ACK) && get32(t + 8) == c + 1 &&
		      st.c.tcp_cookies_sent == sent + 1 && st.n_conns == conns,
	      "%s: syncookies=2: a SYN-ACK with a cookie, no state", fam);
	/* Wrong in the hashed bits (an error below 4 only changes the MSS index, as in the
	 * kernel: the check cannot see it). */
	feed(pkt, tcp_seg(family, 41000, 7, c + 1, cookie + 1 + 0x100, TH_ACK, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == TH_RST && st.n_conns == conns,
	      "%s: an ACK with a wrong cookie gets a RST", fam);
	feed(pkt, tcp_seg(family, 41001, 7, c + 1, cookie + 1, TH_ACK, NULL, pkt));
	CHECK(out_len && out_tcp(family)[13] == TH_RST && st.n_conns == conns,
	      "%s: the cookie of another 4-tuple gets a RST", fam);
	feed(pkt, tcp_seg(family, 41000, 7, c + 1, cookie + 1, TH_ACK | TH_PSH, "hello", pkt));
	t = out_tcp(family);
	CHECK(out_len == hl + 25 && !memcmp(t + 20, "hello", 5) && get32(t + 8) == c + 6 &&
		      get32(t + 4) == cookie + 1 && st.n_conns == conns + 1 &&
		      st.c.tcp_cookies_ok == ok + 1,
	      "%s: the cookie's ACK with data makes an established connection: echo", fam);
	feed(pkt, tcp_seg(family, 41000, 7, c + 6, cookie + 6, TH_ACK | TH_FIN, NULL, pkt));
	feed(pkt, tcp_seg(family, 41000, 7, c + 7, cookie + 7, TH_ACK, NULL, pkt));
	CHECK(st.n_conns == conns, "%s: the cookie connection closes", fam);

	/* A cookie two minutes old is refused, even while cookies are being sent. */
	feed(pkt, tcp_seg(family, 41002, 7, c, 0, TH_SYN, NULL, pkt));
	old = get32(out_tcp(family) + 4);
	skew_ns = 130000000000ull;
	feed(pkt, tcp_seg(family, 41003, 7, c, 0, TH_SYN, NULL, pkt));
	uint64_t bad = st.c.tcp_cookies_bad;

	feed(pkt, tcp_seg(family, 41002, 7, c + 1, old + 1, TH_ACK, NULL, pkt));
	CHECK(out_len && out_tcp(family)[13] == TH_RST && st.n_conns == conns &&
		      st.c.tcp_cookies_bad == bad + 1,
	      "%s: a stale cookie (two minutes) gets a RST", fam);
	/* With cookies off, nothing is checked: the ACK of a fresh cookie gets a RST. */
	feed(pkt, tcp_seg(family, 41004, 7, c, 0, TH_SYN, NULL, pkt));
	cookie = get32(out_tcp(family) + 4);
	set_syncookies(0);
	feed(pkt, tcp_seg(family, 41004, 7, c + 1, cookie + 1, TH_ACK, NULL, pkt));
	CHECK(out_len && out_tcp(family)[13] == TH_RST && st.n_conns == conns,
	      "%s: syncookies=0: no cookie is taken", fam);
	skew_ns = 0;

	/* syncookies=1, backlog 2: three request entries (the queue is full when it holds more
	 * than the backlog), then a cookie. */
	set_syncookies(1);
	set_backlog(family, 2);
	sent = st.c.tcp_cookies_sent;
	uint64_t reqs = n_requests();

	for (uint16_t i = 0; i < 4; i++)
		feed(pkt, tcp_seg(family, (uint16_t)(42000 + i), 7, c, 0, TH_SYN, NULL, pkt));
	struct socktab_sock *l = listener_of(family, 7);
	struct socktab_listen_info li = { 0, 0, 0, 0 };

	CHECK(l && socktab_listen_info(l, &li) == 0 && li.qlen == 3 && li.max_ack_backlog == 2,
	      "%s: the listener's SYN queue holds 3 (%u)", fam, li.qlen);
	CHECK(st.n_conns == conns && n_requests() == reqs + 3 && st.synq_total == 3 &&
		      st.c.tcp_cookies_sent == sent + 1,
	      "%s: syncookies=1: 3 requests in the queue of backlog 2, then a cookie (%u, %llu)",
	      fam, st.synq_total, (unsigned long long)(st.c.tcp_cookies_sent - sent));
	for (uint16_t i = 0; i < 2; i++) /* two of them reset by the peer */
		feed(pkt, tcp_seg(family, (uint16_t)(42000 + i), 7, c + 1, 0, TH_RST, NULL, pkt));
	CHECK(st.n_conns == conns && n_requests() == reqs + 1 && st.synq_total == 1 &&
		      !socktab_listen_info(l, &li) && li.qlen == 1,
	      "%s: a reset request leaves the queue", fam);
	/* The last never completes: dropped after its SYN-ACK retransmissions, each one the same
	 * SYN-ACK. */
	uint64_t expired = st.c.tcp_synrecv_expired, rtx = st.c.tcp_retransmits, now = st_now_ns();
	unsigned synacks = 0, same = 0;
	uint32_t iss;

	feed(pkt, tcp_seg(family, 42002, 7, c, 0, TH_SYN, NULL, pkt)); /* its SYN again */
	t = out_tcp(family);
	iss = get32(t + 4);
	CHECK(out_len && t[13] == (TH_SYN | TH_ACK) && get32(t + 8) == c + 1 &&
		      n_requests() == reqs + 1,
	      "%s: a retransmitted SYN gets the request's SYN-ACK again", fam);
	for (int i = 1; i <= 60 && n_requests() != reqs; i++) {
		ssize_t n;

		st.now_ns = now + (uint64_t)i * 1000000000u;
		tcp_timers(&st);
		while ((n = read(wire, out, sizeof(out))) > 0) {
			t = out_tcp(family);
			synacks++;
			same += t[13] == (TH_SYN | TH_ACK) && get32(t + 4) == iss &&
				get32(t + 8) == c + 1;
		}
	}
	CHECK(st.n_conns == conns && n_requests() == reqs && st.synq_total == 0 &&
		      st.c.tcp_synrecv_expired == expired + 1 && synacks == ST_SYNACK_RETRIES &&
		      same == synacks && st.c.tcp_retransmits == rtx + ST_SYNACK_RETRIES,
	      "%s: a request that never completes expires after %d SYN-ACKs (%u, %u the same)",
	      fam, ST_SYNACK_RETRIES, synacks, same);

	/* The handshake: a wrong ACK gets a RST and leaves the request; while --max-conns are
	 * open the final ACK is dropped and the request stays; then it completes. */
	feed(pkt, tcp_seg(family, 42010, 7, c, 0, TH_SYN, NULL, pkt));
	iss = get32(out_tcp(family) + 4);
	feed(pkt, tcp_seg(family, 42010, 7, c + 1, iss + 7, TH_ACK, NULL, pkt));
	t = out_tcp(family);
	CHECK(out_len && t[13] == TH_RST && get32(t + 4) == iss + 7 && n_requests() == reqs + 1,
	      "%s: an ACK of the wrong number gets a RST, the request stays", fam);
	int max = st.cfg.max_conns;

	st.cfg.max_conns = (int)st.n_conns;
	feed(pkt, tcp_seg(family, 42010, 7, c + 1, iss + 1, TH_ACK, NULL, pkt));
	CHECK(!out_len && n_requests() == reqs + 1 && st.n_conns == conns,
	      "%s: --max-conns open: the final ACK is dropped, the request stays", fam);
	st.cfg.max_conns = max;
	feed(pkt, tcp_seg(family, 42010, 7, c + 1, iss + 1, TH_ACK | TH_PSH, "again", pkt));
	t = out_tcp(family);
	CHECK(out_len == hl + 25 && !memcmp(t + 20, "again", 5) && n_requests() == reqs &&
		      st.n_conns == conns + 1 && !socktab_listen_info(l, &li) && li.qlen == 0 &&
		      li.ack_backlog == 0,
	      "%s: its retransmission completes it: echo, the queues empty", fam);
	feed(pkt, tcp_seg(family, 42010, 7, c + 6, iss + 6, TH_ACK | TH_FIN, NULL, pkt));
	feed(pkt, tcp_seg(family, 42010, 7, c + 7, iss + 7, TH_ACK, NULL, pkt));
	CHECK(st.n_conns == conns, "%s: and closes", fam);
	socktab_sock_put(l);
	set_backlog(family, ST_BACKLOG);
}

/*
 * The SYN-ACK timer rings: 200 requests (the first ring's block table grows from 2 blocks of
 * ST_REQ_BLOCK slots to 4 after its oldest 70 have moved on, each block keeping its place for
 * its position), every third one completed by its final ACK (its timer must leave
 * the ring: a slot found by a wrong position would leave the count off), the rest expiring
 * after exactly ST_SYNACK_RETRIES SYN-ACKs each. Then a listener that closes with a request
 * queued: the library drops the request, and its timer, when it fires, sends nothing.
 */
static void request_timers(int family)
{
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";
	uint8_t pkt[2048];
	uint32_t iss[200], c = 9000, conns = st.n_conns;
	uint64_t reqs = n_requests(), expired = st.c.tcp_synrecv_expired;
	unsigned made = 0, done = 0, synacks = 0, live;

	uint64_t now = st_now_ns();

	/* 70 requests, whose first timeout moves them to the second ring: the first ring's
	 * oldest position is 70 (its first block is gone) when the next 130 make it grow. */
	for (uint16_t i = 0; i < 200; i++) {
		if (i == 70) {
			st.now_ns = now + 1100000000u;
			skew_ns = 1100000000u;
			tcp_timers(&st);
			while (read(wire, out, sizeof(out)) > 0)
				;
		}
		feed(pkt, tcp_seg(family, (uint16_t)(43000 + i), 7, c, 0, TH_SYN, NULL, pkt));
		iss[i] = get32(out_tcp(family) + 4);
		made += out_len && out_tcp(family)[13] == (TH_SYN | TH_ACK);
	}
	skew_ns = 0;
	CHECK(made == 200 && n_requests() == reqs + 200 && st.synq_total == 200 &&
		      st.req_rings[0].nblk >= 4 && st.req_rings[0].tail - st.req_rings[0].head == 130 &&
		      st.req_rings[1].tail - st.req_rings[1].head >= 70,
	      "%s: 200 requests, 130 on the first timer ring (%u blocks), 70 on the second", fam,
	      st.req_rings[0].nblk);
	for (uint16_t i = 0; i < 200; i += 3) {
		uint16_t sp = (uint16_t)(43000 + i);

		feed(pkt, tcp_seg(family, sp, 7, c + 1, iss[i] + 1, TH_ACK, NULL, pkt));
		feed(pkt, tcp_seg(family, sp, 7, c + 1, iss[i] + 1, TH_ACK | TH_FIN, NULL, pkt));
		feed(pkt, tcp_seg(family, sp, 7, c + 2, iss[i] + 2, TH_ACK, NULL, pkt));
		done++;
	}
	live = 200 - done;
	CHECK(st.n_conns == conns && n_requests() == reqs + live && st.synq_total == live &&
		      st.c.tcp_synrecv_expired == expired,
	      "%s: %u completed and closed, %u requests left (%u)", fam, done, live,
	      st.synq_total);

	for (int i = 2; i <= 60 && n_requests() != reqs; i++) {
		st.now_ns = now + (uint64_t)i * 1000000000u;
		tcp_timers(&st);
		while (read(wire, out, sizeof(out)) > 0)
			synacks++;
	}
	/* the first 70 had one SYN-ACK retransmission before, of which 24 completed */
	synacks += 70 - 24;
	CHECK(n_requests() == reqs && st.synq_total == 0 && synacks == live * ST_SYNACK_RETRIES &&
		      st.c.tcp_synrecv_expired == expired + live,
	      "%s: the other %u expired after %u SYN-ACKs (%u)", fam, live,
	      live * ST_SYNACK_RETRIES, synacks);

	/* A listener of port 8 that closes with a request queued. */
	struct socktab_sock *l = socktab_socket(st.net, SOCKTAB_TCP, family);
	struct sockaddr_storage ss;
	union st_addr a;
	int on = 1;

	inet_pton(family, family == AF_INET ? B4 : B6, &a);
	sockaddr_make(&ss, family, &a, htons(8));
	int err = l ? 0 : -1;

	if (!err && family == AF_INET6)
		err = socktab_setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	if (!err)
		err = socktab_bind(l, (struct sockaddr *)&ss,
				   family == AF_INET ? sizeof(struct sockaddr_in)
						     : sizeof(struct sockaddr_in6));
	if (!err)
		err = socktab_listen(l, 16);
	CHECK(!err, "%s: a listener on port 8 (%d)", fam, err);
	if (err)
		return;
	struct conn *lc = socktab_sock_priv(l);

	lc->kind = SK_TCP_LISTEN;
	lc->app = APP_ECHO;
	lc->sk = l;
	feed(pkt, tcp_seg(family, 43500, 8, c, 0, TH_SYN, NULL, pkt));
	CHECK(out_len && out_tcp(family)[13] == (TH_SYN | TH_ACK) && n_requests() == reqs + 1 &&
		      st.synq_total == 1,
	      "%s: port 8's SYN makes a request", fam);
	socktab_close(l);
	CHECK(n_requests() == reqs, "%s: the listener's close drops its request", fam);
	synacks = 0;
	for (int i = 1; i <= 3; i++) {
		st.now_ns = now + (uint64_t)(60 + i) * 1000000000u;
		tcp_timers(&st);
		while (read(wire, out, sizeof(out)) > 0)
			synacks++;
	}
	CHECK(synacks == 0 && st.synq_total == 0,
	      "%s: its timer finds it gone and sends nothing (%u)", fam, synacks);
}

static void siphash_vectors(void)
{
	const uint64_t key[2] = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
	uint8_t m[15];

	for (int i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	CHECK(st_siphash(key, m, 0) == 0x726fdb47dd0e0e31ull, "SipHash-2-4 of the empty message");
	CHECK(st_siphash(key, m, 15) == 0xa129ca6149be45e5ull, "SipHash-2-4 of 15 bytes");
	CHECK(st_siphash(key, m, 8) == 0x93f5f5799a932462ull, "SipHash-2-4 of 8 bytes");
}

int main(void)
{
	int sv[2];

	socktab_thread_register();
	stack_defaults(&st);
	st.cfg.tun = "st0";
	inet_pton(AF_INET, A4, &st.cfg.peer4);
	inet_pton(AF_INET, B4, &st.cfg.addr4);
	st.cfg.plen4 = 24;
	st.cfg.have6 = true;
	inet_pton(AF_INET6, A6, &st.cfg.peer6);
	inet_pton(AF_INET6, B6, &st.cfg.addr6);
	st.cfg.plen6 = 64;
	st.cfg.tcp_echo[st.cfg.n_tcp_echo++] = 7;
	st.cfg.http[st.cfg.n_http++] = 80;
	st.cfg.udp_echo[st.cfg.n_udp_echo++] = 9;
	st.cfg.sockperf[st.cfg.n_sockperf++] = 11111;
	st.cfg.max_conns = 2000;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) || stack_open(&st)) {
		printf("setup failed\n0 passed, 1 failed\n");
		return 1;
	}
	st.tun_fd = sv[0];
	wire = sv[1];
	int big = 1 << 22;

	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	exchanges(AF_INET);
	exchanges(AF_INET6);
	siphash_vectors();
	cookies(AF_INET);
	cookies(AF_INET6);
	set_syncookies(1);
	request_timers(AF_INET);
	request_timers(AF_INET6);
	malformed();
	stack_close(&st);
	socktab_thread_unregister();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
