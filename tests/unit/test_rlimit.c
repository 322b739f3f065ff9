/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets under an address-space limit (RLIMIT_AS, `ulimit -v`): the process-wide range every
 * slab is carved from (src/pool.c) is sized to fit the limit, so a process held to a few hundred
 * MiB still makes sockets, TIME_WAIT entries and a net with a reservation, and its own mallocs
 * still find room beside the range. Each limit is tried in a child of its own, set before the
 * child makes its first slab (the range is reserved then, once per process).
 * Skipped (77) under AddressSanitizer and ThreadSanitizer, whose shadow memory needs terabytes of
 * address space: no limit of this size can hold them.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif

#define MIB ((rlim_t)1 << 20)
#define NSOCKS 20000

/* Set in a child held to a limit: the workload then also asks for more than the limit holds. */
static bool limited;

/* What a process under the limit must still do; 0, or the step that failed (> 0). */
static int workload(void)
{
	static struct socktab_sock *socks[NSOCKS];
	struct socktab_net_params p;
	struct socktab_net *net, *net2;
	struct socktab_sock *l, *c;
	struct socktab_net_stats st;
	struct sockaddr_in a = check_sin("127.0.0.1", 5000);
	int step = 1;

	net = socktab_net_new(NULL);
	if (!net)
		return step;
	step++;
	l = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	if (!l || socktab_bind(l, (struct sockaddr *)&a, sizeof(a)) || socktab_listen(l, 16))
		return step;
	step++;
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	if (!c || socktab_connect(c, (struct sockaddr *)&a, sizeof(a)) ||
	    socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED) || socktab_close(c))
		return step;
	step++;
	socktab_net_stats(net, &st);
	if (st.time_wait != 1)
		return step;
	step++;
	/* Several slabs of sockets, of both families. */
	for (int i = 0; i < NSOCKS; i++) {
		socks[i] = socktab_socket(net, i % 2 ? SOCKTAB_UDP : SOCKTAB_TCP,
					  i % 3 ? AF_INET : AF_INET6);
		if (!socks[i])
			return step;
	}
	step++;
	/* A second net with a reservation: its slabs come from the range too. */
	socktab_net_params_init(&p);
	p.reserve_socks = 50000;
	p.reserve_tw = 50000;
	p.reserve_family = AF_INET;
	net2 = socktab_net_new(&p);
	if (!net2)
		return step;
	step++;
	/* A reservation the limit cannot hold: ENOMEM, and the half-made net is undone at once,
	 * inside a read-side section too (no grace period to wait for). */
	if (limited) {
		struct socktab_net *net3;
		int err;

		socktab_net_params_init(&p);
		p.reserve_socks = 1u << 24;
		p.reserve_family = AF_INET;
		socktab_rcu_read_lock();
		errno = 0;
		net3 = socktab_net_new(&p);
		err = errno;
		socktab_rcu_read_unlock();
		if (net3 || err != ENOMEM)
			return step;
	}
	step++;
	/* The process's own memory beside the range. */
	void *m = malloc(16 << 20);

	if (!m)
		return step;
	memset(m, 1, 16 << 20);
	free(m);
	for (int i = 0; i < NSOCKS; i++)
		socktab_close(socks[i]);
	socktab_close(l);
	socktab_net_free(net2);
	socktab_net_free(net);
	return 0;
}

/* Run the workload in a child held to @limit bytes of address space: its exit status. */
static int under_limit(rlim_t limit)
{
	pid_t pid;
	int status = 0;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;

		getrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = limit;
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(100);
		limited = true;
		alarm(60);
		_exit(workload());
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "limit %llu MiB: %s %d (workload step, or 100: setrlimit)\n",
			(unsigned long long)(limit / MIB),
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return status;
}

TEST(sockets_under_rlimit_as)
{
#ifdef SHADOW_MEMORY
	printf("skipped: a sanitizer's shadow memory does not fit an address-space limit\n");
	exit(77);
#endif
	/* 1 GiB and below: the old fixed floor of the range (1 GiB) left no room. */
	static const rlim_t limits[] = { 1024 * MIB, 768 * MIB, 512 * MIB, 256 * MIB };

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		int st = under_limit(limits[i]);

		CHECK(WIFEXITED(st));
		CHECK_EQ(WEXITSTATUS(st), 0);
	}
}

/* No limit: the range is as large as before (all that an ehash head's 32 bits reach). */
TEST(sockets_without_limit)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;

		getrlimit(RLIMIT_AS, &rl);
		if (rl.rlim_cur != RLIM_INFINITY)
			_exit(0); /* the test runs under a limit of its own: nothing to compare */
		alarm(60);
		_exit(workload());
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

CHECK_MAIN(sockets_under_rlimit_as, sockets_without_limit)
