/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: the executor. rp_exec_case() runs one case's operations against a backend
 * (struct rp_backend) and evaluates every expectation where the backend lives, since a `$NAME`
 * port is only known there; rp_run_backend() runs a case on one backend and collects the
 * outcomes per operation.
 *
 * Each statement has its executor, rp_exec_WORD(), named by its row of the statement table
 * (parse.c). An executor makes the backend call(s) and leaves the errno in o->err; a check also
 * records the values it read and judges them. What all statements share is in exec_op(): a
 * statement on a closed socket fails with EBADF, and an action passes iff its errno is the
 * expected one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>

#include "script.h"
#include "socktab/socktab.h"

/* ---------------------------------------------------------------- executor */

int rp_fast_waits;

int rp_connect_wait_ms(void)
{
	return rp_fast_waits ? 200 : 2000;
}

struct rp_exec {
	const struct rp_script *s;
	const struct rp_backend *be;
	void *ctx;
	bool *open, *notimpl, *noparity;
	int *last_port;
	int range_lo, range_hi;
	bool any_noparity;
	/* Device slot -> ifindex on this backend (0: unknown). lo is 1; a device gets its index
	 * from `link add` and keeps it after `link del`, so scripts can still name it. */
	int *devidx;
};

/* The reason of the last RP_ESCRIPT (one executor per process: the kernel backend runs each case
 * in its own child). */
static char script_error[106];

int rp_script_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(script_error, sizeof(script_error), fmt, ap);
	va_end(ap);
	return RP_ESCRIPT;
}

/* The device slot whose ifindex is @ifindex, or -1. */
static int dev_of_index(const struct rp_exec *X, long long ifindex)
{
	if (ifindex <= 0)
		return -1;
	for (int k = 0; k < X->s->ndevs; k++)
		if (X->devidx[k] == ifindex)
			return k;
	return -1;
}

/* A scope or ifindex written as a number must not be a device's index: the backends number their
 * devices differently, so results are compared by device name. RP_ESCRIPT, or 0. */
static int check_raw_index(const struct rp_exec *X, long long ifindex, const char *what)
{
	int k = dev_of_index(X, ifindex);

	if (k < 0)
		return 0;
	return rp_script_error("%s %lld is the ifindex of %s here: write the device name", what,
			       ifindex, X->s->devs[k]);
}

/* The ifindex of device slot + 1 @dev1: RP_ESCRIPT when the device never got one (its
 * `link add` failed). */
static int dev_index(const struct rp_exec *X, int dev1, int *ifindex)
{
	*ifindex = X->devidx[dev1 - 1];
	if (*ifindex > 0)
		return 0;
	return rp_script_error("device %s has no ifindex (its link add failed)",
			       X->s->devs[dev1 - 1]);
}

static int sa_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
					: ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* What a backend reported, as an rp_addr: a scope id becomes the device that has it. */
static void sa_addr(const struct rp_exec *X, const struct sockaddr_storage *ss, struct rp_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = ss->ss_family;
	if (ss->ss_family == AF_INET) {
		memcpy(a->bytes, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		int k = dev_of_index(X, s6->sin6_scope_id);

		memcpy(a->bytes, &s6->sin6_addr, 16);
		if (k >= 0)
			a->scope_dev = k + 1;
		else
			a->scope_id = s6->sin6_scope_id;
	}
}

void rp_addr_str(const struct rp_script *s, const struct rp_addr *a, char *buf, size_t cap)
{
	size_t n;

	if (!inet_ntop(a->family == AF_INET ? AF_INET : AF_INET6, a->bytes, buf, (socklen_t)cap)) {
		snprintf(buf, cap, "?");
		return;
	}
	n = strlen(buf);
	if (a->scope_dev && s && a->scope_dev <= s->ndevs)
		snprintf(buf + n, cap - n, "%%%s", s->devs[a->scope_dev - 1]);
	else if (a->scope_dev)
		snprintf(buf + n, cap - n, "%%dev%d", a->scope_dev - 1);
	else if (a->scope_id)
		snprintf(buf + n, cap - n, "%%%u", a->scope_id);
}

/* The sockaddr of @a and @port, its scope resolved to this backend's ifindex: the length, or
 * RP_ESCRIPT (negated) when the scope cannot be used. */
static int make_sa(const struct rp_exec *X, const struct rp_addr *a, int port,
		   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t)port);
		memcpy(&s->sin_addr, a->bytes, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	memcpy(&s6->sin6_addr, a->bytes, 16);
	if (a->scope_dev) {
		int idx;

		if (dev_index(X, a->scope_dev, &idx))
			return -RP_ESCRIPT;
		s6->sin6_scope_id = (uint32_t)idx;
	} else if (a->scope_id) {
		if (check_raw_index(X, a->scope_id, "scope"))
			return -RP_ESCRIPT;
		s6->sin6_scope_id = a->scope_id;
	}
	return sizeof(*s6);
}

