/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The serve stack: a small userspace TCP/UDP/ICMP endpoint on a TUN device, in which socktab
 * does every demultiplexing step and every port choice. This header is what the stack's files
 * share: the stack object, the per-socket state kept in socktab_sock_priv(), the parsed packet,
 * the counters, and each file's entry points. Only socktab's public API is used.
 *
 * Files (one concern each):
 *   tun.c     the TUN device: open, configure the kernel side, read and write packets
 *   xsk.c     the other packet I/O: an AF_XDP socket on an Ethernet device (libxdp), ARP and
 *             neighbour discovery for our addresses, and the batch poll loop (--xdp)
 *   share.c   a device shared with the kernel (--xdp when the kernel holds --addr): the
 *             steering program (bpf/), the port feed and the kernel's placeholder sockets
 *   bench_conns.c  synthetic connections for the AF_XDP packet-rate benchmark (--bench-conns)
 *   ip.c      IPv4/IPv6 input checks and output headers, Internet checksums
 *   lookup.c  the socktab lookups of the packet path, timed
 *   icmp.c    echo replies and port unreachable errors (ICMP and ICMPv6)
 *   tcp_in.c  TCP input: listeners, the state machine, RST for segments that match nothing
 *   tcp_out.c TCP output: segments, the send buffer, retransmission timers, closing
 *   tcp_tw.c  TIME_WAIT: what a segment does to a TIME_WAIT entry
 *   syncookie.c request entries: their handshake state and SYN-ACK timers; SYN cookies
 *   limits.c  per-source connection counts, the idle timeout
 *   udp.c     UDP input and output, connected sockets per peer
 *   app.c     the applications: TCP echo, HTTP, sockperf, UDP echo
 *   client.c  active flows (--connect): connect() port choice, echo check, the tcp_crr loop
 *   ss.c      the `ss -tan`-like dump (socktab's diag cursor)
 *   serve.c   the command line, the setup and the poll loop
 */
#ifndef SOCKTAB_STACK_H
#define SOCKTAB_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <netinet/in.h>

#include "socktab/socktab.h"

#define ST_MTU 1500            /* the TUN device's MTU: our segments never exceed it */
#define ST_MAX_PORTS 16        /* how many ports each --tcp-echo/--http/... option may name */
#define ST_SNDBUF_MAX 65536    /* bytes a connection may hold unacknowledged or unsent */
#define ST_SNDBUFS_MAX 4096    /* connections holding a send buffer at once (ST_SNDBUF_MAX
				* each: 256 MiB at most); an echo connection that finds none
				* free is offered a zero window until one is */
#define ST_RCV_WND 65535       /* the receive window we advertise at most (no window scaling) */
#define ST_RTO_SYN_MS 1000     /* first retransmission timeout of a SYN or SYN-ACK */
#define ST_RTO_MIN_MS 200      /* first retransmission timeout of data and FIN (TCP_RTO_MIN) */
#define ST_RTO_MAX_MS 10000    /* backoff ceiling (default of --rto-max-ms) */
#define ST_RETRIES 8           /* retransmissions, or zero-window probes the peer leaves
				* unanswered, before a connection is given up (default of
				* --tcp-retries) */
