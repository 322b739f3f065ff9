/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay --random: differential fuzzing of socktab against the kernel. Writes random
 * valid scripts as text, runs each on both backends and compares outcomes op by op. Ports are
 * compared only by what the kernel makes deterministic (zero or not, inside the ephemeral range
 * or the exact number outside it, parity unless the socket set IP_LOCAL_PORT_RANGE). A
 * disagreement is re-run on the kernel to rule out kernel randomness and on socktab to rule out
 * its own port draws, then minimized by dropping lines while it persists (delta debugging by
 * single lines).
 *
 * A statement the kernel backend refuses under the traffic rule never ran there: it is dropped
 * and the script run again, since a refusal is no disagreement.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "script.h"

/* ---------------------------------------------------------------- differential fuzzer */

static uint64_t rnext(uint64_t *st)
{
	/* splitmix64: tiny, good enough for picking statements, reproducible from the seed */
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rnd(uint64_t *st, int n)
{
	return (int)(rnext(st) % (uint64_t)n);
}

struct lines {
	char **v;
	int n;
};

/* The last line of the block that line @i opens: its closing brace for a repeat line, else @i. */
static int block_end(const struct lines *L, int i)
{
	if (strncmp(L->v[i], "repeat ", 7))
		return i;
	for (int j = i + 1; j < L->n; j++)
		if (!strcmp(L->v[j], "}"))
			return j;
	return i;
}

static void lines_add(struct lines *L, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	L->v = rp_xrealloc(L->v, sizeof(char *) * (size_t)(L->n + 1));
	L->v[L->n++] = rp_xstrdup(buf);
}

static void lines_free(struct lines *L)
{
	for (int i = 0; i < L->n; i++)
		free(L->v[i]);
	free(L->v);
	L->v = NULL;
	L->n = 0;
}

static char *lines_join(const struct lines *L, const bool *drop)
{
	size_t n = 1;
	char *t;

	for (int i = 0; i < L->n; i++)
		n += strlen(L->v[i]) + 1;
	t = rp_xrealloc(NULL, n);
	t[0] = 0;
	for (int i = 0; i < L->n; i++) {
		if (drop && drop[i])
			continue;
		strcat(t, L->v[i]);
		strcat(t, "\n");
	}
	return t;
}

/* The loopback and wildcard bind addresses of every script. */
static const char *const bind4[] = { "127.0.0.1", "127.0.0.2", "0.0.0.0" };
static const char *const bind6[] = { "::", "::1", "::ffff:127.0.0.1", "::ffff:0.0.0.0" };

/* A port token, @pr drawn by the caller: 0, one of the pool, or @other's port. */
static void gen_port(uint64_t *st, int pr, const char *other, char *port, size_t cap)
{
	static const char *const pool[] = { "5000", "5001" };

	if (pr < 3)
		snprintf(port, cap, "0");
	else if (pr < 5)
		snprintf(port, cap, "%s", pool[rnd(st, 2)]);
	else
		snprintf(port, cap, "$%.22s", other); /* names are shorter; ports 24 bytes */
}

/* One of the socket options of every script on socket @nx; *@rp_udp notes SO_REUSEPORT on a
 * UDP socket (@udp). */
static void gen_sockopt(uint64_t *st, struct lines *L, const char *nx, bool udp, bool *rp_udp)
{
	static const char *const opt[] = { "SO_REUSEADDR 1", "SO_REUSEPORT 1", "IPV6_V6ONLY 1",
					   "IP_BIND_ADDRESS_NO_PORT 1", "SO_LINGER 1 0",
					   "IP_LOCAL_PORT_RANGE 40000 40003", "SO_REUSEADDR 0",
					   "SO_REUSEPORT 0" };
	int k = rnd(st, 8);

	lines_add(L, "setsockopt %s %s", nx, opt[k]);
	if (k == 1)
		*rp_udp |= udp;
}

/* listen() with the default backlog (5 times in 8), else a backlog of 0, 1 or 16. */
static void gen_listen(uint64_t *st, struct lines *L, const char *nx)
{
	static const char *const bl[] = { "", " 0", " 1", " 16" };

	lines_add(L, "listen %s%s", nx, bl[rnd(st, 6) < 3 ? 0 : rnd(st, 4)]);
}

/*
 * A random valid script: a few TCP and UDP sockets of both families, options, binds to a small
 * set of loopback addresses and ports (0, a fixed pool outside every range used, other sockets'
 * ports), listens, connects, accepts, datagrams, closes, checks, sometimes a small port range.
 * The expectations are placeholders: the fuzzer compares the two backends' outcomes, not the
 * expectations.
 */
static void gen_loopback_script(uint64_t seed, struct lines *L)
{
	static const char *const d4[] = { "127.0.0.1", "127.0.0.2" };
	static const char *const d6[] = { "::1", "::ffff:127.0.0.1" };
	uint64_t st = seed;
	char name[16][16];
	int fam[16], nn = 0, ns = 0, na = 0, steps = 6 + rnd(&st, 25);
	/* UDP sockets are mixed in; which member of a UDP reuseport group gets a datagram is
	 * random on the kernel, so once a UDP socket sets SO_REUSEPORT no UDP socket is checked
	 * for readability. */
	bool udp[16] = { false }, rp_udp = false;
	/* An accepted child of an AF_INET6 listener talks IPv4 or IPv6 as its client did, and
	 * keeps that transmit path after a disconnect: it never connects or listens again (the
	 * quirk of tests/replay/v6_after_mapped_refused.sock). */
	bool child6[16] = { false };

	if (rnd(&st, 3) == 0) {
		static const int span[] = { 1, 3, 9 };

		lines_add(L, "sysctl net.ipv4.ip_local_port_range 40000 %d",
			  40000 + span[rnd(&st, 3)]);
	}
	if (rnd(&st, 8) == 0)
		lines_add(L, "sysctl net.ipv4.ip_autobind_reuse 1");
	if (rnd(&st, 12) == 0)
		lines_add(L, "sysctl net.ipv4.ip_local_port_range 40005 40000");
	for (int step = 0; step < steps; step++) {
		int r = rnd(&st, 100), x = nn ? rnd(&st, nn) : 0, y = nn ? rnd(&st, nn) : 0;
		const char *nx = name[x];
		char port[24];

		gen_port(&st, rnd(&st, 10), name[y], port, sizeof(port));
		if (nn == 0 || (r < 15 && ns < 6)) {
			snprintf(name[nn], sizeof(name[nn]), "s%d", ns++);
			fam[nn] = rnd(&st, 2) ? AF_INET : AF_INET6;
			udp[nn] = rnd(&st, 3) == 0;
			lines_add(L, "%s = socket %s %c%s", name[nn], udp[nn] ? "udp" : "tcp",
				  fam[nn] == AF_INET ? '4' : '6', rnd(&st, 10) == 0 ? " uid 1000" : "");
			nn++;
		} else if (r < 27) {
			gen_sockopt(&st, L, nx, udp[x], &rp_udp);
		} else if (r < 45) {
			bool other = rnd(&st, 20) == 0;
			int f = other ? (fam[x] == AF_INET ? AF_INET6 : AF_INET) : fam[x];

			lines_add(L, "bind %s %s %s", nx, f == AF_INET ? bind4[rnd(&st, 3)] : bind6[rnd(&st, 4)],
				  port);
		} else if (r < 55 && udp[x]) {
			/* UDP: a datagram instead of listen() (same destination rule as connect) */
			lines_add(L, "sendto %s %s %s", nx,
				  fam[x] == AF_INET ? d4[rnd(&st, 2)] : d6[x & 1], port);
		} else if (r < 55 && fam[x] == AF_INET6 && ((x & 1) || child6[x])) {
			/* v6 sockets of the v4-mapped destination kind never listen: after a refused
			 * v4-mapped connect() the kernel keeps IPv4 handlers on the socket, so a
			 * listener made from it mishandles native IPv6 connections (the children's
			 * RSTs never arrive: replay --random 20000 --seed 20261130, script 11531). */
			lines_add(L, "port %s => in 0 65535", nx);
		} else if (r < 55) {
			gen_listen(&st, L, nx);
		} else if (r < 70 && child6[x]) {
			lines_add(L, "port %s => in 0 65535", nx);
		} else if (r < 70) {
			if (port[0] == '0')
				snprintf(port, sizeof(port), "$%.15s", name[y]);
			/* A v6 socket keeps one destination kind: after a refused v4-mapped
			 * connect() the kernel cannot reach native IPv6 from that socket any
			 * more (tests/replay/v6_after_mapped_refused.sock), a quirk the model
			 * does not copy. */
			lines_add(L, "connect %s %s %s", nx,
				  fam[x] == AF_INET ? d4[rnd(&st, 2)] : d6[x & 1], port);
		} else if (r < 76 && udp[x]) {
			lines_add(L, "send %s", nx);
		} else if (r < 76 && nn < 16 && na < 6) {
			snprintf(name[nn], sizeof(name[nn]), "a%d", na++);
			fam[nn] = fam[x];
			child6[nn] = fam[x] == AF_INET6;
			lines_add(L, "%s = accept %s", name[nn], nx);
			nn++;
		} else if (r < 84) {
			lines_add(L, "close %s", nx);
		} else if (r < 86) {
			lines_add(L, "disconnect %s", nx);
		} else {
			switch (rnd(&st, 8)) {
			case 0:
			case 1:
				lines_add(L, "port %s => in 0 65535", nx);
				break;
			case 2:
			case 3:
				if (udp[x]) /* TCP_INFO: not for datagram sockets */
					lines_add(L, "peer %s => ENOTCONN", nx);
				else
					lines_add(L, "state %s => CLOSE", nx);
				break;
			case 4:
				lines_add(L, "peer %s => ENOTCONN", nx);
				break;
			case 5:
				lines_add(L, "getsockopt %s SO_ERROR => 0", nx);
				break;
			case 6:
				lines_add(L, "addr %s => 0.0.0.0", nx);
				break;
			default:
				if (udp[x] && rp_udp)
					lines_add(L, "port %s => in 0 65535", nx);
				else
					lines_add(L, "readable %s => 0", nx);
			}
		}
	}
}

/* ---------------------------------------------------------------- history scripts */

/*
 * What a socket's past leaves behind (R102-R104): one or two subject sockets run listen,
 * connect (to a listener, to a closed port: refused, to an unrouted address: unreachable, to a
 * full listener: no answer), disconnect and bind in any order, with checks of state, port,
 * address, peer and SO_ERROR between them; TIME_WAIT entries in both substates taken over by
 * connect() (the port search with tcp_tw_reuse 0/1/2, a bound port), sometimes after the reuse
 * delay; and runs of UDP binds of both families on one port with SO_REUSEADDR, SO_REUSEPORT
 * and IPV6_V6ONLY mixed, now and then one cleared after its bind (the port-chain order and the
 * owners that excuse a bind, R103), now and then more than ten of them.
 */
static void hist_check(uint64_t *st, struct lines *L, const char *nx)
{
	static const char *const chk[] = { "state %s => CLOSE", "port %s => in 0 65535",
					   "addr %s => 0.0.0.0", "peer %s => ENOTCONN",
					   "getsockopt %s SO_ERROR => 0" };

	lines_add(L, chk[rnd(st, 5)], nx);
}

static void hist_subjects(uint64_t *st, struct lines *L)
{
	static const char *const un4[] = { "198.51.100.1", "203.0.113.9" };
	static const char *const un6[] = { "2001:db8::1", "::ffff:198.51.100.1" };
	bool v6 = rnd(st, 3) == 0;
	const char *lo = v6 ? "::1" : "127.0.0.1", *any = v6 ? "::" : "0.0.0.0";
	int nsub = 1 + rnd(st, 2), steps = 6 + rnd(st, 14);

	/* ln answers; full (backlog 0, one queued client) leaves the next SYN unanswered */
	lines_add(L, "ln = socket tcp %c", v6 ? '6' : '4');
	lines_add(L, "bind ln %s 5000", lo);
	lines_add(L, "listen ln");
	if (rnd(st, 2)) {
		lines_add(L, "full = socket tcp %c", v6 ? '6' : '4');
		lines_add(L, "bind full %s 5001", lo);
		lines_add(L, "listen full 0");
		lines_add(L, "q = socket tcp %c", v6 ? '6' : '4');
		lines_add(L, "connect q %s 5001", lo);
	}
	for (int k = 0; k < nsub; k++)
		lines_add(L, "h%d = socket tcp %c", k, v6 ? '6' : '4');
	if (rnd(st, 4) == 0)
		lines_add(L, "setsockopt h0 %s", rnd(st, 2) ? "IP_BIND_ADDRESS_NO_PORT 1"
							 : "SO_REUSEADDR 1");
	for (int step = 0; step < steps; step++) {
		char nx[8];

		snprintf(nx, sizeof(nx), "h%d", rnd(st, nsub));
		switch (rnd(st, 14)) {
		case 0:
		case 1:
			gen_listen(st, L, nx);
			break;
		case 2:
		case 3:
			lines_add(L, "connect %s %s 5000", nx, lo);
			break;
		case 4:
			lines_add(L, "connect %s %s 5999", nx, lo); /* refused */
			break;
		case 5:
			lines_add(L, "connect %s %s 80", nx, v6 ? un6[rnd(st, 2)] : un4[rnd(st, 2)]);
			break;
		case 6:
			lines_add(L, "connect %s %s 5001", nx, lo); /* full, or refused */
			break;
		case 7:
		case 8:
			lines_add(L, "disconnect %s", nx);
			break;
		case 9:
			lines_add(L, "bind %s %s %s", nx, rnd(st, 2) ? lo : any,
				  rnd(st, 2) ? "0" : "5002");
			break;
		case 10:
			lines_add(L, "connect %s %s $%s", nx, lo, nx); /* itself */
			break;
		default:
			hist_check(st, L, nx);
		}
	}
}

static void hist_timewait(uint64_t *st, struct lines *L)
{
	static const char *const reuse[] = { "0", "1", "2" };
	bool v6 = rnd(st, 3) == 0, bound = rnd(st, 2);
	const char *lo = v6 ? (rnd(st, 2) ? "::1" : "::ffff:127.0.0.1") : "127.0.0.1";
	char f = v6 ? '6' : '4';

	if (rnd(st, 2))
		lines_add(L, "sysctl net.ipv4.tcp_tw_reuse %s", reuse[rnd(st, 3)]);
	lines_add(L, "sysctl net.ipv4.ip_local_port_range 40000 %d", 40000 + rnd(st, 2));
	lines_add(L, "ln = socket tcp %c", f);
	lines_add(L, "bind ln %s 5000", lo);
	lines_add(L, "listen ln");
	lines_add(L, "c = socket tcp %c", f);
	if (bound) {
		lines_add(L, "setsockopt c SO_REUSEADDR 1");
		lines_add(L, "bind c %s 40000", lo);
	}
	lines_add(L, "connect c %s 5000", lo);
	lines_add(L, "a = accept ln");
	/* the active closer first: a FIN_WAIT2 entry; the child's close then a TIME_WAIT one */
	lines_add(L, "close c");
	if (rnd(st, 2))
		lines_add(L, "close a");
	/* the peer's delayed ACK of the FIN makes the entry: never race it */
	lines_add(L, "sleep 100");
	if (rnd(st, 4) == 0)
		lines_add(L, "sleep 1000"); /* past tcp_tw_reuse_delay */
	for (int k = 0; k < 1 + rnd(st, 2); k++) {
		lines_add(L, "n%d = socket tcp %c", k, f);
		if (bound || rnd(st, 4) == 0) {
			lines_add(L, "setsockopt n%d SO_REUSEADDR 1", k);
			lines_add(L, "bind n%d %s 40000", k, lo);
		}
		lines_add(L, "connect n%d %s 5000", k, lo);
		lines_add(L, "state n%d => ESTABLISHED", k);
	}
}

static void hist_udp(uint64_t *st, struct lines *L)
{
	static const char *const a4[] = { "0.0.0.0", "127.0.0.1" };
	static const char *const a6[] = { "::", "::1", "::ffff:0.0.0.0", "::ffff:127.0.0.1" };
	int n = 2 + rnd(st, 5);

	if (rnd(st, 5) == 0) {
		/* more than ten on the port: the hash2 scan of a specific-address bind */
		bool v6 = rnd(st, 2);

		lines_add(L, "repeat 11 {");
		lines_add(L, "m%%i = socket udp %c", v6 ? '6' : '4');
		lines_add(L, "setsockopt m%%i SO_REUSEADDR 1");
		if (rnd(st, 2))
			lines_add(L, "setsockopt m%%i SO_REUSEPORT 1");
		lines_add(L, "bind m%%i %s 6000", v6 ? a6[rnd(st, 2)] : a4[rnd(st, 2)]);
		lines_add(L, "}");
	}
	for (int k = 0; k < n; k++) {
		bool v6 = rnd(st, 2);

		lines_add(L, "u%d = socket udp %c", k, v6 ? '6' : '4');
		if (rnd(st, 2))
			lines_add(L, "setsockopt u%d SO_REUSEADDR 1", k);
		if (rnd(st, 3))
			lines_add(L, "setsockopt u%d SO_REUSEPORT 1", k);
		if (v6 && rnd(st, 5) == 0)
			lines_add(L, "setsockopt u%d IPV6_V6ONLY 1", k);
		lines_add(L, "bind u%d %s 6000", k, v6 ? a6[rnd(st, 4)] : a4[rnd(st, 2)]);
		/* An owner's option cleared after its bind: it no longer excuses later binds. */
		if (k && rnd(st, 4) == 0)
			lines_add(L, "setsockopt u%d %s 0", rnd(st, k + 1),
				  rnd(st, 3) ? "SO_REUSEPORT" : "SO_REUSEADDR");
		if (rnd(st, 6) == 0)
			lines_add(L, "close u%d", k);
	}
}

static void gen_history_script(uint64_t seed, struct lines *L)
{
	uint64_t st = seed ^ 0x686973746f727921ull;
	int kind = rnd(&st, 10);

	if (kind < 5)
		hist_subjects(&st, L);
	else if (kind < 7)
		hist_timewait(&st, L);
	else
		hist_udp(&st, L);
}

/* One script in eight is a history script; the choice uses its own stream. */
static bool is_history_script(uint64_t seed)
{
	uint64_t st = seed ^ 0x6869737421212121ull;

	return rnd(&st, 8) == 0;
}

/* ---------------------------------------------------------------- device scripts */

/*
 * A device script adds devices and addresses to the loopback scripts: `link` and `addr`
 * statements, device bindings (SO_BINDTODEVICE, SO_BINDTOIFINDEX, link-local scopes), the
 * non-local switches (FREEBIND, TRANSPARENT, ip_nonlocal_bind), the l3mdev and rfc1337 sysctls,
 * binds and traffic toward the devices' addresses, and the checks that show where traffic went.
 *
 * The traffic rule of the format must hold for every statement, so the generator keeps the
 * state a script gives the namespace (which devices exist and are up, which device holds which
 * address: the kernel's rules for these are exact, R83 R84) and a loose picture of each socket
 * (its device binding, the addresses it tried to bind), and draws a destination only where the
 * rule lets the packet go: an address the socket's route reaches locally, the wildcard, or an
 * address no route leads to, which the kernel refuses before sending. What the picture cannot
 * know (whether a bind succeeded, a scope that may or may not have bound a device) is left to
 * the kernel backend, which refuses a breaking statement unrun; rp_fuzz() then drops it.
 */

enum gkind {
	GK_WILD,  /* 0.0.0.0, :: */
	GK_LOOP,  /* 127.0.0.0/8, ::1: lo's */
	GK_DEV,   /* added to devices by `addr add` */
	GK_OTHER, /* never added: local only inside a prefix lo holds, else a neighbour or unrouted */
	GK_BCAST, /* the broadcast of 192.0.2.0/24: bind only */
};

struct gaddr {
	const char *s;
	int fam; /* 4 or 6 */
	enum gkind kind;
	int plen[2]; /* GK_DEV: the prefix lengths `addr add` draws */
	uint8_t b[16];
};

static struct gaddr gaddrs[] = {
	{ "0.0.0.0", 4, GK_WILD, { 0, 0 }, { 0 } },
	{ "127.0.0.1", 4, GK_LOOP, { 0, 0 }, { 0 } },
	{ "127.0.0.2", 4, GK_LOOP, { 0, 0 }, { 0 } },
	{ "192.0.2.1", 4, GK_DEV, { 24, 32 }, { 0 } },
	{ "192.0.2.2", 4, GK_DEV, { 24, 24 }, { 0 } },
	{ "198.51.100.1", 4, GK_DEV, { 24, 30 }, { 0 } },
	{ "203.0.113.1", 4, GK_DEV, { 24, 32 }, { 0 } },
	{ "192.0.2.9", 4, GK_OTHER, { 0, 0 }, { 0 } },
	{ "198.51.100.9", 4, GK_OTHER, { 0, 0 }, { 0 } },
	{ "203.0.113.9", 4, GK_OTHER, { 0, 0 }, { 0 } },
	{ "192.0.2.255", 4, GK_BCAST, { 0, 0 }, { 0 } },
	{ "::", 6, GK_WILD, { 0, 0 }, { 0 } },
	{ "::1", 6, GK_LOOP, { 0, 0 }, { 0 } },
	{ "2001:db8::1", 6, GK_DEV, { 64, 128 }, { 0 } },
	{ "2001:db8::2", 6, GK_DEV, { 64, 64 }, { 0 } },
	{ "2001:db8:1::1", 6, GK_DEV, { 64, 120 }, { 0 } },
	{ "fe80::1", 6, GK_DEV, { 64, 64 }, { 0 } },
	{ "fe80::2", 6, GK_DEV, { 64, 128 }, { 0 } },
	{ "2001:db8::9", 6, GK_OTHER, { 0, 0 }, { 0 } },
	{ "2001:db8:2::9", 6, GK_OTHER, { 0, 0 }, { 0 } },
	{ "fe80::9", 6, GK_OTHER, { 0, 0 }, { 0 } },
};
#define NGADDR ((int)(sizeof(gaddrs) / sizeof(gaddrs[0])))

/* Devices: 1 is lo, 2.. are d0..d2; 0 means none. DEV_DEAD: an ifindex no device has. */
#define NGDEV 5
#define DEV_NONE 0
#define DEV_LO 1
#define DEV_UNKNOWN (-1)
#define DEV_DEAD 99
static const char *const gdevname[NGDEV] = { "", "lo", "d0", "d1", "d2" };

/* An address a device holds. */
struct gent {
	int a, plen, dev;
};

/* What the generator knows of a socket. */
struct gsock {
	int fam;       /* AF_INET or AF_INET6 */
	bool udp;
	bool mapped;   /* AF_INET6 whose destinations are v4-mapped (gen_loopback_script) */
	int dev;       /* device binding: DEV_NONE, a device, DEV_DEAD or DEV_UNKNOWN */
	bool fixed;    /* TCP that connected or was accepted: a new device would reroute it */
	bool touched;  /* may hold a port or be connected: a bind scope may not apply any more */
	bool transp;   /* TRANSPARENT may be set */
	bool child6;   /* accepted from an AF_INET6 listener: never connects (gen_loopback_script) */
	uint32_t bound; /* gaddrs indexes it tried to bind (mapped ones by their IPv4 index) */
	bool peer_ok;  /* UDP: send() may go to its peer */
	bool uconn;    /* UDP: a connect() since the last disconnect */
	bool listened; /* TCP: a listen() was tried */
	int addr;      /* the gaddrs index of the last specific address it tried to bind, or -1 */
	int cdev;      /* TCP: the device of an earlier connect()'s destination, DEV_UNKNOWN */
	bool mbind;    /* AF_INET6 that tried to bind a v4-mapped address */
	bool closed;
};

struct gen {
	uint64_t st;
	struct lines *L;
	bool exists[NGDEV], added[NGDEV];
	bool used4[NGDEV];    /* an IPv4 address of the device took part in a TCP connection */
	uint32_t used6[NGDEV]; /* those of its IPv6 addresses (gaddrs bits) that did */
	struct gent ent[64];
	int nent;
	struct gsock sk[16];
	char name[16][16];
	int nn, ns, na;
	bool rp_udp; /* a UDP socket set SO_REUSEPORT: UDP readability is random */
};

static void gaddrs_init(void)
{
	static bool done;

	if (done)
		return;
	for (int i = 0; i < NGADDR; i++)
		inet_pton(gaddrs[i].fam == 4 ? AF_INET : AF_INET6, gaddrs[i].s, gaddrs[i].b);
	done = true;
}

static bool in_prefix(int fam, const uint8_t *x, const uint8_t *p, int plen)
{
	int n = fam == 4 ? 4 : 16;

	for (int i = 0; i < n && plen > 0; i++, plen -= 8) {
		uint8_t m = plen >= 8 ? 0xff : (uint8_t)(0xff << (8 - plen));

		if ((x[i] & m) != (p[i] & m))
			return false;
	}
	return true;
}

static bool is_ll(int a)
{
	return gaddrs[a].fam == 6 && gaddrs[a].b[0] == 0xfe;
}

/* Does device @dev hold address @a itself (lo: 127/8 and ::1 too)? */
static bool held(const struct gen *g, int a, int dev)
{
	if (gaddrs[a].kind == GK_LOOP)
		return dev == DEV_LO;
	for (int i = 0; i < g->nent; i++)
		if (g->ent[i].a == a && g->ent[i].dev == dev)
			return true;
	return false;
}

/* The device of the local route of @a seen through @oif (0: any), 0 when the route is not
 * local. IPv4: a prefix on lo makes all of it local (R83); the local route of a down device
 * stays. IPv6: the address itself (R84). With an output device, only that device's local route
 * counts (R95). */
static int local_dev(const struct gen *g, int a, int oif)
{
	const struct gaddr *A = &gaddrs[a];

	if (A->kind == GK_WILD)
		return 0;
	if (A->kind == GK_LOOP)
		return oif == DEV_NONE || oif == DEV_LO ? DEV_LO : 0;
	for (int i = 0; i < g->nent; i++) {
		const struct gent *e = &g->ent[i];

		if (gaddrs[e->a].fam != A->fam || (oif != DEV_NONE && e->dev != oif))
			continue;
		if (e->a == a || (A->fam == 4 && e->dev == DEV_LO &&
				  in_prefix(4, A->b, gaddrs[e->a].b, e->plen)))
			return e->dev;
	}
	return 0;
}

/* Is there any route to @a through @oif (0: any)? With none the kernel fails the call before
 * sending (ENETUNREACH). An IPv4 socket bound to a device that is up assumes every destination
 * on-link (R95); a link-local destination without an output device is taken as routed. */
static bool routed(const struct gen *g, int a, int oif)
{
	const struct gaddr *A = &gaddrs[a];

	if (local_dev(g, a, oif))
		return true;
	if (oif != DEV_NONE && oif != DEV_DEAD && oif != DEV_UNKNOWN && A->fam == 4)
		return true;
	if (oif == DEV_UNKNOWN || (A->fam == 6 && is_ll(a) && oif == DEV_NONE))
		return true;
	for (int i = 0; i < g->nent; i++) {
		const struct gent *e = &g->ent[i];

		if (gaddrs[e->a].fam != A->fam || (oif != DEV_NONE && e->dev != oif))
			continue;
		if (e->plen < (A->fam == 4 ? 32 : 128) && in_prefix(A->fam, A->b, gaddrs[e->a].b, e->plen))
			return true;
	}
	return false;
}

/* The family (4 or 6) socket @s sends toward: IPv4 for AF_INET and the v4-mapped kind. */
static int dest_fam(const struct gsock *s)
{
	return s->fam == AF_INET || s->mapped ? 4 : 6;
}

/* The v4-mapped kind never listens, and an AF_INET6 child never listens or connects again. */
static bool no_listen(const struct gsock *s)
{
	return s->mapped || s->child6;
}

/* May socket @x send at all? Not when a source it may have bound is not local, unless that
 * source is IPv4 on a socket without TRANSPARENT: then the IPv4 output route fails the flow
 * before anything is sent (R88). */
static bool can_send(const struct gen *g, int x)
{
	const struct gsock *s = &g->sk[x];
	int fam = dest_fam(s);

	for (int a = 0; a < NGADDR; a++) {
		if (!(s->bound & (1u << a)) || gaddrs[a].kind == GK_WILD)
			continue;
		/* a broadcast binding leaves the IPv4 source unset */
		if (gaddrs[a].kind == GK_BCAST && fam == 4)
			continue;
		/* a link-local source is local only on the socket's own device */
		if (is_ll(a) ? s->dev > 0 && local_dev(g, a, s->dev) : local_dev(g, a, DEV_NONE) != 0)
			continue;
		if (gaddrs[a].fam == 4 && fam == 4 && !s->transp)
			continue;
		return false;
	}
	return true;
}

/* TCP with an explicit source: the answers leave the destination's device @dd toward it, so
 * every source the socket may have bound must be an address of @dd (lo loops back). */
static bool replies_ok(const struct gen *g, int x, int dd)
{
	const struct gsock *s = &g->sk[x];

	if (dd == DEV_LO)
		return true;
	/* an earlier connect() left the source it chose (on the device of its destination) */
	if (s->cdev && s->cdev != dd)
		return false;
	for (int a = 0; a < NGADDR; a++) {
		if (!(s->bound & (1u << a)) || gaddrs[a].kind == GK_WILD || gaddrs[a].kind == GK_BCAST)
			continue;
		if (!local_dev(g, a, DEV_NONE) && gaddrs[a].fam == 4 && !s->transp)
			continue; /* ENETUNREACH first */
		if (!held(g, a, dd))
			return false;
	}
	return true;
}

/* An address as socket @x writes it: v4-mapped on an AF_INET6 socket, with scope @scope. */
static void addr_text(const struct gen *g, int x, int a, int scope, char *buf, size_t cap)
{
	if (gaddrs[a].fam == 4 && g->sk[x].fam == AF_INET6)
		snprintf(buf, cap, "::ffff:%s", gaddrs[a].s);
	else if (scope == DEV_DEAD)
		snprintf(buf, cap, "%s%%9999", gaddrs[a].s);
	else if (scope > 0)
		snprintf(buf, cap, "%s%%%s", gaddrs[a].s, gdevname[scope]);
	else
		snprintf(buf, cap, "%s", gaddrs[a].s);
}

/* A device that has an ifindex in the script: lo, or one a `link add` line made. */
static int pick_indexed_dev(struct gen *g)
{
	int c[NGDEV], n = 0;

	for (int k = DEV_LO; k < NGDEV; k++)
		if (k == DEV_LO || g->added[k])
			c[n++] = k;
	return c[rnd(&g->st, n)];
}

/*
 * Socket @x makes a TCP connection toward @a (through link-local scope @scope): the addresses
 * it may involve, the destination and both ends, can no longer be removed (the traffic rule's
 * last part: the kernel backend refuses `addr del`, `link set down` and `link del` of them).
 * For IPv4 the rule covers every IPv4 address of a device.
 */
static void mark_used(struct gen *g, int x, int a, int scope)
{
	const struct gsock *s = &g->sk[x];
	int fam = gaddrs[a].fam;

	if (fam == 4) {
		int dd = local_dev(g, a, s->dev > 0 && s->dev != DEV_DEAD ? s->dev : DEV_NONE);

		if (gaddrs[a].kind == GK_WILD && s->dev != DEV_NONE) {
			for (int k = DEV_LO; k < NGDEV; k++)
				g->used4[k] = true; /* the source may be any device's primary */
		}
		g->used4[DEV_LO] |= gaddrs[a].kind == GK_WILD || gaddrs[a].kind == GK_LOOP;
		if (dd)
			g->used4[dd] = true;
		for (int k = DEV_LO; k < NGDEV; k++)
			g->used4[k] |= held(g, a, k);
	} else if (is_ll(a)) {
		int k = scope ? scope : s->dev;

		if (k > 0 && k < NGDEV)
			g->used6[k] |= 1u << a;
		else
			for (k = DEV_LO; k < NGDEV; k++)
				g->used6[k] |= 1u << a;
	} else {
		for (int k = DEV_LO; k < NGDEV; k++)
			g->used6[k] |= 1u << a;
	}
	for (int b = 0; b < NGADDR; b++) {
		if (!(s->bound & (1u << b)))
			continue;
		for (int k = DEV_LO; k < NGDEV; k++) {
			if (gaddrs[b].fam == 4)
				g->used4[k] |= held(g, b, k) || (k == DEV_LO && gaddrs[b].kind != GK_DEV);
			else
				g->used6[k] |= 1u << b;
		}
	}
}

/*
 * A destination for a statement of socket @x that sends (@kind 'c' TCP connect, 's' sendto)
 * or may let a later send() go (@kind 'u', UDP connect: sends nothing itself). Groups, drawn
 * by weight among those that have members: 'L' an address the socket's route reaches locally,
 * 'W' the wildcard, 'U' an address no route leads to (the kernel refuses it), and for a UDP
 * connect 'N' any other (a neighbour: connect shows the source the kernel picks). *@sendable
 * says whether sending there later is allowed. False when nothing fits.
 */
static bool pick_dest(struct gen *g, int x, char kind, int prefer, char *buf, size_t cap,
		      bool *sendable)
{
	const struct gsock *s = &g->sk[x];
	int fam = dest_fam(s);
	struct {
		int a, scope;
		char grp;
	} c[96];
	int n = 0, dev = s->dev;
	static const char grps[] = "LWUN";
	static const int wt[] = { 70, 8, 12, 10 };
	int have[4] = { 0 }, tot = 0, pick, gi;

	for (int a = 0; a < NGADDR; a++) {
		if (gaddrs[a].fam != fam || gaddrs[a].kind == GK_BCAST)
			continue;
		/* link-local: through each device that has an index, or with no scope */
		for (int sc = -1; sc < NGDEV; sc++) {
			int oif, dd;
			char grp;

			if (sc >= 0 && (!is_ll(a) || fam != 6 || sc == DEV_NONE ||
					(sc > DEV_LO && !g->added[sc])))
				continue;
			if (sc < 0 && is_ll(a) && dev == DEV_NONE && kind == 'c')
				continue; /* TCP: EINVAL, but the route check may find a neighbour */
			/* :: means ::ffff:127.0.0.1 to a socket bound to a v4-mapped address: a
			 * v4-mapped connect() from a socket of the native kind (gen_loopback_script) */
			if (kind == 'c' && fam == 6 && s->mbind && gaddrs[a].kind == GK_WILD)
				continue;
			/* A connected UDP socket keeps the route of its connect(), and a send
			 * toward the same address reuses it when the output device asked for is
			 * the route's own (ip6_sk_dst_check), which for a local route is lo: a
			 * sendto() with a scope %lo then reaches another device's link-local
			 * address, and so does send() after a connect() whose scope %lo bound
			 * the socket to lo before it failed. socktab keeps no routes: not
			 * drawn. */
			if (sc == DEV_LO && s->uconn && kind != 'c' && !held(g, a, DEV_LO))
				continue;
			oif = sc > 0 ? sc : dev;
			dd = local_dev(g, a, oif == DEV_UNKNOWN ? DEV_NONE : oif);
			if (gaddrs[a].kind == GK_WILD)
				grp = 'W';
			else if (gaddrs[a].kind == GK_LOOP && dev == DEV_NONE)
				grp = 'L';
			else if (dd && oif != DEV_UNKNOWN && (kind != 'c' || replies_ok(g, x, dd)))
				grp = 'L';
			else if (!routed(g, a, oif))
				grp = 'U';
			else if (kind == 'u')
				grp = 'N';
			else
				continue;
			if (n < 96) {
				c[n].a = a;
				c[n].scope = sc > 0 ? sc : 0;
				c[n++].grp = grp;
			}
		}
	}
	for (int i = 0; i < n; i++)
		have[strchr(grps, c[i].grp) - grps]++;
	for (int i = 0; i < 4; i++)
		tot += have[i] ? wt[i] : 0;
	if (!tot)
		return false;
	pick = rnd(&g->st, tot);
	for (gi = 0; gi < 4; gi++) {
		if (!have[gi])
			continue;
		if (pick < wt[gi])
			break;
		pick -= wt[gi];
	}
	pick = rnd(&g->st, have[gi]);
	/* half the time the address the destination socket bound, if it may go there */
	if (prefer >= 0 && rnd(&g->st, 2) == 0)
		prefer = -1;
	for (int i = 0; i < n && prefer >= 0; i++) {
		if (c[i].a != prefer || c[i].grp != 'L')
			continue;
		gi = 0;
		pick = 0;
		for (int j = 0; j < i; j++)
			pick += c[j].grp == 'L';
		break;
	}
	for (int i = 0; i < n; i++) {
		if (c[i].grp != grps[gi] || pick--)
			continue;
		addr_text(g, x, c[i].a, c[i].scope, buf, cap);
		/* a scope on a global address is ignored: sometimes write one */
		if (fam == 6 && gaddrs[c[i].a].kind == GK_DEV && !is_ll(c[i].a) && rnd(&g->st, 10) == 0)
			snprintf(buf + strlen(buf), cap - strlen(buf), "%%%s",
				 gdevname[pick_indexed_dev(g)]);
		/* a connect() that fails keeps the old peer, but its scope may have
		 * bound the socket to another device: no send() after it */
		*sendable = grps[gi] == 'L' || grps[gi] == 'W';
		if (kind == 'c') {
			int dd = local_dev(g, c[i].a, c[i].scope ? c[i].scope
						 : s->dev > 0 && s->dev != DEV_DEAD ? s->dev : DEV_NONE);

			mark_used(g, x, c[i].a, c[i].scope);
			if (gaddrs[c[i].a].kind != GK_WILD)
				g->sk[x].cdev = s->cdev && s->cdev != dd ? DEV_UNKNOWN : dd;
			else
				g->sk[x].cdev = DEV_UNKNOWN;
		}
		if (c[i].scope && s->dev != DEV_UNKNOWN) {
			/* a link-local scope binds the socket to its device (R96), unless it
			 * is bound to another one (EINVAL) */
			if (s->dev == DEV_NONE || s->dev == c[i].scope)
				g->sk[x].dev = s->udp ? c[i].scope : DEV_UNKNOWN;
		}
		return true;
	}
	return false;
}
/* Forget address entry @j, keeping the others' order. */
static void ent_del(struct gen *g, int j)
{
	memmove(&g->ent[j], &g->ent[j + 1], sizeof(g->ent[0]) * (size_t)(--g->nent - j));
}


/* Are @a and @b in the same subnet of prefix length @plen? */
static bool same_subnet(int a, int b, int plen)
{
	return in_prefix(gaddrs[a].fam, gaddrs[a].b, gaddrs[b].b, plen);
}

/*
 * `addr add` or `addr del`, and what it does to the address table: IPv4 EEXIST is the same
 * address and prefix on the device, IPv6 the same address; deleting a primary IPv4 address
 * deletes the secondaries of its subnet (R83). Removals the traffic rule would refuse are
 * skipped (false).
 */
static bool gen_addr_change(struct gen *g, bool add)
{
	int a, plen, dev, i;

	if (!add && g->nent && rnd(&g->st, 8)) {
		const struct gent *e = &g->ent[rnd(&g->st, g->nent)];

		a = e->a;
		plen = e->plen;
		dev = e->dev;
	} else {
		int devs[] = { DEV_LO, 2, 2, 2, 3, 3, 4 };

		do
			a = rnd(&g->st, NGADDR);
		while (gaddrs[a].kind != GK_DEV);
		plen = gaddrs[a].plen[rnd(&g->st, 2)];
		/* mostly a device that exists (else ENODEV) */
		for (int t = 0; t < 4; t++)
			if (g->exists[dev = devs[rnd(&g->st, 7)]])
				break;
		if (dev == DEV_LO && is_ll(a) && rnd(&g->st, 4))
			dev = 2;
		if (!add && rnd(&g->st, 2) && g->nent)
			dev = g->ent[rnd(&g->st, g->nent)].dev;
	}
	if (!add && (gaddrs[a].fam == 4 ? g->used4[dev] : (g->used6[dev] >> a) & 1))
		return false;
	lines_add(g->L, "addr %s %s/%d dev %s", add ? "add" : "del", gaddrs[a].s, plen,
		  gdevname[dev]);
	if (!g->exists[dev])
		return true; /* ENODEV */
	for (i = 0; i < g->nent; i++)
		if (g->ent[i].a == a && g->ent[i].dev == dev &&
		    (g->ent[i].plen == plen || (add && gaddrs[a].fam == 6)))
			break;
	if (add) {
		if (i == g->nent && g->nent < 64)
			g->ent[g->nent++] = (struct gent){ a, plen, dev };
		return true;
	}
	if (i == g->nent)
		return true; /* EADDRNOTAVAIL */
	if (gaddrs[a].fam == 4) {
		/* the primary is the first of its subnet and prefix on the device */
		int first = -1;

		for (int j = 0; j < g->nent; j++)
			if (gaddrs[g->ent[j].a].fam == 4 && g->ent[j].dev == dev &&
			    g->ent[j].plen == plen && same_subnet(a, g->ent[j].a, plen) && first < 0)
				first = j;
		if (first == i) {
			for (int j = g->nent - 1; j >= 0; j--)
				if (j != i && gaddrs[g->ent[j].a].fam == 4 && g->ent[j].dev == dev &&
				    g->ent[j].plen == plen && same_subnet(a, g->ent[j].a, plen))
					g->ent[j].dev = -1;
		}
	}
	g->ent[i].dev = -1;
	for (int j = g->nent - 1; j >= 0; j--)
		if (g->ent[j].dev < 0) {
			ent_del(g, j); /* keeps the order: it tells primaries from secondaries */
		}
	return true;
}

/* `link add|set|del`, tracked: a device going down loses its IPv6 addresses (R84), a deleted
 * one all of them. */
static bool gen_link(struct gen *g)
{
	int k = 2 + rnd(&g->st, 3), r = rnd(&g->st, 10);
	bool used;

	/* mostly a device that exists (else ENODEV), but also adds of new ones */
	for (int t = 0; t < 3 && !g->exists[k] && r >= 3; t++)
		k = 2 + rnd(&g->st, 3);
	used = g->used4[k] || g->used6[k];

	if (r < 3 || (!g->exists[k] && r < 6)) {
		lines_add(g->L, "link add %s dummy", gdevname[k]);
		if (!g->exists[k])
			g->exists[k] = g->added[k] = true;
		return true;
	}
	if (r < 6) {
		lines_add(g->L, "link set %s up", gdevname[k]);
		return true;
	}
	if (used)
		return false;
	if (r < 8) {
		lines_add(g->L, "link set %s down", gdevname[k]);
		if (g->exists[k]) {
			for (int j = g->nent - 1; j >= 0; j--)
				if (g->ent[j].dev == k && gaddrs[g->ent[j].a].fam == 6)
					ent_del(g, j);
		}
		return true;
	}
	lines_add(g->L, "link del %s", gdevname[k]);
	if (g->exists[k]) {
		g->exists[k] = false;
		for (int j = g->nent - 1; j >= 0; j--)
			if (g->ent[j].dev == k)
				ent_del(g, j);
	}
	return true;
}

/* A bind address for socket @x: loopback or wildcard as the loopback scripts draw them, an
 * address of the devices (a link-local one mostly with a scope), or one no device holds. */
static void gen_bind(struct gen *g, int x, const char *port)
{
	struct gsock *s = &g->sk[x];
	int r = rnd(&g->st, 100), a, fam, scope = 0;
	char buf[64];

	if (r < 30) {
		bool other = rnd(&g->st, 20) == 0;
		int f = other ? (s->fam == AF_INET ? AF_INET6 : AF_INET) : s->fam;
		const char *t = f == AF_INET ? bind4[rnd(&g->st, 3)] : bind6[rnd(&g->st, 4)];

		lines_add(g->L, "bind %s %s %s", g->name[x], t, port);
		s->mbind |= s->fam == AF_INET6 && !strncmp(t, "::ffff:", 7);
		for (a = 0; a < NGADDR; a++)
			if (gaddrs[a].kind == GK_LOOP && strstr(t, gaddrs[a].s)) {
				s->bound |= 1u << a;
				if (!s->touched)
					s->addr = a;
			}
		s->touched = true;
		return;
	}
	fam = s->fam == AF_INET ? 4 : rnd(&g->st, 10) < 7 ? 6 : 4;
	/* mostly an address some device holds now */
	for (int t = 0; t < 3; t++) {
		do
			a = rnd(&g->st, NGADDR);
		while (gaddrs[a].fam != fam || gaddrs[a].kind == GK_LOOP ||
		       (gaddrs[a].kind == GK_WILD && rnd(&g->st, 3)) ||
		       (gaddrs[a].kind != GK_DEV && r < 80));
		if (r >= 80 || gaddrs[a].kind != GK_DEV || local_dev(g, a, DEV_NONE))
			break;
	}
	if (fam == 6 && is_ll(a)) {
		int q = rnd(&g->st, 20);

		if (q < 13) {
			/* mostly a device that holds it */
			scope = pick_indexed_dev(g);
			for (int k = DEV_LO; k < NGDEV; k++)
				if (held(g, a, k) && rnd(&g->st, 3))
					scope = k;
		} else if (q < 16) {
			scope = DEV_DEAD;
		}
	} else if (fam == 6 && rnd(&g->st, 12) == 0) {
		scope = pick_indexed_dev(g); /* ignored: not link-local */
	}
	addr_text(g, x, a, scope, buf, sizeof(buf));
	lines_add(g->L, "bind %s %s %s", g->name[x], buf, port);
	s->mbind |= s->fam == AF_INET6 && fam == 4;
	if (gaddrs[a].kind != GK_WILD) {
		s->bound |= 1u << a;
		if (!s->touched)
			s->addr = a;
	}
	/* A scope of a link-local address replaces the device binding before any other check of
	 * the address (R86), if the socket is not bound yet. */
	if (scope && is_ll(a))
		s->dev = s->touched ? DEV_UNKNOWN : scope;
	s->touched = true;
}

static void gen_devopt(struct gen *g, int x)
{
	struct gsock *s = &g->sk[x];
	const char *nx = g->name[x];
	int r = rnd(&g->st, 10), k;

	if (r < 6 && s->uconn)
		s->peer_ok = false; /* its peer may not be reachable through the new device */

	if (r < 4 && !s->fixed) {
		if (rnd(&g->st, 4) == 0) {
			lines_add(g->L, "setsockopt %s SO_BINDTODEVICE none", nx);
			s->dev = DEV_NONE;
			return;
		}
		k = DEV_LO + rnd(&g->st, NGDEV - 1);
		lines_add(g->L, "setsockopt %s SO_BINDTODEVICE %s", nx, gdevname[k]);
		if (g->exists[k])
			s->dev = k; /* else ENODEV, and the old binding stays */
		return;
	}
	if (r < 6 && !s->fixed) {
		int q = rnd(&g->st, 10);

		if (q < 2) {
			lines_add(g->L, "setsockopt %s SO_BINDTOIFINDEX 0", nx);
			s->dev = DEV_NONE;
		} else if (q < 3) {
			lines_add(g->L, "setsockopt %s SO_BINDTOIFINDEX 9999", nx);
			s->dev = DEV_DEAD;
		} else {
			k = pick_indexed_dev(g);
			lines_add(g->L, "setsockopt %s SO_BINDTOIFINDEX %s", nx, gdevname[k]);
			s->dev = k; /* taken without a check, even for a deleted device */
		}
		return;
	}
	{
		static const char *const opt[] = { "IP_FREEBIND", "IP_TRANSPARENT", "IPV6_FREEBIND",
						   "IPV6_TRANSPARENT" };
		int o = rnd(&g->st, s->fam == AF_INET6 || rnd(&g->st, 8) == 0 ? 4 : 2);
		int v = rnd(&g->st, 5) ? 1 : 0;

		lines_add(g->L, "setsockopt %s %s %d", nx, opt[o], v);
		s->transp |= v && (o & 1);
	}
}

static void gen_check(struct gen *g, int x)
{
	static const char *const gopt[] = { "SO_BINDTODEVICE", "SO_BINDTOIFINDEX", "IP_FREEBIND",
					    "IP_TRANSPARENT", "IPV6_FREEBIND", "IPV6_TRANSPARENT" };
	const struct gsock *s = &g->sk[x];
	const char *nx = g->name[x];
	int r = rnd(&g->st, 20);

	if (r < 3)
		lines_add(g->L, "port %s => in 0 65535", nx);
	else if (r < 5)
		lines_add(g->L, s->udp ? "peer %s => ENOTCONN" : "state %s => CLOSE", nx);
	else if (r < 7)
		lines_add(g->L, "peer %s => ENOTCONN", nx);
	else if (r < 8)
		lines_add(g->L, "getsockopt %s SO_ERROR => 0", nx);
	else if (r < 12)
		lines_add(g->L, "addr %s => 0.0.0.0", nx);
	else if (r < 16) {
		if (s->udp && g->rp_udp)
			lines_add(g->L, "port %s => in 0 65535", nx);
		else
			lines_add(g->L, "readable %s => 0", nx);
	} else {
		int o = rnd(&g->st, 6);

		lines_add(g->L, "getsockopt %s %s => %s", nx, gopt[o], o == 0 ? "none" : "0");
	}
}
/* `aN = accept` of listener @l: the child takes the next socket slot. */
static void gen_accept(struct gen *g, int l)
{
	struct gsock *c = &g->sk[g->nn];

	snprintf(g->name[g->nn], sizeof(g->name[0]), "a%d", g->na++);
	memset(c, 0, sizeof(*c));
	c->fam = g->sk[l].fam;
	c->mapped = c->fam == AF_INET6 && (g->nn & 1);
	c->child6 = c->fam == AF_INET6;
	c->dev = c->cdev = DEV_UNKNOWN;
	c->fixed = c->touched = c->peer_ok = true;
	c->addr = -1;
	lines_add(g->L, "%s = accept %s", g->name[g->nn], g->name[l]);
	g->nn++;
}


/* `NAME = socket`: the next sN, of family @fam. Returns its index. */
static int gen_socket(struct gen *g, int fam, bool udp)
{
	struct gsock *n = &g->sk[g->nn];

	snprintf(g->name[g->nn], sizeof(g->name[0]), "s%d", g->ns++);
	memset(n, 0, sizeof(*n));
	n->fam = fam;
	n->udp = udp;
	n->mapped = n->fam == AF_INET6 && (g->nn & 1);
	n->peer_ok = true;
	n->addr = -1;
	lines_add(g->L, "%s = socket %s %c%s", g->name[g->nn], n->udp ? "udp" : "tcp",
		  n->fam == AF_INET ? '4' : '6', rnd(&g->st, 10) == 0 ? " uid 1000" : "");
	return g->nn++;
}

/* A device binding for socket @x, by name or by index, to lo or a device that exists. */
static void gen_bind_dev(struct gen *g, int x)
{
	int c[NGDEV], n = 0, k;

	if (g->sk[x].uconn)
		g->sk[x].peer_ok = false;

	for (k = DEV_LO; k < NGDEV; k++)
		if (g->exists[k])
			c[n++] = k;
	k = c[rnd(&g->st, n)];
	if (rnd(&g->st, 3))
		lines_add(g->L, "setsockopt %s SO_BINDTODEVICE %s", g->name[x], gdevname[k]);
	else
		lines_add(g->L, "setsockopt %s SO_BINDTOIFINDEX %s", g->name[x], gdevname[k]);
	g->sk[x].dev = k;
}

/*
 * A scene for the lookups that depend on devices (R90-R94): two or three receivers on one port,
 * each maybe bound to a device, to a device's address or a wildcard, with or without reuse
 * options; a sender that connects or sends to them; which of them got it (readable), and for
 * TCP the accepted child's device and addresses.
 */
static void gen_scenario(struct gen *g)
{
	bool udp = rnd(&g->st, 3) == 0;
	int nr = 2 + rnd(&g->st, 2), first = -1, rcv[3], n = 0, cl;
	char port[24], dst[64];
	bool sendable;

	for (int i = 0; i < nr; i++) {
		int fam = rnd(&g->st, 2) ? AF_INET : AF_INET6, x;

		if (!udp && (g->nn & 1))
			fam = AF_INET; /* the mapped kind of AF_INET6 never listens */
		x = gen_socket(g, fam, udp);
		if (rnd(&g->st, 2))
			lines_add(g->L, "setsockopt %s SO_REUSEADDR 1", g->name[x]);
		if (!udp && rnd(&g->st, 3) == 0)
			lines_add(g->L, "setsockopt %s SO_REUSEPORT 1", g->name[x]);
		if (rnd(&g->st, 10) < 6)
			gen_bind_dev(g, x);
		if (first < 0)
			snprintf(port, sizeof(port), "0");
		else
			snprintf(port, sizeof(port), "$%s", g->name[first]);
		gen_bind(g, x, port);
		if (!udp) {
			lines_add(g->L, "listen %s", g->name[x]);
			g->sk[x].listened = true;
		}
		if (first < 0)
			first = x;
		rcv[n++] = x;
	}
	cl = gen_socket(g, rnd(&g->st, 2) ? AF_INET : AF_INET6, udp);
	if (rnd(&g->st, 10) < 3)
		gen_bind_dev(g, cl);
	if (!pick_dest(g, cl, udp ? 's' : 'c', g->sk[first].addr, dst, sizeof(dst), &sendable))
		return;
	lines_add(g->L, "%s %s %s $%s", udp ? "sendto" : "connect", g->name[cl], dst,
		  g->name[first]);
	g->sk[cl].touched = true;
	g->sk[cl].fixed = !udp;
	for (int i = 0; i < n; i++)
		lines_add(g->L, "readable %s => 0", g->name[rcv[i]]);
	for (int i = 0; i < n && !udp && g->nn < 16 && g->na < 6; i++) {
		const char *a = g->name[g->nn];

		if (rnd(&g->st, 2))
			continue;
		gen_accept(g, rcv[i]);
		lines_add(g->L, "getsockopt %s SO_BINDTODEVICE => none", a);
		lines_add(g->L, "addr %s => 0.0.0.0", a);
		lines_add(g->L, "peer %s => ENOTCONN", a);
	}
}

/*
 * Draw again, most of the time, a socket that suits: @want 'b' one open and not bound yet, 'l'
 * an open listener, 'd' a destination for socket @x (a listener for TCP, a bound UDP socket for
 * UDP). @dflt when none does.
 */
static int pick_sock(struct gen *g, int dflt, int x, char want)
{
	int c[16], n = 0;

	for (int i = 0; i < g->nn; i++) {
		const struct gsock *s = &g->sk[i];
		bool ok = want == 'b'	? !s->closed && !s->touched
			  : want == 'l' ? !s->closed && s->listened
					: s->touched && (g->sk[x].udp ? s->udp : s->listened);

		if (ok)
			c[n++] = i;
	}
	if (!n || rnd(&g->st, 4) == 0)
		return dflt;
	return c[rnd(&g->st, n)];
}

static void gen_dev_script(uint64_t seed, struct lines *L)
{
	static const char *const sysctls[] = { "net.ipv4.ip_nonlocal_bind", "net.ipv6.ip_nonlocal_bind",
					       "net.ipv4.tcp_l3mdev_accept",
					       "net.ipv4.udp_l3mdev_accept", "net.ipv4.tcp_rfc1337" };
	static const int pdev[] = { 0, 0, 80, 45, 10 };
	struct gen G, *g = &G;
	int steps, naddr, scenarios = 0;

	gaddrs_init();
	memset(g, 0, sizeof(*g));
	g->st = seed;
	g->L = L;
	g->exists[DEV_LO] = g->added[DEV_LO] = true;
	steps = 8 + rnd(&g->st, 28);
	if (rnd(&g->st, 4) == 0) {
		static const int span[] = { 1, 3, 9 };

		lines_add(L, "sysctl net.ipv4.ip_local_port_range 40000 %d", 40000 + span[rnd(&g->st, 3)]);
	}
	for (int i = 0; i < 5; i++)
		if (rnd(&g->st, 10) == 0)
			lines_add(L, "sysctl %s 1", sysctls[i]);
	for (int k = 2; k < NGDEV; k++)
		if (rnd(&g->st, 100) < pdev[k]) {
			lines_add(L, "link add %s dummy", gdevname[k]);
			g->exists[k] = g->added[k] = true;
		}
	naddr = 1 + rnd(&g->st, 4);
	for (int i = 0; i < naddr; i++)
		gen_addr_change(g, true);
	if (rnd(&g->st, 10) < 3) {
		gen_scenario(g);
		scenarios++;
	}
	for (int step = 0; step < steps; step++) {
		int r = rnd(&g->st, 100), x = g->nn ? rnd(&g->st, g->nn) : 0;
		int y = g->nn ? rnd(&g->st, g->nn) : 0, pr = rnd(&g->st, 10);

		/* mostly an open socket: a closed one only answers EBADF; one not bound yet
		 * to bind, a listener to accept from; a listener or a bound UDP socket to
		 * send to */
		for (int t = 0; t < 3 && g->nn && g->sk[x].closed && rnd(&g->st, 8); t++)
			x = rnd(&g->st, g->nn);
		if (r >= 24 && r < 40)
			x = pick_sock(g, x, x, 'b');
		else if (r >= 62 && r < 68)
			x = pick_sock(g, x, x, 'l');
		y = pick_sock(g, y, x, 'd');
		struct gsock *s = &g->sk[x];
		const char *nx = g->name[x];
		char port[24], dst[64];
		bool ok;

		gen_port(&g->st, pr, g->name[y], port, sizeof(port));
		if (g->nn == 0 || (r < 13 && g->ns < 6 && g->nn < 16)) {
			gen_socket(g, rnd(&g->st, 2) ? AF_INET : AF_INET6, rnd(&g->st, 3) == 0);
		} else if (r < 15 && scenarios < 2 && g->nn < 12) {
			scenarios++;
			gen_scenario(g);
		} else if (r < 24) {
			if (rnd(&g->st, 2)) {
				gen_devopt(g, x);
				continue;
			}
			gen_sockopt(&g->st, L, nx, s->udp, &g->rp_udp);
		} else if (r < 40) {
			gen_bind(g, x, port);
		} else if (r < 48 && s->udp) {
			bool sendable;

			if (!can_send(g, x) ||
			    !pick_dest(g, x, 's', port[0] == '$' ? g->sk[y].addr : -1, dst,
				       sizeof(dst), &sendable))
				goto check;
			if (port[0] == '0') /* port 0: EINVAL before anything happens */
				snprintf(port, sizeof(port), "$%s", g->name[y]);
			lines_add(L, "sendto %s %s %s", nx, dst, port);
			s->touched = true;
			if (port[0] == '$' && rnd(&g->st, 2) && (!g->sk[y].udp || !g->rp_udp))
				lines_add(L, "readable %s => 0", g->name[y]); /* where it went */
		} else if (r < 48 && no_listen(s)) {
			lines_add(L, "port %s => in 0 65535", nx);
		} else if (r < 48) {
			gen_listen(&g->st, L, nx);
			s->touched = s->listened = true;
		} else if (r < 62) {
			bool sendable = true;

			if (port[0] == '0')
				snprintf(port, sizeof(port), "$%s", g->name[y]);
			if (s->child6 ||
			    (!s->udp && !can_send(g, x)))
				goto check;
			if (!pick_dest(g, x, s->udp ? 'u' : 'c', port[0] == '$' ? g->sk[y].addr : -1,
				       dst, sizeof(dst), &sendable))
				goto check;
			lines_add(L, "connect %s %s %s", nx, dst, port);
			s->touched = true;
			if (!s->udp && port[0] == '$' && rnd(&g->st, 2))
				lines_add(L, "readable %s => 0", port + 1); /* did its listener get it? */
			if (s->udp) {
				s->peer_ok = sendable;
				s->uconn = true;
			}
			else
				s->fixed = true;
		} else if (r < 68 && s->udp) {
			if (!s->peer_ok || !can_send(g, x))
				goto check;
			lines_add(L, "send %s", nx);
			s->touched = true;
		} else if (r < 68 && g->nn < 16 && g->na < 6) {
			if (!s->listened && rnd(&g->st, 4))
				goto check; /* EINVAL: seen enough */
			gen_accept(g, x);
		} else if (r < 74) {
			lines_add(L, "close %s", nx);
			s->closed = true;
		} else if (r < 76) {
			lines_add(L, "disconnect %s", nx);
			if (s->udp) {
				/* a UDP disconnect drops the device binding (R89) */
				s->dev = DEV_NONE;
				s->peer_ok = true;
				s->uconn = false;
			}
		} else if (r < 83) {
			int q = rnd(&g->st, 10);

			ok = q < 4 ? gen_addr_change(g, true)
			     : q < 7 ? gen_addr_change(g, false)
			     : q < 9 ? gen_link(g)
			     : false;
			if (q == 9)
				lines_add(L, "sysctl %s %d", sysctls[rnd(&g->st, 5)], rnd(&g->st, 2));
			else if (!ok)
				goto check;
		} else {
check:
			gen_check(g, x);
		}
	}
}

/*
 * A random valid script: a loopback script (gen_loopback_script, the same scripts for the same
 * seed as before devices came) or, for about 45 % of seeds, a device script (gen_dev_script).
 * The choice uses its own stream, so that the loopback scripts stay what they were.
 */
static bool is_dev_script(uint64_t seed)
{
	uint64_t st = seed ^ 0x6465766963657321ull;

	return rnd(&st, 100) < 45;
}

static void gen_script(uint64_t seed, struct lines *L)
{
	if (is_history_script(seed))
		gen_history_script(seed, L);
	else if (is_dev_script(seed))
		gen_dev_script(seed, L);
	else
		gen_loopback_script(seed, L);
}

/* What of a port the kernel makes deterministic. */
static long long port_sig(const struct rp_outcome *o, long long p)
{
	if (p == 0)
		return 0;
	if (p >= o->range_lo && p <= o->range_hi)
		return o->noparity ? 1 : 2 + ((p - o->range_lo) & 1);
	return 100 + p;
}

static bool same_outcome(const struct rp_op *op, const struct rp_outcome *a,
			 const struct rp_outcome *b)
{
	if (a->err != b->err || a->nval != b->nval)
		return false;
	if (a->err)
		return true;
	switch (op->kind) {
	case RP_PORT:
		return port_sig(a, a->val[0]) == port_sig(b, b->val[0]);
	case RP_PEER:
		return !memcmp(&a->addr, &b->addr, sizeof(a->addr)) &&
		       port_sig(a, a->val[0]) == port_sig(b, b->val[0]);
	case RP_ADDR:
		return !memcmp(&a->addr, &b->addr, sizeof(a->addr));
	case RP_GETSOCKOPT:
		/* device results compare by name: the backends number devices differently */
		if (op->optkind == RP_OPT_DEVNAME)
			return !strcmp(a->name, b->name);
		if (op->optkind == RP_OPT_IFINDEX && (a->valdev || b->valdev))
			return a->valdev == b->valdev;
		/* fall through */
	case RP_STATE:
	case RP_READABLE:
	case RP_DISTINCT:
		for (int i = 0; i < a->nval; i++)
			if (a->val[i] != b->val[i])
				return false;
		return true;
	default:
		return true;
	}
}

/* Index of the first op where the two runs differ, or -1. */
static int first_diff(const struct rp_case *c, const struct rp_collect *A, const struct rp_collect *B)
{
	for (int i = 0; i < c->nops; i++) {
		if (A->got[i] != B->got[i])
			return i;
		if (A->got[i] && !same_outcome(&c->ops[i], &A->o[i], &B->o[i]))
			return i;
	}
	return -1;
}

/* An outcome written as an expectation (the kernel's, for the minimized script). */
static void outcome_text(const struct rp_script *s, const struct rp_op *op,
			 const struct rp_outcome *o, char *buf, size_t cap)
{
	char a[64], eb[32];

	if (o->err) {
		snprintf(buf, cap, "%s", rp_errstr(o->err, eb, sizeof(eb)));
		return;
	}
	switch (op->kind) {
	case RP_PORT: {
		long long sig = port_sig(o, o->val[0]);

		if (sig == 0 || sig >= 100)
			snprintf(buf, cap, "%lld", o->val[0]);
		else
			snprintf(buf, cap, "in %d %d%s", o->range_lo, o->range_hi,
				 sig == 1 ? "" : ((o->val[0] & 1) ? " odd" : " even"));
		return;
	}
	case RP_ADDR:
		rp_addr_str(s, &o->addr, buf, cap);
		return;
	case RP_PEER:
		rp_addr_str(s, &o->addr, a, sizeof(a));
		snprintf(buf, cap, "%s %lld", a, o->val[0]);
		return;
	case RP_STATE:
		snprintf(buf, cap, "%s", rp_state_name((int)o->val[0]) ? rp_state_name((int)o->val[0])
									: "?");
		return;
	case RP_GETSOCKOPT:
		if (op->optkind == RP_OPT_ERROR)
			snprintf(buf, cap, "%s", o->val[0] ? rp_errstr((int)o->val[0], eb, sizeof(eb)) : "0");
		else if (op->optkind == RP_OPT_DEVNAME)
			snprintf(buf, cap, "%s", o->name[0] ? o->name : "none");
		else if (op->optkind == RP_OPT_IFINDEX && o->valdev > 0 && o->valdev <= s->ndevs)
			snprintf(buf, cap, "%s", s->devs[o->valdev - 1]);
		else if (o->nval == 2)
			snprintf(buf, cap, "%lld %lld", o->val[0], o->val[1]);
		else
			snprintf(buf, cap, "%lld", o->val[0]);
		return;
	case RP_READABLE:
		snprintf(buf, cap, "%lld", o->val[0]);
		return;
	default:
		snprintf(buf, cap, "ok");
	}
}

/* Did the kernel backend refuse an op as a SCRIPT ERROR (the traffic rule)? Such a statement
 * never ran there, so the two runs cannot be compared from it on. */
static bool kernel_refused(const struct rp_case *c, const struct rp_collect *K)
{
	for (int i = 0; i < c->nops; i++)
		if (K->got[i] && K->o[i].err == RP_ESCRIPT)
			return true;
	return false;
}

/* Does socktab give every outcome of kernel run @K of @s in one of @runs runs of its own? */
static bool socktab_matches(const struct rp_script *s, const struct rp_collect *K, int runs)
{
	bool match = false;

	for (int r = 0; r < runs && !match; r++) {
		struct rp_collect S;

		rp_run_backend(RP_BE_SOCKTAB, s, &s->cases[0], &S);
		match = first_diff(&s->cases[0], K, &S) < 0;
		rp_collect_free(&S);
	}
	return match;
}

/*
 * Run @L (without the lines @drop marks) on both backends. Returns the first differing op, -1
 * when none differs, -2 when the text does not parse, -3 when the kernel backend refused a
 * statement (a script that breaks the traffic rule shows no disagreement). Unless -2, *@sp,
 * @K and @S hold the script and its outcomes, for the caller to free.
 */
static int diff_text(const char *name, const struct lines *L, const bool *drop,
		     struct rp_script **sp, struct rp_collect *K, struct rp_collect *S)
{
	char err[300], *t = lines_join(L, drop);
	struct rp_script *s = rp_parse_text(name, t, err, sizeof(err));
	int d;

	free(t);
	if (!s || s->ncases != 1)
		return rp_free_script(s), -2;
	rp_run_backend(RP_BE_KERNEL, s, &s->cases[0], K);
	rp_run_backend(RP_BE_SOCKTAB, s, &s->cases[0], S);
	d = kernel_refused(&s->cases[0], K) ? -3 : first_diff(&s->cases[0], K, S);
	*sp = s;
	return d;
}

/*
 * Take out of @L the lines whose statements the kernel backend refused in run @K of @s (which
 * ran all of @L): they did not run there, so without them the kernel does just what it did,
 * while the socktab backend no longer runs them either. Returns how many were taken out.
 */
static int drop_refused(struct lines *L, const struct rp_script *s, const struct rp_collect *K,
			bool verbose)
{
	const struct rp_case *c = &s->cases[0];
	int n = 0, w = 0;
	bool *gone = calloc((size_t)L->n + 1, sizeof(bool));

	if (!gone) {
		perror("socktab replay");
		exit(2);
	}
	for (int i = 0; i < c->nops; i++) {
		if (!K->got[i] || K->o[i].err != RP_ESCRIPT || c->ops[i].line >= L->n)
			continue;
		gone[c->ops[i].line] = true;
		if (verbose)
			printf("  dropped line %d: %s (%s)\n", c->ops[i].line + 1,
			       L->v[c->ops[i].line], K->o[i].reason);
	}
	for (int i = 0; i < L->n; i++) {
		if (gone[i]) {
			free(L->v[i]);
			n++;
		} else {
			L->v[w++] = L->v[i];
		}
	}
	L->n = w;
	free(gone);
	return n;
}

int rp_fuzz(long n, uint64_t seed, bool verbose)
{
	long nondet = 0, ndev = 0, nhist = 0, refused = 0, unrunnable = 0;
	char name[64];

	rp_fast_waits = 1;
	for (long k = 0; k < n; k++) {
		uint64_t st = seed * 0x100000001b3ull + (uint64_t)k, sseed = rnext(&st);
		struct lines L = { 0 };
		struct rp_script *s = NULL;
		struct rp_collect K, S;
		int d;

		rp_progress(k, n);
		snprintf(name, sizeof(name), "random-%llu-%ld", (unsigned long long)seed, k);
		gen_script(sseed, &L);
		nhist += is_history_script(sseed);
		ndev += !is_history_script(sseed) && is_dev_script(sseed);
		for (int tries = 0;; tries++) {
			d = diff_text(name, &L, NULL, &s, &K, &S);
			if (d == -2) {
				char *t = lines_join(&L, NULL);

				rp_progress_clear();
				fprintf(stderr, "socktab replay: generated script does not parse:\n%s", t);
				free(t);
				return 2;
			}
			if (d != -3 || tries == 3)
				break;
			/* the traffic rule refused statements: run the script without them */
			refused += drop_refused(&L, s, &K, verbose);
			rp_collect_free(&K);
			rp_collect_free(&S);
			rp_free_script(s);
		}
		if (d == -3) {
			/* still refusing after three rounds (the refusals depend on random ports) */
			unrunnable++;
			rp_collect_free(&K);
			rp_collect_free(&S);
			rp_free_script(s);
			lines_free(&L);
			continue;
		}
		if (verbose && d < 0) {
			printf("script %ld: %d lines, agree\n", k, L.n);
		} else if (verbose) {
			char kt[128] = "?", stt[128] = "?";

			if (K.got[d])
				outcome_text(s, &s->cases[0].ops[d], &K.o[d], kt, sizeof(kt));
			if (S.got[d])
				outcome_text(s, &s->cases[0].ops[d], &S.o[d], stt, sizeof(stt));
			printf("script %ld: %d lines, DIFFER at line %d: %s: kernel %s, socktab %s\n", k,
			       L.n, s->cases[0].ops[d].line + 1, s->lines[s->cases[0].ops[d].line].text,
			       kt, stt);
		}
		if (d >= 0) {
			/* Rule out the kernel's own randomness (port offsets, parity under
			 * exhaustion, which port UDP bind(0) shares): the kernel must give the
			 * same outcomes twice more and never socktab's in up to six runs, and
			 * socktab, which draws its ports anew each run, must not give the
			 * kernel's in twelve. */
			bool det = true;

			for (int rep = 0; rep < 6 && det; rep++) {
				struct rp_collect K2;

				rp_run_backend(RP_BE_KERNEL, s, &s->cases[0], &K2);
				if (rep < 2)
					det = first_diff(&s->cases[0], &K, &K2) < 0;
				if (first_diff(&s->cases[0], &S, &K2) < 0)
					det = false;
				rp_collect_free(&K2);
			}
			if (det && socktab_matches(s, &K, 12))
				det = false;
			if (!det) {
				nondet++;
				d = -1;
			}
		}
		if (d >= 0) {
			bool *drop = calloc((size_t)L.n, sizeof(bool));
			struct rp_script *m = NULL;
			struct rp_collect MK, MS;
			int md;

			rp_collect_free(&K);
			rp_collect_free(&S);
			rp_free_script(s);
			/* ddmin by single lines, repeated to a fixed point: scripts are short. A
			 * repeat block goes as a whole (its opening line takes the body and the
			 * closing brace with it), so what is left always parses. */
			for (bool changed = true; changed;) {
				changed = false;
				for (int i = L.n - 1; i >= 0; i--) {
					struct rp_script *t = NULL;
					struct rp_collect TK, TS;
					int td, end = block_end(&L, i);

					if (drop[i] || !strcmp(L.v[i], "}"))
						continue;
					for (int j = i; j <= end; j++)
						drop[j] = true;
					td = diff_text(name, &L, drop, &t, &TK, &TS);
					if (td >= 0) {
						changed = true;
					} else {
						for (int j = i; j <= end; j++)
							drop[j] = false;
					}
					if (td != -2) {
						rp_collect_free(&TK);
						rp_collect_free(&TS);
						rp_free_script(t);
					}
				}
			}
			md = diff_text(name, &L, drop, &m, &MK, &MS);
			if (md >= 0) {
				/* A real difference shows every time. One that comes and goes depends on
				 * which ports the two sides drew at random (e.g. whether a bind(0) hit
				 * another socket's port): rerun the minimized script and call it
				 * non-reproducible if it ever agrees. */
				bool flaky = false;

				for (int r = 0; r < 8 && !flaky; r++) {
					struct rp_script *t = NULL;
					struct rp_collect TK, TS;
					int td = diff_text(name, &L, drop, &t, &TK, &TS);

					flaky = td == -1 || td == -3;
					if (td != -2) {
						rp_collect_free(&TK);
						rp_collect_free(&TS);
						rp_free_script(t);
					}
				}
				/* The kernel's port choices repeat from run to run (its secrets
				 * last until reboot) while socktab draws new ones each time: let
				 * socktab alone try more often to give the kernel's outcomes. */
				flaky = flaky || socktab_matches(m, &MK, 24);
				if (flaky) {
					rp_collect_free(&MK);
					rp_collect_free(&MS);
					rp_free_script(m);
					free(drop);
					lines_free(&L);
					nondet++;
					continue;
				}
			}
			if (md == -1 || md == -3) {
				/* Gone after minimization: run the whole script again a few times. A
				 * disagreement that does not come back every time was timing or random
				 * port choice on one side (both backends pick ports at random); count it
				 * as non-reproducible instead of failing. */
				bool again = false;

				rp_collect_free(&MK);
				rp_collect_free(&MS);
				rp_free_script(m);
				again = true;
				for (int r = 0; r < 5 && again; r++) {
					struct rp_script *t = NULL;
					struct rp_collect TK, TS;
					int td = diff_text(name, &L, NULL, &t, &TK, &TS);

					again = td >= 0; /* must come back every time */
					if (td != -2) {
						rp_collect_free(&TK);
						rp_collect_free(&TS);
						rp_free_script(t);
					}
				}
				if (!again) {
					free(drop);
					lines_free(&L);
					nondet++;
					continue;
				}
				md = diff_text(name, &L, drop, &m, &MK, &MS);
			}
			rp_progress_clear();
			printf("DISAGREEMENT: --random %ld --seed %llu, script %ld; minimized "
			       "(expectations are the kernel's):\n",
			       n, (unsigned long long)seed, k);
			/* The joined script's lines (what was parsed), for the repeat lines that
			 * have no statement of their own. */
			int *joined = calloc((size_t)L.n + 1, sizeof(int)), nj = 0, prev = 0;

			if (!joined) {
				perror("socktab replay");
				exit(2);
			}
			for (int i = 0; i < L.n; i++)
				if (!drop[i])
					joined[nj++] = i;
			for (int i = 0; md >= 0 && i <= m->nlines; i++) {
				const struct rp_case *c = &m->cases[0];
				char kt[128] = "?", stt[128] = "?", stmt[256], *arrow;
				int oi = -1, ln = i < m->nlines ? m->lines[i].lineno : nj + 1;

				for (int j = prev + 1; j < ln && j <= nj; j++) {
					const char *t = L.v[joined[j - 1]];

					if (!strncmp(t, "repeat ", 7) || !strcmp(t, "}"))
						printf("%s\n", t);
				}
				prev = ln;
				if (i == m->nlines)
					break;

				for (int j = 0; j < c->nops; j++)
					if (c->ops[j].line == i)
						oi = j;
				if (oi >= 0 && MK.got[oi])
					outcome_text(m, &c->ops[oi], &MK.o[oi], kt, sizeof(kt));
				if (oi >= 0 && MS.got[oi])
					outcome_text(m, &c->ops[oi], &MS.o[oi], stt, sizeof(stt));
				snprintf(stmt, sizeof(stmt), "%s", m->lines[i].text);
				if ((arrow = strstr(stmt, " =>")))
					*arrow = 0;
				if (oi == md)
					printf("# socktab gives: %s\n", stt);
				if (!strcmp(kt, "ok"))
					printf("%s\n", stmt);
				else
					printf("%s => %s\n", stmt, kt);
			}
			free(joined);
			if (md < 0) {
				/* Flaky: show the whole generated script so it can be replayed. */
				printf("(the disagreement did not reproduce after minimization; the "
				       "generated script follows)\n");
				for (int i = 0; i < L.n; i++)
					printf("%s\n", L.v[i]);
			}
			if (md >= 0) {
				rp_collect_free(&MK);
				rp_collect_free(&MS);
			}
			if (md != -2)
				rp_free_script(m);
			free(drop);
			lines_free(&L);
			printf("%ld passed, 1 failed\n", k);
			return 1;
		}
		rp_collect_free(&K);
		rp_collect_free(&S);
		rp_free_script(s);
		lines_free(&L);
	}
	rp_progress_clear();
	printf("random: %ld scripts (%ld with devices, %ld history), seed %llu, no disagreement "
	       "(%ld skipped: outcome not reproducible; %ld statements the traffic rule refused "
	       "were dropped, %ld scripts skipped for them)\n",
	       n, ndev, nhist, (unsigned long long)seed, nondet, refused, unrunnable);
	printf("%ld passed, 0 failed\n", n);
	return 0;
}

