/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench kernel-crr: the live kernel's own connect()/close() churn, the anchor beside
 * `bench crr` and `bench scale`. The process moves into a network namespace of its own
 * (unshare(CLONE_NEWNET): root or CAP_SYS_ADMIN), brings lo up and sets the namespace's
 * net.ipv4.ip_local_port_range to the run's range, so the kernel's connect() walks the same
 * ports at the same occupancy as socktab's. Traffic stays on lo of that namespace.
 *
 * Each thread listens on a port of its own (127.0.0.1 or ::1) and keeps FLOWS/THREADS connections
 * open; a transaction closes the thread's oldest connection abortively (SO_LINGER {1, 0}: a RST,
 * no TIME_WAIT, as bench crr's default) on both ends, then connect()s a new one, accept()s it,
 * and sends a 1-byte request and a 1-byte response: neper's tcp_crr, with the connect() port
 * chosen by the kernel. Prints the total, per thread, and the same key names as bench crr.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "bench.h"
#include "opt.h"

#define KCRR_PORT 12867
#define KCRR_MAX_THREADS 64

struct kconn {
	int c, s; /* client and accepted socket; -1 when closed */
};

struct kthread {
	_Alignas(64) pthread_t tid;
	int id, family, nflows, next, lfd;
	struct kconn *conns;
	uint64_t transactions, errors;
	double seconds;
	pthread_barrier_t *go;
	atomic_bool *stop;
};

static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

static int write_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static socklen_t kaddr(int family, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons((uint16_t)port);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s4->sin_port = htons((uint16_t)port);
	return sizeof(*s4);
}

static void rst_close(int fd)
{
	static const struct linger lg0 = { 1, 0 };

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	close(fd);
}

