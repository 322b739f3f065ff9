/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A DPDK run-to-completion endpoint on socktab: every lookup and every port choice is socktab's,
 * every packet moves through one DPDK port. Built only when libdpdk-dev is found.
 *
 *   dpdk_endpoint [EAL options] -- --addr 192.0.2.2 --peer 192.0.2.1/24
 *       [--addr6 2001:db8::2 --peer6 2001:db8::1/64] [--tcp-echo PORT] [--udp-echo PORT]
 *       [--connect ADDR:PORT --flows N] [--lookup batch|single] [--duration S] [--idle-us U]
 *       [--syncookies 0|1|2] [--backlog N] [--reserve N] [--bench N]
 *
 * Without hugepages or a NIC, over a veth pair whose other end holds the peer's addresses:
 *
 *   dpdk_endpoint -l 0,1 --no-huge --no-pci -m 512 --no-shconf \
 *       --vdev net_af_packet0,iface=veth0,qpairs=2 -- --addr 192.0.2.2 --peer 192.0.2.1/24 \
 *       --tcp-echo 7 --udp-echo 4433
 *
 * (`--vdev net_af_xdp0,iface=veth0` works the same where the kernel gives AF_XDP sockets; DPDK
 * 22.11 refuses --in-memory together with --no-huge, hence --no-shconf.)
 *
 * What it shows a DPDK stack author:
 *   - one socktab net shared by every lcore; each lcore polls its own RX and TX queue, is a
 *     registered socktab thread in online mode (socktab_thread_online()) and an rte_rcu_qsbr
 *     reader, and announces one quiescent state to each per loop;
 *   - the RSS key and redirection table taken from the port (rte_eth_dev_rss_hash_conf_get,
 *     rte_eth_dev_rss_reta_query) into socktab_net_set_rss(); a port without RSS (the virtual
 *     ones) gets a software key, and an lcore hands a packet whose 4-tuple another lcore's queue
 *     owns (socktab_net_rss_queue()) to that lcore's ring, parsed, so one lcore sees all of a
 *     flow and no packet is parsed twice;
 *   - mbuf headers to lookup keys (struct socktab_key), the whole burst, TCP and UDP, IPv4 and
 *     IPv6, looked up with socktab_lookup_mixed() and SOCKTAB_LOOKUP_NOREF (or
 *     socktab_lookup_one4/6() per packet with --lookup single), the rest of the burst looked up
 *     again where a repeated 4-tuple ends the call;
 *   - TCP: a listener with request entries (socktab_syn_decide, socktab_req_new,
 *     socktab_req_complete) and SYN cookies (socktab_req_cookie_child), echo on the
 *     established connections, the passive close; outgoing flows whose local port
 *     socktab_connect() chooses (socktab_sock_set_rss_queue(): the reply comes to this lcore);
 *   - UDP: an echo service that gives every new peer a connected socket of its own (hash4);
 *   - TIME_WAIT expiry with socktab_net_tick_budget() on one lcore every 100 ms.
 * Its TCP is minimal: no window scaling, SACK, timestamps, reassembly or congestion control; a
 * connection holds at most ECHO_BUF unacknowledged bytes, retransmits on a doubling timeout and
 * gives up after 8 tries. Neighbours: one per family, the --peer address (ARP, NDP).
 *
 * It prints ready=1 once the port runs (and, with --connect, the peer's link address is known),
 * and at exit (SIGINT, SIGTERM, --duration) key=value counters. --bench N measures the packet
 * path instead (scripts/dpdk-pps.sh): N synthetic connections, a ring port (rte_eth_from_rings)
 * fed with their ACKs, the time per packet and socktab's share of it; then what grace periods
 * cost a polling lcore.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <pthread.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <socktab/socktab.h>

#define BURST 32          /* packets per rx_burst, and per batch lookup */
#define RING_SIZE 1024    /* descriptors per queue, handoff ring slots */
#define NB_MBUF 16383     /* the mbuf pool */
#define ECHO_BUF 512      /* unacknowledged bytes a connection holds */
#define RTO_MS 200        /* first retransmission timeout (SYN: 1 s) */
#define MAX_TRIES 8       /* retransmissions before the connection is reset */
#define MAX_LCORES 16
#define FLOW_PARALLEL 64  /* outgoing flows in their handshake at once, per lcore */

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

union addr {
	uint32_t v4;              /* network order */
	struct in6_addr v6;
};

/* The part of a connection a TIME_WAIT entry keeps (socktab copies the first tw_priv_size
 * bytes of the area at close): first in struct conn. */
struct tw_part {
	uint32_t snd_nxt, rcv_nxt;
};

enum { APP_ECHO = 1, APP_CLIENT };

/* The stack's state of a socket: its socktab area (sock_priv_size). One lcore owns it: the one
 * whose queue the connection's packets belong to. */
struct conn {
	struct tw_part tw;
	uint8_t app, tries, done;
	uint8_t fin_sent, fin_rcvd;
	int family;
	struct socktab_sock *sk;
	union addr laddr, raddr;
	uint16_t lport, rport;       /* network order */
	uint32_t iss, snd_una;
	uint64_t rto_at;             /* TSC; 0: no timer */
	uint32_t rto_ms;
	struct conn *prev, *next;    /* the owning lcore's list of TCP connections */
	uint32_t flow, got;          /* an outgoing flow: its number, echo bytes checked */
	uint16_t buf_len;            /* bytes from snd_una on */
	uint8_t buf[ECHO_BUF];
};

/* A request entry's handshake state (req_priv_size, at most 16 bytes). */
struct req_part {
	uint32_t iss, irs;
};

/* The link addresses of the peers, replaced whole: lcores read it without a lock, and the old
 * copy is freed once every lcore has passed a quiescent state of the rte_rcu_qsbr variable. */
struct neigh {
	struct rte_ether_addr mac4, mac6;
	bool has4, has6;
};

struct cfg {
	union addr addr4, peer4, addr6, peer6;
	int plen4, plen6;
	bool have6;
	int tcp_echo, udp_echo;
	int connect_family;
	union addr connect_addr;
	uint16_t connect_port;       /* network order */
	int flows;
	bool single;
	double duration;
	int idle_us;
	int syncookies, backlog, reserve;
	int bench;
};

struct stats {
	uint64_t rx, tx, tx_drop, handoff, handoff_drop, loops, busy_loops;
	uint64_t tcp_accepted, tcp_closed, tcp_cookies_sent, tcp_cookies_ok, tcp_rst_sent,
		tcp_retransmits, tcp_timeouts, tcp_active_ok, tcp_active_failed, tcp_syn_dropped,
		tcp_relookups;
	uint64_t udp_rx, udp_tx, udp_connected_socks, udp_noport;
	uint64_t lookups, lookup_cycles, qs_cycles, qs_max_cycles, no_neigh;
	uint64_t open_at_exit;       /* TCP connections still open when the loop stopped */
};

/* One lcore: its queue, its ring of packets handed over by other lcores, its connections. */
struct lcore {
	unsigned int id, queue;
	struct rte_ring *handoff;
	struct conn *conns;
	uint32_t n_conns;
	uint32_t flows_started, flows_open;   /* outgoing flows begun; of them not yet done */
	struct neigh *old_neigh;       /* waiting for rte_rcu_qsbr_check() */
	uint64_t old_token;
	uint16_t ip_id;
	uint64_t rng;
	struct stats st;
	struct socktab_req_counters reqc;   /* ListenOverflows, ListenDrops of this lcore */
	struct rte_mbuf *tx[BURST];
	unsigned int ntx;
} __rte_cache_aligned;

static struct cfg cfg = { .syncookies = 1, .backlog = 4096, .idle_us = 50 };
static struct socktab_net *net;
static int ifindex;
static uint16_t port_id;
static unsigned int nb_queues;
static struct rte_mempool *pool;
static struct rte_ether_addr our_mac;
static struct lcore lcores[MAX_LCORES];
static struct rte_rcu_qsbr *qsbr;
static struct neigh *_Atomic neigh_now;
static rte_spinlock_t neigh_lock = RTE_SPINLOCK_INITIALIZER;
static bool soft_rss;                     /* the port has no RSS: lcores hand packets over */
static struct socktab_sock *listeners[2], *udp_servers[2];
static uint64_t cookie_key[2];
static volatile sig_atomic_t stop;
static _Atomic uint32_t flows_done, flows_failed;
static uint64_t hz;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The TSC in nanoseconds: the loops' time, and the net's clock (socktab_net_params.clock), so
 * that socktab_net_tick_budget()'s next due time compares with it and no clock is asked of the
 * kernel. */
static uint64_t now_ns(void)
{
	uint64_t c = rte_get_tsc_cycles();

	return c / hz * 1000000000 + c % hz * 1000000000 / hz;
}

static uint64_t net_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000;
}

static uint64_t rnd(struct lcore *lc)
{
	lc->rng ^= lc->rng << 13;
	lc->rng ^= lc->rng >> 7;
	lc->rng ^= lc->rng << 17;
	return lc->rng;
}

/* ---- SYN cookies: SipHash-2-4 of the 4-tuple, the peer's ISN and a minute counter. */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                           \
	do {                                                                               \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                  \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                     \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                     \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                  \
	} while (0)

