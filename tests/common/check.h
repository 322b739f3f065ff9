/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A tiny test harness: TEST(name) functions registered in a table, CHECK_* macros that print both
 * operands with file and line, and a main() that runs every test (or those whose name contains
 * argv[1]) and prints "N passed, M failed".
 */
#ifndef SOCKTAB_TEST_CHECK_H
#define SOCKTAB_TEST_CHECK_H

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "socktab/socktab.h"

static int check__failed;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);      \
			check__failed = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long check__a = (long long)(a), check__b = (long long)(b);                    \
		if (check__a != check__b) {                                                        \
			fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, check__a, check__b);                             \
			check__failed = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_NE(a, b)                                                                             \
	do {                                                                                       \
		long long check__a = (long long)(a), check__b = (long long)(b);                    \
		if (check__a == check__b) {                                                        \
			fprintf(stderr, "%s:%d: CHECK_NE(%s, %s) failed: both %lld\n", __FILE__,   \
				__LINE__, #a, #b, check__a);                                       \
			check__failed = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

struct check__test {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void name(void)

/* Each test file ends with: CHECK_MAIN(t1, t2, ...) */
#define CHECK_MAIN(...)                                                                            \
	static void (*const check__fns[])(void) = { __VA_ARGS__ };                                \
	static const char check__names[] = #__VA_ARGS__;                                          \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		int passed = 0, failed = 0;                                                        \
		size_t n = sizeof(check__fns) / sizeof(check__fns[0]);                             \
		const char *p = check__names;                                                      \
		socktab_thread_register();                                                         \
		for (size_t i = 0; i < n; i++) {                                                   \
			char name[128];                                                            \
			size_t k = 0;                                                              \
			while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\t')                 \
				p++;                                                               \
			while (*p && *p != ',' && k < sizeof(name) - 1)                            \
				name[k++] = *p++;                                                  \
			while (k && (name[k - 1] == ' ' || name[k - 1] == '\n'))                   \
				k--;                                                               \
			name[k] = 0;                                                               \
			if (argc > 1 && !strstr(name, argv[1]))                                    \
				continue;                                                          \
			check__failed = 0;                                                         \
			check__fns[i]();                                                           \
			printf("%s %s\n", check__failed ? "FAIL" : "PASS", name);                  \
			if (check__failed)                                                         \
				failed++;                                                          \
			else                                                                       \
				passed++;                                                          \
		}                                                                                  \
		socktab_thread_unregister();                                                       \
		printf("%d passed, %d failed\n", passed, failed);                                  \
		return failed ? 1 : 0;                                                             \
	}

/* ---- helpers shared by the unit tests ---- */

/*
 * Run @fn(@arg) in a child process with stderr captured into @err (NUL-terminated); a child
 * still running after 10 s is killed by SIGALRM (a hang is a failure, not a stuck test). Returns
 * the child's wait status, or -1 when it could not be run.
 */
static inline int check_run_child(void (*fn)(void *), void *arg, char *err, size_t errlen)
{
	int fds[2], status = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		alarm(10);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < errlen && (n = read(fds[0], err + got, errlen - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = 0;
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* An IPv4 address in network order, or an IPv6 one, from its text. */
static inline uint32_t check_ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static inline struct in6_addr check_ip6(const char *s)
{
	struct in6_addr a;

	inet_pton(AF_INET6, s, &a);
	return a;
}

static inline struct sockaddr_in check_sin(const char *ip, int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static inline struct sockaddr_in6 check_sin6(const char *ip, int port)
{
	struct sockaddr_in6 a;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, ip, &a.sin6_addr);
	return a;
}

static inline int check_bind4(struct socktab_sock *sk, const char *ip, int port)
{
	struct sockaddr_in a = check_sin(ip, port);

	return socktab_bind(sk, (struct sockaddr *)&a, sizeof(a));
}

static inline int check_bind6(struct socktab_sock *sk, const char *ip, int port)
{
	struct sockaddr_in6 a = check_sin6(ip, port);

	return socktab_bind(sk, (struct sockaddr *)&a, sizeof(a));
}

static inline int check_connect4(struct socktab_sock *sk, const char *ip, int port)
{
	struct sockaddr_in a = check_sin(ip, port);

	return socktab_connect(sk, (struct sockaddr *)&a, sizeof(a));
}

static inline int check_connect6(struct socktab_sock *sk, const char *ip, int port)
{
	struct sockaddr_in6 a = check_sin6(ip, port);

	return socktab_connect(sk, (struct sockaddr *)&a, sizeof(a));
}

/* Local port of @sk (host order), or a negative errno. */
static inline int check_port(struct socktab_sock *sk)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);
	int err = socktab_getsockname(sk, (struct sockaddr *)&a, &len);

	if (err)
		return err;
	return ntohs(a.sin6_port); /* sin_port and sin6_port share their offset */
}

static inline int check_setint(struct socktab_sock *sk, int level, int opt, int v)
{
	return socktab_setsockopt(sk, level, opt, &v, sizeof(v));
}

/* A manual clock for TIME_WAIT tests: nanoseconds in *arg. */
static inline uint64_t check_clock(void *arg)
{
	return *(uint64_t *)arg;
}

static inline struct socktab_net *check_net(int lo, int hi, uint64_t *clk)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.port_low = (uint16_t)lo;
	p.port_high = (uint16_t)hi;
	if (clk) {
		p.clock = check_clock;
		p.clock_arg = clk;
	}
	return socktab_net_new(&p);
}

/* Parameters of a net of variant @v over @lo..@hi with the key @seed gives and, unless @clk is
 * NULL, the clock *@clk: two nets made alike choose alike. */
static inline void check_keyed_params(struct socktab_net_params *p, enum socktab_variant v,
				      int lo, int hi, uint64_t *clk, uint64_t seed)
{
	socktab_net_params_init(p);
	p->port_low = (uint16_t)lo;
	p->port_high = (uint16_t)hi;
	p->variant = v;
	p->fixed_secret = 1;
	memcpy(p->secret, &seed, sizeof(seed));
	if (clk) {
		p->clock = check_clock;
		p->clock_arg = clk;
	}
}

/* A net made from check_keyed_params(). */
static inline struct socktab_net *check_keyed_net(enum socktab_variant v, int lo, int hi,
						  uint64_t *clk, uint64_t seed)
{
	struct socktab_net_params p;

	check_keyed_params(&p, v, lo, hi, clk, seed);
	return socktab_net_new(&p);
}

#endif
