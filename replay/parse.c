/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: the `.sock` parser (../shared/spec/script-format.md). A whole file is parsed
 * before anything runs, so a bad script is rejected with a file:line message and never half-run.
 * The result is a struct rp_script (script.h): cases of flat operations, repeat blocks unrolled,
 * %i substituted, socket names interned to slot numbers.
 *
 * Every statement is one row of the statement table (stmts[] below): its word, whether it is
 * written `WORD ...` or `NAME = WORD ...`, the operand counts it takes, and its functions: parse
 * (the operands), expect (the expectation after '=>') and exec (exec.c, how it runs). The common
 * code splits a line at '=>', finds the row, checks the operand count and the socket name, and
 * calls the row's functions; a new statement is a new row and its small functions.
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "replay.h"
#include "script.h"
#include "socktab/socktab.h"

/* ---------------------------------------------------------------- names and tables */

static const struct {
	const char *name;
	int err;
} errnames[] = {
	/* canonical spellings first: rp_errno_name() returns the first match */
	{ "EPERM", EPERM },
	{ "ENOENT", ENOENT },
	{ "EINTR", EINTR },
	{ "EIO", EIO },
	{ "EBADF", EBADF },
	{ "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM },
	{ "EACCES", EACCES },
	{ "EFAULT", EFAULT },
	{ "EBUSY", EBUSY },
	{ "EEXIST", EEXIST },
	{ "ENODEV", ENODEV },
	{ "EINVAL", EINVAL },
	{ "ENFILE", ENFILE },
	{ "EMFILE", EMFILE },
	{ "ENOSPC", ENOSPC },
	{ "EPIPE", EPIPE },
	{ "ERANGE", ERANGE },
	{ "EDEADLK", EDEADLK },
	{ "ENOSYS", ENOSYS },
	{ "ENOTSOCK", ENOTSOCK },
	{ "EDESTADDRREQ", EDESTADDRREQ },
	{ "EMSGSIZE", EMSGSIZE },
	{ "EPROTOTYPE", EPROTOTYPE },
	{ "ENOPROTOOPT", ENOPROTOOPT },
	{ "EPROTONOSUPPORT", EPROTONOSUPPORT },
	{ "ESOCKTNOSUPPORT", ESOCKTNOSUPPORT },
	{ "EOPNOTSUPP", EOPNOTSUPP },
	{ "EPFNOSUPPORT", EPFNOSUPPORT },
	{ "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "EADDRINUSE", EADDRINUSE },
	{ "EADDRNOTAVAIL", EADDRNOTAVAIL },
	{ "ENETDOWN", ENETDOWN },
	{ "ENETUNREACH", ENETUNREACH },
	{ "ENETRESET", ENETRESET },
	{ "ECONNABORTED", ECONNABORTED },
	{ "ECONNRESET", ECONNRESET },
	{ "ENOBUFS", ENOBUFS },
	{ "EISCONN", EISCONN },
	{ "ENOTCONN", ENOTCONN },
	{ "ESHUTDOWN", ESHUTDOWN },
	{ "ETIMEDOUT", ETIMEDOUT },
	{ "ECONNREFUSED", ECONNREFUSED },
	{ "EHOSTDOWN", EHOSTDOWN },
	{ "EHOSTUNREACH", EHOSTUNREACH },
	{ "EALREADY", EALREADY },
	{ "EINPROGRESS", EINPROGRESS },
	/* Linux aliases: same values, accepted in scripts, never printed */
	{ "EWOULDBLOCK", EWOULDBLOCK },
	{ "ENOTSUP", ENOTSUP },
	{ "EDEADLOCK", EDEADLOCK },
};

const char *rp_errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return NULL;
}

static int errno_by_name(const char *s)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (!strcmp(errnames[i].name, s))
			return errnames[i].err;
	return -1;
}

static const char *const state_names[] = {
	NULL,	     "ESTABLISHED", "SYN_SENT",	 "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE",	    "CLOSE_WAIT", "LAST_ACK", "LISTEN",    "CLOSING",
	"NEW_SYN_RECV",
};

const char *rp_state_name(int st)
{
	if (st <= 0 || st >= (int)(sizeof(state_names) / sizeof(state_names[0])))
		return NULL;
	return state_names[st];
}

static const struct {
	const char *name;
	int level, opt;
	enum rp_optkind kind;
} options[] = {
	{ "SO_REUSEADDR", SOL_SOCKET, SO_REUSEADDR, RP_OPT_INT },
	{ "SO_REUSEPORT", SOL_SOCKET, SO_REUSEPORT, RP_OPT_INT },
	{ "SO_LINGER", SOL_SOCKET, SO_LINGER, RP_OPT_LINGER },
	{ "SO_ERROR", SOL_SOCKET, SO_ERROR, RP_OPT_ERROR },
	{ "SO_ACCEPTCONN", SOL_SOCKET, SO_ACCEPTCONN, RP_OPT_INT },
	{ "IPV6_V6ONLY", IPPROTO_IPV6, IPV6_V6ONLY, RP_OPT_INT },
	{ "IP_BIND_ADDRESS_NO_PORT", IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, RP_OPT_INT },
	{ "IP_LOCAL_PORT_RANGE", IPPROTO_IP, IP_LOCAL_PORT_RANGE, RP_OPT_RANGE },
	/* devices (R87, R89) */
	{ "SO_BINDTODEVICE", SOL_SOCKET, SO_BINDTODEVICE, RP_OPT_DEVNAME },
	{ "SO_BINDTOIFINDEX", SOL_SOCKET, SO_BINDTOIFINDEX, RP_OPT_IFINDEX },
	{ "IP_FREEBIND", IPPROTO_IP, IP_FREEBIND, RP_OPT_INT },
	{ "IP_TRANSPARENT", IPPROTO_IP, IP_TRANSPARENT, RP_OPT_INT },
	{ "IPV6_FREEBIND", IPPROTO_IPV6, IPV6_FREEBIND, RP_OPT_INT },
	{ "IPV6_TRANSPARENT", IPPROTO_IPV6, IPV6_TRANSPARENT, RP_OPT_INT },
	/* the receiving CPU (R105-R107) */
	{ "SO_INCOMING_CPU", SOL_SOCKET, SO_INCOMING_CPU, RP_OPT_INT },
	{ "SO_DETACH_REUSEPORT_BPF", SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, RP_OPT_INT },
	{ "SO_ATTACH_REUSEPORT_CBPF", SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, RP_OPT_INT },
};

static const char *const sysctl_keys[] = {
	"net.ipv4.ip_local_port_range",	 "net.ipv4.ip_local_reserved_ports",
	"net.ipv4.ip_autobind_reuse",	 "net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_tw_reuse",	 "net.ipv4.tcp_tw_reuse_delay",
	"net.ipv4.tcp_fastopen",	 "net.ipv4.tcp_syncookies",
	"net.core.somaxconn",
	/* request sockets and their migration (R112-R124) */
	"net.ipv4.tcp_migrate_req",	 "net.ipv4.tcp_max_syn_backlog",
	/* devices and addresses */
	"net.ipv4.ip_nonlocal_bind",	 "net.ipv6.ip_nonlocal_bind",
	"net.ipv4.tcp_l3mdev_accept",	 "net.ipv4.udp_l3mdev_accept",
	"net.ipv4.tcp_rfc1337",
};

/* ---------------------------------------------------------------- parser */

struct rp_parser {
	struct rp_script *s;
	const char *file;
	int lineno;
	bool quiet;    /* the fuzzer's minimizer parses broken scripts on purpose */
	bool *defined; /* per slot, in the current case */
	int ndefined;
	bool *dev_known; /* per device slot: lo, or `link add` earlier in the current case */
	int ndev_known;
	int nops_cap;
	char err[256];
};