static uint64_t siphash(const uint64_t k[2], const uint8_t *in, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
	uint64_t b = (uint64_t)len << 56, m;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, in + i, 8);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)in[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* A packet as the stack sees it once its headers are checked. */
struct pkt {
	struct rte_mbuf *m;
	int family;
	uint8_t proto;
	union addr src, dst;        /* src: the peer */
	uint16_t sport, dport;      /* network order */
	uint8_t *l4;
	uint32_t l4_len;
};

/* Packets pass between lcores as struct pkt, a slot of rte_ring_create_elem()'s ring. */
_Static_assert(sizeof(struct pkt) % 4 == 0, "a ring's element size is a multiple of 4 bytes");

static uint32_t cookie_hash(const struct pkt *p, uint32_t irs, uint32_t minute)
{
	uint8_t in[44];
	size_t alen = p->family == AF_INET ? 4 : 16;

	memcpy(in, &p->src, alen);
	memcpy(in + alen, &p->dst, alen);
	memcpy(in + 2 * alen, &p->sport, 2);
	memcpy(in + 2 * alen + 2, &p->dport, 2);
	memcpy(in + 2 * alen + 4, &irs, 4);
	memcpy(in + 2 * alen + 8, &minute, 4);
	return (uint32_t)siphash(cookie_key, in, 2 * alen + 12);
}

/* The cookie: the minute counter in the top byte, 24 bits of the hash below it. */
static uint32_t cookie_make(const struct pkt *p, uint32_t irs)
{
	uint32_t minute = (uint32_t)(time(NULL) / 60);

	return (minute & 0xff) << 24 | (cookie_hash(p, irs, minute) & 0xffffff);
}

static bool cookie_ok(const struct pkt *p, uint32_t irs, uint32_t cookie)
{
	uint32_t minute = (uint32_t)(time(NULL) / 60);

	for (uint32_t m = minute; m + 2 > minute; m--)  /* this minute and the last */
		if ((cookie >> 24) == (m & 0xff) &&
		    (cookie & 0xffffff) == (cookie_hash(p, irs, m) & 0xffffff))
			return true;
	return false;
}

/* ---- Neighbours and output. */

static void neigh_learn(struct lcore *lc, int family, const struct rte_ether_addr *mac)
{
	struct neigh *cur = atomic_load_explicit(&neigh_now, memory_order_acquire), *n;

	if (family == AF_INET ? cur->has4 && rte_is_same_ether_addr(&cur->mac4, mac)
			      : cur->has6 && rte_is_same_ether_addr(&cur->mac6, mac))
		return;
	if (lc->old_neigh || !rte_spinlock_trylock(&neigh_lock))
		return;             /* a replacement is under way: learn it from a later frame */
	cur = atomic_load_explicit(&neigh_now, memory_order_relaxed);
	n = malloc(sizeof(*n));
	if (n) {
		*n = *cur;
		if (family == AF_INET) {
			n->mac4 = *mac;
			n->has4 = true;
		} else {
			n->mac6 = *mac;
			n->has6 = true;
		}
		atomic_store_explicit(&neigh_now, n, memory_order_release);
		lc->old_neigh = cur;    /* freed once every reader passed a quiescent state */
		lc->old_token = rte_rcu_qsbr_start(qsbr);
	}
	rte_spinlock_unlock(&neigh_lock);
}

static void tx_flush(struct lcore *lc)
{
	uint16_t sent = lc->ntx ? rte_eth_tx_burst(port_id, (uint16_t)lc->queue, lc->tx,
						   (uint16_t)lc->ntx) : 0;

	lc->st.tx += sent;
	lc->st.tx_drop += lc->ntx - sent;
	if (sent < lc->ntx)
		rte_pktmbuf_free_bulk(lc->tx + sent, lc->ntx - sent);
	lc->ntx = 0;
}

static void tx_queue(struct lcore *lc, struct rte_mbuf *m)
{
	lc->tx[lc->ntx++] = m;
	if (lc->ntx == BURST)
		tx_flush(lc);
}

/* An mbuf with an Ethernet header toward @family's neighbour and room for @len more bytes;
 * NULL when the neighbour is unknown or the pool is empty. */
static struct rte_mbuf *eth_start(struct lcore *lc, int family, size_t len, uint8_t **l3)
{
	struct neigh *n = atomic_load_explicit(&neigh_now, memory_order_acquire);
	bool has = family == AF_INET ? n->has4 : n->has6;
	struct rte_mbuf *m;
	struct rte_ether_hdr *eh;

	if (!has) {
		lc->st.no_neigh++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(pool);
	if (!m)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eh) + len));
	eh->dst_addr = family == AF_INET ? n->mac4 : n->mac6;
	eh->src_addr = our_mac;
	eh->ether_type = rte_cpu_to_be_16(family == AF_INET ? RTE_ETHER_TYPE_IPV4
							    : RTE_ETHER_TYPE_IPV6);
	*l3 = (uint8_t *)(eh + 1);
	return m;
}

/* Write the IP header (TTL or hop limit @ttl) for @l4_len bytes of @proto at @l3 and the
 * transport checksum at offset @csum_off of them, then queue the packet. */
static void ip_finish(struct lcore *lc, struct rte_mbuf *m, int family, uint8_t *l3,
		      const union addr *src, const union addr *dst, uint8_t proto,
		      uint16_t l4_len, size_t csum_off, uint8_t ttl)
{
	uint16_t *csum;

	if (family == AF_INET) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		memset(ip, 0, sizeof(*ip));
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4_len));
		ip->packet_id = rte_cpu_to_be_16(lc->ip_id++);
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = ttl;
		ip->next_proto_id = proto;
		ip->src_addr = src->v4;
		ip->dst_addr = dst->v4;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		csum = (uint16_t *)(l3 + sizeof(*ip) + csum_off);
		*csum = 0;
		*csum = rte_ipv4_udptcp_cksum(ip, l3 + sizeof(*ip));
	} else {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)l3;

		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip6->payload_len = rte_cpu_to_be_16(l4_len);
		ip6->proto = proto;
		ip6->hop_limits = ttl;
		memcpy(ip6->src_addr, &src->v6, 16);
		memcpy(ip6->dst_addr, &dst->v6, 16);
		csum = (uint16_t *)(l3 + sizeof(*ip6) + csum_off);
		*csum = 0;
		*csum = rte_ipv6_udptcp_cksum(ip6, l3 + sizeof(*ip6));
	}
	tx_queue(lc, m);
}

static size_t ip_len(int family)
{
	return family == AF_INET ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
}

/* One TCP segment; a SYN carries the MSS option. */
static void tcp_send(struct lcore *lc, int family, const union addr *src, const union addr *dst,
		     uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
		     uint16_t wnd, const void *data, uint16_t len)
{
	uint16_t opt = flags & TH_SYN ? 4 : 0, l4_len = (uint16_t)(sizeof(struct rte_tcp_hdr) + opt + len);
	uint8_t *l3;
	struct rte_mbuf *m = eth_start(lc, family, ip_len(family) + l4_len, &l3);
	struct rte_tcp_hdr *th;

	if (!m)
		return;
	th = (struct rte_tcp_hdr *)(l3 + ip_len(family));
	th->src_port = sport;
	th->dst_port = dport;
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)(((sizeof(*th) + opt) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(wnd);
	th->tcp_urp = 0;
	if (opt) {
		uint16_t mss = rte_cpu_to_be_16(family == AF_INET ? 1460 : 1440);
		uint8_t *o = (uint8_t *)(th + 1);

		o[0] = 2;
		o[1] = 4;
		memcpy(o + 2, &mss, 2);
	}
	if (len)
		memcpy((uint8_t *)(th + 1) + opt, data, len);
	ip_finish(lc, m, family, l3, src, dst, IPPROTO_TCP, l4_len,
		  offsetof(struct rte_tcp_hdr, cksum), 64);
}

/* ---- TCP connections. */

static uint16_t conn_wnd(const struct conn *c)
{
	return (uint16_t)(ECHO_BUF - c->buf_len);
}

/* Send what the connection holds from snd_una on (or just an ACK), and its FIN once sent: the
 * buffer never exceeds a segment, so one segment carries everything unacknowledged. */
static void conn_output(struct lcore *lc, struct conn *c)
{
	uint8_t flags = TH_ACK | (c->buf_len ? TH_PSH : 0) | (c->fin_sent ? TH_FIN : 0);

	tcp_send(lc, c->family, &c->laddr, &c->raddr, c->lport, c->rport, c->snd_una,
		 c->tw.rcv_nxt, flags, conn_wnd(c), c->buf, c->buf_len);
	if ((c->buf_len || c->fin_sent) && !c->rto_at) {
		c->rto_ms = RTO_MS;
		c->rto_at = rte_get_tsc_cycles() + hz / 1000 * c->rto_ms;
	}
}

static void conn_link(struct lcore *lc, struct conn *c)
{
	c->next = lc->conns;
	c->prev = NULL;
	if (lc->conns)
		lc->conns->prev = c;
	lc->conns = c;
	lc->n_conns++;
}

/* The connection ends: off our list, then its socket closed (CLOSE first when @reset, so it
 * leaves no TIME_WAIT entry). */
static void conn_end(struct lcore *lc, struct conn *c, bool reset)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		lc->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	lc->n_conns--;
	lc->st.tcp_closed++;
	if (c->app == APP_CLIENT && !c->done) {
		atomic_fetch_add(&flows_failed, 1);
		lc->st.tcp_active_failed++;
		lc->flows_open--;
	}
	if (reset)
		socktab_set_state(c->sk, SOCKTAB_TCP_CLOSE);
	socktab_close(c->sk);
}

static void conn_reset(struct lcore *lc, struct conn *c)
{
	tcp_send(lc, c->family, &c->laddr, &c->raddr, c->lport, c->rport, c->tw.snd_nxt,
		 c->tw.rcv_nxt, TH_RST | TH_ACK, 0, NULL, 0);
	lc->st.tcp_rst_sent++;
	conn_end(lc, c, true);
}

/* A new connection's state from its socket and segment. */
static void conn_init(struct conn *c, struct socktab_sock *sk, const struct pkt *p, uint32_t iss,
		      uint32_t irs, uint8_t app)
{
	memset(c, 0, sizeof(*c));
	c->app = app;
	c->sk = sk;
	c->family = p->family;
	c->laddr = p->dst;
	c->raddr = p->src;
	c->lport = p->dport;
	c->rport = p->sport;
	c->iss = iss;
	c->snd_una = iss + 1;
	c->tw.snd_nxt = iss + 1;
	c->tw.rcv_nxt = irs + 1;
}

static void sockaddr_of(struct sockaddr_storage *ss, int family, const union addr *a,
			uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = a->v4;
		s->sin_port = port;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_addr = a->v6;
		s->sin6_port = port;
	}
}

static socklen_t sa_len(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* The TCP header's fields the stack uses, host order. */
struct seg {
	uint32_t seq, ack, len;
	uint8_t flags;
	const uint8_t *data;
};

static void send_reset(struct lcore *lc, const struct pkt *p, const struct seg *s)
{
	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK)
		tcp_send(lc, p->family, &p->dst, &p->src, p->dport, p->sport, s->ack, 0, TH_RST, 0,
			 NULL, 0);
	else
		tcp_send(lc, p->family, &p->dst, &p->src, p->dport, p->sport, 0,
			 s->seq + s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN),
			 TH_RST | TH_ACK, 0, NULL, 0);
	lc->st.tcp_rst_sent++;
}

/* An established child of a listener (from a request or a cookie): set up and accepted. */
static void child_ready(struct lcore *lc, struct socktab_sock *child, const struct pkt *p,
			uint32_t iss, uint32_t irs)
{
	struct conn *c = socktab_sock_priv(child);

	conn_init(c, child, p, iss, irs, APP_ECHO);
	conn_link(lc, c);
	lc->st.tcp_accepted++;
}