#define ST_SYNACK_RETRIES 5    /* SYN-ACK retransmissions before a request entry is dropped
				* (the kernel's tcp_synack_retries) ... */
#define ST_SYNACK_RETRIES_LOADED 2 /* ... and when its listener's SYN queue is more than half
				    * full (the floor of the kernel's reqsk_timer_handler) */
#define ST_BACKLOG 4096        /* listen() backlog: the kernel's net.core.somaxconn default */
#define ST_MAX_SYN_BACKLOG 2048 /* net.ipv4.tcp_max_syn_backlog: the kernel's value for a
				 * 262144-slot ehash */
#define ST_IDLE_TIMEOUT 300    /* seconds without a segment before a connection is reset */
#define ST_CONNS_PER_SOURCE_DIV 8 /* default --max-conns-per-source: --max-conns / 8 */

/* An IPv4 or IPv6 address, network order. */
union st_addr {
	struct in_addr v4;
	struct in6_addr v6;
};

/* What ip_input() found in a packet: its addresses and where its transport part lies. */
struct pkt {
	int family;                  /* AF_INET or AF_INET6 */
	uint8_t proto;               /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP or IPPROTO_ICMPV6 */
	union st_addr src, dst;      /* src: the peer; dst: our address */
	const uint8_t *l3;           /* the whole IP packet (quoted by ICMP errors) */
	size_t l3_len;
	const uint8_t *l4;           /* the transport header and payload */
	size_t l4_len;
};

/* Applications a listening or connected socket serves. */
enum st_app {
	APP_NONE = 0,
	APP_ECHO,      /* TCP or UDP: every byte back */
	APP_HTTP,      /* TCP: one response per connection, then an active close */
	APP_SOCKPERF,  /* TCP or UDP: sockperf's server side (echo with the client flag cleared) */
	APP_CLIENT,    /* TCP: an active flow of --connect */
};

/* What a socket is to the stack (stored in its area). */
enum st_kind {
	SK_TCP_LISTEN = 1,
	SK_TCP_CONN,
	SK_UDP_SERVER,     /* a bound UDP socket of --udp-echo or --sockperf */
	SK_UDP_PEER,       /* a connected UDP socket made for one peer (--udp-connect-per-peer) */
};

/*
 * The part of a connection that TIME_WAIT still needs. It sits first in struct conn because
 * socktab_close() copies the first tw_priv_size bytes of a socket's area into its TIME_WAIT
 * entry, where socktab_tw_priv() gives them back: enough to re-ACK a retransmitted FIN, to tell
 * a new SYN from an old duplicate, and to pick the new connection's first sequence number.
 */
struct tw_part {
	uint32_t snd_nxt;  /* next sequence number we send (after our FIN once it is sent) */
	uint32_t rcv_nxt;  /* next sequence number we expect (after the peer's FIN once it came) */
};

/* struct conn flags */
#define CF_APP_CLOSED 0x01   /* the application is done: send FIN after the buffered data */
#define CF_FIN_SENT 0x02     /* our FIN is in [snd_una, snd_nxt) */
#define CF_FIN_RCVD 0x04     /* the peer's FIN has been taken (rcv_nxt is past it) */
#define CF_ACK_NOW 0x08      /* an ACK is owed: tcp_output() sends one if no data goes */
#define CF_APP_DONE 0x10     /* the application has finished its exchange (client: echo ok) */
#define CF_FIN_ACKED 0x20    /* the peer has acknowledged our FIN */

/* struct conn xflags */
#define XF_SRC 0x02          /* counted in its peer address's connection count (limits.c) */

/*
 * The stack's state of one socket, in the socket's caller data area (socktab_sock_priv(),
 * net parameter sock_priv_size). socktab zeroes it when it creates the socket; the stack
 * frees what it points to before socktab_close().
 */
struct conn {
	struct tw_part tw;                 /* first: see above */
	uint8_t kind;                      /* enum st_kind */
	uint8_t app;                       /* enum st_app */
	uint8_t flags;                     /* CF_* */
	uint8_t retries;                   /* retransmissions since the last progress */
	uint8_t probes;                    /* zero-window probes since the peer's last ACK */
	uint8_t xflags;                    /* XF_* */
	struct socktab_sock *sk;           /* the socket this area belongs to */
	struct conn *prev, *next;          /* the stack's list of live connections, the most
					    * recently heard from first (limits.c) */
	uint64_t rx_ns;                    /* when the last segment came (idle timeout) */
	struct conn *rto_prev, *rto_next;  /* armed retransmission timers */
	uint64_t rto_at;                   /* when the timer fires (ns), 0: not armed */
	uint32_t rto_ms;                   /* current timeout (doubles at each retransmission) */
	int family;
	union st_addr laddr, raddr;        /* local (ours) and remote, network order */
	uint16_t lport, rport;             /* network order */
	uint32_t iss;                      /* our initial sequence number */
	uint32_t snd_una;                  /* oldest unacknowledged sequence number */
	uint32_t snd_wnd;                  /* the peer's last advertised window */
	uint16_t mss;                      /* largest segment payload we send */
	uint8_t *buf;                      /* send buffer: bytes from snd_una on */
	uint32_t buf_len, buf_cap;
	union {                            /* the application's state */
		struct {
			uint32_t last4;    /* the last four request bytes: end of the headers */
			uint32_t bytes;    /* request bytes read */
		} http;
		struct {
			uint8_t hdr[14];   /* the message header being read */
			uint8_t got;       /* header bytes read */
			uint8_t reply;     /* the current message is echoed */
			uint32_t left;     /* payload bytes of the current message still to come */
		} sp;
		struct {
			uint32_t flow;     /* flow number (the line it sends names it) */
			uint32_t got;      /* echo bytes checked so far */
		} cl;
		struct {                   /* a listener (SK_TCP_LISTEN) */
			uint64_t overflow_ns; /* when it last sent a SYN cookie, 0: never */
		} lst;
	} u;
};

/*
 * The handshake state of a request entry (socktab_req_new), in its caller area
 * (socktab_req_priv(), net parameter req_priv_size; at most SOCKTAB_REQ_PRIV_MAX bytes).
 * socktab_req_promote() copies it to the start of the child's area, which the stack then
 * fills anew (tcp_in.c). Where the request sits on the stack's SYN-ACK timers is ring
 * `retries`, position `pos` (syncookie.c).
 */
struct req_part {
	uint32_t iss;      /* our initial sequence number */
	uint32_t irs;      /* the peer's initial sequence number */
	uint32_t pos;      /* its slot's position in timer ring `retries` */
	uint16_t mss;      /* the MSS we use toward the peer (from its SYN) */
	uint8_t family;    /* AF_INET or AF_INET6 */
	uint8_t retries;   /* SYN-ACK retransmissions so far */
};

/* One SYN-ACK timer: a request entry and what its SYN-ACK needs that its area has no room
 * for (the local address is the stack's address of that family). */
struct req_timer {
	struct socktab_sock *req;  /* holds socktab_req_new()'s reference; NULL: left early */
	union st_addr raddr;       /* the peer's address, network order */
	uint32_t at_ms;            /* when it fires: the stack clock in ms, wrapping */
	uint16_t rport, lport;     /* network order */
};

/* Timers of request entries with the same number of retransmissions (the same timeout): a
 * queue in the order they fire, in blocks of ST_REQ_BLOCK slots. Positions count up (and
 * wrap); position p is slot p % ST_REQ_BLOCK of block p / ST_REQ_BLOCK, which sits at index
 * (p / ST_REQ_BLOCK) & (nblk - 1). Only the blocks from head's to tail's are allocated. */
#define ST_REQ_BLOCK 64
struct req_ring {
	struct req_timer **blk;
	uint32_t nblk;             /* a power of two, or 0 */
	uint32_t head, tail;       /* positions of the oldest and of the next free slot */
};

/* Counters printed at exit as key=value lines. */
struct st_counters {
	uint64_t rx_packets, tx_packets, rx_invalid, rx_not_ours;
	uint64_t tcp_accepted, tcp_active_ok, tcp_active_failed, tcp_refused, tcp_rst_sent,
		tcp_rst_rcvd, tcp_timewait, tcp_tw_syn_reuse, tcp_tw_acks, tcp_retransmits,
		tcp_timeouts, tcp_syn_dropped, tcp_connect_errors;
	uint64_t tcp_cookies_sent, tcp_cookies_ok, tcp_cookies_bad, tcp_synrecv_expired,
		tcp_synq_peak, tcp_src_refused, tcp_idle_closed, tcp_probes;
	uint64_t http_responses;
	uint64_t udp_rx, udp_tx, udp_connected_socks, udp_noport;
	uint64_t icmp_echo_replies, icmp_unreach_sent, icmp_ratelimited;
	uint64_t lookups, lookup_ns;
	/* --xdp: frames, ARP / neighbour discovery, the busy time of the poll loop */
	uint64_t xdp_rx_frames, xdp_tx_frames, xdp_tx_dropped, xdp_no_neigh, xdp_arp_replies,
		xdp_nd_replies, xdp_batches, xdp_busy_ns, xdp_relookups;
};

/* Configuration from the command line. */
struct st_cfg {
	const char *tun;
	struct in_addr addr4, peer4;
	int plen4;
	bool have6;
	struct in6_addr addr6, peer6;
	int plen6;
	int tcp_echo[ST_MAX_PORTS], n_tcp_echo;
	int http[ST_MAX_PORTS], n_http;
	int udp_echo[ST_MAX_PORTS], n_udp_echo;
	int sockperf[ST_MAX_PORTS], n_sockperf;
	bool udp_connect_per_peer;
	int udp_hash4;              /* 1: socktab_net_set_udp_hash4(net, 1) (default) */
	int udp_max_peers;          /* connected UDP sockets at most */
	int max_conns;              /* TCP connections at most */
	int syncookies;             /* net.ipv4.tcp_syncookies: 0 never, 1 when the SYN queue
				     * is full, 2 always */
	int backlog;                /* listen() backlog: the limit of each listener's SYN queue
				     * and accept queue (socktab_syn_decide) */
	int idle_timeout;           /* seconds; 0: none */
	int max_conns_per_source;   /* passive connections per peer address; 0: no limit,
				     * -1: not given (max_conns / ST_CONNS_PER_SOURCE_DIV) */
	int tcp_retries;            /* ST_RETRIES */
	int rto_max_ms;             /* ST_RTO_MAX_MS */
	struct sockaddr_storage connect_to;   /* --connect */
	socklen_t connect_len;
	int flows, parallel;
	bool crr;
	double duration;            /* seconds; 0: until a signal */
	const char *xdp;            /* --xdp DEV: an AF_XDP socket on DEV instead of --tun */
	int xdp_mode;               /* --xdp-mode: 0 auto (native, else skb), 1 skb, 2 native */
	int xdp_queue;              /* --xdp-queue: the device queue the socket binds */
	int xdp_idle_us;            /* --xdp-idle-us: sleep after a short batch (0: poll()) */
	bool lookup_single;         /* --lookup single: one _rcu lookup per packet, no batch */
	int bench_conns;            /* --bench-conns N: synthetic connections (bench_conns.c) */
	int reserve;                /* --reserve N: socktab_net_params reserve_socks/_tw */
	uint32_t ss_states;         /* --ss-state: bits of SOCKTAB_TCP_*; 0: all */
	int ss_proto;               /* SOCKTAB_TCP, SOCKTAB_UDP or 0 (both) */
	int ss_sport, ss_dport;     /* host order, 0: any */
};

/* The active flows of --connect (client.c). */
struct st_client {
	uint32_t started, active, pending, next_id;
	bool done_printed;
	bool stopped;               /* connect() failed for good: start no more flows */
};

struct src_table;

/* The stack. One thread drives it. */
struct stack {
	struct st_cfg cfg;
	struct socktab_net *net;
	int tun_fd;
	int ifindex;                /* the TUN device's ifindex in the socktab net */
	uint64_t now_ns;            /* CLOCK_MONOTONIC, refreshed by the loop */
	struct conn *conns;         /* live TCP connections, most recently heard from first */
	struct conn *conns_tail;    /* the one heard from longest ago */
	uint32_t n_conns;           /* TCP connections among them */
	uint32_t n_udp_peers;
	uint32_t n_sndbufs;         /* connections holding a send buffer */
	struct conn *rto_head;      /* armed retransmission timers */
	uint64_t rng;               /* xorshift state: initial sequence numbers */
	uint64_t cookie_key[2][2];  /* SipHash keys of the SYN cookies (random) */
	bool cookie_keyed;
	uint32_t synq_total;        /* request entries the stack holds (their SYN-ACK timers) */
	struct req_ring req_rings[ST_SYNACK_RETRIES + 1]; /* by retransmissions so far */
	struct src_table *src;      /* connections per peer address (limits.c) */
	double icmp_tokens;         /* ICMP error rate limit (token bucket) */
	uint64_t icmp_refill_ns;
	struct st_client client;
	struct st_counters c;
	/* --xdp: the AF_XDP socket, and what the batch loop found for the packet being processed
	 * (lk_tcp/lk_udp hand it out instead of looking up again, lk_put releases nothing while
	 * in_section: the loop holds one read-side section per batch) */
	struct st_xsk *xsk;
	bool in_section;
	const struct st_pre *pre;
	uint8_t tx[ST_MTU + 64];    /* the packet being built */
};

/* A batch lookup's result for one packet, with the key it was looked up by (xsk.c). */
struct st_pre {
	int family;
	uint8_t proto;
	uint16_t sport, dport;       /* network order: the packet's */
	union st_addr src, dst;
	const struct socktab_hit *hit;
};

/* serve.c */
uint64_t st_now_ns(void);
void stack_defaults(struct stack *st);
int stack_open(struct stack *st);
void stack_close(struct stack *st);

/* tun.c */
int tun_open(const char *name);
int tun_configure(const char *name, const struct st_cfg *cfg);
void tun_write(struct stack *st, const void *pkt, size_t len);

/* xsk.c (--xdp). xsk_open: the socket on cfg.xdp, then our neighbours resolved (0, or -1 with
 * a message). xsk_wait: poll() for frames, @ms at most. xsk_rx_batch: one batch of at most
 * ST_BATCH frames received, looked up in one read-side section and processed, then the frames
 * sent meanwhile go out; the number of frames. xsk_output: one IP packet to @dst's neighbour. */
#define ST_BATCH 64
int xsk_open(struct stack *st);
int xsk_wait(struct stack *st, int ms);
unsigned int xsk_rx_batch(struct stack *st);
void xsk_flush(struct stack *st);
void xsk_output(struct stack *st, int family, const union st_addr *dst, const void *pkt,
		size_t len);
void xsk_close(struct stack *st);
const char *xsk_mode_name(const struct stack *st);   /* "native", "skb" or "none" */
void xsk_print_stats(const struct stack *st, FILE *f); /* the kernel's XDP_STATISTICS */

/* bench_conns.c: --bench-conns N synthetic connections (0, or -1 with a message). */
int bench_conns_open(struct stack *st);

/* ip.c */
uint32_t csum_add(uint32_t sum, const void *data, size_t len);
uint16_t csum_fold(uint32_t sum);
uint32_t csum_pseudo(int family, const union st_addr *src, const union st_addr *dst,
		     uint8_t proto, size_t len);
void ip_input(struct stack *st, const uint8_t *pkt, size_t len);
size_t ip_hdr_len(int family);
/* Write an IP header in front of the @l4_len transport bytes at st->tx + ip_hdr_len(family)
 * and send the packet. */
void ip_output(struct stack *st, int family, const union st_addr *src, const union st_addr *dst,
	       uint8_t proto, size_t l4_len);
void sockaddr_make(struct sockaddr_storage *ss, int family, const union st_addr *a,
		   uint16_t port);

/* lookup.c: each call is timed into st->c.lookups / lookup_ns */
struct socktab_sock *lk_tcp(struct stack *st, const struct pkt *p, uint16_t sport,
			    uint16_t dport);
struct socktab_sock *lk_tcp_listener(struct stack *st, const struct pkt *p, uint16_t sport,
				     uint16_t dport);
struct socktab_sock *lk_tcp_established(struct stack *st, int family,
					const union st_addr *raddr, uint16_t rport,
					const union st_addr *laddr, uint16_t lport);
struct socktab_sock *lk_udp(struct stack *st, const struct pkt *p, uint16_t sport,
			    uint16_t dport);
/* Release what lk_tcp or lk_udp returned (nothing inside the batch loop's section). */
void lk_put(struct stack *st, struct socktab_sock *sk);

/* icmp.c */
void icmp_input(struct stack *st, const struct pkt *p);
void icmp_port_unreach(struct stack *st, const struct pkt *p);

/* tcp_in.c */
void tcp_input(struct stack *st, const struct pkt *p);
/* A segment's fields, host order (ports network order). */
struct seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	uint16_t mss;              /* MSS option, 0: none */
	const uint8_t *data;
	uint32_t len;
};
void tcp_listen_input(struct stack *st, const struct pkt *p, const struct seg *s,
		      struct socktab_sock *listener, uint32_t isn);

/* tcp_out.c */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
uint32_t tcp_isn(struct stack *st);
void conn_link(struct stack *st, struct conn *c, struct socktab_sock *sk, int family,
	       const union st_addr *laddr, uint16_t lport, const union st_addr *raddr,
	       uint16_t rport);
void tcp_send_syn(struct stack *st, struct conn *c);
void tcp_send_ack(struct stack *st, struct conn *c);
void tcp_send_raw(struct stack *st, int family, const union st_addr *src,
		  const union st_addr *dst, uint16_t sport, uint16_t dport, uint32_t seq,
		  uint32_t ack, uint8_t flags, uint16_t wnd, const void *data, uint32_t len);
void tcp_send_reset(struct stack *st, const struct pkt *p, const struct seg *s);
uint32_t conn_send(struct stack *st, struct conn *c, const void *data, uint32_t len);
uint32_t conn_rcv_space(const struct stack *st, const struct conn *c);
void tcp_output(struct stack *st, struct conn *c);
void tcp_ack_advance(struct stack *st, struct conn *c, uint32_t ack);
void rto_arm(struct stack *st, struct conn *c, uint32_t ms);
void rto_disarm(struct stack *st, struct conn *c);
void tcp_timers(struct stack *st);
void conn_abort(struct stack *st, struct conn *c);
void conn_finish(struct stack *st, struct conn *c);
void conn_to_timewait(struct stack *st, struct conn *c);
void conn_free_all(struct stack *st);

/* syncookie.c */
int syn_sysctls(struct stack *st);
int req_open(struct stack *st, const struct pkt *p, const struct seg *s,
	     struct socktab_sock *listener, uint32_t iss, uint16_t mss);
void req_synack(struct stack *st, int family, const union st_addr *raddr, uint16_t rport,
		uint16_t lport, const struct req_part *r);
void req_done(struct stack *st, struct socktab_sock *req, const struct req_part *r);
void req_timers(struct stack *st);
void req_free_all(struct stack *st);
void syncookie_send(struct stack *st, const struct pkt *p, const struct seg *s, struct conn *l);
uint16_t syncookie_check(struct stack *st, const struct pkt *p, const struct seg *s,
			 const struct conn *l);
uint64_t st_siphash(const uint64_t key[2], const void *data, size_t len);
void syncookie_keys(struct stack *st);

/* limits.c */
bool src_full(struct stack *st, int family, const union st_addr *addr);
void src_enter(struct stack *st, struct conn *c);
void src_leave(struct stack *st, struct conn *c);
void src_free(struct stack *st);
void conn_touch(struct stack *st, struct conn *c);
void idle_expire(struct stack *st);

/* tcp_tw.c */
void tcp_tw_input(struct stack *st, const struct pkt *p, const struct seg *s,
		  struct socktab_sock *sk);

/* udp.c */
void udp_input(struct stack *st, const struct pkt *p);
int udp_server_open(struct stack *st, int family, int port, int app);

/* app.c: the applications, called by TCP when a connection opens, gets bytes, gets the
 * peer's FIN and ends (ok: it ended as the protocol intends). */
void app_open(struct stack *st, struct conn *c);
void app_data(struct stack *st, struct conn *c, const uint8_t *data, uint32_t len);
void app_fin(struct stack *st, struct conn *c);
void app_gone(struct stack *st, struct conn *c);
/* A UDP datagram for @app: the reply's length in @out (at most @len bytes), 0: no reply. */
size_t app_udp(int app, const uint8_t *data, size_t len, uint8_t *out);

/* client.c */
void client_pump(struct stack *st);
void client_open(struct stack *st, struct conn *c);
void client_data(struct stack *st, struct conn *c, const uint8_t *data, uint32_t len);
void client_gone(struct stack *st, struct conn *c);

/* ss.c */
void ss_dump(struct stack *st, FILE *f);
int ss_state_bit(const char *name, uint32_t *bits);

#endif
