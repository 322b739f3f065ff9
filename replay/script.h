/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: the types shared by the parts of the `.sock` script runner
 * (../shared/spec/script-format.md).
 *
 * A script is parsed once (parse.c) into cases; each case is a flat array of operations (repeat
 * blocks are unrolled at parse time, %i substituted, socket names interned to slot numbers), each
 * operation pointing back at the script line it came from. The executor (exec.c) runs one case's
 * operations against a backend through struct rp_backend (backend_kernel.c, backend_socktab.c),
 * evaluates every expectation where it runs (a `$NAME` port is only known there) and emits one
 * struct rp_outcome per operation. The kernel backend runs the executor in a forked child inside
 * a fresh network namespace and pipes the outcomes back, so an outcome is a flat, pointer-free
 * record. cli.c is the command line; fuzz.c the differential fuzzer.
 */
#ifndef SOCKTAB_REPLAY_SCRIPT_H
#define SOCKTAB_REPLAY_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "socktab/net.h" /* the kernel variants: SOCKTAB_KV_*, socktab_kernel_variant_name() */

/* A result that is not an errno: a backend that cannot run a statement (none does today). */
#define RP_ENOTIMPL 100000
/*
 * A result that is not an errno: the runner refused to run the statement, because running it
 * would break a rule of the format (the traffic rule of the kernel backend, a scope or ifindex
 * that names no device of the case). The line fails; rp_script_error() holds the reason.
 */
#define RP_ESCRIPT 100001

enum rp_kind {
	/* actions: the expectation is ok or an errno */
	RP_SYSCTL,
	RP_SOCKET,
	RP_SETSOCKOPT,
	RP_BIND,
	RP_LISTEN,
	RP_CONNECT,
	RP_DISCONNECT,
	RP_ACCEPT,
	RP_SENDTO,
	RP_SEND,
	RP_FASTOPEN,
	RP_CLOSE,
	RP_SLEEP,
	RP_CPU,      /* cpu N: the CPU the following statements run on (op->ival[0]) */
	RP_ATTACH,   /* attach NAME PROG: SO_ATTACH_REUSEPORT_CBPF of op->bytes (sock_filter[]) */
	RP_LINK,     /* link add|set|del: op->ival[0] is the enum rp_linkop */
	RP_ADDRCHG,  /* addr add|del: op->ival[0] is 1 for add */
	/* checks */
	RP_PORT,
	RP_ADDR,
	RP_PEER,
	RP_GETSOCKOPT,
	RP_STATE,
	RP_READABLE,
	RP_DISTINCT,
};

/* A port token: a number, or the local port of socket slot `slot` ($NAME). */
struct rp_port {
	int slot; /* -1: literal */
	int value;
};

/*
 * An address literal, already validated (a wildcard, a loopback or a documentation address), or
 * an address a backend reported. An AF_INET6 address may carry a scope (`ADDR%DEV`, `ADDR%N`):
 * either a device of the script, or a raw ifindex that belongs to none of the case's devices.
 * Outcomes carry the scope the same way, so that backends whose devices have other ifindexes
 * still compare equal.
 */
struct rp_addr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t bytes[16];
	int scope_dev;     /* the scope as a device: its device slot + 1; 0 when none */
	uint32_t scope_id; /* the scope as a raw ifindex (when scope_dev is 0); 0 when none */
};

/* Sub-statements of RP_LINK. */
enum rp_linkop { RP_LINK_ADD, RP_LINK_UP, RP_LINK_DOWN, RP_LINK_DEL };

enum rp_portcheck { RP_PC_EQ, RP_PC_NE, RP_PC_IN, RP_PC_EVEN, RP_PC_ODD };

struct rp_pcheck {
	enum rp_portcheck kind;
	struct rp_port a, b;
};

#define RP_MAXV 4      /* values of a getsockopt expectation / outcome */
#define RP_MAXCHECK 8  /* checks of one `port` line */
#define RP_MAXLIST 32  /* names of one `readable`/`distinct` line */

/*
 * How a socket option is passed: an int, a port range, a struct linger, SO_ERROR (an int read
 * as an errno), SO_BINDTODEVICE (a device name) and SO_BINDTOIFINDEX (an int that is an ifindex).
 */
enum rp_optkind {
	RP_OPT_INT,
	RP_OPT_RANGE,
	RP_OPT_LINGER,
	RP_OPT_ERROR,
	RP_OPT_DEVNAME,
	RP_OPT_IFINDEX,
};

struct rp_stmt;