static void listener_input(struct lcore *lc, struct socktab_sock *l, const struct pkt *p,
			   const struct seg *s)
{
	struct sockaddr_storage local, remote;

	if ((s->flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN) {
		int verdict = socktab_syn_decide(l, 0);
		uint32_t iss;

		if (verdict == SOCKTAB_SYN_COOKIE) {
			iss = cookie_make(p, s->seq);
			tcp_send(lc, p->family, &p->dst, &p->src, p->dport, p->sport, iss,
				 s->seq + 1, TH_SYN | TH_ACK, 65535, NULL, 0);
			lc->st.tcp_cookies_sent++;
			return;
		}
		if (verdict != SOCKTAB_SYN_QUEUE) {
			lc->st.tcp_syn_dropped++;
			return;
		}
		sockaddr_of(&local, p->family, &p->dst, p->dport);
		sockaddr_of(&remote, p->family, &p->src, p->sport);
		struct socktab_sock *req = socktab_req_new(l, (struct sockaddr *)&local,
							   (struct sockaddr *)&remote,
							   sa_len(p->family), ifindex, 0);
		if (!req) {
			lc->st.tcp_syn_dropped++;
			return;
		}
		struct req_part *r = socktab_req_priv(req);

		r->iss = iss = (uint32_t)rnd(lc);
		r->irs = s->seq;
		tcp_send(lc, p->family, &p->dst, &p->src, p->dport, p->sport, iss, s->seq + 1,
			 TH_SYN | TH_ACK, 65535, NULL, 0);
		/* No SYN-ACK timer here: the peer retransmits its SYN, which finds the request.
		 * A request that never completes stays until the listener closes; the SYN queue's
		 * limit (the backlog) bounds them, and cookies take over beyond it. */
		socktab_sock_put(req);
		return;
	}
	if ((s->flags & (TH_SYN | TH_ACK | TH_RST)) == TH_ACK &&
	    cookie_ok(p, s->seq - 1, s->ack - 1)) {
		sockaddr_of(&local, p->family, &p->dst, p->dport);
		sockaddr_of(&remote, p->family, &p->src, p->sport);
		struct socktab_sock *child = socktab_req_cookie_child(
			l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			sa_len(p->family), ifindex, 0, SOCKTAB_TCP_ESTABLISHED);

		if (!child)
			return;   /* accept queue full: the peer's data or retransmission retries */
		lc->st.tcp_cookies_ok++;
		/* The cookie's child waits in the accept queue, as a promoted one would: one
		 * accept() per child keeps the queue empty. The child it hands over may be
		 * another lcore's; each is the child of the lcore that made it, whichever took it
		 * out of the queue, and ours is ours by the reference the call returned. */
		socktab_accept(l);
		child_ready(lc, child, p, s->ack - 1, s->seq - 1);
		socktab_sock_put(child);
		return;   /* data in the cookie's ACK is left to the peer's retransmission */
	}
	send_reset(lc, p, s);
}

/* Returns true when the segment must be looked up again (the request left its queue). */
static bool request_input(struct lcore *lc, struct socktab_sock *req, struct req_part *r,
			  const struct pkt *p, const struct seg *s)
{
	if (s->flags & TH_RST) {
		if (s->seq == r->irs + 1)
			socktab_req_drop(req);
		return false;
	}
	if (s->flags & TH_SYN) {   /* the SYN again: our SYN-ACK was lost */
		tcp_send(lc, p->family, &p->dst, &p->src, p->dport, p->sport, r->iss, r->irs + 1,
			 TH_SYN | TH_ACK, 65535, NULL, 0);
		return false;
	}
	if (!(s->flags & TH_ACK) || s->ack != r->iss + 1) {
		send_reset(lc, p, s);
		return false;
	}
	/* The final ACK: child, accept, or the verdict, in one call with the kernel's rules. */
	struct socktab_sock *child;
	uint32_t iss = r->iss, irs = r->irs;

	switch (socktab_req_complete(req, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ACCEPT, &child,
				     NULL, &lc->reqc)) {
	case SOCKTAB_REQ_CHILD:
		child_ready(lc, child, p, iss, irs);   /* ours: accepted, no reference to drop */
		return s->len > 0 || (s->flags & TH_FIN);  /* data behind the ACK: the child's */
	case SOCKTAB_REQ_STOLEN:
		return true;                           /* another lcore made the child */
	case SOCKTAB_REQ_RESET:
		send_reset(lc, p, s);
		return false;
	default:
		return false;   /* SOCKTAB_REQ_DROP: the request stays for the peer's next ACK */
	}
}

/* An outgoing flow's echo: false when it was wrong (the connection is reset and gone). */
static bool flow_data(struct lcore *lc, struct conn *c, const uint8_t *d, uint32_t len)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "flow %" PRIu32 "\n", c->flow);

	if (c->got + len > (uint32_t)n || memcmp(line + c->got, d, len)) {
		conn_reset(lc, c);
		return false;
	}
	c->got += len;
	if (c->got == (uint32_t)n && !c->done) {
		c->done = 1;
		lc->flows_open--;     /* done, kept open: the next flow may start */
		lc->st.tcp_active_ok++;
		atomic_fetch_add(&flows_done, 1);
	}
	return true;
}

/* A segment of an open connection, in socket state @state (tcp_input() read it). */
static void conn_input(struct lcore *lc, struct conn *c, int state, const struct pkt *p,
		       const struct seg *s)
{
	if (s->flags & TH_RST) {
		conn_end(lc, c, true);
		return;
	}
	if (state == SOCKTAB_TCP_SYN_SENT) {
		if ((s->flags & (TH_SYN | TH_ACK)) != (TH_SYN | TH_ACK) || s->ack != c->iss + 1) {
			send_reset(lc, p, s);
			return;
		}
		socktab_set_state(c->sk, SOCKTAB_TCP_ESTABLISHED);
		c->tw.rcv_nxt = s->seq + 1;
		c->rto_at = 0;
		c->tries = 0;
		c->buf_len = (uint16_t)snprintf((char *)c->buf, ECHO_BUF, "flow %" PRIu32 "\n",
						c->flow);
		c->tw.snd_nxt = c->snd_una + c->buf_len;
		conn_output(lc, c);
		return;
	}
	if (s->flags & TH_SYN) {    /* a SYN-ACK again, or a SYN: answer with an ACK */
		conn_output(lc, c);
		return;
	}
	if (!(s->flags & TH_ACK))
		return;
	/* Our bytes (and FIN) acknowledged. */
	uint32_t acked = s->ack - c->snd_una, inflight = c->tw.snd_nxt - c->snd_una;

	if (acked && acked <= inflight) {
		uint32_t bytes = acked > c->buf_len ? c->buf_len : acked;

		memmove(c->buf, c->buf + bytes, c->buf_len - bytes);
		c->buf_len = (uint16_t)(c->buf_len - bytes);
		c->snd_una = s->ack;
		c->tries = 0;
		c->rto_at = 0;
		if (c->buf_len || c->snd_una != c->tw.snd_nxt) {
			c->rto_ms = RTO_MS;
			c->rto_at = rte_get_tsc_cycles() + hz / 1000 * c->rto_ms;
		}
		if (c->fin_sent && c->snd_una == c->tw.snd_nxt) {   /* our FIN is acknowledged */
			if (state == SOCKTAB_TCP_LAST_ACK) {
				conn_end(lc, c, false);   /* LAST_ACK: nothing is left behind */
				return;
			}
		}
	}
	bool ack_now = false;

	if (s->len || (s->flags & TH_FIN)) {
		if (s->seq != c->tw.rcv_nxt || c->fin_rcvd) {
			conn_output(lc, c);   /* out of order or old: a duplicate ACK */
			return;
		}
		uint32_t take = s->len;

		if (c->app == APP_ECHO && take > (uint32_t)conn_wnd(c))
			take = conn_wnd(c);      /* what does not fit is retransmitted later */
		if (take) {
			if (c->app == APP_ECHO) {
				memcpy(c->buf + c->buf_len, s->data, take);
				c->buf_len = (uint16_t)(c->buf_len + take);
				c->tw.snd_nxt += take;
			} else {
				if (!flow_data(lc, c, s->data, take))
					return;
			}
			c->tw.rcv_nxt += take;
			ack_now = true;
		}
		if ((s->flags & TH_FIN) && take == s->len) {
			/* The peer is done: our FIN goes after what is buffered (the passive
			 * close, CLOSE_WAIT straight to LAST_ACK). */
			c->tw.rcv_nxt++;
			c->fin_rcvd = 1;
			socktab_set_state(c->sk, SOCKTAB_TCP_CLOSE_WAIT);
			socktab_set_state(c->sk, SOCKTAB_TCP_LAST_ACK);
			c->fin_sent = 1;
			c->tw.snd_nxt++;
			ack_now = true;
		}
	}
	if (ack_now)
		conn_output(lc, c);
}

/* Retransmissions, at most every 10 ms; a connection that used up its tries is reset. */
static void conn_timers(struct lcore *lc)
{
	uint64_t now = rte_get_tsc_cycles();

	for (struct conn *c = lc->conns, *next; c; c = next) {
		next = c->next;
		if (!c->rto_at || c->rto_at > now)
			continue;
		if (++c->tries > MAX_TRIES) {
			lc->st.tcp_timeouts++;
			conn_reset(lc, c);
			continue;
		}
		lc->st.tcp_retransmits++;
		c->rto_ms *= 2;
		c->rto_at = now + hz / 1000 * c->rto_ms;
		if (socktab_get_state(c->sk) == SOCKTAB_TCP_SYN_SENT)
			tcp_send(lc, c->family, &c->laddr, &c->raddr, c->lport, c->rport, c->iss, 0,
				 TH_SYN, 65535, NULL, 0);
		else
			conn_output(lc, c);
	}
}

/* Outgoing flows: socktab_connect() chooses each local port, on the queue of this lcore. */
static void flows_pump(struct lcore *lc)
{
	struct sockaddr_storage dst, me;
	socklen_t len = sizeof(me);

	while (lc->flows_open < FLOW_PARALLEL) {
		uint32_t flow = lc->flows_started * nb_queues + lc->queue;

		if ((int)flow >= cfg.flows)
			return;
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, cfg.connect_family);

		if (!sk)
			return;
		if (soft_rss || nb_queues > 1)
			socktab_sock_set_rss_queue(sk, (int)lc->queue);
		sockaddr_of(&dst, cfg.connect_family, &cfg.connect_addr, cfg.connect_port);
		len = sizeof(me);
		if (socktab_connect(sk, (struct sockaddr *)&dst, sa_len(cfg.connect_family)) ||
		    socktab_getsockname(sk, (struct sockaddr *)&me, &len)) {
			socktab_close(sk);
			atomic_fetch_add(&flows_failed, 1);
			lc->st.tcp_active_failed++;
			lc->flows_started++;
			continue;
		}
		struct conn *c = socktab_sock_priv(sk);
		struct pkt p = { .family = cfg.connect_family, .src = cfg.connect_addr,
				 .sport = cfg.connect_port };

		if (cfg.connect_family == AF_INET) {
			p.dst.v4 = ((struct sockaddr_in *)&me)->sin_addr.s_addr;
			p.dport = ((struct sockaddr_in *)&me)->sin_port;
		} else {
			p.dst.v6 = ((struct sockaddr_in6 *)&me)->sin6_addr;
			p.dport = ((struct sockaddr_in6 *)&me)->sin6_port;
		}
		uint32_t iss = (uint32_t)rnd(lc);

		conn_init(c, sk, &p, iss, 0, APP_CLIENT);
		c->tw.rcv_nxt = 0;
		c->flow = flow;
		c->rto_ms = 1000;
		c->rto_at = rte_get_tsc_cycles() + hz;
		conn_link(lc, c);
		lc->flows_started++;
		lc->flows_open++;
		tcp_send(lc, c->family, &c->laddr, &c->raddr, c->lport, c->rport, iss, 0, TH_SYN,
			 65535, NULL, 0);
	}
}

/* ---- UDP. */

