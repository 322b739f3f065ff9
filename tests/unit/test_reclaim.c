/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_rcu_reclaim_cpu(): the call_rcu worker that returns freed sockets to their pools runs
 * on the CPU the caller names, not on the CPU of the first thread that frees (a pinned poll
 * thread), which is where liburcu's default worker would inherit its affinity from. Those cases
 * run in child processes of their own, so liburcu starts fresh in each. And a thread's cache of
 * bind buckets stays bounded when the buckets it frees were made on another thread.
 */
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Pin the calling thread to @cpu. */
static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/*
 * The CPUs the reclaim workers of this process may run on (the threads named "socktab-reclaim",
 * socktab/net.h), as "Cpus_allowed_list" says ("1", "0-1"), if all of them agree; "none"
 * without such a thread, "mixed" otherwise. Only those threads: a sanitizer's runtime has
 * threads of its own (ThreadSanitizer's background thread, started again in a forked child
 * with the CPUs the child had before it pinned itself), which reclaim nothing.
 */
static void reclaim_cpus(char *out, size_t len)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;

	snprintf(out, len, "none");
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], line[256], comm[32] = "", cpus[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		if (strcmp(comm, "socktab-reclaim"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Cpus_allowed_list: %63s", cpus) == 1)
				break;
		fclose(f);
		if (found++ && strcmp(out, cpus))
			snprintf(out, len, "mixed");
		else if (found == 1)
			snprintf(out, len, "%s", cpus);
	}
	closedir(d);
}

/* In a child: the main thread pinned to CPU 0, maybe the worker placed on @worker_cpu, then
 * sockets opened and closed so that callbacks run. Exits 0 when the reclaim workers' CPUs are
 * @want. */
static int child(int worker_cpu, const char *want)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	char got[64];

	if (!pin(0))
		return 3;
	if (worker_cpu != -2 && socktab_rcu_reclaim_cpu(worker_cpu))
		return 4;
	socktab_thread_register();
	socktab_net_params_init(&p);
	net = socktab_net_new(&p);
	if (!net)
		return 5;
	for (int i = 0; i < 1000; i++) { /* 1000 frees: batches of 64 go to call_rcu */
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		if (!sk)
			return 6;
		socktab_close(sk);
	}
	socktab_net_free(net); /* waits for the callbacks: the worker exists and has run */
	reclaim_cpus(got, sizeof(got));
	socktab_thread_unregister();
	if (strcmp(got, want)) {
		fprintf(stderr, "worker placed on %d: reclaim workers on \"%s\", want \"%s\"\n",
			worker_cpu, got, want);
		return 1;
	}
	return 0;
}

static int run_child(int worker_cpu, const char *want)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child(worker_cpu, want));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static bool two_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(0, &set) &&
	       CPU_ISSET(1, &set);
}

TEST(reclaim_on_the_named_cpu)
{
	if (!two_cpus()) {
		printf("SKIP reclaim_on_the_named_cpu: CPUs 0 and 1 are needed\n");
		return;
	}
	/* Without the call, liburcu's worker inherits the freeing thread's CPU. */
	CHECK_EQ(run_child(-2, "0"), 0);
	/* Placed on CPU 1: the worker runs there, though the main thread is pinned to 0. */
	CHECK_EQ(run_child(1, "1"), 0);
}

TEST(reclaim_bad_cpu)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	CHECK_EQ(socktab_rcu_reclaim_cpu(-2), -EINVAL);
	CHECK_EQ(socktab_rcu_reclaim_cpu((int)n), -EINVAL);
	CHECK_EQ(socktab_rcu_reclaim_cpu(1 << 20), -EINVAL);
}

/*
 * Bind buckets made on one thread and freed on another do not pile up: a thread binds NB
 * sockets to ports of its own choosing (a port bucket and an address bucket each), another
 * closes them, round after round. The closing thread's bucket cache keeps at most its cap and
 * hands the rest back to malloc, so the heap in use stays flat after the first rounds (without
 * the cap it grew by some 280 bytes a bind, every round: 0.5 MiB a round here). ASan's allocator
 * keeps no mallinfo2() figures: there the check reads zeroes and passes.
 */
#define NB 2000
static struct socktab_sock *bucket_socks[NB];
static pthread_barrier_t bucket_go;

static void *bucket_closer(void *arg)
{
	(void)arg;
	socktab_thread_register();
	for (int r = 0; r < 20; r++) {
		pthread_barrier_wait(&bucket_go);
		for (int i = 0; i < NB; i++)
			socktab_close(bucket_socks[i]);
		pthread_barrier_wait(&bucket_go);
	}
	socktab_thread_unregister();
	return NULL;
}

TEST(buckets_freed_elsewhere_do_not_pile_up)
{
	struct socktab_net *net = check_net(32768, 60999, NULL);
	size_t at5 = 0, at20 = 0;
	pthread_t t;

	CHECK(net != NULL);
	CHECK_EQ(pthread_barrier_init(&bucket_go, NULL, 2), 0);
	CHECK_EQ(pthread_create(&t, NULL, bucket_closer, NULL), 0);
	for (int r = 0; r < 20; r++) {
		for (int i = 0; i < NB; i++) {
			bucket_socks[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK(bucket_socks[i] != NULL);
			CHECK_EQ(check_bind4(bucket_socks[i], "0.0.0.0", 0), 0);
		}
		pthread_barrier_wait(&bucket_go);
		pthread_barrier_wait(&bucket_go);
		/* The least of three rounds' samples: buckets still waiting for their grace period
		 * (as many as two rounds' on a loaded machine) only ever add to one. */
		size_t u = mallinfo2().uordblks;

		if (r >= 2 && r <= 4 && (!at5 || u < at5))
			at5 = u;
		if (r >= 17 && (!at20 || u < at20))
			at20 = u;
	}
	pthread_join(t, NULL);
	pthread_barrier_destroy(&bucket_go);
	/* 13 to 17 rounds of 2,000 binds apart: 6.5 MiB of buckets or more without the cap. */
	CHECK(at20 < at5 + (2u << 20));
	socktab_net_free(net);
}

CHECK_MAIN(reclaim_on_the_named_cpu, reclaim_bad_cpu, buckets_freed_elsewhere_do_not_pile_up)
