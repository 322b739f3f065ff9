/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_rcu_reclaim_cpu(): the call_rcu worker that returns freed sockets to their pools runs
 * on the CPU the caller names, not on the CPU of the first thread that frees (a pinned poll
 * thread), which is where liburcu's default worker would inherit its affinity from. Each case
 * runs in a child process of its own, so liburcu starts fresh in each.
 */
#include <dirent.h>
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
 * The CPUs every thread of this process but the main one may run on, as "Cpus_allowed_list"
 * says ("1", "0-1"), if all of them agree; "none" without such a thread, "mixed" otherwise.
 */
static void others_cpus(char *out, size_t len)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;

	snprintf(out, len, "none");
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], line[256], cpus[64] = "";
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == getpid())
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
 * sockets opened and closed so that callbacks run. Exits 0 when the other threads' CPUs are
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
	others_cpus(got, sizeof(got));
	socktab_thread_unregister();
	if (strcmp(got, want)) {
		fprintf(stderr, "worker placed on %d: other threads on \"%s\", want \"%s\"\n",
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

CHECK_MAIN(reclaim_on_the_named_cpu, reclaim_bad_cpu)