static void udp_reply(struct lcore *lc, const struct pkt *p, const uint8_t *d, uint16_t len)
{
	uint16_t l4_len = (uint16_t)(sizeof(struct rte_udp_hdr) + len);
	uint8_t *l3;
	struct rte_mbuf *m = eth_start(lc, p->family, ip_len(p->family) + l4_len, &l3);
	struct rte_udp_hdr *uh;

	if (!m)
		return;
	uh = (struct rte_udp_hdr *)(l3 + ip_len(p->family));
	uh->src_port = p->dport;
	uh->dst_port = p->sport;
	uh->dgram_len = rte_cpu_to_be_16(l4_len);
	memcpy(uh + 1, d, len);
	ip_finish(lc, m, p->family, l3, &p->dst, &p->src, IPPROTO_UDP, l4_len,
		  offsetof(struct rte_udp_hdr, dgram_cksum), 64);
	lc->st.udp_tx++;
}

/* The port's socket got a datagram from a new peer: a socket of its own for that peer (same
 * address and port, SO_REUSEADDR and SO_REUSEPORT, connected), which hash4 finds from now on. */
static void udp_new_peer(struct lcore *lc, const struct pkt *p)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, p->family);
	struct sockaddr_storage local, remote;
	int one = 1;

	if (!sk)
		return;
	sockaddr_of(&local, p->family, &p->dst, p->dport);
	sockaddr_of(&remote, p->family, &p->src, p->sport);
	if (socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    socktab_bind(sk, (struct sockaddr *)&local, sa_len(p->family)) ||
	    socktab_connect(sk, (struct sockaddr *)&remote, sa_len(p->family))) {
		socktab_close(sk);
		return;
	}
	lc->st.udp_connected_socks++;
}

static void udp_input(struct lcore *lc, const struct pkt *p, const struct socktab_hit *h)
{
	const uint8_t *d = p->l4 + sizeof(struct rte_udp_hdr);
	uint16_t len = (uint16_t)(p->l4_len - sizeof(struct rte_udp_hdr));

	if (h->kind == SOCKTAB_HIT_NONE) {
		lc->st.udp_noport++;
		return;
	}
	lc->st.udp_rx++;
	if (h->kind == SOCKTAB_HIT_UDP)
		udp_new_peer(lc, p);
	udp_reply(lc, p, d, len);
}

/* ---- Input: headers to keys, lookups, dispatch. */

static void tcp_input(struct lcore *lc, const struct pkt *p, struct socktab_hit *h,
		      bool *again)
{
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)p->l4;
	uint32_t hlen = (uint32_t)(th->data_off >> 4) * 4;
	struct seg s = {
		.seq = rte_be_to_cpu_32(th->sent_seq), .ack = rte_be_to_cpu_32(th->recv_ack),
		.flags = th->tcp_flags, .data = p->l4 + hlen, .len = p->l4_len - hlen,
	};

	*again = false;
	switch (h->kind) {
	case SOCKTAB_HIT_ESTABLISHED: {
		/* An earlier packet of the burst may have closed it (a RST, the last ACK): its
		 * state says so, and a lookup now finds what holds the 4-tuple instead. Only this
		 * lcore changes the state of its connections, so one read serves the packet. */
		int state = socktab_get_state(h->sk);

		if (state < 0 || state == SOCKTAB_TCP_CLOSE)
			*again = true;
		else
			conn_input(lc, h->priv, state, p, &s);
		break;
	}
	case SOCKTAB_HIT_REQUEST:
		*again = request_input(lc, h->sk, h->priv, p, &s);
		break;
	case SOCKTAB_HIT_LISTENER:
		listener_input(lc, h->sk, p, &s);
		break;
	case SOCKTAB_HIT_TIME_WAIT:
		/* This stack never closes first, so entries come only from a connection reset
		 * by a timeout; a new SYN takes the 4-tuple back, anything else is dropped. */
		if (s.flags & TH_SYN) {
			socktab_tw_kill(socktab_sock_tw(h->sk));
			*again = true;
		}
		break;
	default:
		send_reset(lc, p, &s);
	}
}

/* Ethernet, IPv4 or IPv6, TCP or UDP with a good checksum and addressed to us: 0, else -1
 * (ARP and neighbour solicitations are answered here and give -1 too). */
static int parse(struct lcore *lc, struct rte_mbuf *m, struct pkt *p);

/* A packet's lookup key: its own fields in network order, the peer's side first; its device
 * is the call's (the port's ifindex). */
static void key_of(const struct pkt *p, struct socktab_key *k)
{
	memset(k, 0, sizeof(*k));
	if (p->family == AF_INET) {
		k->saddr.v4 = p->src.v4;
		k->daddr.v4 = p->dst.v4;
	} else {
		k->saddr.v6 = p->src.v6;
		k->daddr.v6 = p->dst.v6;
	}
	k->sport = p->sport;
	k->dport = p->dport;
	k->proto = p->proto == IPPROTO_TCP ? SOCKTAB_TCP : SOCKTAB_UDP;
	k->family = (uint8_t)p->family;
	k->dif = SOCKTAB_KEY_CALL_DEV;
}

/* One packet looked up on its own (--lookup single, and again after handling changed what
 * its 4-tuple holds). */
static void lookup_one(const struct pkt *p, struct socktab_hit *h)
{
	int proto = p->proto == IPPROTO_TCP ? SOCKTAB_TCP : SOCKTAB_UDP;

	if (p->family == AF_INET) {
		struct socktab_tuple4 k = { .saddr = p->src.v4, .daddr = p->dst.v4,
					    .sport = p->sport, .dport = p->dport, .dif = ifindex };

		socktab_lookup_one4(net, proto, &k, h, SOCKTAB_LOOKUP_NOREF);
	} else {
		struct socktab_tuple6 k = { .saddr = p->src.v6, .daddr = p->dst.v6,
					    .sport = p->sport, .dport = p->dport, .dif = ifindex };

		socktab_lookup_one6(net, proto, &k, h, SOCKTAB_LOOKUP_NOREF);
	}
}

/* One packet with what its lookup found; looked up again (at most twice) when handling it
 * says the table changed under it. */
static void handle(struct lcore *lc, const struct pkt *p, struct socktab_hit *h)
{
	for (int tries = 0; tries < 3; tries++) {
		bool again;

		if (p->proto == IPPROTO_UDP) {
			udp_input(lc, p, h);
			return;
		}
		tcp_input(lc, p, h, &again);
		if (!again)
			return;
		lc->st.tcp_relookups++;
		lookup_one(p, h);
	}
}

/*
 * One burst: every packet's key, one socktab_lookup_mixed() call for TCP and UDP, IPv4 and
 * IPv6 together (or one socktab_lookup_one4/6() per packet with --lookup single), then the
 * packets in arrival order. The lcore is online, so SOCKTAB_LOOKUP_NOREF: what the lookups
 * found stays valid until the loop's next quiescent state. The mixed call answers as if the
 * keys were looked up one after the other: it stops before a key that repeats the 4-tuple of
 * an earlier one whose handling may change what it finds (a SYN and its retransmission, the
 * final ACK and the data behind it, with SOCKTAB_LOOKUP_UDP_ORDER a new UDP peer's second
 * datagram), and the rest of the burst is looked up once the packets before it are handled.
 */
static void process_burst(struct lcore *lc, struct pkt *pk, unsigned int n)
{
	struct socktab_key keys[BURST];
	struct socktab_hit hits[BURST];
	unsigned int done = 0;

	if (!cfg.single) /* the single lookups make their own tuples */
		for (unsigned int i = 0; i < n; i++)
			key_of(&pk[i], &keys[i]);
	while (done < n) {
		unsigned int r = n - done;

		if (!cfg.single) {
			uint64_t t0 = rte_get_tsc_cycles();
			int got = socktab_lookup_mixed(net, keys + done, n - done, ifindex, 0,
						       hits + done,
						       SOCKTAB_LOOKUP_NOREF | SOCKTAB_LOOKUP_UDP_ORDER);

			lc->st.lookup_cycles += rte_get_tsc_cycles() - t0;
			lc->st.lookups += n - done;
			if (got <= 0)
				break;   /* cannot happen with these keys; the packets are dropped */
			r = (unsigned int)got;
			for (unsigned int i = done; i < done + r; i++)
				rte_prefetch0(hits[i].priv);   /* the stack's state, on its way */
		}
		for (unsigned int i = done; i < done + r; i++) {
			if (cfg.single) {
				uint64_t t1 = rte_get_tsc_cycles();

				lookup_one(&pk[i], &hits[i]);
				lc->st.lookup_cycles += rte_get_tsc_cycles() - t1;
				lc->st.lookups++;
			}
			handle(lc, &pk[i], &hits[i]);
			rte_pktmbuf_free(pk[i].m);
		}
		done += r;
	}
	for (unsigned int i = done; i < n; i++)
		rte_pktmbuf_free(pk[i].m);
}

/* The transport checksum of @len bytes at @l4 under IP header @l3: the sum of the pseudo
 * header and the segment, its checksum field included, is all ones when it is right. */