void *rp_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		perror("socktab replay");
		exit(2);
	}
	return p;
}

char *rp_xstrdup(const char *s)
{
	return strcpy(rp_xrealloc(NULL, strlen(s) + 1), s);
}

static int fail(struct rp_parser *P, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(P->err, sizeof(P->err), "%s:%d: ", P->file, P->lineno);

	va_start(ap, fmt);
	vsnprintf(P->err + n, sizeof(P->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_num(struct rp_parser *P, const char *t, long lo, long hi, long *out)
{
	char *end;
	long v;

	*out = lo; /* set on every path: -O3 cannot see that fail() returns nonzero */
	if (!t || !*t || !(isdigit((unsigned char)t[0]) || (t[0] == '-' && isdigit((unsigned char)t[1]))))
		return fail(P, "bad number '%s'", t ? t : "");
	errno = 0;
	v = strtol(t, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return fail(P, "bad number '%s' (want %ld..%ld)", t, lo, hi);
	*out = v;
	return 0;
}

static bool valid_name(const char *t)
{
	if (!*t || !(isalpha((unsigned char)*t) || *t == '_'))
		return false;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && *t != '_' && *t != '-' && *t != '.')
			return false;
	return true;
}

static int intern(struct rp_script *s, const char *name)
{
	for (int i = 0; i < s->nnames; i++)
		if (!strcmp(s->names[i], name))
			return i;
	s->names = rp_xrealloc(s->names, sizeof(char *) * (size_t)(s->nnames + 1));
	s->names[s->nnames] = rp_xstrdup(name);
	return s->nnames++;
}

static void grow_defined(struct rp_parser *P)
{
	if (P->ndefined < P->s->nnames) {
		P->defined = rp_xrealloc(P->defined, (size_t)P->s->nnames);
		memset(P->defined + P->ndefined, 0, (size_t)(P->s->nnames - P->ndefined));
		P->ndefined = P->s->nnames;
	}
}

/* A socket name used by a statement: must have been assigned earlier in the case. */
static int use_name(struct rp_parser *P, const char *t, int *slot)
{
	if (!t)
		return fail(P, "missing socket name");
	if (!valid_name(t))
		return fail(P, "bad socket name '%s'", t);
	*slot = intern(P->s, t);
	grow_defined(P);
	if (!P->defined[*slot])
		return fail(P, "unknown socket name '%s'", t);
	return 0;
}

static int def_name(struct rp_parser *P, const char *t, int *slot)
{
	if (!valid_name(t))
		return fail(P, "bad socket name '%s'", t);
	*slot = intern(P->s, t);
	grow_defined(P);
	P->defined[*slot] = true;
	return 0;
}

/* A device name: [a-z][a-z0-9]{0,7}. */
static bool valid_dev(const char *t)
{
	size_t n = strlen(t);

	if (n < 1 || n > 8 || !(*t >= 'a' && *t <= 'z'))
		return false;
	for (; *t; t++)
		if (!((*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9')))
			return false;
	return true;
}

/* The device slot of @name (slot 0 is lo, which every script has). */
static int intern_dev(struct rp_script *s, const char *name)
{
	if (!s->ndevs) {
		s->devs = rp_xrealloc(NULL, sizeof(char *));
		s->devs[0] = rp_xstrdup("lo");
		s->ndevs = 1;
	}
	for (int i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i], name))
			return i;
	s->devs = rp_xrealloc(s->devs, sizeof(char *) * (size_t)(s->ndevs + 1));
	s->devs[s->ndevs] = rp_xstrdup(name);
	return s->ndevs++;
}

static void grow_dev_known(struct rp_parser *P)
{
	if (P->ndev_known < P->s->ndevs) {
		P->dev_known = rp_xrealloc(P->dev_known, (size_t)P->s->ndevs);
		memset(P->dev_known + P->ndev_known, 0, (size_t)(P->s->ndevs - P->ndev_known));
		P->ndev_known = P->s->ndevs;
	}
}

/*
 * A device name in a statement: its slot into *@slot. With @need_index, the statement needs
 * the device's ifindex (a scope, SO_BINDTOIFINDEX DEV), so the device must be lo or have been
 * added by `link add` earlier in the case (it stays known after `link del`).
 */
static int use_dev(struct rp_parser *P, const char *t, bool need_index, int *slot)
{
	if (!t)
		return fail(P, "missing device name");
	if (!valid_dev(t))
		return fail(P, "bad device name '%s' (want [a-z][a-z0-9]{0,7})", t);
	*slot = intern_dev(P->s, t);
	grow_dev_known(P);
	P->dev_known[0] = true;
	if (need_index && !P->dev_known[*slot])
		return fail(P, "device '%s' has no ifindex here: no 'link add %s dummy' before", t, t);
	return 0;
}

static int parse_port(struct rp_parser *P, const char *t, struct rp_port *p)
{
	long v;

	if (!t)
		return fail(P, "missing port");
	if (t[0] == '$') {
		p->value = 0;
		return use_name(P, t + 1, &p->slot);
	}
	p->slot = -1;
	if (parse_num(P, t, 0, 65535, &v))
		return -1;
	p->value = (int)v;
	return 0;
}

/*
 * The IPv4 addresses a script may use: the wildcard, 127.0.0.0/8, and the three documentation
 * ranges (RFC 5737). Every packet of the kernel backend must stay in the case's namespace: a
 * documentation address is only reachable while a device of the case holds it.
 */
static bool allowed_v4(const uint8_t *b)
{
	return !memcmp(b, "\0\0\0\0", 4) || b[0] == 127 || !memcmp(b, "\xc0\x00\x02", 3) ||
	       !memcmp(b, "\xc6\x33\x64", 3) || !memcmp(b, "\xcb\x00\x71", 3);
}

static bool is_mapped(const uint8_t *b)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(b, mapped, 12);
}

/* 2001:db8::/32 (RFC 3849). */
static bool is_doc6(const uint8_t *b)
{
	return !memcmp(b, "\x20\x01\x0d\xb8", 4);
}

/* fe80::/64: the link-local prefix as addrconf uses it. */
static bool is_ll64(const uint8_t *b)
{
	return !memcmp(b, "\xfe\x80\0\0\0\0\0\0", 8);
}

#define ALLOWED_ADDRS                                                                       \
	"0.0.0.0, 127.0.0.0/8, 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, ::, ::1, "   \
	"2001:db8::/32, fe80::/64, and the IPv4 ones as ::ffff:a.b.c.d"

/* The scope of `ADDR%SCOPE`: a device name (known in the case) or a decimal ifindex. */
static int parse_scope(struct rp_parser *P, const char *t, struct rp_addr *a)
{
	long long v;
	char *end;
	int slot;

	if (isdigit((unsigned char)t[0])) {
		errno = 0;
		v = strtoll(t, &end, 10);
		if (*end || errno || v < 0 || v > 4294967295LL)
			return fail(P, "bad scope '%%%s' (want %%DEV or %%N)", t);
		a->scope_id = (uint32_t)v;
		return 0;
	}
	if (!isalpha((unsigned char)t[0]))
		return fail(P, "bad scope '%%%s' (want %%DEV or %%N)", t);
	if (use_dev(P, t, true, &slot))
		return -1;
	a->scope_dev = slot + 1;
	return 0;
}

/*
 * An address: a wildcard, loopback or documentation address (ALLOWED_ADDRS), IPv6 ones with an
 * optional scope `%DEV` or `%N`. Anything else is refused: the kernel backend must never send a
 * packet toward an address that no device of the case can hold.
 */
static int parse_addr(struct rp_parser *P, const char *t, struct rp_addr *a)
{
	char buf[INET6_ADDRSTRLEN + 16];
	const char *pct;
	struct in_addr a4;
	struct in6_addr a6;

	if (!t)
		return fail(P, "missing address");
	memset(a, 0, sizeof(*a));
	pct = strchr(t, '%');
	if (strlen(t) >= sizeof(buf))
		return fail(P, "bad address '%s'", t);
	snprintf(buf, sizeof(buf), "%s", t);
	if (pct)
		buf[pct - t] = 0;
	if (!strchr(buf, ':') && inet_pton(AF_INET, buf, &a4) == 1) {
		if (pct)
			return fail(P, "address %s: a scope needs an IPv6 address", t);
		if (!allowed_v4((const uint8_t *)&a4))
			return fail(P, "address %s is not allowed (allowed: " ALLOWED_ADDRS ")", t);
		a->family = AF_INET;
		memcpy(a->bytes, &a4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &a6) == 1) {
		const uint8_t *b = a6.s6_addr;
		bool ok = IN6_IS_ADDR_UNSPECIFIED(&a6) || IN6_IS_ADDR_LOOPBACK(&a6) || is_doc6(b) ||
			  is_ll64(b) || (is_mapped(b) && allowed_v4(b + 12));

		if (!ok)
			return fail(P, "address %s is not allowed (allowed: " ALLOWED_ADDRS ")", t);
		a->family = AF_INET6;
		memcpy(a->bytes, &a6, 16);
		return pct ? parse_scope(P, pct + 1, a) : 0;
	}
	return fail(P, "bad address '%s'", t);
}

/*
 * ADDR/PLEN of `addr add|del`: a documentation address whose prefix stays inside its range
 * (IPv4 /24../32, 2001:db8:: /32../128, fe80:: /64../128), no scope.
 */
static int parse_prefix(struct rp_parser *P, const char *t, struct rp_addr *a, int *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	long v;
	int lo, hi;

	if (!t || strlen(t) >= sizeof(buf) || !(slash = strchr(strcpy(buf, t), '/')))
		return fail(P, "bad prefix '%s' (want ADDR/PLEN)", t ? t : "");
	*slash = 0;
	if (strchr(buf, '%'))
		return fail(P, "prefix %s: no scope here (the device is named by 'dev')", t);
	if (parse_addr(P, buf, a))
		return -1;
	if (a->family == AF_INET && a->bytes[0] != 0 && a->bytes[0] != 127) {
		lo = 24;
		hi = 32;
	} else if (a->family == AF_INET6 && is_doc6(a->bytes)) {
		lo = 32;
		hi = 128;
	} else if (a->family == AF_INET6 && is_ll64(a->bytes)) {
		lo = 64;
		hi = 128;
	} else {
		return fail(P, "prefix %s: want a documentation address (192.0.2.0/24, "
			       "198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, fe80::/64)", t);
	}
	if (parse_num(P, slash + 1, lo, hi, &v))
		return fail(P, "prefix %s: the length must be %d..%d, inside the range", t, lo, hi);
	*plen = (int)v;
	return 0;
}

static int find_option(struct rp_parser *P, const char *t, struct rp_op *op)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (t && !strcmp(options[i].name, t)) {
			op->level = options[i].level;
			op->optname = options[i].opt;
			op->optkind = options[i].kind;
			return 0;
		}
	}
	return fail(P, "unknown socket option '%s'", t ? t : "");
}

/* ---------------------------------------------------------------- expectations */

/* An action's expectation: `ok` or an errno name (none: ok). */
static int parse_err_expect(struct rp_parser *P, char **rhs, int nrhs, struct rp_op *op)
{
	if (nrhs == 0) {
		op->expect_err = 0;
		return 0;
	}
	if (nrhs != 1)
		return fail(P, "expected 'ok' or one errno name after '=>'");
	if (!strcmp(rhs[0], "ok")) {
		op->expect_err = 0;
		return 0;
	}
	op->expect_err = errno_by_name(rhs[0]);
	if (op->expect_err < 0)
		return fail(P, "unknown errno name '%s'", rhs[0]);
	return 0;
}

/* A check's expectation may be one errno name instead of a value (`peer s => ENOTCONN`). */
static bool rhs_is_errno(char **rhs, int nrhs, struct rp_op *op)
{
	int e;

	if (nrhs != 1 || (e = errno_by_name(rhs[0])) < 0)
		return false;
	op->expect_err = e;
	return true;
}

/* ---------------------------------------------------------------- statements: actions */

/* NAME = socket tcp|udp 4|6 [uid N] */
static int p_socket(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (strcmp(w->arg[0], "tcp") && strcmp(w->arg[0], "udp"))
		return fail(P, "socket type must be tcp or udp, not '%s'", w->arg[0]);
	op->udp = !strcmp(w->arg[0], "udp");
	if (strcmp(w->arg[1], "4") && strcmp(w->arg[1], "6"))
		return fail(P, "socket family must be 4 or 6, not '%s'", w->arg[1]);
	op->family = w->arg[1][0] == '4' ? AF_INET : AF_INET6;
	op->uid = 0;
	if (w->narg == 4) {
		if (strcmp(w->arg[2], "uid"))
			return fail(P, "expected 'uid N', got '%s'", w->arg[2]);
		if (parse_num(P, w->arg[3], 0, 65534, &v))
			return -1;
		op->uid = (int)v;
	}
	return 0;
}

/* NAME = accept LISTENER */
static int p_accept(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	return use_name(P, w->arg[0], &op->slot2);
}

/* sysctl KEY VALUE...: the key must be one the format allows; the value is passed as written. */
static int p_sysctl(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	size_t n = 1, k;

	for (k = 0; k < sizeof(sysctl_keys) / sizeof(sysctl_keys[0]); k++)
		if (!strcmp(sysctl_keys[k], w->arg[0]))
			break;
	if (k == sizeof(sysctl_keys) / sizeof(sysctl_keys[0]))
		return fail(P, "sysctl key '%s' not allowed", w->arg[0]);
	op->text = rp_xstrdup(w->arg[0]);
	for (int i = 1; i < w->narg; i++)
		n += strlen(w->arg[i]) + 1;
	op->text2 = rp_xrealloc(NULL, n);
	op->text2[0] = 0;
	for (int i = 1; i < w->narg; i++) {
		if (i > 1)
			strcat(op->text2, " ");
		strcat(op->text2, w->arg[i]);
	}
	return 0;
}

/* sleep MS */
static int p_sleep(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (parse_num(P, w->arg[0], 0, 3000, &v))
		return -1;
	op->ival[0] = (int)v;
	return 0;
}

/* cpu N: a CPU number the kernel's cpu_set_t can name. */
static int p_cpu(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (parse_num(P, w->arg[0], 0, CPU_SETSIZE - 1, &v))
		return -1;
	op->ival[0] = (int)v;
	return 0;
}

/* HEX of a bytes:HEX token (at most 128 bytes; @empty: none at all is allowed). */
static int parse_hex(struct rp_parser *P, struct rp_op *op, const char *h, bool empty)
{
	size_t n = strlen(h);

	if (n % 2 || n > 256 || (!empty && !n))
		return fail(P, "bad bytes:HEX value");
	op->bytes = rp_xrealloc(NULL, n / 2);
	op->nbytes = (int)(n / 2);
	for (size_t k = 0; k < n / 2; k++) {
		unsigned x;

		if (!isxdigit((unsigned char)h[2 * k]) || !isxdigit((unsigned char)h[2 * k + 1]) ||
		    sscanf(h + 2 * k, "%2x", &x) != 1)
			return fail(P, "bad bytes:HEX value");
		op->bytes[k] = (uint8_t)x;
	}
	return 0;
}

/* setsockopt's raw value bytes:HEX (option-length validation). */
static int p_optbytes(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	if (w->narg != 3)
		return fail(P, "bad bytes:HEX value");
	return parse_hex(P, op, w->arg[2] + 6, true);
}

/* One classic BPF instruction (struct sock_filter) into op->bytes at index @i. */
static void put_insn(struct rp_op *op, int i, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	struct sock_filter f = { code, jt, jf, k };

	memcpy(op->bytes + (size_t)i * sizeof(f), &f, sizeof(f));
}

/*
 * attach NAME PROG: SO_ATTACH_REUSEPORT_CBPF with a built-in program or raw instructions:
 *   const N     return N
 *   byte N      return the payload's byte N (past the end: the program returns 0)
 *   mod N       the kernel selftest's: the payload's first 32-bit word (big-endian) % N
 *   cpu         the kernel selftest's SKF_AD_CPU program
 *   insns C:JT:JF:K...  the instructions as written (numbers in C syntax)
 *   empty       no instructions (len 0);  null  a NULL filter pointer with len 1
 */
static int p_attach(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	const char *what = w->arg[1];
	long v = 0;
	int n;

	if (!strcmp(what, "const") || !strcmp(what, "byte") || !strcmp(what, "mod")) {
		if (w->narg != 3 || parse_num(P, w->arg[2], 0, 4294967295L, &v))
			return w->narg != 3 ? fail(P, "usage: attach NAME const|byte|mod N") : -1;
	} else if (!strcmp(what, "insns")) {
		if (w->narg < 3 || w->narg > 3 + 64)
			return fail(P, "usage: attach NAME insns CODE:JT:JF:K... (1 to 64)");
	} else if (strcmp(what, "cpu") && strcmp(what, "empty") && strcmp(what, "null")) {
		return fail(P, "usage: attach NAME const N|byte N|mod N|cpu|insns ...|empty|null");
	} else if (w->narg != 2) {
		return fail(P, "usage: attach NAME cpu|empty|null");
	}
	n = !strcmp(what, "insns") ? w->narg - 2 : !strcmp(what, "const") || !strcmp(what, "null") ? 1
		: !strcmp(what, "empty") ? 0 : !strcmp(what, "mod") ? 3 : 2;
	op->nbytes = n * (int)sizeof(struct sock_filter);
	op->bytes = rp_xrealloc(NULL, (size_t)op->nbytes + 1);
	op->ival[0] = !strcmp(what, "null");
	if (!strcmp(what, "const") || !strcmp(what, "null")) {
		put_insn(op, 0, BPF_RET | BPF_K, 0, 0, (uint32_t)v);
	} else if (!strcmp(what, "byte")) {
		put_insn(op, 0, BPF_LD | BPF_B | BPF_ABS, 0, 0, (uint32_t)v);
		put_insn(op, 1, BPF_RET | BPF_A, 0, 0, 0);
	} else if (!strcmp(what, "mod")) {
		if (!v)
			return fail(P, "attach NAME mod N: N must be above 0");
		put_insn(op, 0, BPF_LD | BPF_W | BPF_ABS, 0, 0, 0);
		put_insn(op, 1, BPF_ALU | BPF_MOD | BPF_K, 0, 0, (uint32_t)v);
		put_insn(op, 2, BPF_RET | BPF_A, 0, 0, 0);
	} else if (!strcmp(what, "cpu")) {
		put_insn(op, 0, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(SKF_AD_OFF + SKF_AD_CPU));
		put_insn(op, 1, BPF_RET | BPF_A, 0, 0, 0);
	}
	for (int i = 0; !strcmp(what, "insns") && i < n; i++) {
		unsigned long f[4];
		const char *s = w->arg[2 + i];
		char *end;

		for (int j = 0; j < 4; j++) {
			errno = 0;
			f[j] = strtoul(s, &end, 0);
			if (errno || end == s || *end != (j < 3 ? ':' : '\0') ||
			    f[j] > (j == 0 ? 0xffffUL : j < 3 ? 0xffUL : 0xffffffffUL))
				return fail(P, "bad instruction: want CODE:JT:JF:K");
			s = end + 1;
		}
		put_insn(op, i, (uint16_t)f[0], (uint8_t)f[1], (uint8_t)f[2], (uint32_t)f[3]);
	}
	return 0;
}

/* setsockopt NAME OPT VALUE, by the option's kind: an int, LO HI ports, ONOFF SECS, or bytes. */
static int p_setsockopt(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (find_option(P, w->arg[1], op))
		return -1;
	if (!strncmp(w->arg[2], "bytes:", 6))
		return p_optbytes(P, op, w);
	switch (op->optkind) {
	case RP_OPT_RANGE:
		if (w->narg != 4)
			return fail(P, "usage: setsockopt NAME IP_LOCAL_PORT_RANGE LO HI");
		if (parse_port(P, w->arg[2], &op->p1) || parse_port(P, w->arg[3], &op->p2))
			return -1;
		return 0;
	case RP_OPT_DEVNAME:
		/* SO_BINDTODEVICE DEV|none: any valid name (a missing device gives ENODEV) */
		if (w->narg != 3)
			return fail(P, "usage: setsockopt NAME SO_BINDTODEVICE DEV|none");
		if (strcmp(w->arg[2], "none")) {
			int slot;

			if (use_dev(P, w->arg[2], false, &slot))
				return -1;
			op->text = rp_xstrdup(w->arg[2]);
		}
		return 0;
	case RP_OPT_IFINDEX:
		/* SO_BINDTOIFINDEX DEV|N */
		if (w->narg != 3)
			return fail(P, "usage: setsockopt NAME SO_BINDTOIFINDEX DEV|N");
		if (isalpha((unsigned char)w->arg[2][0])) {
			int slot;

			if (use_dev(P, w->arg[2], true, &slot))
				return -1;
			op->dev = slot + 1;
			return 0;
		}
		if (parse_num(P, w->arg[2], -2147483647L, 2147483647L, &v))
			return -1;
		op->ival[0] = (int)v;
		return 0;
	case RP_OPT_LINGER:
		if (w->narg != 4)
			return fail(P, "usage: setsockopt NAME SO_LINGER ONOFF SECS");
		if (parse_num(P, w->arg[2], -2147483647L, 2147483647L, &v))
			return -1;
		op->ival[0] = (int)v;
		if (parse_num(P, w->arg[3], -2147483647L, 2147483647L, &v))
			return -1;
		op->ival[1] = (int)v;
		return 0;
	default:
		if (w->narg != 3)
			return fail(P, "usage: setsockopt NAME %s VALUE", w->arg[1]);
		if (parse_num(P, w->arg[2], -2147483647L, 2147483647L, &v))
			return -1;
		op->ival[0] = (int)v;
		return 0;
	}
}

/* bind|connect|sendto|fastopen NAME ADDR PORT; sendto NAME ADDR PORT bytes:HEX */
static int p_sockaddr(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	if (parse_addr(P, w->arg[1], &op->addr) || parse_port(P, w->arg[2], &op->p1))
		return -1;
	if (w->narg == 4) {
		if (strncmp(w->arg[3], "bytes:", 6))
			return fail(P, "usage: sendto NAME ADDR PORT [bytes:HEX]");
		return parse_hex(P, op, w->arg[3] + 6, false);
	}
	return 0;
}

/* listen NAME [BACKLOG] */
static int p_listen(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	op->ival[0] = 4096;
	if (w->narg == 2) {
		if (parse_num(P, w->arg[1], -2147483647L, 2147483647L, &v))
			return -1;
		op->ival[0] = (int)v;
	}
	return 0;
}

/*
 * link add DEV dummy | link set DEV up|down | link del DEV. The VRF forms of a later revision
 * (`link add DEV vrf TABLE`, `link set DEV master VRF|nomaster`) are refused by name: the
 * reference kernel has no VRF driver, so no VRF behaviour can be checked.
 */
static int p_link(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	const char *sub = w->arg[0];
	int slot;

	if (!strcmp(sub, "add") && w->narg >= 3 && !strcmp(w->arg[2], "vrf"))
		return fail(P, "link add DEV vrf: no VRF in this revision of the format");
	if (!strcmp(sub, "set") && w->narg >= 3 &&
	    (!strcmp(w->arg[2], "master") || !strcmp(w->arg[2], "nomaster")))
		return fail(P, "link set DEV master|nomaster: no VRF in this revision of the format");
	if (!strcmp(sub, "add")) {
		if (w->narg != 3 || strcmp(w->arg[2], "dummy"))
			return fail(P, "usage: link add DEV dummy");
		op->ival[0] = RP_LINK_ADD;
	} else if (!strcmp(sub, "set")) {
		if (w->narg != 3 || (strcmp(w->arg[2], "up") && strcmp(w->arg[2], "down")))
			return fail(P, "usage: link set DEV up|down");
		op->ival[0] = w->arg[2][0] == 'u' ? RP_LINK_UP : RP_LINK_DOWN;
	} else if (!strcmp(sub, "del")) {
		if (w->narg != 2)
			return fail(P, "usage: link del DEV");
		op->ival[0] = RP_LINK_DEL;
	} else {
		return fail(P, "usage: link add DEV dummy | link set DEV up|down | link del DEV");
	}
	if (use_dev(P, w->arg[1], false, &slot))
		return -1;
	op->dev = slot + 1;
	/* lo holds 127.0.0.0/8 and ::1 for every case: it stays, and stays up */
	if (slot == 0 && op->ival[0] == RP_LINK_DEL)
		return fail(P, "link del lo: lo cannot be removed");
	if (slot == 0 && op->ival[0] == RP_LINK_DOWN)
		return fail(P, "link set lo down: lo must stay up");
	if (op->ival[0] == RP_LINK_ADD) {
		grow_dev_known(P);
		P->dev_known[slot] = true;
	}
	return 0;
}

/* addr add|del ADDR/PLEN dev DEV (four operands; one operand is the `addr` check) */
static int p_addrchg(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	int slot;

	if ((strcmp(w->arg[0], "add") && strcmp(w->arg[0], "del")) || strcmp(w->arg[2], "dev"))
		return fail(P, "usage: addr add|del ADDR/PLEN dev DEV");
	op->ival[0] = w->arg[0][0] == 'a';
	if (parse_prefix(P, w->arg[1], &op->addr, &op->plen) || use_dev(P, w->arg[3], false, &slot))
		return -1;
	op->dev = slot + 1;
	return 0;
}

/* ---------------------------------------------------------------- statements: checks */

/* port NAME => CHECK...: NUMBER or $NAME, != PORT, in LO HI, even, odd (all must hold). */
static int e_port(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	char **rhs = w->rhs;
	int nrhs = w->nrhs;

	if (rhs_is_errno(rhs, nrhs, op))
		return 0;
	for (int i = 0; i < nrhs; i++) {
		struct rp_pcheck *c = &op->checks[op->nchecks];

		if (op->nchecks == RP_MAXCHECK)
			return fail(P, "too many port checks");
		c->a.slot = c->b.slot = -1;
		if (!strcmp(rhs[i], "even") || !strcmp(rhs[i], "odd")) {
			c->kind = rhs[i][0] == 'e' ? RP_PC_EVEN : RP_PC_ODD;
		} else if (!strcmp(rhs[i], "!=")) {
			c->kind = RP_PC_NE;
			if (parse_port(P, i + 1 < nrhs ? rhs[++i] : NULL, &c->a))
				return -1;
		} else if (!strcmp(rhs[i], "in")) {
			c->kind = RP_PC_IN;
			if (i + 2 >= nrhs)
				return fail(P, "usage: in LO HI");
			if (parse_port(P, rhs[i + 1], &c->a) || parse_port(P, rhs[i + 2], &c->b))
				return -1;
			i += 2;
		} else {
			c->kind = RP_PC_EQ;
			if (parse_port(P, rhs[i], &c->a))
				return -1;
		}
		op->nchecks++;
	}
	return 0;
}

/* addr NAME => ADDR */
static int e_addr(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	if (rhs_is_errno(w->rhs, w->nrhs, op))
		return 0;
	if (w->nrhs != 1)
		return fail(P, "addr: expected one address");
	return parse_addr(P, w->rhs[0], &op->expaddr);
}

/* peer NAME => ADDR PORT */
static int e_peer(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	if (rhs_is_errno(w->rhs, w->nrhs, op))
		return 0;
	if (w->nrhs != 2)
		return fail(P, "peer: expected ADDR PORT or an errno name");
	if (parse_addr(P, w->rhs[0], &op->expaddr) || parse_port(P, w->rhs[1], &op->expport))
		return -1;
	return 0;
}

/* state NAME => TCPSTATE */
static int e_state(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	int i, n = (int)(sizeof(state_names) / sizeof(state_names[0]));

	if (rhs_is_errno(w->rhs, w->nrhs, op))
		return 0;
	for (i = 1; i < n; i++)
		if (!strcmp(state_names[i], w->rhs[0]))
			break;
	if (w->nrhs != 1 || i == n)
		return fail(P, "unknown TCP state '%s'", w->rhs[0]);
	op->nexp = 1;
	op->expv[0] = i;
	return 0;
}

/* getsockopt NAME OPT => VALUE... */
static int p_getsockopt(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	return find_option(P, w->arg[1], op);
}

static int e_getsockopt(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (op->optkind == RP_OPT_ERROR) {
		/* SO_ERROR's value is itself an errno (or 0). */
		if (w->nrhs != 1)
			return fail(P, "SO_ERROR: expected 0 or an errno name");
		op->nexp = 1;
		if (!strcmp(w->rhs[0], "0"))
			op->expv[0] = 0;
		else if ((op->expv[0] = errno_by_name(w->rhs[0])) < 0)
			return fail(P, "unknown errno name '%s'", w->rhs[0]);
		return 0;
	}
	if (rhs_is_errno(w->rhs, w->nrhs, op))
		return 0;
	if (op->optkind == RP_OPT_DEVNAME) {
		/* SO_BINDTODEVICE => DEV|none: compared as a name */
		int slot;

		if (w->nrhs != 1)
			return fail(P, "getsockopt SO_BINDTODEVICE: expected DEV, none or an errno name");
		if (!strcmp(w->rhs[0], "none")) {
			op->exptext = rp_xstrdup("");
			return 0;
		}
		if (use_dev(P, w->rhs[0], false, &slot))
			return -1;
		op->exptext = rp_xstrdup(w->rhs[0]);
		return 0;
	}
	if (op->optkind == RP_OPT_IFINDEX && w->nrhs == 1 && isalpha((unsigned char)w->rhs[0][0])) {
		/* SO_BINDTOIFINDEX => DEV: the device's ifindex on the backend that runs it */
		int slot;

		if (use_dev(P, w->rhs[0], true, &slot))
			return -1;
		op->expdev = slot + 1;
		op->nexp = 1;
		return 0;
	}
	op->nexp = op->optkind == RP_OPT_INT || op->optkind == RP_OPT_IFINDEX ? 1 : 2;
	if (w->nrhs != op->nexp)
		return fail(P, "getsockopt %s: expected %d value(s)", w->arg[1], op->nexp);
	for (int i = 0; i < w->nrhs; i++) {
		if (parse_num(P, w->rhs[i], -2147483647L, 2147483647L, &v))
			return -1;
		op->expv[i] = v;
	}
	return 0;
}

/* readable|distinct NAME...: socket names; a trailing '*' is a glob resolved when it runs. */
static int p_names(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	if (w->narg > RP_MAXLIST)
		return fail(P, "too many names (at most %d)", RP_MAXLIST);
	for (int i = 0; i < w->narg; i++) {
		size_t n = strlen(w->arg[i]);

		if (n > 1 && w->arg[i][n - 1] == '*') {
			op->list[op->nlist] = -1;
			op->prefix[op->nlist] = rp_xstrdup(w->arg[i]);
			op->prefix[op->nlist][n - 1] = 0;
			if (!valid_name(op->prefix[op->nlist]))
				return fail(P, "bad socket name glob '%s'", w->arg[i]);
		} else if (use_name(P, w->arg[i], &op->list[op->nlist])) {
			return -1;
		}
		op->nlist++;
	}
	return 0;
}

/* readable NAME... => COUNT */
static int e_readable(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	long v;

	if (!w->nrhs)
		return fail(P, "readable needs '=> COUNT'");
	if (w->nrhs != 1)
		return fail(P, "readable: expected one count");
	if (parse_num(P, w->rhs[0], 0, RP_MAXLIST, &v))
		return -1;
	op->nexp = 1;
	op->expv[0] = v;
	return 0;
}

/* distinct NAME...: no expectation (`=> ok` is tolerated). */
static int e_distinct(struct rp_parser *P, struct rp_op *op, const struct rp_words *w)
{
	(void)op;
	if (w->nrhs && !(w->nrhs == 1 && !strcmp(w->rhs[0], "ok")))
		return fail(P, "distinct takes no expectation");
	return 0;
}

/* ---------------------------------------------------------------- the statement table */

#define SOCK_ACTION (RP_NAMES | RP_ON_SOCK)
#define SOCK_CHECK (RP_NAMES | RP_ON_SOCK | RP_CHECK)

/* Every statement of the format, in the order of the spec's tables. */
static const struct rp_stmt stmts[] = {
	/* setup and actions: the expectation is `ok` or an errno name */
	{ .word = "sysctl", .kind = RP_SYSCTL, .nargs = RP_ARGS_FROM(1),
	  .usage = "usage: sysctl KEY VALUE...", .parse = p_sysctl, .exec = rp_exec_sysctl },
	{ .word = "socket", .kind = RP_SOCKET, .form = RP_FORM_ASSIGN,
	  .nargs = RP_ARGS(2) | RP_ARGS(4), .usage = "usage: NAME = socket tcp|udp 4|6 [uid N]",
	  .parse = p_socket, .exec = rp_exec_socket },
	{ .word = "setsockopt", .kind = RP_SETSOCKOPT, .flags = SOCK_ACTION,
	  .nargs = RP_ARGS_FROM(3), .usage = "usage: setsockopt NAME OPT VALUE",
	  .parse = p_setsockopt, .exec = rp_exec_setsockopt },
	{ .word = "bind", .kind = RP_BIND, .flags = SOCK_ACTION, .nargs = RP_ARGS(3),
	  .usage = "usage: bind NAME ADDR PORT", .parse = p_sockaddr, .exec = rp_exec_bind },
	{ .word = "listen", .kind = RP_LISTEN, .flags = SOCK_ACTION,
	  .nargs = RP_ARGS(1) | RP_ARGS(2), .usage = "usage: listen NAME [BACKLOG]",
	  .parse = p_listen, .exec = rp_exec_listen },
	{ .word = "connect", .kind = RP_CONNECT, .flags = SOCK_ACTION, .nargs = RP_ARGS(3),
	  .usage = "usage: connect NAME ADDR PORT", .parse = p_sockaddr, .exec = rp_exec_connect },
	{ .word = "disconnect", .kind = RP_DISCONNECT, .flags = SOCK_ACTION, .nargs = RP_ARGS(1),
	  .usage = "usage: disconnect NAME", .exec = rp_exec_disconnect },
	{ .word = "accept", .kind = RP_ACCEPT, .form = RP_FORM_ASSIGN, .nargs = RP_ARGS(1),
	  .usage = "usage: NAME = accept LISTENER", .parse = p_accept, .exec = rp_exec_accept },
	{ .word = "sendto", .kind = RP_SENDTO, .flags = SOCK_ACTION, .nargs = RP_ARGS(3) | RP_ARGS(4),
	  .usage = "usage: sendto NAME ADDR PORT [bytes:HEX]", .parse = p_sockaddr,
	  .exec = rp_exec_sendto },
	{ .word = "send", .kind = RP_SEND, .flags = SOCK_ACTION, .nargs = RP_ARGS(1),
	  .usage = "usage: send NAME", .exec = rp_exec_send },
	{ .word = "fastopen", .kind = RP_FASTOPEN, .flags = SOCK_ACTION, .nargs = RP_ARGS(3),
	  .usage = "usage: fastopen NAME ADDR PORT", .parse = p_sockaddr,
	  .exec = rp_exec_fastopen },
	{ .word = "close", .kind = RP_CLOSE, .flags = SOCK_ACTION, .nargs = RP_ARGS(1),
	  .usage = "usage: close NAME", .exec = rp_exec_close },
	{ .word = "sleep", .kind = RP_SLEEP, .nargs = RP_ARGS(1), .usage = "usage: sleep MS",
	  .parse = p_sleep, .exec = rp_exec_sleep },
	{ .word = "cpu", .kind = RP_CPU, .nargs = RP_ARGS(1), .usage = "usage: cpu N",
	  .parse = p_cpu, .exec = rp_exec_cpu },
	{ .word = "attach", .kind = RP_ATTACH, .flags = SOCK_ACTION, .nargs = RP_ARGS_FROM(2),
	  .usage = "usage: attach NAME PROG", .parse = p_attach, .exec = rp_exec_attach },
	/* devices and addresses */
	{ .word = "link", .kind = RP_LINK, .nargs = RP_ARGS(2) | RP_ARGS(3) | RP_ARGS(4),
	  .usage = "usage: link add DEV dummy | link set DEV up|down | link del DEV",
	  .parse = p_link, .exec = rp_exec_link },
	/* checks: the expectation is required */
	{ .word = "port", .kind = RP_PORT, .flags = SOCK_CHECK, .nargs = RP_ARGS(1),
	  .usage = "usage: port NAME => ...", .expect = e_port, .exec = rp_exec_port },
	{ .word = "addr", .kind = RP_ADDR, .flags = SOCK_CHECK, .nargs = RP_ARGS(1),
	  .usage = "usage: addr NAME => ADDR, or addr add|del ADDR/PLEN dev DEV",
	  .expect = e_addr, .exec = rp_exec_addr },
	{ .word = "addr", .kind = RP_ADDRCHG, .nargs = RP_ARGS(4),
	  .usage = "usage: addr add|del ADDR/PLEN dev DEV", .parse = p_addrchg,
	  .exec = rp_exec_addrchg },
	{ .word = "peer", .kind = RP_PEER, .flags = SOCK_CHECK, .nargs = RP_ARGS(1),
	  .usage = "usage: peer NAME => ...", .expect = e_peer, .exec = rp_exec_peer },
	{ .word = "getsockopt", .kind = RP_GETSOCKOPT, .flags = SOCK_CHECK, .nargs = RP_ARGS(2),
	  .usage = "usage: getsockopt NAME OPT => ...", .parse = p_getsockopt,
	  .expect = e_getsockopt, .exec = rp_exec_getsockopt },
	{ .word = "state", .kind = RP_STATE, .flags = SOCK_CHECK, .nargs = RP_ARGS(1),
	  .usage = "usage: state NAME => ...", .expect = e_state, .exec = rp_exec_state },
	{ .word = "readable", .kind = RP_READABLE, .flags = RP_NAMES, .nargs = RP_ARGS_FROM(1),
	  .parse = p_names, .expect = e_readable, .exec = rp_exec_readable },
	{ .word = "distinct", .kind = RP_DISTINCT, .flags = RP_NAMES, .nargs = RP_ARGS_FROM(1),
	  .parse = p_names, .expect = e_distinct, .exec = rp_exec_distinct },
};

static bool takes_args(const struct rp_stmt *st, int narg)
{
	return (st->nargs >> (narg < 31 ? narg : 31)) & 1;
}

/* The row for @word written in @form with @narg operands: the first whose count fits, else the
 * first with that word (its usage is the message), else NULL. */
static const struct rp_stmt *find_stmt(const char *word, enum rp_form form, int narg)
{
	const struct rp_stmt *any = NULL;

	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
		const struct rp_stmt *st = &stmts[i];

		if (st->form != form || strcmp(st->word, word))
			continue;
		if (takes_args(st, narg))
			return st;
		if (!any)
			any = st;
	}
	return any;
}

