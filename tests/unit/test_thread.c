/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread's part in RCU when its owner gets it wrong (socktab/net.h, docs/concurrency.md):
 *   - a thread that exits while registered, online, or inside a read-side section of its own is
 *     taken offline and unregistered at its exit: later grace periods (socktab_net_free())
 *     neither wait for it nor read its freed thread-local memory, and threads made afterwards
 *     (which may get the dead thread's memory) register and unregister as usual.
 *   - one socktab_rcu_read_unlock() more than the thread's socktab_rcu_read_lock() calls stops the
 *     process with a message in every build: outside any section, and on an online thread,
 *     whose own section is not the caller's to end (it would leave the thread's lookups
 *     unprotected, and the next socktab_thread_offline() would stop every grace period);
 *     balanced sections nested in an online thread's, across quiescent states too, are fine.
 * A grace period that does not end is a hang, not a failure: an alarm turns it into one.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Seconds a grace period may take here before the test calls it a hang. */
#define HANG_S 20

static const char *waiting_for = "";

static void on_alarm(int sig)
{
	static const char msg[] = "test_thread: a grace period never ended: ";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, waiting_for, strlen(waiting_for));
	(void)!write(2, "\n", 1);
	_exit(1);
}

/* socktab_net_free() of a net that has something to reclaim, under the alarm. */
static void free_net_bounded(struct socktab_net *net, const char *what)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	socktab_close(sk); /* a socket for the grace period to free */
	waiting_for = what;
	signal(SIGALRM, on_alarm);
	alarm(HANG_S);
	socktab_net_free(net);
	alarm(0);
}

static struct socktab_net *new_net(void)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	return socktab_net_new(&p);
}

/* What a thread leaves behind at its exit. */
enum leave { REGISTERED, REGISTERED_TWICE, ONLINE, IN_SECTION, ONLINE_IN_SECTION };

struct leaver {
	enum leave how;
	struct socktab_net *net;
	int err;
};

static void *leaver_main(void *arg)
{
	struct leaver *l = arg;
	struct socktab_sock *sk;

	socktab_thread_register();
	if (l->how == REGISTERED_TWICE)
		socktab_thread_register();
	if (l->how == ONLINE || l->how == ONLINE_IN_SECTION)
		l->err = socktab_thread_online();
	if (l->how == IN_SECTION || l->how == ONLINE_IN_SECTION)
		socktab_rcu_read_lock();
	/* Some work, as such a thread would have done: a socket made and closed. */
	sk = socktab_socket(l->net, SOCKTAB_TCP, AF_INET);
	socktab_close(sk);
	return NULL; /* no offline, no unlock, no unregister */
}