static bool l4_csum_ok(int family, const void *l3, const uint8_t *l4, uint32_t len)
{
	uint32_t sum = family == AF_INET ? rte_ipv4_phdr_cksum(l3, 0) : rte_ipv6_phdr_cksum(l3, 0);

	sum += rte_raw_cksum(l4, len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static int parse(struct lcore *lc, struct rte_mbuf *m, struct pkt *p)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	uint16_t type;

	if (len < sizeof(*eh) || m->nb_segs != 1 || rte_is_same_ether_addr(&eh->src_addr, &our_mac))
		return -1;
	type = rte_be_to_cpu_16(eh->ether_type);
	d += sizeof(*eh);
	len -= sizeof(*eh);
	p->m = m;
	if (type == RTE_ETHER_TYPE_ARP) {
		struct rte_arp_hdr *a = (struct rte_arp_hdr *)d;

		if (len < sizeof(*a) || a->arp_data.arp_tip != cfg.addr4.v4)
			return -1;
		if (a->arp_data.arp_sip == cfg.peer4.v4)
			neigh_learn(lc, AF_INET, &a->arp_data.arp_sha);
		if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
			return -1;
		/* The reply: this mbuf, turned around. */
		struct rte_mbuf *r = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);

		if (!r)
			return -1;
		eh = rte_pktmbuf_mtod(r, struct rte_ether_hdr *);
		a = (struct rte_arp_hdr *)(eh + 1);
		eh->dst_addr = eh->src_addr;
		eh->src_addr = our_mac;
		a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
		a->arp_data.arp_tha = a->arp_data.arp_sha;
		a->arp_data.arp_tip = a->arp_data.arp_sip;
		a->arp_data.arp_sha = our_mac;
		a->arp_data.arp_sip = cfg.addr4.v4;
		tx_queue(lc, r);
		return -1;
	}
	if (type == RTE_ETHER_TYPE_IPV4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)d;
		uint32_t ihl, tot;

		if (len < sizeof(*ip) || (ip->version_ihl >> 4) != 4)
			return -1;
		ihl = (uint32_t)(ip->version_ihl & 0xf) * 4;
		tot = rte_be_to_cpu_16(ip->total_length);
		if (ihl < sizeof(*ip) || tot < ihl || tot > len || ip->dst_addr != cfg.addr4.v4 ||
		    (rte_be_to_cpu_16(ip->fragment_offset) & 0x3fff) || rte_ipv4_cksum(ip) != 0)
			return -1;
		p->family = AF_INET;
		p->proto = ip->next_proto_id;
		p->src.v4 = ip->src_addr;
		p->dst.v4 = ip->dst_addr;
		p->l4 = d + ihl;
		p->l4_len = tot - ihl;
		if (p->src.v4 == cfg.peer4.v4)
			neigh_learn(lc, AF_INET, &eh->src_addr);
	} else if (type == RTE_ETHER_TYPE_IPV6 && cfg.have6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)d;

		if (len < sizeof(*ip6) || (rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6 ||
		    rte_be_to_cpu_16(ip6->payload_len) > len - sizeof(*ip6))
			return -1;
		p->family = AF_INET6;
		p->proto = ip6->proto;
		memcpy(&p->src.v6, ip6->src_addr, 16);
		memcpy(&p->dst.v6, ip6->dst_addr, 16);
		p->l4 = d + sizeof(*ip6);
		p->l4_len = rte_be_to_cpu_16(ip6->payload_len);
		if (!memcmp(&p->src.v6, &cfg.peer6.v6, 16))
			neigh_learn(lc, AF_INET6, &eh->src_addr);
		if (p->proto == IPPROTO_ICMPV6 && p->l4_len >= 24 && p->l4[0] == 135 &&
		    !memcmp(p->l4 + 8, &cfg.addr6.v6, 16) &&
		    l4_csum_ok(AF_INET6, d, p->l4, p->l4_len)) {
			/* A neighbour solicitation for our address: the advertisement, solicited
			 * and override, with our link address. */
			uint8_t *l3;
			struct rte_mbuf *r = eth_start(lc, AF_INET6, sizeof(*ip6) + 32, &l3);

			if (!r)
				return -1;
			uint8_t *na = l3 + sizeof(*ip6);

			memset(na, 0, 32);
			na[0] = 136;
			na[4] = 0x60;
			memcpy(na + 8, &cfg.addr6.v6, 16);
			na[24] = 2;   /* target link-layer address */
			na[25] = 1;
			memcpy(na + 26, &our_mac, 6);
			ip_finish(lc, r, AF_INET6, l3, &cfg.addr6, &p->src, IPPROTO_ICMPV6, 32, 2,
				  255);   /* neighbour discovery: hop limit 255 */
			return -1;
		}
		if (p->proto == IPPROTO_ICMPV6 && p->l4_len >= 32 && p->l4[0] == 136 &&
		    !memcmp(p->l4 + 8, &cfg.peer6.v6, 16))
			neigh_learn(lc, AF_INET6, &eh->src_addr);
		if (memcmp(&p->dst.v6, &cfg.addr6.v6, 16))
			return -1;
	} else {
		return -1;
	}
	if (p->proto == IPPROTO_TCP) {
		if (p->l4_len < sizeof(struct rte_tcp_hdr) ||
		    ((struct rte_tcp_hdr *)p->l4)->data_off >> 4 < 5 ||
		    (uint32_t)(((struct rte_tcp_hdr *)p->l4)->data_off >> 4) * 4 > p->l4_len)
			return -1;
		p->sport = ((struct rte_tcp_hdr *)p->l4)->src_port;
		p->dport = ((struct rte_tcp_hdr *)p->l4)->dst_port;
	} else if (p->proto == IPPROTO_UDP) {
		if (p->l4_len < sizeof(struct rte_udp_hdr) ||
		    rte_be_to_cpu_16(((struct rte_udp_hdr *)p->l4)->dgram_len) != p->l4_len)
			return -1;
		p->sport = ((struct rte_udp_hdr *)p->l4)->src_port;
		p->dport = ((struct rte_udp_hdr *)p->l4)->dst_port;
	} else {
		return -1;
	}
	/* Checksums: trust the port when it checked them, else verify. */
	if ((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		if (!l4_csum_ok(p->family, d, p->l4, p->l4_len) &&
		    !(p->proto == IPPROTO_UDP && p->family == AF_INET &&
		      ((struct rte_udp_hdr *)p->l4)->dgram_cksum == 0))
			return -1;
	}
	return 0;
}

/* The lcore that owns a packet: with a software RSS state, the queue socktab_net_rss_queue()
 * names (the queue the port would have used, and the one connect() chose the port for). */
static unsigned int owner_of(const struct pkt *p)
{
	int q = socktab_net_rss_queue(net, p->family, &p->src, p->sport, &p->dst, p->dport);

	return q < 0 ? 0 : (unsigned int)q;
}

/* Receive up to BURST packets from the port, keep ours and pass the others on, then take
 * those other lcores passed to us. A packet is passed on parsed (struct pkt, its mbuf
 * included): the lcore that received it checked its headers and checksum and learnt from it,
 * and the one that owns it takes it as it is. Returns how many packets came in, from the port
 * and from the ring. */
static unsigned int rx_burst(struct lcore *lc, struct pkt *pk, unsigned int *np)
{
	struct rte_mbuf *m[BURST];
	unsigned int n = rte_eth_rx_burst(port_id, (uint16_t)lc->queue, m, BURST), k = 0, got = 0;

	for (unsigned int i = 0; i < n; i++)   /* every header's line on its way at once */
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	for (unsigned int i = 0; i < n; i++) {
		struct pkt *p = &pk[k];

		if (parse(lc, m[i], p)) {
			rte_pktmbuf_free(m[i]);
			continue;
		}
		if (soft_rss && nb_queues > 1) {
			unsigned int o = owner_of(p);

			if (o != lc->queue) {
				if (rte_ring_enqueue_elem(lcores[o].handoff, p, sizeof(*p))) {
					lc->st.handoff_drop++; /* that lcore's ring is full */
					rte_pktmbuf_free(m[i]);
				} else {
					lc->st.handoff++;
				}
				continue;
			}
		}
		k++;
	}
	lc->st.rx += n;
	if (nb_queues > 1 && k < BURST) {
		got = rte_ring_dequeue_burst_elem(lc->handoff, pk + k, sizeof(*pk), BURST - k,
						  NULL);
		for (unsigned int i = k; i < k + got; i++)
			rte_prefetch0(pk[i].l4);   /* last read by the other lcore */
	}
	*np = k + got;
	return n + got;
}

/* Ask for the peers' link addresses (ARP request, neighbour solicitation). */
static void solicit(struct lcore *lc)
{
	struct neigh *n = atomic_load_explicit(&neigh_now, memory_order_acquire);
	struct rte_mbuf *m;
	struct rte_ether_hdr *eh;

	if (!n->has4 && (m = rte_pktmbuf_alloc(pool))) {
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(
			m, sizeof(*eh) + sizeof(struct rte_arp_hdr));
		struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eh + 1);

		memset(&eh->dst_addr, 0xff, 6);
		eh->src_addr = our_mac;
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
		a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
		a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		a->arp_hlen = 6;
		a->arp_plen = 4;
		a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
		a->arp_data.arp_sha = our_mac;
		a->arp_data.arp_sip = cfg.addr4.v4;
		memset(&a->arp_data.arp_tha, 0, 6);
		a->arp_data.arp_tip = cfg.peer4.v4;
		tx_queue(lc, m);
	}
	if (cfg.have6 && !n->has6 && (m = rte_pktmbuf_alloc(pool))) {
		/* To the peer's solicited-node group ff02::1:ffXX:XXXX. */
		union addr snm = { .v6 = { .s6_addr = { 0xff, 2, [11] = 1, [12] = 0xff } } };
		uint8_t *l3;

		memcpy(&snm.v6.s6_addr[13], &cfg.peer6.v6.s6_addr[13], 3);
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(
			m, sizeof(*eh) + sizeof(struct rte_ipv6_hdr) + 32);
		eh->dst_addr = (struct rte_ether_addr){ { 0x33, 0x33, 0xff, snm.v6.s6_addr[13],
							  snm.v6.s6_addr[14], snm.v6.s6_addr[15] } };
		eh->src_addr = our_mac;
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		l3 = (uint8_t *)(eh + 1);
		uint8_t *ns = l3 + sizeof(struct rte_ipv6_hdr);

		memset(ns, 0, 32);
		ns[0] = 135;
		memcpy(ns + 8, &cfg.peer6.v6, 16);
		ns[24] = 1;   /* source link-layer address */
		ns[25] = 1;
		memcpy(ns + 26, &our_mac, 6);
		ip_finish(lc, m, AF_INET6, l3, &cfg.addr6, &snm, IPPROTO_ICMPV6, 32, 2, 255);
	}
	tx_flush(lc);
}

/* ---- The lcore loop. */

static void quiescent(struct lcore *lc)
{
	uint64_t t = rte_get_tsc_cycles(), d;

	socktab_quiescent_state();              /* socktab's reclaim may go past this lcore */
	rte_rcu_qsbr_quiescent(qsbr, lc->id);   /* and so may the example's own */
	d = rte_get_tsc_cycles() - t;
	lc->st.qs_cycles += d;
	if (d > lc->st.qs_max_cycles)
		lc->st.qs_max_cycles = d;
	if (lc->old_neigh && rte_rcu_qsbr_check(qsbr, lc->old_token, false) == 1) {
		free(lc->old_neigh);
		lc->old_neigh = NULL;
	}
}

static int lcore_main(void *arg)
{
	struct lcore *lc = arg;
	struct pkt pk[BURST];
	uint64_t next_timer = 0, next_tick = 0, next_solicit = 0, due = 0;
	unsigned int idle = 0;

	socktab_thread_register();
	socktab_set_rx_cpu((int)lc->queue);  /* SO_INCOMING_CPU: the queue, not the CPU */
	/* Each lcore's connect()s try a share of the ports of their own first, so two lcores do
	 * not pass bind-table slots and lock stripes back and forth (socktab/sock.h). */
	unsigned int shares = 1;

	while (shares < nb_queues)
		shares *= 2;
	if (socktab_thread_set_port_share(lc->queue, shares))
		rte_exit(EXIT_FAILURE, "socktab_thread_set_port_share(%u, %u)\n", lc->queue,
			 shares);
	rte_rcu_qsbr_thread_register(qsbr, lc->id);
	rte_rcu_qsbr_thread_online(qsbr, lc->id);
	socktab_thread_online();
	while (!stop) {
		unsigned int np, n = rx_burst(lc, pk, &np);
		lc->st.loops++;
		if (np)
			process_burst(lc, pk, np);
		if (n) {
			lc->st.busy_loops++;
			idle = 0;
		}
		uint64_t ms = now_ms();

		if (ms >= next_timer) {
			conn_timers(lc);
			next_timer = ms + 10;
		}
		if (cfg.flows && ms >= next_solicit) {
			struct neigh *nb = atomic_load_explicit(&neigh_now, memory_order_acquire);

			if (cfg.connect_family == AF_INET ? !nb->has4 : !nb->has6)
				solicit(lc);
			next_solicit = ms + 200;
		}
		if (cfg.flows)
			flows_pump(lc);
		/* TIME_WAIT expiry: one lcore, every 100 ms, 64 entries at most per call, again
		 * at once while entries are still due. */
		if (lc->queue == 0 && (ms >= next_tick || due <= now_ns())) {
			if (socktab_net_tick_budget(net, 64, &due) < 0)
				due = UINT64_MAX;
			next_tick = ms + 100;
		}
		tx_flush(lc);
		quiescent(lc);
		if (!n && cfg.idle_us && ++idle > 64)
			rte_delay_us_sleep((unsigned int)cfg.idle_us);  /* leave the CPU to others */
	}
	/* Exit: reset what is still open, leave RCU. */
	lc->st.open_at_exit = lc->n_conns;
	while (lc->conns)
		conn_reset(lc, lc->conns);
	tx_flush(lc);
	socktab_thread_offline();
	rte_rcu_qsbr_thread_offline(qsbr, lc->id);
	rte_rcu_qsbr_thread_unregister(qsbr, lc->id);
	socktab_thread_unregister();
	return 0;
}