struct rp_op {
	enum rp_kind kind;
	const struct rp_stmt *stmt; /* its row of the statement table */
	int line;         /* index into script->lines */
	int iter;         /* repeat iteration, -1 outside a repeat */
	int slot;         /* the socket the statement acts on (or defines), -1 if none */
	int slot2;        /* accept: the listener */
	int udp, family, uid; /* socket */
	int level, optname;   /* setsockopt/getsockopt */
	enum rp_optkind optkind;
	struct rp_port p1, p2; /* bind/connect/sendto/fastopen port; range LO HI */
	int ival[2];      /* int option value, linger, backlog (-1 = default), sleep ms, cpu */
	uint8_t *bytes;   /* setsockopt bytes:HEX; sendto's payload; attach's instructions */
	int nbytes;
	struct rp_addr addr;
	int plen;         /* addr add|del: the prefix length */
	int dev;          /* link, addr add|del, SO_BINDTOIFINDEX DEV: device slot + 1 (0: none) */
	char *text;       /* sysctl key; SO_BINDTODEVICE's name (NULL: none) */
	char *text2;      /* sysctl value */
	/* readable/distinct: names; a trailing '*' is a glob (prefix[]) resolved at run time. */
	int nlist;
	int list[RP_MAXLIST];      /* slot, or -1 for a glob */
	char *prefix[RP_MAXLIST];
	/* expectation */
	bool has_expect;
	int expect_err;   /* actions and checks: expected errno (0 = ok / no error) */
	int nchecks;
	struct rp_pcheck checks[RP_MAXCHECK];
	int nexp;
	long long expv[RP_MAXV]; /* getsockopt values, state, readable count */
	struct rp_addr expaddr;
	struct rp_port expport;
	int expdev;       /* getsockopt SO_BINDTOIFINDEX => DEV: device slot + 1 */
	char *exptext;    /* getsockopt SO_BINDTODEVICE => DEV ("" for none) */
};

struct rp_line {
	int lineno;
	char *text; /* the statement as written, trimmed */
	int case_idx;
};

struct rp_case {
	char *name;
	int first_line, nlines; /* statement lines of this case (script->lines indices) */
	struct rp_op *ops;
	int nops;
	/* Per kernel variant (SOCKTAB_KV_*): -1 any kernel; 0/1 the case runs only on kernels
	 * where the variant is so ("case NAME when no VARIANT" / "when VARIANT"), and socktab is
	 * set to match. */
	int8_t when[SOCKTAB_KV_COUNT];
};

struct rp_script {
	char *file;
	struct rp_line *lines;
	int nlines;
	struct rp_case *cases;
	int ncases;
	char **names; /* interned socket names: slot -> name */
	int nnames;
	char **devs;  /* interned device names: device slot -> name; slot 0 is "lo" */
	int ndevs;
};

struct rp_outcome {
	int op;
	int pass;
	int err;   /* errno of the call (0 = success), or RP_ENOTIMPL */
	int nval;
	long long val[RP_MAXV];
	int valdev;     /* getsockopt SO_BINDTOIFINDEX: the device slot + 1 of val[0], 0 if none */
	char name[16];  /* getsockopt SO_BINDTODEVICE: the name read ("" for none) */
	struct rp_addr addr;
	int range_lo, range_hi; /* the net's ephemeral range when the op ran */
	int noparity;           /* the socket set IP_LOCAL_PORT_RANGE: parity is random */
	char reason[120];
};