/*
 * One statement line (tokens @tok) into @op: split at '=>', find the statement's row, check the
 * operand count, then the row's parse and expect functions fill the op.
 */
static int parse_statement(struct rp_parser *P, char **tok, int ntok, struct rp_op *op)
{
	struct rp_words w = { 0 };
	const struct rp_stmt *st;
	int nl = ntok;
	bool assign;

	for (int i = 0; i < ntok; i++) {
		if (!strcmp(tok[i], "=>")) {
			nl = i;
			w.rhs = tok + i + 1;
			w.nrhs = ntok - i - 1;
			op->has_expect = true;
			if (!w.nrhs)
				return fail(P, "nothing after '=>'");
			for (int j = i + 1; j < ntok; j++)
				if (!strcmp(tok[j], "=>"))
					return fail(P, "more than one '=>'");
			break;
		}
	}
	op->slot = op->slot2 = -1;
	op->p1.slot = op->p2.slot = op->expport.slot = -1;
	if (nl == 0)
		return fail(P, "missing statement before '=>'");
	assign = nl >= 3 && !strcmp(tok[1], "=");
	w.word = tok[assign ? 2 : 0];
	w.arg = tok + (assign ? 3 : 1);
	w.narg = nl - (assign ? 3 : 1);
	st = find_stmt(w.word, assign ? RP_FORM_ASSIGN : RP_FORM_WORD, w.narg);
	if (!st && assign)
		return fail(P, "unknown statement 'NAME = %s'", w.word);
	if (!assign && !w.narg && (!st || (st->flags & RP_NAMES)))
		return fail(P, "'%s': missing socket name", w.word);
	if (!st)
		return fail(P, "unknown statement '%s'", w.word);
	op->kind = st->kind;
	op->stmt = st;
	if (!takes_args(st, w.narg))
		return fail(P, "%s", st->usage);
	if ((st->flags & RP_ON_SOCK) && use_name(P, w.arg[0], &op->slot))
		return -1;
	if (st->parse && st->parse(P, op, &w))
		return -1;
	if ((st->flags & RP_CHECK) && !w.nrhs)
		return fail(P, "'%s' is a check: it needs '=> EXPECTATION'", w.word);
	if (st->expect ? st->expect(P, op, &w) : parse_err_expect(P, w.rhs, w.nrhs, op))
		return -1;
	/* the name exists from here on, even if the call fails (then it is closed) */
	return assign ? def_name(P, tok[0], &op->slot) : 0;
}