/* connect(), accept(), 1-byte request and response. 0 or a negative errno. */
static int kopen(struct kthread *t, struct kconn *k)
{
	struct sockaddr_storage ss;
	socklen_t len = kaddr(t->family, KCRR_PORT + t->id, &ss);
	char b = 'x';
	int one = 1;

	k->c = socket(t->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (k->c < 0)
		return -errno;
	setsockopt(k->c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(k->c, (struct sockaddr *)&ss, len) < 0)
		goto fail;
	k->s = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (k->s < 0)
		goto fail;
	setsockopt(k->s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (write(k->c, &b, 1) != 1 || read(k->s, &b, 1) != 1 || write(k->s, &b, 1) != 1 ||
	    read(k->c, &b, 1) != 1)
		goto fail;
	return 0;
fail:;
	int err = -errno;

	rst_close(k->c);
	rst_close(k->s);
	k->c = k->s = -1;
	return err ? err : -EIO;
}

static void *kthread_main(void *arg)
{
	struct kthread *t = arg;
	uint64_t t0;

	pthread_barrier_wait(t->go);
	t0 = bench_now_ns();
	while (!atomic_load_explicit(t->stop, memory_order_relaxed)) {
		struct kconn *k = &t->conns[t->next];

		if (++t->next == t->nflows)
			t->next = 0;
		rst_close(k->c);
		rst_close(k->s);
		k->c = k->s = -1;
		if (kopen(t, k))
			t->errors++;
		else
			t->transactions++;
	}
	t->seconds = (double)(bench_now_ns() - t0) / 1e9;
	return NULL;
}

int bench_kernel_crr_run(int threads, int flows, double seconds, int lo, int hi, int family,
			 struct bench_kcrr_result *r)
{
	struct kthread *th;
	pthread_barrier_t go;
	atomic_bool stop = false;
	char range[32];
	int err = 0, started = 0;

	memset(r, 0, sizeof(*r));
	if (threads < 1 || threads > KCRR_MAX_THREADS || flows < threads)
		return -EINVAL;
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	if ((err = lo_up()))
		return err;
	snprintf(range, sizeof(range), "%d %d", lo, hi);
	if ((err = write_sysctl("/proc/sys/net/ipv4/ip_local_port_range", range)))
		return err;
	th = aligned_alloc(64, sizeof(*th) * (size_t)threads);
	if (!th)
		return -ENOMEM;
	memset(th, 0, sizeof(*th) * (size_t)threads);
	pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads && !err; i++) {
		struct kthread *t = &th[i];
		struct sockaddr_storage ss;
		socklen_t len = kaddr(family, KCRR_PORT + i, &ss);
		int one = 1;

		t->id = i;
		t->family = family;
		t->go = &go;
		t->stop = &stop;
		t->nflows = flows / threads + (i < flows % threads);
		t->conns = calloc((size_t)t->nflows, sizeof(*t->conns));
		t->lfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (!t->conns || t->lfd < 0 ||
		    setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(t->lfd, (struct sockaddr *)&ss, len) || listen(t->lfd, 4096)) {
			err = t->conns ? -errno : -ENOMEM;
			break;
		}
		for (int k = 0; k < t->nflows && !err; k++)
			err = kopen(t, &t->conns[k]);
	}
	for (int i = 0; i < threads && !err; i++) {
		if ((err = -pthread_create(&th[i].tid, NULL, kthread_main, &th[i])))
			break;
		started++;
	}
	if (started == threads) {
		struct timespec ts = { (time_t)seconds,
				       (long)((seconds - (double)(time_t)seconds) * 1e9) };

		pthread_barrier_wait(&go);
		nanosleep(&ts, NULL);
		atomic_store(&stop, true);
		for (int i = 0; i < threads; i++) {
			pthread_join(th[i].tid, NULL);
			r->transactions += th[i].transactions;
			r->errors += th[i].errors;
			if (th[i].seconds > 0)
				r->throughput += (double)th[i].transactions / th[i].seconds;
		}
	} else if (started) {
		/* A thread could not start: the barrier would never open for the others. */
		fprintf(stderr, "bench kernel-crr: pthread_create failed after %d threads\n",
			started);
		exit(1);
	}
	for (int i = 0; i < threads; i++) {
		for (int k = 0; th[i].conns && k < th[i].nflows; k++) {
			rst_close(th[i].conns[k].c);
			rst_close(th[i].conns[k].s);
		}
		free(th[i].conns);
		if (th[i].lfd > 0)
			close(th[i].lfd);
	}
	pthread_barrier_destroy(&go);
	free(th);
	return err;
}

static void help(void)
{
	printf("usage: socktab bench kernel-crr [-6] [-T THREADS] [-F FLOWS] [-l SECONDS]\n"
	       "                                [--range LO-HI] [--json]\n"
	       "defaults: -T 1 -F 1000 -l 2 --range 32768-60999\n"
	       "The live kernel's tcp_crr churn in a network namespace of its own (root): each\n"
	       "thread listens on a port of its own, keeps FLOWS/THREADS connections, and per\n"
	       "transaction closes its oldest with a RST, connect()s, accept()s, and exchanges one\n"
	       "byte each way. The namespace's ip_local_port_range is --range, so FLOWS over its\n"
	       "size is the port pressure bench crr sees at the same -F.\n");
}

int bench_kernel_crr_main(int argc, char **argv)
{
	enum { O_RANGE = 256, O_JSON };
	static const struct option longopts[] = {
		{ "range", required_argument, NULL, O_RANGE },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench kernel-crr", "h6T:F:l:", longopts };
	int threads = 1, flows = 1000, lo = 32768, hi = 60999, family = AF_INET, opt, err;
	double seconds = 2;
	struct bench_kcrr_result r;
	struct bench_out o = { 0 };

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case '6':
			family = AF_INET6;
			break;
		case 'T':
			bad = opt_count_int(&op, "-T", optarg, 1, KCRR_MAX_THREADS, &threads);
			break;
		case 'F':
			bad = opt_count_int(&op, "-F", optarg, 1, 65535, &flows);
			break;
		case 'l':
			bad = opt_real(&op, "-l", optarg, 0.05, 3600, &seconds);
			break;
		case O_RANGE:
			bad = opt_port_range(&op, "--range", optarg, &lo, &hi);
			break;
		case O_JSON:
			o.json = true;
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (flows < threads || flows > hi - lo + 1) {
		opt_fail(&op, "need THREADS <= FLOWS <= the range's %d ports", hi - lo + 1);
		return 2;
	}
	err = bench_kernel_crr_run(threads, flows, seconds, lo, hi, family, &r);
	if (err == -EPERM) {
		fprintf(stderr, "bench kernel-crr: a network namespace of its own needs root "
				"(CAP_SYS_ADMIN); skipped\n");
		return 77;
	}
	if (err) {
		fprintf(stderr, "bench kernel-crr: %s\n", strerror(-err));
		return 1;
	}
	bench_out_begin(&o);
	bench_out_str(&o, "test", "kernel_tcp_crr");
	bench_out_u64(&o, "num_threads", (uint64_t)threads);
	bench_out_u64(&o, "num_flows", (uint64_t)flows);
	bench_out_str(&o, "family", family == AF_INET6 ? "ipv6" : "ipv4");
	bench_out_dbl(&o, "occupancy", "%.4f", (double)flows / (hi - lo + 1));
	bench_out_u64(&o, "num_transactions", r.transactions);
	bench_out_dbl(&o, "throughput", "%.2f", r.throughput);
	bench_out_dbl(&o, "throughput_per_thread", "%.2f", r.throughput / threads);
	bench_out_u64(&o, "errors", r.errors);
	bench_out_end(&o);
	return 0;
}