static int cur_port(struct rp_exec *X, int slot)
{
	struct sockaddr_storage ss;

	if (!X->open[slot])
		return X->last_port[slot];
	if (X->be->getsockname(X->ctx, slot, &ss))
		return 0;
	return sa_port(&ss);
}

static int resolve(struct rp_exec *X, const struct rp_port *p)
{
	return p->slot < 0 ? p->value : cur_port(X, p->slot);
}

const char *rp_errstr(int err, char *buf, size_t cap)
{
	const char *n;

	if (err == 0)
		return "ok";
	if (err == RP_ENOTIMPL)
		return "not implemented";
	if (err == RP_ESCRIPT)
		return "SCRIPT ERROR";
	n = rp_errno_name(err);
	if (n)
		return n;
	snprintf(buf, cap, "errno %d", err);
	return buf;
}

/* The sockets a readable/distinct list names right now (globs match open sockets). */
static int resolve_list(struct rp_exec *X, const struct rp_op *op, int *out, bool open_only)
{
	int n = 0;

	for (int i = 0; i < op->nlist; i++) {
		if (op->list[i] >= 0) {
			if ((!open_only || X->open[op->list[i]] || X->notimpl[op->list[i]]) && n < 256)
				out[n++] = op->list[i];
			continue;
		}
		size_t pl = strlen(op->prefix[i]);

		for (int k = 0; k < X->s->nnames && n < 256; k++)
			if (!strncmp(X->s->names[k], op->prefix[i], pl) &&
			    (X->open[k] || X->notimpl[k]))
				out[n++] = k;
	}
	return n;
}

/* ---------------------------------------------------------------- actions */

enum rp_verdict rp_exec_sysctl(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	o->err = X->be->sysctl(X->ctx, op->text, op->text2);
	if (!o->err && !strcmp(op->text, "net.ipv4.ip_local_port_range")) {
		int lo, hi;

		if (sscanf(op->text2, "%d %d", &lo, &hi) == 2) {
			X->range_lo = lo;
			X->range_hi = hi;
		}
	}
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_socket(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	int slot = op->slot;

	o->err = X->be->socket(X->ctx, slot, op->udp, op->family, op->uid);
	if (!o->err || o->err == RP_ENOTIMPL) {
		X->open[slot] = !o->err;
		X->notimpl[slot] = o->err == RP_ENOTIMPL;
		X->noparity[slot] = op->udp; /* UDP bind(0) has no parity rule (R69) */
		X->last_port[slot] = 0;
	}
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_setsockopt(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o)
{
	const struct rp_backend *be = X->be;
	int slot = op->slot, v;

	if (op->bytes) {
		o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, op->bytes,
					(socklen_t)op->nbytes);
	} else if (op->optkind == RP_OPT_RANGE) {
		uint32_t r = (uint32_t)resolve(X, &op->p2) << 16 | (uint32_t)resolve(X, &op->p1);

		o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, &r, sizeof(r));
		if (!o->err && r) /* any nonzero per-socket range makes connect() parity random */
			X->noparity[slot] = X->any_noparity = true;
	} else if (op->optkind == RP_OPT_LINGER) {
		struct linger lg = { op->ival[0], op->ival[1] };

		o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, &lg, sizeof(lg));
	} else if (op->optkind == RP_OPT_DEVNAME) {
		/* the name with its NUL, or optlen 0 for `none` */
		o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, op->text ? op->text : "",
					op->text ? (socklen_t)strlen(op->text) + 1 : 0);
	} else if (op->optkind == RP_OPT_IFINDEX) {
		if (op->dev)
			o->err = dev_index(X, op->dev, &v);
		else
			o->err = check_raw_index(X, v = op->ival[0], "ifindex");
		if (!o->err)
			o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, &v, sizeof(v));
	} else {
		v = op->ival[0];
		o->err = be->setsockopt(X->ctx, slot, op->level, op->optname, &v, sizeof(v));
	}
	return RP_BY_ERRNO;
}