/* ---- Setup. */

static int parse_prefix(const char *s, int family, union addr *a, int *plen)
{
	char buf[64];
	const char *slash = strchr(s, '/');

	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - s) : (int)strlen(s), s);
	if (plen)
		*plen = slash ? atoi(slash + 1) : (family == AF_INET ? 24 : 64);
	return inet_pton(family, buf, a) == 1 ? 0 : -1;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", 1, 0, 'a' }, { "peer", 1, 0, 'p' }, { "addr6", 1, 0, 'A' },
		{ "peer6", 1, 0, 'P' }, { "tcp-echo", 1, 0, 't' }, { "udp-echo", 1, 0, 'u' },
		{ "connect", 1, 0, 'c' }, { "flows", 1, 0, 'f' }, { "lookup", 1, 0, 'l' },
		{ "duration", 1, 0, 'd' }, { "idle-us", 1, 0, 'i' }, { "syncookies", 1, 0, 's' },
		{ "backlog", 1, 0, 'b' }, { "reserve", 1, 0, 'r' }, { "bench", 1, 0, 'B' },
		{ 0, 0, 0, 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'a': if (parse_prefix(optarg, AF_INET, &cfg.addr4, NULL)) return -1; break;
		case 'p': if (parse_prefix(optarg, AF_INET, &cfg.peer4, &cfg.plen4)) return -1; break;
		case 'A':
			if (parse_prefix(optarg, AF_INET6, &cfg.addr6, NULL))
				return -1;
			cfg.have6 = true;
			break;
		case 'P': if (parse_prefix(optarg, AF_INET6, &cfg.peer6, &cfg.plen6)) return -1; break;
		case 't': cfg.tcp_echo = atoi(optarg); break;
		case 'u': cfg.udp_echo = atoi(optarg); break;
		case 'c': {
			/* ADDR:PORT or [ADDR6]:PORT */
			char buf[64];
			const char *colon = strrchr(optarg, ':');

			if (!colon)
				return -1;
			snprintf(buf, sizeof(buf), "%.*s", (int)(colon - optarg), optarg);
			cfg.connect_port = rte_cpu_to_be_16((uint16_t)atoi(colon + 1));
			if (buf[0] == '[') {
				buf[strlen(buf) - 1] = 0;
				cfg.connect_family = AF_INET6;
				if (inet_pton(AF_INET6, buf + 1, &cfg.connect_addr) != 1)
					return -1;
			} else {
				cfg.connect_family = AF_INET;
				if (inet_pton(AF_INET, buf, &cfg.connect_addr) != 1)
					return -1;
			}
			break;
		}
		case 'f': cfg.flows = atoi(optarg); break;
		case 'l': cfg.single = !strcmp(optarg, "single"); break;
		case 'd': cfg.duration = atof(optarg); break;
		case 'i': cfg.idle_us = atoi(optarg); break;
		case 's': cfg.syncookies = atoi(optarg); break;
		case 'b': cfg.backlog = atoi(optarg); break;
		case 'r': cfg.reserve = atoi(optarg); break;
		case 'B': cfg.bench = atoi(optarg); break;
		default: return -1;
		}
	}
	if (!cfg.bench && (!cfg.addr4.v4 || !cfg.peer4.v4))
		return -1;
	if (cfg.flows && !cfg.connect_family)
		return -1;
	return 0;
}

static int net_open(void)
{
	struct socktab_net_params p;
	char val[16];

	socktab_net_params_init(&p);
	p.clock = net_clock;
	p.sock_priv_size = sizeof(struct conn);
	p.tw_priv_size = sizeof(struct tw_part);
	p.req_priv_size = sizeof(struct req_part);
	if (cfg.reserve) {
		p.reserve_socks = (uint32_t)cfg.reserve;
		p.reserve_tw = (uint32_t)cfg.reserve / 4;
	}
	net = socktab_net_new(&p);
	if (!net)
		return -1;
	ifindex = socktab_dev_add(net, "dpdk0", 1);
	if (ifindex < 0)
		return -1;
	if (cfg.addr4.v4 && socktab_addr_add(net, ifindex, AF_INET, &cfg.addr4, cfg.plen4))
		return -1;
	if (cfg.have6 && socktab_addr_add(net, ifindex, AF_INET6, &cfg.addr6, cfg.plen6))
		return -1;
	snprintf(val, sizeof(val), "%d", cfg.syncookies);
	socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", val);
	snprintf(val, sizeof(val), "%d", cfg.backlog);
	socktab_net_sysctl(net, "net.core.somaxconn", val);
	return 0;
}

/* A TCP listener and a UDP socket on each of our addresses. */
static int services_open(void)
{
	for (int f = 0; f < 1 + cfg.have6; f++) {
		int family = f ? AF_INET6 : AF_INET, one = 1;
		struct sockaddr_storage ss;

		if (cfg.tcp_echo) {
			struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, family);

			sockaddr_of(&ss, family, f ? &cfg.addr6 : &cfg.addr4,
				    rte_cpu_to_be_16((uint16_t)cfg.tcp_echo));
			if (!l || socktab_setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
			    socktab_bind(l, (struct sockaddr *)&ss, sa_len(family)) ||
			    socktab_listen(l, cfg.backlog))
				return -1;
			listeners[f] = l;
		}
		if (cfg.udp_echo) {
			struct socktab_sock *u = socktab_socket(net, SOCKTAB_UDP, family);

			sockaddr_of(&ss, family, f ? &cfg.addr6 : &cfg.addr4,
				    rte_cpu_to_be_16((uint16_t)cfg.udp_echo));
			if (!u || socktab_setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
			    socktab_setsockopt(u, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
			    socktab_bind(u, (struct sockaddr *)&ss, sa_len(family)))
				return -1;
			udp_servers[f] = u;
		}
	}
	return 0;
}

/*
 * RSS: the port's key and redirection table into socktab, so that connect() can choose ports
 * whose replies come back to the lcore that asked. A port without RSS gets a random key and an
 * even spread of its queues over a 128-entry table: the lcores then hand packets over.
 */
static int rss_setup(const struct rte_eth_dev_info *info)
{
	uint8_t key[64];
	uint16_t reta[512];
	uint32_t reta_len = 0;
	struct rte_eth_rss_conf rc = { .rss_key = key, .rss_key_len = sizeof(key) };

	if (info->reta_size && info->reta_size <= 512 &&
	    rte_eth_dev_rss_hash_conf_get(port_id, &rc) == 0 && rc.rss_key_len >= 40) {
		struct rte_eth_rss_reta_entry64 conf[512 / RTE_ETH_RETA_GROUP_SIZE];

		memset(conf, 0, sizeof(conf));
		for (unsigned int g = 0; g < info->reta_size / RTE_ETH_RETA_GROUP_SIZE; g++)
			conf[g].mask = UINT64_MAX;
		if (rte_eth_dev_rss_reta_query(port_id, conf, info->reta_size) == 0) {
			reta_len = info->reta_size;
			for (uint32_t i = 0; i < reta_len; i++)   /* the groups end to end */
				reta[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE]
						  .reta[i % RTE_ETH_RETA_GROUP_SIZE];
		}
	}
	if (!reta_len) {
		if (nb_queues == 1)
			return 0;   /* one queue: nothing to steer */
		for (unsigned int i = 0; i < 40; i++)
			key[i] = (uint8_t)rte_rand();
		reta_len = 128;
		for (uint32_t i = 0; i < reta_len; i++)
			reta[i] = (uint16_t)(i % nb_queues);
		soft_rss = true;
	}
	return socktab_net_set_rss(net, key, 40, reta, reta_len);
}

static int port_open(uint16_t port, unsigned int nq)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_info_get(port, &info))
		return -1;
	if (info.flow_type_rss_offloads && nq > 1) {
		/* The 4-tuple, not the addresses alone, or socktab's port choice means nothing. */
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
			(RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP |
			 RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_NONFRAG_IPV6_UDP);
	}
	if (rte_eth_dev_configure(port, (uint16_t)nq, (uint16_t)nq, &conf))
		return -1;
	for (unsigned int q = 0; q < nq; q++)
		if (rte_eth_rx_queue_setup(port, (uint16_t)q, RING_SIZE, rte_socket_id(), NULL,
					   pool) ||
		    rte_eth_tx_queue_setup(port, (uint16_t)q, RING_SIZE, rte_socket_id(), NULL))
			return -1;
	if (rte_eth_dev_start(port))
		return -1;
	rte_eth_promiscuous_enable(port);
	rte_eth_macaddr_get(port, &our_mac);
	return 0;
}

