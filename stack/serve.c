/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `socktab serve`: the command line, the setup and the poll loop.
 *
 * Setup, in the order an embedding stack needs it:
 *   1. the TUN device, with the kernel side configured (tun.c);
 *   2. a socktab net whose sockets each carry a struct conn (sock_priv_size) and whose
 *      TIME_WAIT entries keep its struct tw_part (tw_priv_size);
 *   3. the device and our addresses declared in the net (socktab_dev_add, socktab_addr_add
 *      with the peer's prefix length): bind() then accepts our addresses, connect() finds a
 *      route and a source address, and lookups know the device packets arrive on;
 *   4. listeners and UDP sockets through the ordinary socket calls; then "ready=1".
 * The loop: poll the TUN descriptor, read and process a batch of packets, run the
 * retransmission timers, let socktab expire TIME_WAIT entries (socktab_net_tick_budget, a
 * bounded number per iteration), start client flows. Signals only set flags that the loop
 * reads.
 *
 * With --xdp DEV instead of --tun, packets come and go through an AF_XDP socket on the
 * Ethernet device DEV (xsk.c), whose kernel peer the caller has configured; the loop is the
 * same, but each batch of frames is looked up at once (socktab_lookup_batch4/6, one read-side
 * section per batch) unless --lookup single asks for one lookup per packet.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "opt.h"
#include "serve.h"
#include "share.h"
#include "stack.h"

#define CMD "socktab serve"

static volatile sig_atomic_t stop_flag, dump_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_dump(int sig)
{
	(void)sig;
	dump_flag = 1;
}

uint64_t st_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: socktab serve (--tun DEV | --xdp DEV) --peer-addr A/P --addr A\n"
		"                     [--peer-addr6 A6/P --addr6 A6]\n"
		"                     [--tcp-echo PORT]... [--http PORT]... [--udp-echo PORT]...\n"
		"                     [--sockperf PORT]... [--udp-connect-per-peer]\n"
		"                     [--udp-hash4 on|off] [--udp-max-peers N] [--max-conns N]\n"
		"                     [--max-conns-per-source N] [--idle-timeout S]\n"
		"                     [--syncookies 0|1|2] [--backlog N]\n"
		"                     [--tcp-retries N] [--rto-max-ms MS]\n"
		"                     [--connect ADDR:PORT --flows N [--parallel K] [--crr]]\n"
		"                     [--duration S] [--ss-state NAME]... [--ss-sport PORT]\n"
		"                     [--ss-dport PORT] [--ss-proto tcp|udp|all]\n"
		"                     [--xdp-mode auto|skb|native] [--xdp-queue Q]\n"
		"                     [--lookup batch|single] [--reserve N] [--bench-conns N]\n"
		"                     [--xdp-idle-us U]\n"
		"\n"
		"A userspace TCP/UDP/ICMP endpoint on TUN device DEV (created in this network\n"
		"namespace; the kernel side gets --peer-addr(6), the stack answers on --addr(6)).\n"
		"socktab does every socket lookup and port choice. Prints ready=1 once listening,\n"
		"runs until SIGINT/SIGTERM or --duration, then prints key=value counters.\n"
		"SIGUSR1 prints an `ss -tan`-like table (filtered by the --ss-* options).\n"
		"\n"
		"  --tcp-echo PORT        TCP echo; closes after the peer does\n"
		"  --http PORT            HTTP/1.1 200 with Connection: close; closes first\n"
		"  --udp-echo PORT        UDP echo\n"
		"  --sockperf PORT        sockperf's server side, TCP and UDP\n"
		"  --udp-connect-per-peer a connected UDP socket per peer, on the same port\n"
		"  --udp-hash4 on|off     socktab's UDP 4-tuple hash (default on)\n"
		"  --udp-max-peers N      connected UDP sockets at most (default 65536)\n"
		"  --max-conns N          TCP connections at most (default 200000)\n"
		"  --max-conns-per-source N\n"
		"                         connections one peer address may open; its further\n"
		"                         SYNs get a RST (default --max-conns / 8; 0: no limit)\n"
		"  --idle-timeout S       reset (RST) a connection that has received nothing for S\n"
		"                         seconds (default 300; 0: never)\n"
		"  --syncookies 0|1|2     net.ipv4.tcp_syncookies: SYN cookies never, when a\n"
		"                         listener's SYN queue is full (default), always\n"
		"  --backlog N            listen() backlog: half-open connections per listener\n"
		"                         before SYN cookies (default 4096)\n"
		"  --tcp-retries N        retransmissions, or unanswered zero-window probes, before\n"
		"                         a connection is given up (default 8); a zero window the\n"
		"                         peer keeps acknowledging is probed for ever\n"
		"  --rto-max-ms MS        retransmission and probe backoff ceiling (default 10000)\n"
		"  --connect ADDR:PORT    open --flows N connections (default 1), send a line on\n"
		"                         each and check its echo; [v6]:port for IPv6\n"
		"  --parallel K           flows in handshake or waiting for echo at most (256)\n"
		"  --crr                  close each flow after its echo and open another\n"
		"  --duration S           stop after S seconds\n"
		"  --ss-state NAME        established, syn-sent, syn-recv, fin-wait-1, fin-wait-2,\n"
		"                         time-wait, close-wait, last-ack, listening, closing,\n"
		"                         connected, all (repeatable)\n"
		"  --ss-sport/--ss-dport  local / remote port\n"
		"  --ss-proto P           tcp (default), udp or all\n"
		"  --xdp DEV              an AF_XDP socket on the existing Ethernet device DEV\n"
		"                         (its peer configured by the caller) instead of --tun;\n"
		"                         the stack answers ARP and neighbour solicitations\n"
		"  --xdp-mode M           auto (native, else skb; default), skb or native\n"
		"  --xdp-queue Q          the device queue to bind (default 0)\n"
		"  --xdp-idle-us U        after a short batch, sleep U microseconds instead of\n"
		"                         waiting in poll() (batches fill up under load)\n"
		"  --lookup L             --xdp: batch (socktab_lookup_batch4/6 per batch of\n"
		"                         frames; default) or single (one lookup per packet)\n"
		"  --reserve N            reserve N TCP sockets and N TIME_WAIT entries per family\n"
		"  --bench-conns N        N synthetic connections for scripts/xdp-pps.sh\n");
}