static int tokenize(char *line, char **tok, int max)
{
	int n = 0;

	for (char *p = strtok(line, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
		if (n == max)
			return -1;
		tok[n++] = p;
	}
	return n;
}

#define MAXTOK 64

/*
 * The kernel-variant guard of a case line, the tokens after its name: none, or `when` and terms
 * joined by `and`, each `VARIANT`, `no VARIANT` or `no_VARIANT`. Fills @when (-1: any); 0, or -1
 * with the message in P.
 */
static int parse_when(struct rp_parser *P, char **tok, int n, int8_t *when)
{
	static const char usage[] = "usage: case NAME [when [no] VARIANT [and [no] VARIANT]...]";
	int i = 1;

	memset(when, -1, SOCKTAB_KV_COUNT);
	if (!n)
		return 0;
	if (strcmp(tok[0], "when") || n < 2) {
		fail(P, usage);
		return -1;
	}
	while (i < n) {
		const char *v = tok[i];
		int on = 1, kv;

		if (!strcmp(v, "no") && i + 1 < n) {
			on = 0;
			v = tok[++i];
		} else if (!strncmp(v, "no_", 3)) {
			on = 0;
			v += 3;
		}
		kv = socktab_kernel_variant_by_name(v);
		if (kv < 0) {
			char known[200] = "";

			for (int k = 0; k < SOCKTAB_KV_COUNT; k++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
					 k ? ", " : "", socktab_kernel_variant_name(k));
			fail(P, "unknown kernel variant '%s' (known: %s)", v, known);
			return -1;
		}
		if (when[kv] >= 0 && when[kv] != on) {
			fail(P, "case guard names '%s' both ways", v);
			return -1;
		}
		when[kv] = (int8_t)on;
		if (++i < n) {
			if (strcmp(tok[i], "and") || ++i == n) {
				fail(P, usage);
				return -1;
			}
		}
	}
	return 0;
}

static struct rp_case *cur_case(struct rp_parser *P, const char *basename)
{
	struct rp_script *s = P->s;

	if (!s->ncases) {
		s->cases = rp_xrealloc(s->cases, sizeof(*s->cases));
		memset(s->cases, 0, sizeof(*s->cases));
		s->cases[0].name = rp_xstrdup(basename);
		memset(s->cases[0].when, -1, sizeof(s->cases[0].when));
		s->cases[0].first_line = s->nlines;
		s->ncases = 1;
		P->nops_cap = 0;
	}
	return &s->cases[s->ncases - 1];
}

/* Parse one statement line (with %i already substituted) into a new op of the current case. */
static int add_op(struct rp_parser *P, struct rp_case *c, const char *text, int line, int iter)
{
	char buf[1024], *tok[MAXTOK];
	int n;
	struct rp_op *op;

	if (strlen(text) >= sizeof(buf))
		return fail(P, "line too long");
	strcpy(buf, text);
	n = tokenize(buf, tok, MAXTOK);
	if (n < 0)
		return fail(P, "too many tokens");
	if (c->nops == P->nops_cap) {
		P->nops_cap = P->nops_cap ? 2 * P->nops_cap : 64;
		c->ops = rp_xrealloc(c->ops, sizeof(*c->ops) * (size_t)P->nops_cap);
	}
	op = &c->ops[c->nops];
	memset(op, 0, sizeof(*op));
	op->line = line;
	op->iter = iter;
	/* Counted even when the statement is bad, so that rp_free_script() frees what parsing had
	 * allocated for it (bytes:HEX before a bad expectation leaked: found by fuzz_script). */
	c->nops++;
	return parse_statement(P, tok, n, op) ? -1 : 0;
}

static void subst_i(const char *in, int i, char *out, size_t cap)
{
	size_t o = 0;

	for (; *in && o + 12 < cap; in++) {
		if (in[0] == '%' && in[1] == 'i') {
			o += (size_t)snprintf(out + o, cap - o, "%d", i);
			in++;
		} else {
			out[o++] = *in;
		}
	}
	out[o] = 0;
}

static char *trim(char *p)
{
	char *e;

	while (isspace((unsigned char)*p))
		p++;
	e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = 0;
	return p;
}

void rp_free_script(struct rp_script *s)
{
	if (!s)
		return;
	for (int c = 0; c < s->ncases; c++) {
		for (int i = 0; i < s->cases[c].nops; i++) {
			struct rp_op *op = &s->cases[c].ops[i];

			free(op->bytes);
			free(op->text);
			free(op->text2);
			free(op->exptext);
			/* All slots: a bad glob is allocated before nlist counts it (ops are
			 * zeroed, so the others are NULL). */
			for (int k = 0; k < RP_MAXLIST; k++)
				free(op->prefix[k]);
		}
		free(s->cases[c].ops);
		free(s->cases[c].name);
	}
	for (int i = 0; i < s->nlines; i++)
		free(s->lines[i].text);
	for (int i = 0; i < s->nnames; i++)
		free(s->names[i]);
	for (int i = 0; i < s->ndevs; i++)
		free(s->devs[i]);
	free(s->devs);
	free(s->lines);
	free(s->cases);
	free(s->names);
	free(s->file);
	free(s);
}

static void add_line(struct rp_script *s, int lineno, const char *text)
{
	s->lines = rp_xrealloc(s->lines, sizeof(*s->lines) * (size_t)(s->nlines + 1));
	s->lines[s->nlines].lineno = lineno;
	s->lines[s->nlines].text = rp_xstrdup(text);
	s->lines[s->nlines].case_idx = s->ncases - 1;
	s->nlines++;
	s->cases[s->ncases - 1].nlines = s->nlines - s->cases[s->ncases - 1].first_line;
}

struct rp_script *rp_parse_text(const char *file, char *text, char *errbuf, size_t errcap)
{
	struct rp_parser P = { 0 };
	struct rp_script *s = rp_xrealloc(NULL, sizeof(*s));
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char basename[256];
	char *raw;
	/* a repeat block being collected */
	int rep_n = 0, rep_line = 0, rep_first = 0;
	char **rep_text = NULL;
	int rep_cnt = 0;
	bool in_repeat = false;

	memset(s, 0, sizeof(*s));
	s->file = rp_xstrdup(file);
	intern_dev(s, "lo");
	P.s = s;
	P.file = file;
	snprintf(basename, sizeof(basename), "%s", base);
	if (strlen(basename) > 5 && !strcmp(basename + strlen(basename) - 5, ".sock"))
		basename[strlen(basename) - 5] = 0;

	P.lineno = 1;
	for (raw = text;; P.lineno++) {
		char *nl = strchr(raw, '\n'), *line;

		if (!*raw && !nl)
			break;
		if (nl)
			*nl = 0;
		line = trim(raw);
		raw = nl ? nl + 1 : raw + strlen(raw);
		if (!*line || line[0] == '#')
			goto next;
		if (in_repeat) {
			if (!strcmp(line, "}")) {
				struct rp_case *c = cur_case(&P, basename);
				int saved = P.lineno;

				for (int it = 0; it < rep_n; it++) {
					for (int k = 0; k < rep_cnt; k++) {
						char buf[1024];

						P.lineno = s->lines[rep_first + k].lineno;
						subst_i(rep_text[k], it, buf, sizeof(buf));
						if (add_op(&P, c, buf, rep_first + k, it))
							goto bad;
					}
				}
				P.lineno = saved;
				for (int k = 0; k < rep_cnt; k++)
					free(rep_text[k]);
				free(rep_text);
				rep_text = NULL;
				rep_cnt = 0;
				in_repeat = false;
				goto next;
			}
			if (!strncmp(line, "repeat", 6) && (isspace((unsigned char)line[6]) || !line[6])) {
				fail(&P, "nested repeat");
				goto bad;
			}
			if (!strncmp(line, "case", 4) && (isspace((unsigned char)line[4]) || !line[4])) {
				fail(&P, "'case' inside repeat (missing '}')");
				goto bad;
			}
			rep_text = rp_xrealloc(rep_text, sizeof(char *) * (size_t)(rep_cnt + 1));
			rep_text[rep_cnt++] = rp_xstrdup(line);
			add_line(s, P.lineno, line);
			goto next;
		} else if (!strncmp(line, "case", 4) && (isspace((unsigned char)line[4]) || !line[4])) {
			char buf[256], *tok[16];
			int8_t when[SOCKTAB_KV_COUNT];
			int n;

			snprintf(buf, sizeof(buf), "%s", line);
			n = tokenize(buf, tok, 16);
			if (n < 2) {
				fail(&P, "usage: case NAME [when [no] VARIANT [and [no] VARIANT]...]");
				goto bad;
			}
			if (parse_when(&P, tok + 2, n - 2, when))
				goto bad;
			char *name = tok[1];

			s->cases = rp_xrealloc(s->cases, sizeof(*s->cases) * (size_t)(s->ncases + 1));
			memset(&s->cases[s->ncases], 0, sizeof(*s->cases));
			s->cases[s->ncases].name = rp_xstrdup(name);
			memcpy(s->cases[s->ncases].when, when, sizeof(when));
			s->cases[s->ncases].first_line = s->nlines;
			s->ncases++;
			P.nops_cap = 0;
			if (P.defined)
				memset(P.defined, 0, (size_t)P.ndefined);
			if (P.dev_known)
				memset(P.dev_known, 0, (size_t)P.ndev_known);
			goto next;
		} else if (!strncmp(line, "repeat", 6) &&
			   (isspace((unsigned char)line[6]) || !line[6])) {
			char buf[256], *tok[8];
			long v;
			int n;

			snprintf(buf, sizeof(buf), "%s", line);
			n = tokenize(buf, tok, 8);
			if (n != 3 || strcmp(tok[2], "{")) {
				fail(&P, "usage: repeat N {");
				goto bad;
			}
			if (parse_num(&P, tok[1], 1, 5000, &v))
				goto bad;
			rep_n = (int)v;
			rep_line = P.lineno;
			cur_case(&P, basename);
			rep_first = s->nlines;
			in_repeat = true;
			goto next;
		} else if (!strcmp(line, "}")) {
			fail(&P, "'}' without repeat");
			goto bad;
		}
		/* a statement line */
		cur_case(&P, basename);
		add_line(s, P.lineno, line);
		if (add_op(&P, &s->cases[s->ncases - 1], line, s->nlines - 1, -1))
			goto bad;
next:
		if (!nl)
			break;
	}
	if (in_repeat) {
		P.lineno = rep_line;
		fail(&P, "repeat without closing '}'");
		goto bad;
	}
	free(P.defined);
	free(P.dev_known);
	return s;
bad:
	snprintf(errbuf, errcap, "%s", P.err);
	for (int k = 0; k < rep_cnt; k++)
		free(rep_text[k]);
	free(rep_text);
	free(P.defined);
	free(P.dev_known);
	rp_free_script(s);
	return NULL;
}

int rp_parse_only(const char *file, const uint8_t *text, size_t len, char *err, size_t errcap)
{
	char *buf = rp_xrealloc(NULL, len + 1);
	struct rp_script *s;

	memcpy(buf, text, len);
	buf[len] = 0;
	/* A NUL inside is a binary file, rejected as parse_file() does. */
	if (strlen(buf) != len) {
		snprintf(err, errcap, "%s: binary file", file);
		free(buf);
		return -1;
	}
	s = rp_parse_text(file, buf, err, errcap);
	free(buf);
	if (!s)
		return -1;
	rp_free_script(s);
	return 0;
}