static void print_stats(void)
{
	struct stats t;
	struct socktab_net_stats ns;
	struct socktab_udp_stats us;
	uint64_t *dst = (uint64_t *)&t;

	memset(&t, 0, sizeof(t));
	for (unsigned int i = 0; i < nb_queues; i++) {
		const uint64_t *src = (const uint64_t *)&lcores[i].st;

		for (size_t k = 0; k < sizeof(t) / sizeof(uint64_t); k++)
			dst[k] += src[k];
	}
	socktab_net_stats(net, &ns);
	socktab_udp_stats(net, &us);
	printf("lcores=%u\nrss=%s\nlookup_mode=%s\n", nb_queues,
	       soft_rss ? "software" : nb_queues > 1 ? "port" : "none",
	       cfg.single ? "single" : "batch");
	printf("rx_packets=%" PRIu64 "\ntx_packets=%" PRIu64 "\ntx_dropped=%" PRIu64
	       "\nhandoffs=%" PRIu64 "\nhandoffs_dropped=%" PRIu64 "\nno_neigh=%" PRIu64 "\n", t.rx,
	       t.tx, t.tx_drop, t.handoff, t.handoff_drop, t.no_neigh);
	printf("tcp_accepted=%" PRIu64 "\ntcp_closed=%" PRIu64 "\ntcp_cookies_sent=%" PRIu64
	       "\ntcp_cookies_ok=%" PRIu64 "\ntcp_rst_sent=%" PRIu64 "\ntcp_retransmits=%" PRIu64
	       "\ntcp_timeouts=%" PRIu64 "\ntcp_syn_dropped=%" PRIu64 "\ntcp_relookups=%" PRIu64
	       "\ntcp_active_ok=%" PRIu64 "\ntcp_active_failed=%" PRIu64 "\n",
	       t.tcp_accepted, t.tcp_closed, t.tcp_cookies_sent, t.tcp_cookies_ok, t.tcp_rst_sent,
	       t.tcp_retransmits, t.tcp_timeouts, t.tcp_syn_dropped, t.tcp_relookups,
	       t.tcp_active_ok, t.tcp_active_failed);
	printf("udp_rx=%" PRIu64 "\nudp_tx=%" PRIu64 "\nudp_connected_socks=%" PRIu64
	       "\nudp_hashed4=%" PRIu64 "\nudp_noport=%" PRIu64 "\n", t.udp_rx, t.udp_tx,
	       t.udp_connected_socks, us.hashed4, t.udp_noport);
	printf("lookups=%" PRIu64 "\nlookup_ns_mean=%.1f\nloops=%" PRIu64 "\nbusy_loops=%" PRIu64
	       "\nquiescent_ns_mean=%.1f\n", t.lookups,
	       t.lookups ? (double)t.lookup_cycles * 1e9 / (double)hz / (double)t.lookups : 0.0,
	       t.loops, t.busy_loops,
	       t.loops ? (double)t.qs_cycles * 1e9 / (double)hz / (double)t.loops : 0.0);
	uint64_t qmax = 0, overflows = 0, drops = 0;

	for (unsigned int i = 0; i < nb_queues; i++) {
		qmax = RTE_MAX(qmax, lcores[i].st.qs_max_cycles);
		overflows += lcores[i].reqc.listen_overflows;
		drops += lcores[i].reqc.listen_drops;
	}
	printf("mbufs_free=%u of %u\n", rte_mempool_avail_count(pool), pool->size);
	printf("listen_overflows=%" PRIu64 "\nlisten_drops=%" PRIu64 "\n", overflows, drops);
	t.qs_max_cycles = qmax;
	printf("quiescent_ns_max=%.0f\n", (double)qmax * 1e9 / (double)hz);
	printf("tcp_open_at_exit=%" PRIu64 "\n", t.open_at_exit);
	printf("established_left=%" PRIu64 "\nrequests_left=%" PRIu64 "\n", ns.established,
	       ns.requests);
	fflush(stdout);
}

static int bench_main(void);

/* Stops the lcores at the end of --duration, and says when every outgoing flow is done. */
static void *watcher(void *arg)
{
	uint64_t end = *(uint64_t *)arg;
	bool said = false;

	while (!stop) {
		uint32_t ok = atomic_load(&flows_done), failed = atomic_load(&flows_failed);

		if (cfg.flows && !said && ok + failed >= (uint32_t)cfg.flows) {
			printf("connect_done=1 flows_ok=%" PRIu32 " flows_failed=%" PRIu32 "\n", ok,
			       failed);
			fflush(stdout);
			said = true;
		}
		if (rte_get_tsc_cycles() >= end)
			stop = 1;
		usleep(10000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);

	if (n < 0) {
		fprintf(stderr, "dpdk_endpoint: EAL: %s\n", rte_strerror(rte_errno));
		return 3;   /* the EAL would not start: tests/real/dpdk.sh skips on it */
	}
	argc -= n;
	argv += n;
	if (parse_args(argc, argv)) {
		fprintf(stderr, "usage: dpdk_endpoint [EAL options] -- --addr A --peer P/LEN "
				"[--addr6 A6 --peer6 P6/LEN] [--tcp-echo PORT] [--udp-echo PORT] "
				"[--connect ADDR:PORT --flows N] [--lookup batch|single] "
				"[--duration S] [--idle-us U] [--syncookies 0|1|2] [--backlog N] "
				"[--reserve N] | --bench N\n");
		return 2;
	}
	hz = rte_get_tsc_hz();
	cookie_key[0] = rte_rand();
	cookie_key[1] = rte_rand();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	socktab_thread_register();
	if (cfg.bench)
		return bench_main();

	nb_queues = rte_lcore_count();
	if (nb_queues > MAX_LCORES || rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "dpdk_endpoint: no port (give a --vdev), or too many lcores\n");
		return 3;
	}
	RTE_ETH_FOREACH_DEV(port_id)
		break;
	pool = rte_pktmbuf_pool_create("mbufs", NB_MBUF, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	size_t qsz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);

	qsbr = rte_zmalloc(NULL, qsz, RTE_CACHE_LINE_SIZE);
	struct neigh *n0 = calloc(1, sizeof(*n0));

	if (!pool || !qsbr || !n0 || rte_rcu_qsbr_init(qsbr, RTE_MAX_LCORE)) {
		fprintf(stderr, "dpdk_endpoint: no memory for the mbuf pool\n");
		return 1;
	}
	atomic_store(&neigh_now, n0);
	if (port_open(port_id, nb_queues)) {
		fprintf(stderr, "dpdk_endpoint: port %u would not start\n", port_id);
		return 3;
	}
	if (net_open() || services_open()) {
		fprintf(stderr, "dpdk_endpoint: socktab setup: %s\n", strerror(errno));
		return 1;
	}
	struct rte_eth_dev_info info;

	rte_eth_dev_info_get(port_id, &info);
	if (rss_setup(&info)) {
		fprintf(stderr, "dpdk_endpoint: socktab_net_set_rss failed\n");
		return 1;
	}
	/* socktab's reclaim worker (socktab-reclaim) on a CPU no lcore polls, where there is one;
	 * the lcores register after this call, so their frees go to it. */
	int reclaim_cpu = -1;

	for (int cpu = 0; cpu < (int)sysconf(_SC_NPROCESSORS_ONLN) && reclaim_cpu < 0; cpu++) {
		unsigned int l;
		bool used = false;

		RTE_LCORE_FOREACH(l)
			used |= rte_lcore_to_cpu_id((int)l) == cpu;
		if (!used)
			reclaim_cpu = cpu;
	}
	socktab_rcu_reclaim_cpu(reclaim_cpu);
	/* Queue 0 is the main lcore's, the workers' follow. */
	unsigned int i = 0, lcore, ids[MAX_LCORES];

	ids[0] = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(lcore)
		ids[++i] = lcore;
	for (i = 0; i < nb_queues; i++) {
		struct lcore *lc = &lcores[i];
		char name[32];

		lc->id = ids[i];
		lc->queue = i;
		lc->rng = rte_rand() | 1;
		snprintf(name, sizeof(name), "handoff%u", i);
		/* Its slots are parsed packets (struct pkt), not bare mbufs. */
		lc->handoff = rte_ring_create_elem(name, sizeof(struct pkt), RING_SIZE,
						   (int)rte_socket_id(), RING_F_SC_DEQ);
		if (!lc->handoff)
			return 1;
	}
	printf("port=%u driver=%s lcores=%u rss=%s reclaim_cpu=%d mac=" RTE_ETHER_ADDR_PRT_FMT "\n",
	       port_id, info.driver_name, nb_queues,
	       soft_rss ? "software" : nb_queues > 1 ? "port" : "none", reclaim_cpu,
	       RTE_ETHER_ADDR_BYTES(&our_mac));
	if (cfg.flows) {   /* the peer's link address first, so no SYN waits for it */
		for (int t = 0; t < 50; t++) {
			struct pkt pk[BURST];
			unsigned int np;
			struct neigh *nb = atomic_load(&neigh_now);

			if (cfg.connect_family == AF_INET ? nb->has4 : nb->has6)
				break;
			solicit(&lcores[0]);
			for (int k = 0; k < 100; k++) {
				for (unsigned int q = 0; q < nb_queues; q++) {   /* any queue */
					rx_burst(&lcores[q], pk, &np);
					for (unsigned int j = 0; j < np; j++)
						rte_pktmbuf_free(pk[j].m);
					tx_flush(&lcores[q]);
				}
				rte_delay_us_sleep(1000);
			}
		}
		for (unsigned int q = 0; q < nb_queues; q++) {   /* no lcore reads them yet */
			free(lcores[q].old_neigh);
			lcores[q].old_neigh = NULL;
		}
	}
	printf("ready=1\n");
	fflush(stdout);
	uint64_t end = cfg.duration > 0 ? rte_get_tsc_cycles() + (uint64_t)(cfg.duration * (double)hz)
					: UINT64_MAX;

	pthread_t w;

	if (pthread_create(&w, NULL, watcher, &end))
		return 1;
	socktab_thread_unregister();   /* the main lcore registers again in lcore_main */
	for (i = 1; i < nb_queues; i++)
		rte_eal_remote_launch(lcore_main, &lcores[i], lcores[i].id);
	lcore_main(&lcores[0]);
	rte_eal_mp_wait_lcore();
	pthread_join(w, NULL);
	socktab_thread_register();
	print_stats();
	for (int f = 0; f < 2; f++) {
		if (listeners[f])
			socktab_close(listeners[f]);
		if (udp_servers[f])
			socktab_close(udp_servers[f]);
	}
	socktab_net_free(net);
	socktab_thread_unregister();
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
	rte_eal_cleanup();
	return 0;
}

/* ---- --bench N: the packet path's cost per packet (scripts/dpdk-pps.sh). */

/* One ACK of synthetic connection @i, as the peer 198.51.100.(1 + i % 200), port
 * 1024 + i / 200, would send it to 192.0.2.2:5001: nothing to acknowledge, nothing to answer. */
static struct rte_mbuf *bench_frame(const struct conn *c)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	size_t l4 = sizeof(struct rte_tcp_hdr);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;

	if (!m)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eh) + sizeof(*ip) + l4));
	if (!eh) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(eh, 0, sizeof(*eh) + sizeof(*ip) + l4);
	eh->dst_addr = our_mac;
	eh->src_addr.addr_bytes[0] = 2;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = c->raddr.v4;
	ip->dst_addr = c->laddr.v4;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->src_port = c->rport;
	th->dst_port = c->lport;
	th->sent_seq = rte_cpu_to_be_32(c->tw.rcv_nxt);
	th->recv_ack = rte_cpu_to_be_32(c->snd_una);
	th->data_off = 5 << 4;
	th->tcp_flags = TH_ACK;
	th->rx_win = rte_cpu_to_be_16(65535);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

/* The time of one pass over every frame: each burst handed to the ring port's RX ring (not
 * timed: the "NIC" side), then received and processed (timed). Frames come back with an extra
 * reference, so the loop's free leaves them to the next pass. */