/* "A/P" for --peer-addr(6). */
static int parse_prefix(const struct opt_parser *op, const char *opt, const char *val,
			int family, void *addr, int *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(val, '/');

	if (!slash || (size_t)(slash - val) >= sizeof(buf))
		return opt_fail(op, "%s: '%s' is not ADDRESS/PREFIX", opt, val);
	memcpy(buf, val, (size_t)(slash - val));
	buf[slash - val] = 0;
	if (inet_pton(family, buf, addr) != 1)
		return opt_fail(op, "%s: '%s' is not an %s address", opt, buf,
				family == AF_INET ? "IPv4" : "IPv6");
	return opt_count_int(op, opt, slash + 1, 1, family == AF_INET ? 30 : 126, plen);
}

static int parse_addr(const struct opt_parser *op, const char *opt, const char *val,
		      int family, void *addr)
{
	if (inet_pton(family, val, addr) != 1)
		return opt_fail(op, "%s: '%s' is not an %s address", opt, val,
				family == AF_INET ? "IPv4" : "IPv6");
	return 0;
}

/* "192.0.2.1:9000" or "[2001:db8::1]:9000". */
static int parse_hostport(const struct opt_parser *op, const char *opt, const char *val,
			  struct st_cfg *cfg)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(val, ':');
	int port;
	size_t hl;

	if (!colon || colon == val || (hl = (size_t)(colon - val)) >= sizeof(host))
		return opt_fail(op, "%s: '%s' is not ADDR:PORT", opt, val);
	memcpy(host, val, hl);
	host[hl] = 0;
	if (opt_count_int(op, opt, colon + 1, 1, 65535, &port))
		return -1;
	memset(&cfg->connect_to, 0, sizeof(cfg->connect_to));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&cfg->connect_to;

		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &s->sin6_addr) != 1)
			return opt_fail(op, "%s: '%s' is not an IPv6 address", opt, host + 1);
		s->sin6_family = AF_INET6;
		s->sin6_port = htons((uint16_t)port);
		cfg->connect_len = sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&cfg->connect_to;

		if (inet_pton(AF_INET, host, &s->sin_addr) != 1)
			return opt_fail(op, "%s: '%s' is not an IPv4 address", opt, host);
		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)port);
		cfg->connect_len = sizeof(*s);
	}
	return 0;
}

static int add_port(const struct opt_parser *op, const char *opt, const char *val, int *ports,
		    int *n)
{
	if (*n == ST_MAX_PORTS)
		return opt_fail(op, "%s: at most %d ports", opt, ST_MAX_PORTS);
	return opt_count_int(op, opt, val, 1, 65535, &ports[(*n)++]);
}