static void leave_one(enum leave how, const char *what)
{
	struct leaver l = { .how = how, .net = new_net() };
	pthread_t t;

	CHECK(l.net);
	CHECK_EQ(pthread_create(&t, NULL, leaver_main, &l), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(l.err, 0);
	free_net_bounded(l.net, what);
}

TEST(exit_while_online)
{
	leave_one(ONLINE, "a thread that exited online");
}

TEST(exit_inside_section)
{
	leave_one(IN_SECTION, "a thread that exited inside a read-side section");
	leave_one(ONLINE_IN_SECTION, "a thread that exited online inside a section");
}

/* A well-behaved thread: registers, works, unregisters. */
static void *tidy_main(void *arg)
{
	struct socktab_sock *sk;

	socktab_thread_register();
	sk = socktab_socket(arg, SOCKTAB_UDP, AF_INET6);
	socktab_close(sk);
	socktab_thread_unregister();
	return NULL;
}

/* Threads that exit registered, one after the other with tidy ones, so the next thread often
 * gets the stack and thread-local memory of one that exited registered: liburcu's list of
 * readers must not still hold the dead thread's entry there. */
TEST(exit_while_registered)
{
	struct socktab_net *net = new_net();

	CHECK(net);
	for (int i = 0; i < 64; i++) {
		struct leaver l = { .how = i % 3 ? REGISTERED : REGISTERED_TWICE, .net = net };
		pthread_t t;

		CHECK_EQ(pthread_create(&t, NULL, leaver_main, &l), 0);
		CHECK_EQ(pthread_join(t, NULL), 0);
		CHECK_EQ(pthread_create(&t, NULL, tidy_main, net), 0);
		CHECK_EQ(pthread_join(t, NULL), 0);
	}
	free_net_bounded(net, "threads that exited registered");
}

/* A thread that unregistered properly leaves nothing for its exit to do, and one that
 * registers again after unregistering is handled at its exit again. */
static void *again_main(void *arg)
{
	socktab_thread_register();
	socktab_thread_unregister();
	socktab_thread_register();
	*(int *)arg = socktab_thread_online();
	return NULL;
}

TEST(register_again_then_exit)
{
	struct socktab_net *net = new_net();
	pthread_t t;
	int err = -1;

	CHECK(net);
	CHECK_EQ(pthread_create(&t, NULL, again_main, &err), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(err, 0);
	free_net_bounded(net, "a thread that registered again and exited online");
}

/* ---- unbalanced unlocks ---- */

#define UNBALANCED "socktab: socktab_rcu_read_unlock without a matching socktab_rcu_read_lock"

/* The child died of SIGABRT after printing the unbalanced-unlock message. */
#define CHECK_ABORTED(status, err)                                                                 \
	do {                                                                                       \
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||                         \
		    !strstr(err, UNBALANCED)) {                                                    \
			fprintf(stderr, "%s:%d: expected an abort with \"%s\"; status %#x "        \
					"(%s), stderr: %s\n",                                      \
				__FILE__, __LINE__, UNBALANCED, (unsigned)(status),                \
				WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited",      \
				err);                                                              \
			check__failed = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

/* A lookup of a connection of @net from an online thread (no section of its own). */
static void online_lookup(struct socktab_net *net)
{
	(void)socktab_lookup_tcp4_rcu(net, htonl(0x7f000002), htons(1), htonl(0x7f000001),
				      htons(80), SOCKTAB_LOOPBACK_IFINDEX, 0);
}

static void extra_unlock_online(void *arg)
{
	(void)arg;
	struct socktab_net *net = new_net();

	if (socktab_thread_online())
		_exit(3);
	online_lookup(net);
	socktab_rcu_read_lock();
	socktab_rcu_read_unlock();
	socktab_rcu_read_unlock(); /* one too many: the thread's own section */
	/* Without the check the thread's lookups now run outside any section, and this offline
	 * takes the nesting below zero: the net's grace period never ends (the alarm fires). */
	online_lookup(net);
	socktab_thread_offline();
	socktab_net_free(net);
}

static void extra_unlock_outside(void *arg)
{
	(void)arg;
	struct socktab_net *net = new_net();

	socktab_rcu_read_lock();
	socktab_rcu_read_unlock();
	socktab_rcu_read_unlock(); /* no section to leave */
	socktab_net_free(net);
}

TEST(unbalanced_unlock_online)
{
	char err[512];
	int st = check_run_child(extra_unlock_online, NULL, err, sizeof(err));

	CHECK_ABORTED(st, err);
}

TEST(unbalanced_unlock_outside_section)
{
	char err[512];
	int st = check_run_child(extra_unlock_outside, NULL, err, sizeof(err));

	CHECK_ABORTED(st, err);
}

/* Balanced sections inside an online thread's own, left before and after quiescent states and
 * offline, are the caller's to end: no abort, and grace periods go on. */
TEST(balanced_sections_online)
{
	struct socktab_net *net = new_net();

	CHECK(net);
	CHECK_EQ(socktab_thread_online(), 0);
	socktab_rcu_read_lock();
	socktab_rcu_read_lock();
	online_lookup(net);
	socktab_rcu_read_unlock();
	socktab_quiescent_state(); /* the caller's section stays open across it */
	online_lookup(net);
	socktab_rcu_read_unlock();
	socktab_quiescent_state();
	socktab_rcu_read_lock();
	socktab_thread_offline(); /* the caller's section outlives the online one */
	online_lookup(net);
	socktab_rcu_read_unlock();
	free_net_bounded(net, "balanced sections of an online thread");
}

/* Threads of this process named @name (/proc/self/task/TID/comm). */
static int threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		n += !strcmp(comm, name);
	}
	closedir(d);
	return n;
}

/* The reclaim worker has a name: once a callback ran (net_free waits for them), the process has
 * one socktab-reclaim thread. */
TEST(reclaim_worker_named)
{
	struct socktab_net *net;
	struct socktab_sock *sk;

	socktab_thread_register();
	net = new_net();
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(socktab_close(sk), 0);
	socktab_net_free(net);
	CHECK_EQ(threads_named("socktab-reclaim"), 1);
	socktab_thread_unregister();
}

CHECK_MAIN(exit_while_online, exit_inside_section, exit_while_registered,
	   register_again_then_exit, unbalanced_unlock_online, unbalanced_unlock_outside_section,
	   balanced_sections_online, reclaim_worker_named)