static void bench_pass(struct lcore *lc, struct rte_ring *rx, struct rte_mbuf **frames,
		       uint32_t n, uint64_t *cycles)
{
	struct pkt pk[BURST];

	for (uint32_t i = 0; i < n; i += BURST) {
		unsigned int b = n - i < BURST ? n - i : BURST, np;

		for (unsigned int k = 0; k < b; k++)
			rte_mbuf_refcnt_update(frames[i + k], 1);
		rte_ring_enqueue_burst(rx, (void **)(frames + i), b, NULL);
		uint64_t t0 = rte_get_tsc_cycles();

		rx_burst(lc, pk, &np);
		process_burst(lc, pk, np);
		*cycles += rte_get_tsc_cycles() - t0;
		quiescent(lc);
	}
}

static int gp_pass(struct socktab_sk_lookup *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	return SOCKTAB_SK_PASS;
}

static _Atomic int gp_run = 1, gp_on;
static _Atomic uint64_t gp_count, gp_cycles;

/* Grace periods back to back while gp_on: each socktab_sk_lookup_detach() waits for one. */
static void *gp_thread(void *arg)
{
	(void)arg;
	socktab_thread_register();
	while (atomic_load(&gp_run)) {
		if (!atomic_load(&gp_on)) {
			usleep(100);
			continue;
		}
		int id = socktab_sk_lookup_attach(net, gp_pass, NULL);
		uint64_t t = rte_get_tsc_cycles();

		if (id <= 0 || socktab_sk_lookup_detach(net, id))
			break;
		atomic_fetch_add(&gp_cycles, rte_get_tsc_cycles() - t);
		atomic_fetch_add(&gp_count, 1);
	}
	socktab_thread_unregister();
	return NULL;
}

/* Loops of an idle poll (an empty port, a quiescent state each) in @secs. */
static uint64_t idle_poll(struct lcore *lc, double secs)
{
	uint64_t end = rte_get_tsc_cycles() + (uint64_t)(secs * (double)hz), loops = 0;
	struct pkt pk[BURST];
	unsigned int np;

	while (rte_get_tsc_cycles() < end) {
		rx_burst(lc, pk, &np);
		quiescent(lc);
		loops++;
	}
	return loops;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * What grace periods cost a polling core: 20 ms windows of an idle poll, alternately alone and
 * with another thread running grace periods back to back (each waits for this core's next
 * quiescent state; urcu-memb's membarrier() interrupts every core of the process), 25 of each.
 * The medians leave out windows the machine took away; the loops lost over the grace periods
 * made are their cost here.
 */
static void gp_cost(struct lcore *lc)
{
	enum { W = 25 };
	uint64_t alone[W], with[W], gps[W], gpc[W];
	pthread_t t;

	if (pthread_create(&t, NULL, gp_thread, NULL))
		return;
	for (int w = 0; w < W; w++) {
		alone[w] = idle_poll(lc, 0.02);
		uint64_t g0 = atomic_load(&gp_count), c0 = atomic_load(&gp_cycles);

		atomic_store(&gp_on, 1);
		with[w] = idle_poll(lc, 0.02);
		atomic_store(&gp_on, 0);
		idle_poll(lc, 0.001);   /* the last grace period ends at a quiescent state */
		gps[w] = atomic_load(&gp_count) - g0;
		gpc[w] = gps[w] ? (atomic_load(&gp_cycles) - c0) / gps[w] : 0;
	}
	atomic_store(&gp_run, 0);
	/* Offline for the join: a grace period the thread may still be waiting for must not
	 * wait for this core. */
	socktab_thread_offline();
	pthread_join(t, NULL);
	socktab_thread_online();
	qsort(alone, W, sizeof(*alone), cmp_u64);
	qsort(with, W, sizeof(*with), cmp_u64);
	qsort(gps, W, sizeof(*gps), cmp_u64);
	qsort(gpc, W, sizeof(*gpc), cmp_u64);
	double loop_ns = 0.02e9 / (double)alone[W / 2];
	double lost_ns = 0.02e9 - (double)with[W / 2] * loop_ns;

	printf("grace_periods_per_s=%.0f grace_period_us=%.1f idle_loop_ns=%.1f "
	       "idle_loop_ns_with_gps=%.1f polling_core_ns_per_grace_period=%.0f\n",
	       (double)gps[W / 2] / 0.02, (double)gpc[W / 2] * 1e6 / (double)hz, loop_ns,
	       0.02e9 / (double)with[W / 2], gps[W / 2] ? lost_ns / (double)gps[W / 2] : 0.0);
}

static int bench_main(void)
{
	uint32_t n = (uint32_t)cfg.bench;
	struct lcore *lc = &lcores[0];
	struct rte_ring *rx, *tx;
	struct rte_mbuf **frames = calloc(n, sizeof(*frames));
	struct neigh *nb = calloc(1, sizeof(*nb));
	struct sockaddr_storage local, remote;
	char val[16];

	nb_queues = 1;
	lc->rng = 88172645463325252ull;
	cfg.addr4.v4 = htonl(0xc0000202);   /* 192.0.2.2 */
	cfg.plen4 = 24;
	cfg.tcp_echo = 5001;
	cfg.reserve = (int)n + 1024;
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE), RTE_CACHE_LINE_SIZE);
	pool = rte_pktmbuf_pool_create("bench", n + 4 * RING_SIZE, 256, 0, 256,
				       (int)rte_socket_id());
	rx = rte_ring_create("bench_rx", 4 * RING_SIZE, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	tx = rte_ring_create("bench_tx", 4 * RING_SIZE, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!frames || !nb || !qsbr || !pool || !rx || !tx || n > 200 * 60000 ||
	    rte_rcu_qsbr_init(qsbr, RTE_MAX_LCORE)) {
		fprintf(stderr, "dpdk_endpoint: --bench: no memory (give the EAL more: -m)\n");
		return 1;
	}
	nb->has4 = true;
	atomic_store(&neigh_now, nb);
	/* A port on two rings: rx_burst() takes what the bench puts into `rx`. */
	int port = rte_eth_from_rings("bench_port", &rx, 1, &tx, 1, (unsigned int)rte_socket_id());
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (port < 0 || rte_eth_dev_configure((uint16_t)port, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup((uint16_t)port, 0, RING_SIZE, rte_socket_id(), NULL, pool) ||
	    rte_eth_tx_queue_setup((uint16_t)port, 0, RING_SIZE, rte_socket_id(), NULL) ||
	    rte_eth_dev_start((uint16_t)port)) {
		fprintf(stderr, "dpdk_endpoint: --bench: the ring port would not start\n");
		return 3;
	}
	port_id = (uint16_t)port;
	rte_eth_macaddr_get(port_id, &our_mac);
	if (net_open() || services_open())
		return 1;
	snprintf(val, sizeof(val), "%u", n + 1);
	socktab_net_sysctl(net, "net.core.somaxconn", val);
	/* N connections as children of the listener, established. */
	for (uint32_t i = 0; i < n; i++) {
		union addr peer = { .v4 = htonl(0xc6336401 + i % 200) };   /* 198.51.100.1.. */
		struct pkt p = { .family = AF_INET, .src = peer, .dst = cfg.addr4,
				 .sport = htons((uint16_t)(1024 + i / 200)), .dport = htons(5001) };

		sockaddr_of(&local, AF_INET, &p.dst, p.dport);
		sockaddr_of(&remote, AF_INET, &p.src, p.sport);
		struct socktab_sock *sk = socktab_sock_new_child(listeners[0],
								 (struct sockaddr *)&local,
								 (struct sockaddr *)&remote,
								 sizeof(struct sockaddr_in), ifindex, 0);

		if (!sk || socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED)) {
			fprintf(stderr, "dpdk_endpoint: --bench: connection %u: %s\n", i,
				strerror(errno));
			return 1;
		}
		struct conn *c = socktab_sock_priv(sk);

		conn_init(c, sk, &p, (uint32_t)rnd(lc), (uint32_t)rnd(lc), APP_ECHO);
		conn_link(lc, c);
		frames[i] = bench_frame(c);
		if (!frames[i])
			return 1;
	}
	for (uint32_t i = n - 1; i > 0; i--) {   /* a shuffled order: no two bursts alike */
		uint32_t j = (uint32_t)(rnd(lc) % (i + 1));
		struct rte_mbuf *t = frames[i];

		frames[i] = frames[j];
		frames[j] = t;
	}
	socktab_thread_online();
	rte_rcu_qsbr_thread_register(qsbr, lc->id);
	rte_rcu_qsbr_thread_online(qsbr, lc->id);
	/* What two clock reads cost (the least of many): taken out of the single lookups' times. */
	double clock_ns = 1e30;

	for (int k = 0; k < 10000; k++) {
		uint64_t a = rte_get_tsc_cycles(), b = rte_get_tsc_cycles();

		clock_ns = RTE_MIN(clock_ns, (double)(b - a) * 1e9 / (double)hz);
	}
	/* Single and batch lookups in turn, 3 rounds of passes over every frame (at least 1M
	 * packets a round); the best round of each. */
	double best[2] = { 1e30, 1e30 }, best_lk[2] = { 0, 0 };
	uint32_t passes = n >= 1000000 ? 1 : (1000000 + n - 1) / n;

	for (int round = 0; round < 3; round++) {
		for (int single = 1; single >= 0; single--) {
			uint64_t cycles = 0, lk0, lkc0;

			cfg.single = single;
			bench_pass(lc, rx, frames, n, &cycles);   /* warm */
			cycles = 0;
			lk0 = lc->st.lookups;
			lkc0 = lc->st.lookup_cycles;
			for (uint32_t k = 0; k < passes; k++)
				bench_pass(lc, rx, frames, n, &cycles);
			double pkts = (double)n * passes;
			double ns = (double)cycles * 1e9 / (double)hz / pkts;
			double lk = (double)(lc->st.lookup_cycles - lkc0) * 1e9 / (double)hz /
				    (double)(lc->st.lookups - lk0);

			if (single) {   /* each single lookup read the clock twice more */
				ns -= clock_ns;
				lk -= clock_ns;
			}

			if (ns < best[single]) {
				best[single] = ns;
				best_lk[single] = lk;
			}
		}
	}
	if (lc->st.rx != lc->st.lookups || lc->st.tcp_rst_sent || lc->st.tx) {
		fprintf(stderr, "dpdk_endpoint: --bench: a frame missed its connection\n");
		return 1;
	}
	printf("bench clock_ns=%.1f\n", clock_ns);
	for (int single = 1; single >= 0; single--)
		printf("bench conns=%u lookup=%s pps=%.0f ns_per_packet=%.1f lookup_ns=%.1f "
		       "socktab_share=%.0f%%\n", n, single ? "single" : "batch",
		       1e9 / best[single], best[single], best_lk[single],
		       100.0 * best_lk[single] / best[single]);
	gp_cost(lc);
	fflush(stdout);
	rte_rcu_qsbr_thread_offline(qsbr, lc->id);
	socktab_thread_offline();
	for (uint32_t i = 0; i < n; i++)
		rte_pktmbuf_free(frames[i]);
	while (lc->conns)
		conn_end(lc, lc->conns, true);
	socktab_close(listeners[0]);
	socktab_net_free(net);
	socktab_thread_unregister();
	free(frames);
	rte_eth_dev_stop(port_id);
	rte_eal_cleanup();
	return 0;
}