/* Are @a and @b in the same @plen-bit prefix? (@len bytes each) */
static bool same_prefix(const void *a, const void *b, int plen)
{
	const uint8_t *x = a, *y = b;
	int i = 0;

	for (; plen >= 8; plen -= 8, i++)
		if (x[i] != y[i])
			return false;
	return !plen || !((x[i] ^ y[i]) & (uint8_t)(0xff << (8 - plen)));
}

enum {
	O_TUN = 256, O_PEER, O_ADDR, O_PEER6, O_ADDR6, O_TCP_ECHO, O_HTTP, O_UDP_ECHO,
	O_SOCKPERF, O_PER_PEER, O_HASH4, O_MAX_PEERS, O_MAX_CONNS, O_CONNECT, O_FLOWS,
	O_PARALLEL, O_CRR, O_DURATION, O_SS_STATE, O_SS_SPORT, O_SS_DPORT, O_SS_PROTO,
	O_PER_SOURCE, O_IDLE, O_SYNCOOKIES, O_BACKLOG, O_RETRIES, O_RTO_MAX,
	O_XDP, O_XDP_MODE, O_XDP_QUEUE, O_LOOKUP, O_RESERVE, O_BENCH_CONNS, O_XDP_IDLE,
};

static int parse(int argc, char **argv, struct st_cfg *cfg)
{
	static const struct option longopts[] = {
		{ "tun", required_argument, NULL, O_TUN },
		{ "peer-addr", required_argument, NULL, O_PEER },
		{ "addr", required_argument, NULL, O_ADDR },
		{ "peer-addr6", required_argument, NULL, O_PEER6 },
		{ "addr6", required_argument, NULL, O_ADDR6 },
		{ "tcp-echo", required_argument, NULL, O_TCP_ECHO },
		{ "http", required_argument, NULL, O_HTTP },
		{ "udp-echo", required_argument, NULL, O_UDP_ECHO },
		{ "sockperf", required_argument, NULL, O_SOCKPERF },
		{ "udp-connect-per-peer", no_argument, NULL, O_PER_PEER },
		{ "udp-hash4", required_argument, NULL, O_HASH4 },
		{ "udp-max-peers", required_argument, NULL, O_MAX_PEERS },
		{ "max-conns", required_argument, NULL, O_MAX_CONNS },
		{ "connect", required_argument, NULL, O_CONNECT },
		{ "flows", required_argument, NULL, O_FLOWS },
		{ "parallel", required_argument, NULL, O_PARALLEL },
		{ "crr", no_argument, NULL, O_CRR },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "ss-state", required_argument, NULL, O_SS_STATE },
		{ "ss-sport", required_argument, NULL, O_SS_SPORT },
		{ "ss-dport", required_argument, NULL, O_SS_DPORT },
		{ "ss-proto", required_argument, NULL, O_SS_PROTO },
		{ "max-conns-per-source", required_argument, NULL, O_PER_SOURCE },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		{ "syncookies", required_argument, NULL, O_SYNCOOKIES },
		{ "backlog", required_argument, NULL, O_BACKLOG },
		{ "tcp-retries", required_argument, NULL, O_RETRIES },
		{ "rto-max-ms", required_argument, NULL, O_RTO_MAX },
		{ "xdp", required_argument, NULL, O_XDP },
		{ "xdp-mode", required_argument, NULL, O_XDP_MODE },
		{ "xdp-queue", required_argument, NULL, O_XDP_QUEUE },
		{ "lookup", required_argument, NULL, O_LOOKUP },
		{ "reserve", required_argument, NULL, O_RESERVE },
		{ "bench-conns", required_argument, NULL, O_BENCH_CONNS },
		{ "xdp-idle-us", required_argument, NULL, O_XDP_IDLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const onoff[] = { "off", "on", NULL };
	static const char *const protos[] = { "all", "tcp", "udp", NULL };
	static const char *const modes[] = { "auto", "skb", "native", NULL };
	static const char *const lookups[] = { "batch", "single", NULL };
	const struct opt_parser op = { CMD, "h", longopts };
	bool peer4 = false, addr4 = false, peer6 = false, addr6 = false;
	int o, r = 0, v;

	opt_start();
	while ((o = opt_next(&op, argc, argv)) != -1 && !r) {
		char optname[40] = "";

		for (const struct option *lo = longopts; lo->name; lo++)
			if (lo->val == o)
				snprintf(optname, sizeof(optname), "--%s", lo->name);
		switch (o) {
		case 'h':
			usage(stdout);
			exit(0);
		case O_TUN:
			if (!*optarg || strlen(optarg) >= SOCKTAB_IFNAMSIZ || strchr(optarg, '/'))
				r = opt_fail(&op, "--tun: '%s' is not a device name (1..15 characters)",
					     optarg);
			cfg->tun = optarg;
			break;
		case O_XDP:
			if (!*optarg || strlen(optarg) >= SOCKTAB_IFNAMSIZ || strchr(optarg, '/'))
				r = opt_fail(&op, "--xdp: '%s' is not a device name (1..15 characters)",
					     optarg);
			cfg->xdp = optarg;
			break;
		case O_XDP_MODE:
			r = opt_choice(&op, optname, optarg, modes, &cfg->xdp_mode);
			break;
		case O_XDP_QUEUE:
			r = opt_count_int(&op, optname, optarg, 0, 4095, &cfg->xdp_queue);
			break;
		case O_LOOKUP:
			r = opt_choice(&op, optname, optarg, lookups, &v);
			cfg->lookup_single = v == 1;
			break;
		case O_RESERVE:
			r = opt_count_int(&op, optname, optarg, 0, 1 << 24, &cfg->reserve);
			break;
		case O_XDP_IDLE:
			r = opt_count_int(&op, optname, optarg, 0, 100000, &cfg->xdp_idle_us);
			break;
		case O_BENCH_CONNS:
			r = opt_count_int(&op, optname, optarg, 0, 200 * 64512, &cfg->bench_conns);
			break;
		case O_PEER:
			r = parse_prefix(&op, optname, optarg, AF_INET, &cfg->peer4, &cfg->plen4);
			peer4 = true;
			break;
		case O_ADDR:
			r = parse_addr(&op, optname, optarg, AF_INET, &cfg->addr4);
			addr4 = true;
			break;
		case O_PEER6:
			r = parse_prefix(&op, optname, optarg, AF_INET6, &cfg->peer6, &cfg->plen6);
			peer6 = true;
			break;
		case O_ADDR6:
			r = parse_addr(&op, optname, optarg, AF_INET6, &cfg->addr6);
			addr6 = true;
			break;
		case O_TCP_ECHO:
			r = add_port(&op, optname, optarg, cfg->tcp_echo, &cfg->n_tcp_echo);
			break;
		case O_HTTP:
			r = add_port(&op, optname, optarg, cfg->http, &cfg->n_http);
			break;
		case O_UDP_ECHO:
			r = add_port(&op, optname, optarg, cfg->udp_echo, &cfg->n_udp_echo);
			break;
		case O_SOCKPERF:
			r = add_port(&op, optname, optarg, cfg->sockperf, &cfg->n_sockperf);
			break;
		case O_PER_PEER:
			cfg->udp_connect_per_peer = true;
			break;
		case O_HASH4:
			r = opt_choice(&op, optname, optarg, onoff, &cfg->udp_hash4);
			break;
		case O_MAX_PEERS:
			r = opt_count_int(&op, optname, optarg, 0, 1000000, &cfg->udp_max_peers);
			break;
		case O_MAX_CONNS:
			r = opt_count_int(&op, optname, optarg, 1, 10000000, &cfg->max_conns);
			break;
		case O_CONNECT:
			r = parse_hostport(&op, optname, optarg, cfg);
			break;
		case O_FLOWS:
			r = opt_count_int(&op, optname, optarg, 1, 10000000, &cfg->flows);
			break;
		case O_PARALLEL:
			r = opt_count_int(&op, optname, optarg, 1, 1000000, &cfg->parallel);
			break;
		case O_CRR:
			cfg->crr = true;
			break;
		case O_DURATION:
			r = opt_real(&op, optname, optarg, 0.001, 86400.0 * 365, &cfg->duration);
			break;
		case O_SS_STATE:
			if (ss_state_bit(optarg, &cfg->ss_states))
				r = opt_fail(&op, "--ss-state: '%s' is not a state name of ss", optarg);
			break;
		case O_SS_SPORT:
			r = opt_count_int(&op, optname, optarg, 1, 65535, &cfg->ss_sport);
			break;
		case O_SS_DPORT:
			r = opt_count_int(&op, optname, optarg, 1, 65535, &cfg->ss_dport);
			break;
		case O_SS_PROTO:
			r = opt_choice(&op, optname, optarg, protos, &v);
			cfg->ss_proto = v == 1 ? SOCKTAB_TCP : v == 2 ? SOCKTAB_UDP : 0;
			break;
		case O_PER_SOURCE:
			r = opt_count_int(&op, optname, optarg, 0, 10000000, &cfg->max_conns_per_source);
			break;
		case O_IDLE:
			r = opt_count_int(&op, optname, optarg, 0, 86400 * 365, &cfg->idle_timeout);
			break;
		case O_SYNCOOKIES:
			r = opt_count_int(&op, optname, optarg, 0, 2, &cfg->syncookies);
			break;
		case O_BACKLOG:
			r = opt_count_int(&op, optname, optarg, 1, 1 << 20, &cfg->backlog);
			break;
		case O_RETRIES:
			r = opt_count_int(&op, optname, optarg, 1, 255, &cfg->tcp_retries);
			break;
		case O_RTO_MAX:
			r = opt_count_int(&op, optname, optarg, ST_RTO_MIN_MS, 120000, &cfg->rto_max_ms);
			break;
		default:
			return -1;
		}
	}
	if (r)
		return -1;
	if (cfg->max_conns_per_source < 0)
		cfg->max_conns_per_source = cfg->max_conns / ST_CONNS_PER_SOURCE_DIV > 0
						    ? cfg->max_conns / ST_CONNS_PER_SOURCE_DIV
						    : 1;
	if (opt_no_operands(&op, argc, argv))
		return -1;
	if (cfg->tun && cfg->xdp)
		return opt_fail(&op, "--tun and --xdp exclude each other");
	if ((!cfg->tun && !cfg->xdp) || !peer4 || !addr4)
		return opt_fail(&op, "--tun, --peer-addr and --addr are required (--xdp instead of "
			       "--tun for AF_XDP)");
	if (!same_prefix(&cfg->peer4, &cfg->addr4, cfg->plen4) ||
	    cfg->peer4.s_addr == cfg->addr4.s_addr)
		return opt_fail(&op, "--addr must be another address of --peer-addr's prefix");
	if (peer6 != addr6)
		return opt_fail(&op, "--peer-addr6 and --addr6 go together");
	cfg->have6 = peer6;
	if (peer6 && (!same_prefix(&cfg->peer6, &cfg->addr6, cfg->plen6) ||
		      !memcmp(&cfg->peer6, &cfg->addr6, 16)))
		return opt_fail(&op, "--addr6 must be another address of --peer-addr6's prefix");
	if (cfg->connect_len && cfg->connect_to.ss_family == AF_INET6 && !cfg->have6)
		return opt_fail(&op, "--connect to an IPv6 address needs --addr6");
	if (!cfg->connect_len && (cfg->flows || cfg->crr))
		return opt_fail(&op, "--flows and --crr need --connect");
	if (cfg->connect_len && !cfg->flows)
		cfg->flows = 1;
	return 0;
}

/* A TCP listener on our address of @family, port @port, serving @app. */
static int tcp_listen_open(struct stack *st, int family, int port, int app)
{
	struct socktab_sock *sk = socktab_socket(st->net, SOCKTAB_TCP, family);
	struct sockaddr_storage ss;
	union st_addr a;
	struct conn *l;
	int on = 1, err;

	if (!sk)
		return -1;
	if (family == AF_INET)
		a.v4 = st->cfg.addr4;
	else
		a.v6 = st->cfg.addr6;
	sockaddr_make(&ss, family, &a, htons((uint16_t)port));
	err = socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (!err && family == AF_INET6)
		err = socktab_setsockopt(sk, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	if (!err)
		err = socktab_bind(sk, (struct sockaddr *)&ss,
				   family == AF_INET ? sizeof(struct sockaddr_in)
						     : sizeof(struct sockaddr_in6));
	if (!err)
		err = socktab_listen(sk, st->cfg.backlog);
	if (err) {
		fprintf(stderr, CMD ": tcp port %d: %s\n", port, strerror(-err));
		socktab_close(sk);
		return -1;
	}
	l = socktab_sock_priv(sk);
	l->kind = SK_TCP_LISTEN;
	l->app = (uint8_t)app;
	l->sk = sk;
	return 0;
}

/* Every listener and UDP socket the options ask for, in both families. */
static int open_services(struct stack *st)
{
	const struct st_cfg *cfg = &st->cfg;
	int fams[2] = { AF_INET, AF_INET6 }, nf = cfg->have6 ? 2 : 1;

	for (int f = 0; f < nf; f++) {
		for (int i = 0; i < cfg->n_tcp_echo; i++)
			if (tcp_listen_open(st, fams[f], cfg->tcp_echo[i], APP_ECHO))
				return -1;
		for (int i = 0; i < cfg->n_http; i++)
			if (tcp_listen_open(st, fams[f], cfg->http[i], APP_HTTP))
				return -1;
		for (int i = 0; i < cfg->n_sockperf; i++)
			if (tcp_listen_open(st, fams[f], cfg->sockperf[i], APP_SOCKPERF) ||
			    udp_server_open(st, fams[f], cfg->sockperf[i], APP_SOCKPERF))
				return -1;
		for (int i = 0; i < cfg->n_udp_echo; i++)
			if (udp_server_open(st, fams[f], cfg->udp_echo[i], APP_ECHO))
				return -1;
	}
	return 0;
}

/*
 * Steps 2 to 4 of the setup (the TUN device is serve_main's): the net, the device and our
 * addresses in it, the listeners and UDP sockets. Also what a test uses to run the stack
 * without a device (tun_fd -1: what it sends is dropped).
 */
int stack_open(struct stack *st)
{
	struct socktab_net_params p;
	const struct st_cfg *cfg = &st->cfg;
	int err;

	socktab_net_params_init(&p);
	p.sock_priv_size = sizeof(struct conn);
	p.tw_priv_size = sizeof(struct tw_part);
	p.req_priv_size = sizeof(struct req_part);
	p.udp_hash4 = cfg->udp_hash4;
	p.reserve_socks = (uint32_t)cfg->reserve;
	p.reserve_tw = (uint32_t)cfg->reserve;
	st->net = socktab_net_new(&p);
	if (!st->net) {
		fprintf(stderr, CMD ": socktab_net_new: %s\n", strerror(errno));
		return -1;
	}
	st->ifindex = socktab_dev_add(st->net, cfg->xdp ? cfg->xdp : cfg->tun, 1);
	if (st->ifindex < 0) {
		fprintf(stderr, CMD ": socktab_dev_add: %s\n", strerror(-st->ifindex));
		return -1;
	}
	err = socktab_addr_add(st->net, st->ifindex, AF_INET, &cfg->addr4, cfg->plen4);
	if (!err && cfg->have6)
		err = socktab_addr_add(st->net, st->ifindex, AF_INET6, &cfg->addr6, cfg->plen6);
	if (!err)
		err = socktab_net_set_udp_hash4(st->net, cfg->udp_hash4);
	if (!err && cfg->backlog > ST_BACKLOG) { /* listen() caps the backlog at somaxconn */
		char v[16];

		snprintf(v, sizeof(v), "%d", cfg->backlog);
		err = socktab_net_sysctl(st->net, "net.core.somaxconn", v);
	}
	if (!err)
		err = syn_sysctls(st);
	if (err) {
		fprintf(stderr, CMD ": declaring %s's addresses: %s\n", cfg->xdp ? cfg->xdp : cfg->tun,
			strerror(-err));
		return -1;
	}
	st->rng = st_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
	st->icmp_tokens = 50;
	st->now_ns = st_now_ns();
	if (share_open(st) || open_services(st))
		return -1;
	return cfg->bench_conns ? bench_conns_open(st) : 0;
}

/* Free what stack_open() made (and the connections' buffers). */
void stack_close(struct stack *st)
{
	conn_free_all(st);
	if (st->net)
		socktab_net_free(st->net);
	st->net = NULL;
}

/* Defaults of the options (before parsing). */
void stack_defaults(struct stack *st)
{
	memset(st, 0, sizeof(*st));
	st->cfg.udp_hash4 = 1;
	st->cfg.udp_max_peers = 65536;
	st->cfg.max_conns = 200000;
	st->cfg.max_conns_per_source = -1;
	st->cfg.idle_timeout = ST_IDLE_TIMEOUT;
	st->cfg.syncookies = 1;
	st->cfg.backlog = ST_BACKLOG;
	st->cfg.tcp_retries = ST_RETRIES;
	st->cfg.rto_max_ms = ST_RTO_MAX_MS;
	st->cfg.parallel = 256;
	st->cfg.ss_proto = SOCKTAB_TCP;
	st->tun_fd = -1;
}

/* What a pair of st_now_ns() calls costs (the timing of single lookups includes it). */
static uint64_t clock_cost_ns(void)
{
	uint64_t a = st_now_ns(), b = a;

	for (int i = 0; i < 1000; i++)
		b = st_now_ns();
	return (b - a) / 1000;
}

static void print_counters(struct stack *st)
{
	struct socktab_net_stats ns;
	struct socktab_udp_stats us;
	const struct st_counters *c = &st->c;

	socktab_net_stats(st->net, &ns);
	socktab_udp_stats(st->net, &us);
#define P(name, v) printf("%s=%llu\n", name, (unsigned long long)(v))
	P("tcp_accepted", c->tcp_accepted);
	P("tcp_active_ok", c->tcp_active_ok);
	P("tcp_active_failed", c->tcp_active_failed);
	P("tcp_refused", c->tcp_refused);
	P("tcp_connect_errors", c->tcp_connect_errors);
	P("tcp_rst_sent", c->tcp_rst_sent);
	P("tcp_rst_rcvd", c->tcp_rst_rcvd);
	P("tcp_timewait", c->tcp_timewait);
	P("tcp_timewait_now", ns.time_wait);
	P("tcp_tw_syn_reuse", c->tcp_tw_syn_reuse);
	P("tcp_tw_acks", c->tcp_tw_acks);
	P("tcp_retransmits", c->tcp_retransmits);
	P("tcp_timeouts", c->tcp_timeouts);
	P("tcp_syn_dropped", c->tcp_syn_dropped);
	P("tcp_conns_now", st->n_conns);
	P("tcp_synq_now", ns.requests);
	P("tcp_synq_peak", c->tcp_synq_peak);
	P("tcp_synrecv_expired", c->tcp_synrecv_expired);
	P("tcp_syncookies_sent", c->tcp_cookies_sent);
	P("tcp_syncookies_recv", c->tcp_cookies_ok);
	P("tcp_syncookies_failed", c->tcp_cookies_bad);
	P("tcp_src_refused", c->tcp_src_refused);
	P("tcp_idle_closed", c->tcp_idle_closed);
	P("tcp_probes", c->tcp_probes);
	P("http_responses", c->http_responses);
	P("udp_rx", c->udp_rx);
	P("udp_tx", c->udp_tx);
	P("udp_noport", c->udp_noport);
	P("udp_connected_socks", st->n_udp_peers);
	P("udp_hash4", st->cfg.udp_hash4);
	P("udp_hashed4", us.hashed4);
	P("icmp_echo_replies", c->icmp_echo_replies);
	P("icmp_unreach_sent", c->icmp_unreach_sent);
	P("icmp_ratelimited", c->icmp_ratelimited);
	P("rx_packets", c->rx_packets);
	P("tx_packets", c->tx_packets);
	P("rx_invalid", c->rx_invalid);
	P("rx_not_ours", c->rx_not_ours);
	P("lookups", c->lookups);
	if (st->xsk) {
		printf("xdp_mode=%s\n", xsk_mode_name(st));
		printf("lookup_mode=%s\n", st->cfg.lookup_single ? "single" : "batch");
		P("xdp_rx_frames", c->xdp_rx_frames);
		P("xdp_tx_frames", c->xdp_tx_frames);
		P("xdp_tx_dropped", c->xdp_tx_dropped);
		P("xdp_no_neigh", c->xdp_no_neigh);
		P("xdp_arp_replies", c->xdp_arp_replies);
		P("xdp_nd_replies", c->xdp_nd_replies);
		P("xdp_batches", c->xdp_batches);
		P("xdp_relookups", c->xdp_relookups);
		P("xdp_busy_ns", c->xdp_busy_ns);
		P("lookup_ns", c->lookup_ns);
		P("clock_ns", clock_cost_ns());
		xsk_print_stats(st, stdout);
		share_print_stats(stdout);
	}
#undef P
	printf("lookup_ns_mean=%.1f\n", c->lookups ? (double)c->lookup_ns / (double)c->lookups : 0.0);
	fflush(stdout);
}

/* TIME_WAIT entries expired per loop iteration. */
#define TW_BUDGET 64

/* What both poll loops (TUN and AF_XDP) keep between iterations. */
struct loop {
	uint64_t end;       /* --duration's end on the stack clock, 0: until a signal */
	uint64_t next_tick; /* the next TIME_WAIT tick */
	bool tw_due;        /* the last tick's budget ran out: tick again without waiting */
};

static void loop_start(struct stack *st, struct loop *L)
{
	st->now_ns = st_now_ns();
	L->next_tick = st->now_ns + 100000000u;
	L->end = st->cfg.duration > 0 ? st->now_ns + (uint64_t)(st->cfg.duration * 1e9) : 0;
	L->tw_due = false;
}

/* The top of an iteration: whether to go on, then a SIGUSR1 dump and the active flows. */
static bool loop_next(struct stack *st, struct loop *L)
{
	if (stop_flag || (L->end && st->now_ns >= L->end))
		return false;
	if (dump_flag) {
		dump_flag = 0;
		ss_dump(st, stdout);
	}
	client_pump(st);
	return true;
}

/* After a batch: the retransmission timers, then TIME_WAIT expiry. */
static void loop_timers(struct stack *st, struct loop *L)
{
	uint64_t due;

	tcp_timers(st);
	if (L->tw_due || st->now_ns >= L->next_tick) {
		/* At most TW_BUDGET entries per iteration, tens of microseconds at most
		 * (docs/embedding.md, "Bounded work per iteration"); the net's clock is
		 * CLOCK_MONOTONIC, as ours. */
		L->tw_due = socktab_net_tick_budget(st->net, TW_BUDGET, &due) >= 0 &&
			    due <= st->now_ns;
		L->next_tick = st->now_ns + 100000000u;
	}
}

/*
 * The AF_XDP loop: at most 16 batches of frames (each looked up and processed in one
 * read-side section, xsk.c), the timers, a bounded tick, the flows to start; poll() (or with
 * --xdp-idle-us a short sleep, as a busy core would leave frames to gather) only when the last
 * batch emptied the RX ring.
 */
static void run_xsk(struct stack *st)
{
	struct loop L;
	unsigned int n = 0;

	loop_start(st, &L);
	while (loop_next(st, &L)) {
		xsk_flush(st);
		if (n < ST_BATCH && !L.tw_due && st->cfg.xdp_idle_us) {
			struct timespec ts = { 0, st->cfg.xdp_idle_us * 1000L };

			nanosleep(&ts, NULL);
		} else if (n < ST_BATCH && !L.tw_due && xsk_wait(st, 10) < 0 && errno != EINTR) {
			break;
		}
		st->now_ns = st_now_ns();
		for (int i = 0; i < 16 && (n = xsk_rx_batch(st)) == ST_BATCH; i++)
			;
		loop_timers(st, &L);
		xsk_flush(st);
	}
}

static void run(struct stack *st)
{
	static uint8_t buf[65536];
	struct pollfd pfd = { .fd = st->tun_fd, .events = POLLIN };
	struct loop L;

	loop_start(st, &L);
	while (loop_next(st, &L)) {
		if (poll(&pfd, 1, L.tw_due ? 0 : 10) < 0 && errno != EINTR)
			break;
		st->now_ns = st_now_ns();
		/* A batch of packets: the timers and the clock get their turn in between. */
		for (int i = 0; i < 1024; i++) {
			ssize_t n = read(st->tun_fd, buf, sizeof(buf));

			if (n <= 0)
				break;
			ip_input(st, buf, (size_t)n);
			if ((i & 63) == 63)
				st->now_ns = st_now_ns();
		}
		loop_timers(st, &L);
	}
}

int serve_main(int argc, char **argv)
{
	static struct stack stack;
	struct stack *st = &stack;
	struct sigaction sa;
	int rc = 1;

	stack_defaults(st);
	if (parse(argc, argv, &st->cfg))
		return 2;
	socktab_thread_register();
	/* The device first (it must exist before the kernel side is configured), then socktab. */
	if (st->cfg.xdp) {
		/* The device exists and its peer is configured: socktab first, then the socket
		 * (which answers ARP and resolves the peer through the stack). */
		if (stack_open(st) || xsk_open(st))
			goto out;
	} else {
		st->tun_fd = tun_open(st->cfg.tun);
		if (st->tun_fd < 0 || tun_configure(st->cfg.tun, &st->cfg) || stack_open(st))
			goto out;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: poll() returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_dump;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("ready=1\n");
	fflush(stdout);

	if (st->xsk)
		run_xsk(st);
	else
		run(st);
	print_counters(st);
	rc = 0;
out:
	share_close(st);
	xsk_close(st);
	stack_close(st);
	if (st->tun_fd >= 0)
		close(st->tun_fd);
	socktab_thread_unregister();
	return rc;
}