/* Backend entry points: errors are positive errno values (or RP_ENOTIMPL). */
struct rp_backend {
	const char *name;
	int (*sysctl)(void *ctx, const char *key, const char *value);
	int (*socket)(void *ctx, int slot, int udp, int family, int uid);
	int (*setsockopt)(void *ctx, int slot, int level, int name, const void *val, socklen_t len);
	int (*getsockopt)(void *ctx, int slot, int level, int name, void *val, socklen_t *len);
	int (*bind)(void *ctx, int slot, const struct sockaddr *sa, socklen_t len);
	int (*listen)(void *ctx, int slot, int backlog);
	/* sa->sa_family == AF_UNSPEC: disconnect */
	int (*connect)(void *ctx, int slot, const struct sockaddr *sa, socklen_t len);
	int (*accept)(void *ctx, int slot, int newslot);
	/* sa == NULL: send on a connected socket */
	int (*sendto)(void *ctx, int slot, const struct sockaddr *sa, socklen_t len);
	int (*fastopen)(void *ctx, int slot, const struct sockaddr *sa, socklen_t len);
	int (*close)(void *ctx, int slot);
	int (*getsockname)(void *ctx, int slot, struct sockaddr_storage *ss);
	int (*getpeername)(void *ctx, int slot, struct sockaddr_storage *ss);
	int (*state)(void *ctx, int slot, int *state);
	/* How many of @slots are readable; may wait (bounded) for @expect to be reached. */
	int (*readable)(void *ctx, const int *slots, int n, int expect, int *count);
	/* Devices and addresses, by device name: link add (a dummy device), up/down, del; an
	 * address added to or removed from a device (@plen its prefix length). */
	int (*link)(void *ctx, enum rp_linkop what, const char *dev);
	int (*addr_change)(void *ctx, int add, const struct rp_addr *a, int plen, const char *dev);
	/* The ifindex of device @dev, or a negative errno (-ENODEV). */
	int (*dev_index)(void *ctx, const char *dev);
	/* Run the following statements on CPU @cpu: the kernel backend pins itself there (its
	 * loopback packets are then received on that CPU), the socktab backend makes it the
	 * receiving CPU of its lookups. */
	int (*set_cpu)(void *ctx, int cpu);
	/* The payload of the next sendto/send (@data NULL: the default single byte "x"). */
	void (*payload)(void *ctx, const void *data, size_t len);
	/* Before each statement, or NULL: a model's timers catch up with the time that passed
	 * (the kernel's run on their own). */
	void (*tick)(void *ctx);
};

typedef void (*rp_emit_fn)(void *arg, const struct rp_outcome *o);

/* ---- the statement table (parse.c) ---- */

struct rp_parser; /* parse.c */
struct rp_exec;   /* exec.c */

/* A statement line cut into its parts (the tokens of the line, which the parser owns). */
struct rp_words {
	const char *word; /* the statement: the first token, or the third after `NAME =` */
	char **arg;       /* its operands: the tokens after the word, up to '=>' */
	int narg;
	char **rhs;       /* the expectation: the tokens after '=>' */
	int nrhs;
};

/* How a statement line is written. */
enum rp_form {
	RP_FORM_WORD,   /* WORD OPERAND... [=> EXPECTATION] */
	RP_FORM_ASSIGN, /* NAME = WORD OPERAND... [=> EXPECTATION]: defines socket NAME */
};

/* What a statement's executor leaves to the common code. */
enum rp_verdict {
	RP_JUDGED,   /* o->pass and o->reason are set */
	RP_BY_ERRNO, /* passes iff o->err is the expected errno (RP_ENOTIMPL never passes) */
};

/* Flags of a statement. */
#define RP_NAMES 0x1   /* its operands begin with socket names: none is "missing socket name" */
#define RP_ON_SOCK 0x2 /* its first operand is an existing socket: op->slot */
#define RP_CHECK 0x4   /* a check: "=> EXPECTATION" is required */

/* The operand counts a statement takes: bit n for n operands (bit 31: 31 or more). */
#define RP_ARGS(n) (1u << (n))
#define RP_ARGS_FROM(n) (~0u << (n))

/*
 * One statement of the format: how it is written, how its operands and its expectation are
 * parsed into a struct rp_op, and how it runs. Two rows may share a word when their operand
 * counts differ (the parser takes the first row whose count fits).
 */