/* bind, connect, sendto and fastopen: @call with the op's ADDR PORT. */
static enum rp_verdict sockaddr_call(struct rp_exec *X, const struct rp_op *op,
				     struct rp_outcome *o,
				     int (*call)(void *ctx, int slot, const struct sockaddr *sa,
						 socklen_t len))
{
	struct sockaddr_storage ss;
	int len = make_sa(X, &op->addr, resolve(X, &op->p1), &ss);

	o->err = len < 0 ? -len : call(X->ctx, op->slot, (struct sockaddr *)&ss, (socklen_t)len);
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_bind(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	return sockaddr_call(X, op, o, X->be->bind);
}

enum rp_verdict rp_exec_connect(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	return sockaddr_call(X, op, o, X->be->connect);
}

enum rp_verdict rp_exec_sendto(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	enum rp_verdict v;

	X->be->payload(X->ctx, op->bytes, (size_t)op->nbytes);
	v = sockaddr_call(X, op, o, X->be->sendto);
	X->be->payload(X->ctx, NULL, 0);
	return v;
}

/* attach NAME PROG: one struct sock_fprog of the parsed instructions (or a NULL filter). */
enum rp_verdict rp_exec_attach(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	struct sock_fprog fp = {
		.len = (unsigned short)(op->nbytes / (int)sizeof(struct sock_filter)),
		.filter = op->ival[0] ? NULL : (struct sock_filter *)(void *)op->bytes,
	};

	o->err = X->be->setsockopt(X->ctx, op->slot, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp,
				   sizeof(fp));
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_fastopen(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	return sockaddr_call(X, op, o, X->be->fastopen);
}

enum rp_verdict rp_exec_disconnect(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	o->err = X->be->connect(X->ctx, op->slot, &unspec, sizeof(unspec));
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_listen(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	o->err = X->be->listen(X->ctx, op->slot, op->ival[0]);
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_accept(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	int slot = op->slot;

	if (X->notimpl[op->slot2]) {
		o->err = RP_ENOTIMPL;
		return RP_BY_ERRNO;
	}
	if (!X->open[op->slot2]) {
		o->err = EBADF;
		return RP_BY_ERRNO;
	}
	o->err = X->be->accept(X->ctx, op->slot2, slot);
	if (!o->err) {
		X->open[slot] = true;
		X->notimpl[slot] = X->noparity[slot] = false;
	}
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_send(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	o->err = X->be->sendto(X->ctx, op->slot, NULL, 0);
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_close(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	X->last_port[op->slot] = cur_port(X, op->slot);
	o->err = X->be->close(X->ctx, op->slot);
	X->open[op->slot] = false;
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_link(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	const char *name = X->s->devs[op->dev - 1];

	o->err = X->be->link(X->ctx, (enum rp_linkop)op->ival[0], name);
	if (!o->err && op->ival[0] == RP_LINK_ADD) {
		int idx = X->be->dev_index(X->ctx, name);

		if (idx <= 0)
			o->err = rp_script_error("link add %s: the new device has no ifindex", name);
		else
			X->devidx[op->dev - 1] = idx;
	}
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_addrchg(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	o->err = X->be->addr_change(X->ctx, op->ival[0], &op->addr, op->plen,
				    X->s->devs[op->dev - 1]);
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_sleep(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	struct timespec ts = { op->ival[0] / 1000, (long)(op->ival[0] % 1000) * 1000000L };

	(void)X;
	(void)o;
	nanosleep(&ts, NULL);
	return RP_BY_ERRNO;
}

enum rp_verdict rp_exec_cpu(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	o->err = X->be->set_cpu(X->ctx, op->ival[0]);
	return RP_BY_ERRNO;
}

/* ---------------------------------------------------------------- checks */

enum rp_verdict rp_exec_port(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	static const char *const what[] = { "==", "!=", "in", "even", "odd" };
	struct sockaddr_storage ss;
	int v;

	o->err = X->be->getsockname(X->ctx, op->slot, &ss);
	if (o->err)
		return RP_BY_ERRNO;
	o->nval = 1;
	o->val[0] = v = sa_port(&ss);
	if (op->has_expect && op->expect_err) {
		snprintf(o->reason, sizeof(o->reason), "got %d", v);
		return RP_JUDGED;
	}
	for (int i = 0; i < op->nchecks; i++) {
		const struct rp_pcheck *c = &op->checks[i];
		int a = resolve(X, &c->a), b = c->kind == RP_PC_IN ? resolve(X, &c->b) : 0;
		bool ok = c->kind == RP_PC_EQ	  ? v == a
			  : c->kind == RP_PC_NE	  ? v != a
			  : c->kind == RP_PC_IN	  ? v >= a && v <= b
			  : c->kind == RP_PC_EVEN ? v % 2 == 0
						  : v % 2 == 1;

		if (ok)
			continue;
		if (c->kind == RP_PC_IN)
			snprintf(o->reason, sizeof(o->reason), "got %d, not in %d %d", v, a, b);
		else if (c->kind == RP_PC_EQ || c->kind == RP_PC_NE)
			snprintf(o->reason, sizeof(o->reason), "got %d, want %s %d", v,
				 what[c->kind], a);
		else
			snprintf(o->reason, sizeof(o->reason), "got %d, not %s", v, what[c->kind]);
		return RP_JUDGED;
	}
	o->pass = 1;
	return RP_JUDGED;
}

/* addr and peer: the address (and for peer the port) from @name, against the expectation. The
 * scope is part of the address: a scope id compares as the device that has it. */
static enum rp_verdict name_check(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o,
				  int (*name)(void *ctx, int slot, struct sockaddr_storage *ss))
{
	bool peer = op->kind == RP_PEER;
	struct sockaddr_storage ss;
	char b1[80];

	o->err = name(X->ctx, op->slot, &ss);
	if (o->err)
		return RP_BY_ERRNO;
	sa_addr(X, &ss, &o->addr);
	o->nval = 1;
	o->val[0] = sa_port(&ss);
	rp_addr_str(X->s, &o->addr, b1, sizeof(b1));
	if (op->expect_err) {
		snprintf(o->reason, sizeof(o->reason), "got %s", b1);
		return RP_JUDGED;
	}
	if (o->addr.family != op->expaddr.family || memcmp(o->addr.bytes, op->expaddr.bytes, 16) ||
	    o->addr.scope_dev != op->expaddr.scope_dev ||
	    o->addr.scope_id != op->expaddr.scope_id ||
	    (peer && o->val[0] != resolve(X, &op->expport))) {
		if (peer)
			snprintf(o->reason, sizeof(o->reason), "got %s %lld", b1, o->val[0]);
		else
			snprintf(o->reason, sizeof(o->reason), "got %s", b1);
		return RP_JUDGED;
	}
	o->pass = 1;
	return RP_JUDGED;
}

enum rp_verdict rp_exec_addr(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	return name_check(X, op, o, X->be->getsockname);
}

enum rp_verdict rp_exec_peer(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	return name_check(X, op, o, X->be->getpeername);
}

enum rp_verdict rp_exec_getsockopt(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o)
{
	union {
		int i;
		uint32_t u;
		struct linger lg;
		char name[64];
	} u;
	socklen_t len = op->optkind == RP_OPT_LINGER  ? sizeof(struct linger)
			: op->optkind == RP_OPT_RANGE ? sizeof(uint32_t)
						      : sizeof(int);
	char eb[32];

	memset(&u, 0, sizeof(u));
	if (op->optkind == RP_OPT_DEVNAME)
		len = 16; /* IFNAMSIZ: the kernel refuses a shorter buffer */
	o->err = X->be->getsockopt(X->ctx, op->slot, op->level, op->optname, &u, &len);
	if (o->err)
		return RP_BY_ERRNO;
	if (op->optkind == RP_OPT_DEVNAME) {
		/* optlen 0: no device binding */
		snprintf(o->name, sizeof(o->name), "%.*s", (int)(len < 16 ? len : 15), u.name);
		if (op->expect_err) {
			snprintf(o->reason, sizeof(o->reason), "got %s", o->name[0] ? o->name : "none");
			return RP_JUDGED;
		}
		if (strcmp(o->name, op->exptext)) {
			snprintf(o->reason, sizeof(o->reason), "got %s", o->name[0] ? o->name : "none");
			return RP_JUDGED;
		}
		o->pass = 1;
		return RP_JUDGED;
	}
	if (op->optkind == RP_OPT_IFINDEX) {
		/* compared as a device when one of the case's devices has the index */
		int k = dev_of_index(X, u.i);
		bool ok;

		o->nval = 1;
		o->val[0] = u.i;
		o->valdev = k + 1;
		ok = !op->expect_err && (op->expdev ? o->valdev == op->expdev
						    : k < 0 && o->val[0] == op->expv[0]);
		if (!ok) {
			if (k >= 0)
				snprintf(o->reason, sizeof(o->reason), "got %s", X->s->devs[k]);
			else
				snprintf(o->reason, sizeof(o->reason), "got %d", u.i);
			return RP_JUDGED;
		}
		o->pass = 1;
		return RP_JUDGED;
	}
	if (op->optkind == RP_OPT_LINGER) {
		o->nval = 2;
		o->val[0] = u.lg.l_onoff;
		o->val[1] = u.lg.l_linger;
	} else if (op->optkind == RP_OPT_RANGE) {
		o->nval = 2;
		o->val[0] = u.u & 0xffff;
		o->val[1] = u.u >> 16;
	} else {
		o->nval = 1;
		o->val[0] = u.i;
	}
	if (op->expect_err) {
		snprintf(o->reason, sizeof(o->reason), "got %lld", o->val[0]);
		return RP_JUDGED;
	}
	for (int i = 0; i < o->nval; i++) {
		if (o->val[i] == op->expv[i])
			continue;
		if (op->optkind == RP_OPT_ERROR)
			snprintf(o->reason, sizeof(o->reason), "got %s",
				 o->val[0] ? rp_errstr((int)o->val[0], eb, sizeof(eb)) : "0");
		else if (o->nval == 2)
			snprintf(o->reason, sizeof(o->reason), "got %lld %lld", o->val[0],
				 o->val[1]);
		else
			snprintf(o->reason, sizeof(o->reason), "got %lld", o->val[0]);
		return RP_JUDGED;
	}
	o->pass = 1;
	return RP_JUDGED;
}

enum rp_verdict rp_exec_state(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	int v;

	o->err = X->be->state(X->ctx, op->slot, &v);
	if (o->err)
		return RP_BY_ERRNO;
	o->nval = 1;
	o->val[0] = v;
	if (op->expect_err || v != op->expv[0]) {
		snprintf(o->reason, sizeof(o->reason), "got %s",
			 rp_state_name(v) ? rp_state_name(v) : "?");
		return RP_JUDGED;
	}
	o->pass = 1;
	return RP_JUDGED;
}

enum rp_verdict rp_exec_readable(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	int slots[256], n = resolve_list(X, op, slots, true), cnt = 0;

	for (int k = 0; k < n; k++) {
		if (X->notimpl[slots[k]]) {
			o->err = RP_ENOTIMPL;
			return RP_BY_ERRNO;
		}
	}
	o->err = X->be->readable(X->ctx, slots, n, (int)op->expv[0], &cnt);
	if (o->err)
		return RP_BY_ERRNO;
	o->nval = 1;
	o->val[0] = cnt;
	if (cnt != op->expv[0]) {
		snprintf(o->reason, sizeof(o->reason), "got %d", cnt);
		return RP_JUDGED;
	}
	o->pass = 1;
	return RP_JUDGED;
}

enum rp_verdict rp_exec_distinct(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	int slots[256], n = resolve_list(X, op, slots, false), ports[256];

	for (int k = 0; k < n; k++) {
		if (X->notimpl[slots[k]]) {
			o->err = RP_ENOTIMPL;
			return RP_BY_ERRNO;
		}
		ports[k] = cur_port(X, slots[k]);
	}
	o->nval = 1;
	o->val[0] = 1;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (ports[a] == ports[b] && o->val[0]) {
				o->val[0] = 0;
				snprintf(o->reason, sizeof(o->reason), "%s and %s share port %d",
					 X->s->names[slots[a]], X->s->names[slots[b]], ports[a]);
			}
	o->pass = (int)o->val[0];
	return RP_JUDGED;
}

/* ---------------------------------------------------------------- one operation */

/*
 * Run @op and fill @o: what every statement shares (a socket the backend could not create, a
 * closed socket), the statement's executor, then the verdict of an action or of a check whose
 * call failed.
 */
static void exec_op(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o)
{
	const struct rp_stmt *st = op->stmt;
	bool on_sock = op->slot >= 0 && st->form != RP_FORM_ASSIGN;
	char eb[32];

	o->range_lo = X->range_lo;
	o->range_hi = X->range_hi;
	o->noparity = (op->slot >= 0 && X->noparity[op->slot]) || X->any_noparity;
	if (on_sock && X->notimpl[op->slot])
		o->err = RP_ENOTIMPL; /* the backend could not create the socket (UDP) */
	else if (on_sock && !X->open[op->slot])
		o->err = EBADF; /* a closed socket: the kernel's fd is gone */
	else if (st->exec(X, op, o) == RP_JUDGED)
		return;
	if (o->err == RP_ENOTIMPL) {
		o->pass = 0;
		snprintf(o->reason, sizeof(o->reason), "udp: not implemented in socktab backend");
		return;
	}
	if (o->err == RP_ESCRIPT) {
		o->pass = 0;
		snprintf(o->reason, sizeof(o->reason), "SCRIPT ERROR: %s", script_error);
		return;
	}
	/* an action, or a check whose call failed: passes only if that error was expected */
	o->pass = o->err == op->expect_err;
	if (!o->pass)
		snprintf(o->reason, sizeof(o->reason), "got %s", rp_errstr(o->err, eb, sizeof(eb)));
}

void rp_exec_case(const struct rp_script *s, const struct rp_case *c, const struct rp_backend *be,
		  void *ctx, rp_emit_fn emit, void *arg)
{
	struct rp_exec X = { .s = s, .be = be, .ctx = ctx, .range_lo = 32768, .range_hi = 60999 };
	size_t n = (size_t)s->nnames + 1;

	X.open = calloc(n, sizeof(bool));
	X.notimpl = calloc(n, sizeof(bool));
	X.noparity = calloc(n, sizeof(bool));
	X.last_port = calloc(n, sizeof(int));
	X.devidx = calloc((size_t)s->ndevs + 1, sizeof(int));
	if (!X.open || !X.notimpl || !X.noparity || !X.last_port || !X.devidx) {
		perror("socktab replay");
		exit(2);
	}
	X.devidx[0] = 1; /* lo: LOOPBACK_IFINDEX in every namespace */
	for (int i = 0; i < c->nops; i++) {
		struct rp_outcome o;

		memset(&o, 0, sizeof(o));
		o.op = i;
		if (be->tick)
			be->tick(ctx);
		exec_op(&X, &c->ops[i], &o);
		emit(arg, &o);
	}
	free(X.open);
	free(X.notimpl);
	free(X.noparity);
	free(X.last_port);
	free(X.devidx);
}

/* ---------------------------------------------------------------- collecting outcomes */

static void collect_emit(void *arg, const struct rp_outcome *o)
{
	struct rp_collect *C = arg;

	if (o->op >= 0 && o->op < C->nops) {
		C->o[o->op] = *o;
		C->got[o->op] = true;
	}
}

static void collect_init(struct rp_collect *C, int nops)
{
	C->nops = nops;
	C->o = calloc((size_t)nops + 1, sizeof(*C->o));
	C->got = calloc((size_t)nops + 1, sizeof(bool));
	if (!C->o || !C->got) {
		perror("socktab replay");
		exit(2);
	}
}

void rp_collect_free(struct rp_collect *C)
{
	free(C->o);
	free(C->got);
}

int rp_run_backend(int which, const struct rp_script *s, const struct rp_case *c,
		       struct rp_collect *C)
{
	collect_init(C, c->nops);
	return which == RP_BE_KERNEL ? rp_kernel_run_case(s, c, collect_emit, C)
				  : rp_socktab_run_case(s, c, collect_emit, C);
}