struct rp_stmt {
	const char *word;
	enum rp_kind kind;
	enum rp_form form;
	unsigned flags;
	unsigned nargs;     /* RP_ARGS(): the operand counts it takes */
	const char *usage;  /* the message for another operand count */
	/* The operands beyond the RP_ON_SOCK socket, or NULL for none. 0 or -1 (P has the
	 * message). */
	int (*parse)(struct rp_parser *P, struct rp_op *op, const struct rp_words *w);
	/* The expectation, or NULL for `ok` or one errno name (an action). 0 or -1. */
	int (*expect)(struct rp_parser *P, struct rp_op *op, const struct rp_words *w);
	/* Run the op: the backend call(s), o->err, and for a check its values and verdict. */
	enum rp_verdict (*exec)(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
};

/* The executors of the statements (exec.c), one per row of the table. */
enum rp_verdict rp_exec_sysctl(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_socket(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_attach(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_setsockopt(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o);
enum rp_verdict rp_exec_bind(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_listen(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_connect(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_disconnect(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o);
enum rp_verdict rp_exec_accept(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_sendto(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_send(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_fastopen(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_close(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_sleep(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_cpu(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_link(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_addrchg(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_port(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_addr(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_peer(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_getsockopt(struct rp_exec *X, const struct rp_op *op,
				   struct rp_outcome *o);
enum rp_verdict rp_exec_state(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_readable(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);
enum rp_verdict rp_exec_distinct(struct rp_exec *X, const struct rp_op *op, struct rp_outcome *o);

/* ---- exec.c ---- */

/* Run every op of @c on @be. Returns when all ops ran. */
void rp_exec_case(const struct rp_script *s, const struct rp_case *c, const struct rp_backend *be,
		  void *ctx, rp_emit_fn emit, void *arg);

/* ---- backend_kernel.c, backend_socktab.c ---- */

/*
 * Run one case on a backend, emitting an outcome per op. Ops whose outcome never comes (a dead
 * kernel child) are not emitted: the caller reports them as not run. Return 0, or -1 when the
 * backend could not run the case at all (a message is printed).
 */
int rp_kernel_run_case(const struct rp_script *s, const struct rp_case *c, rp_emit_fn emit,
		       void *arg);
int rp_socktab_run_case(const struct rp_script *s, const struct rp_case *c, rp_emit_fn emit,
			void *arg);

/* 0: the kernel backend can run (netns creation allowed); else the errno of unshare(). */
int rp_kernel_probe(void);

/*
 * Probe the live kernel for variant @kv (SOCKTAB_KV_*): 1 when it has it, 0 when not, -1 when it
 * cannot tell. Each probe runs once, in a throwaway child and namespace; the answer is kept.
 */
int rp_kernel_variant(int kv);

/* The kernel variants the socktab backend gives a case that names none: -1 (socktab's default)
 * unless the kernel backend takes part, which sets the live kernel's (cli.c). */
extern int rp_kvariant[SOCKTAB_KV_COUNT];

/* Shorter waits (fuzzer): accept/readable 50 ms, connect 200 ms. Loopback needs microseconds. */
extern int rp_fast_waits;
/* How long the kernel backend's "blocking" connect waits before it says EINPROGRESS. */
int rp_connect_wait_ms(void);

/* ---- exec.c: running a case on one backend and collecting its outcomes ---- */

enum rp_backend_sel { RP_BE_SOCKTAB = 1, RP_BE_KERNEL = 2, RP_BE_BOTH = 3 };

/* The outcomes of one case on one backend. */
struct rp_collect {
	struct rp_outcome *o; /* indexed by op */
	bool *got;            /* the op's outcome came (a dead kernel child emits no more) */
	int nops;
};

/* Run @c on backend @which (RP_BE_SOCKTAB or RP_BE_KERNEL) into @C; free with rp_collect_free. */
int rp_run_backend(int which, const struct rp_script *s, const struct rp_case *c,
		   struct rp_collect *C);
void rp_collect_free(struct rp_collect *C);

/* "ok", an errno name, "not implemented", "script error" or "errno N" (in @buf). */
const char *rp_errstr(int err, char *buf, size_t cap);
/* An address as inet_ntop writes it, with its scope as `%DEV` (a device of @s) or `%N`. */
void rp_addr_str(const struct rp_script *s, const struct rp_addr *a, char *buf, size_t cap);

/*
 * Refuse a statement (RP_ESCRIPT): record why, for the line's verdict, and return RP_ESCRIPT.
 * The backends call it from inside a statement; the executor reports the text as the reason.
 */
int rp_script_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- parse.c ---- */

/*
 * Parse @text (NUL-terminated, modified) as script @file. Returns NULL on a bad script, with the
 * file:line message in @errbuf.
 */
struct rp_script *rp_parse_text(const char *file, char *text, char *errbuf, size_t errcap);
void rp_free_script(struct rp_script *s);

/* errno name (canonical spelling) or NULL. */
const char *rp_errno_name(int err);
/* TCP state name, or NULL. */
const char *rp_state_name(int state);

/* realloc() and strdup() that exit with status 2 when memory runs out. */
void *rp_xrealloc(void *p, size_t n);
char *rp_xstrdup(const char *s);

/* ---- fuzz.c ---- */

/* replay --random @n --seed @seed: exit status (0: no disagreement). */
int rp_fuzz(long n, uint64_t seed, bool verbose);
/*
 * --random's progress line on stderr (cli.c): rp_progress() before each of @total scripts, at
 * most four updates a second; rp_progress_clear() erases the line before anything is printed.
 * Both do nothing unless stderr is a terminal (and -v is off).
 */
void rp_progress(long done, long total);
void rp_progress_clear(void);

#endif
