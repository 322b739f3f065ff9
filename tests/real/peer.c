/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel side of the tests/real tests: ordinary Linux sockets talking to `socktab serve`
 * through its TUN device (or serving its --connect flows). One program, one subcommand per
 * role; each prints key=value results and exits 0 when everything it checked held.
 *
 *   tcp-hold ADDR PORT N [PARALLEL]   hold N TCP connections at once, each echo-checked
 *   refused-tcp ADDR PORT             connect() must fail with ECONNREFUSED
 *   refused-udp ADDR PORT             a connected UDP socket must see ECONNREFUSED
 *   udp-peers ADDR PORT N ROUNDS      N UDP sockets, ROUNDS echoes each; all must come back
 *   echo-server PORT [WORKERS]        TCP echo on every address, until SIGTERM (2 processes)
 *   http-server PORT [WORKERS]        HTTP 200 + Connection: close (closes first), until
 *                                     SIGTERM (1 process)
 *
 * Everything is bounded: connection counts by N, waits by timeouts.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define HTTP_BODY "Hello from socktab serve\n"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ADDR PORT -> a socket address (numeric only). */
static int resolve(const char *addr, const char *port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;

	if (getaddrinfo(addr, port, &hints, &ai) || !ai) {
		fprintf(stderr, "peer: bad address %s port %s\n", addr, port);
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* As many descriptors as allowed: 2^20 with CAP_SYS_RESOURCE, else the hard limit. */
static void raise_nofile(void)
{
	struct rlimit r = { 1 << 20, 1 << 20 };

	if (setrlimit(RLIMIT_NOFILE, &r) && !getrlimit(RLIMIT_NOFILE, &r)) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* One held connection of tcp-hold. */
struct hold {
	int fd;
	int state;      /* 0 connecting, 1 waiting for the echo, 2 echo ok, 3 failed */
	char line[32];
	int len, got;
};

static int tcp_hold(const char *addr, const char *port, int n, int parallel)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct hold *h = calloc((size_t)n, sizeof(*h));
	struct epoll_event ev, evs[256];
	int ep = epoll_create1(0), started = 0, inflight = 0, ok = 0, failed = 0;
	double deadline = now_s() + 60;

	if (!h || ep < 0 || resolve(addr, port, &ss, &sl))
		return 2;
	while (ok + failed < n && now_s() < deadline) {
		while (started < n && inflight < parallel) {
			struct hold *c = &h[started];

			c->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (c->fd < 0) {
				fprintf(stderr, "peer: socket: %s\n", strerror(errno));
				return 2;
			}
			c->len = snprintf(c->line, sizeof(c->line), "hold %d\n", started);
			if (connect(c->fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS) {
				c->state = 3;
				failed++;
				started++;
				continue;
			}
			ev.events = EPOLLOUT | EPOLLIN;
			ev.data.u32 = (uint32_t)started;
			epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
			started++;
			inflight++;
		}
		int k = epoll_wait(ep, evs, 256, 100);

		for (int i = 0; i < k; i++) {
			struct hold *c = &h[evs[i].data.u32];
			char buf[64];
			int err = 0;
			socklen_t el = sizeof(err);

			if (c->state == 0) {
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err || send(c->fd, c->line, (size_t)c->len, 0) != c->len) {
					c->state = 3;
				} else {
					c->state = 1;
					ev.events = EPOLLIN;
					ev.data.u32 = evs[i].data.u32;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
					continue;
				}
			} else if (c->state == 1) {
				ssize_t r = recv(c->fd, buf, sizeof(buf), 0);

				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0 || c->got + r > c->len ||
				    memcmp(c->line + c->got, buf, (size_t)r)) {
					c->state = 3;
				} else {
					c->got += (int)r;
					if (c->got < c->len)
						continue;
					c->state = 2;
				}
			} else {
				continue;
			}
			/* Done with this one: off epoll, but the connection stays open. */
			epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
			inflight--;
			if (c->state == 2)
				ok++;
			else
				failed++;
		}
	}
	int open_now = 0;

	for (int i = 0; i < started; i++)
		open_now += h[i].state == 2;
	printf("held=%d echo_ok=%d failed=%d\n", open_now, ok, failed);
	fflush(stdout);
	for (int i = 0; i < started; i++)
		if (h[i].fd > 0)
			close(h[i].fd);
	free(h);
	return ok == n ? 0 : 1;
}

static int refused_tcp(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct timeval tv = { 3, 0 };
	int fd, r;

	if (resolve(addr, port, &ss, &sl))
		return 2;
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	r = connect(fd, (struct sockaddr *)&ss, sl);
	printf("tcp_connect_errno=%s\n", r ? strerrorname_np(errno) : "none");
	close(fd);
	return r && errno == ECONNREFUSED ? 0 : 1;
}

static int refused_udp(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct timeval tv = { 2, 0 };
	char b[16];
	int fd, e = 0;

	if (resolve(addr, port, &ss, &sl))
		return 2;
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, sl) || send(fd, "ping", 4, 0) != 4)
		e = errno;
	else if (recv(fd, b, sizeof(b), 0) < 0)
		e = errno;
	printf("udp_recv_errno=%s\n", e ? strerrorname_np(e) : "none");
	close(fd);
	return e == ECONNREFUSED ? 0 : 1;
}

/* N connected UDP sockets; each round every socket sends one datagram (in batches of 50,
 * each batch waiting for its echoes, so the TUN queue never overflows) and must get it back. */
static int udp_peers(const char *addr, const char *port, int n, int rounds)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int *fd = calloc((size_t)n, sizeof(int)), ok = 0, sent = 0;
	struct timeval tv = { 2, 0 };

	if (!fd || resolve(addr, port, &ss, &sl))
		return 2;
	for (int i = 0; i < n; i++) {
		fd[i] = socket(ss.ss_family, SOCK_DGRAM, 0);
		setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&ss, sl)) {
			fprintf(stderr, "peer: udp socket %d: %s\n", i, strerror(errno));
			return 2;
		}
	}
	for (int r = 0; r < rounds; r++) {
		for (int b = 0; b < n; b += 50) {
			int e = b + 50 < n ? b + 50 : n;
			char msg[32], got[64];

			for (int i = b; i < e; i++) {
				int len = snprintf(msg, sizeof(msg), "peer %d round %d", i, r);

				sent += send(fd[i], msg, (size_t)len, 0) == len;
			}
			for (int i = b; i < e; i++) {
				int len = snprintf(msg, sizeof(msg), "peer %d round %d", i, r);
				ssize_t g = recv(fd[i], got, sizeof(got), 0);

				ok += g == len && !memcmp(got, msg, (size_t)len);
			}
		}
	}
	printf("udp_sent=%d udp_echo_ok=%d\n", sent, ok);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	free(fd);
	return ok == n * rounds ? 0 : 1;
}

/* A listener on every address of the namespace (IPv6 socket, dual-stack). */
static int listen_any(const char *port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1, zero = 0;

	a.sin6_port = htons((uint16_t)atoi(port));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4096)) {
		fprintf(stderr, "peer: listen on %s: %s\n", port, strerror(errno));
		return -1;
	}
	return fd;
}

/*
 * echo-server / http-server: @workers processes share one listener, each with its own epoll
 * loop: a process may hold at most RLIMIT_NOFILE descriptors, and without CAP_SYS_RESOURCE the
 * hard limit cannot be raised (20,000 in some containers), so 20,000 connections need two.
 * @http answers each request once and closes.
 */
static int server(const char *port, bool http, int workers)
{
	int lfd = listen_any(port), ep;
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];
	unsigned long accepted = 0;
	char buf[4096];
	static const char resp[] = "HTTP/1.1 200 OK\r\nServer: kernel-peer\r\nContent-Type: "
				   "text/plain\r\nContent-Length: 25\r\nConnection: close\r\n\r\n"
				   HTTP_BODY;
	pid_t kids[16];
	int nkids = 0;

	if (lfd < 0)
		return 2;
	for (int i = 1; i < workers && nkids < 16; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive the parent */
			nkids = 0;
			break;
		}
		if (pid > 0)
			kids[nkids++] = pid;
	}
	ep = epoll_create1(0);
	if (ep < 0)
		return 2;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	if (nkids || workers <= 1) {
		printf("listening=1\n");
		fflush(stdout);
	}
	while (!stop) {
		int k = epoll_wait(ep, evs, 256, 200);

		for (int i = 0; i < k; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c;

				while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
					accepted++;
				}
				continue;
			}
			ssize_t r = recv(fd, buf, sizeof(buf), 0);

			if (r < 0 && errno == EAGAIN)
				continue;
			if (r > 0 && !http) {
				if (send(fd, buf, (size_t)r, MSG_NOSIGNAL) == r)
					continue;
			} else if (r > 0 && http) {
				/* A request fits one read here (ab and curl send it in one piece). */
				if (send(fd, resp, sizeof(resp) - 1, MSG_NOSIGNAL) < 0)
					r = 0;
			}
			close(fd); /* EOF, error, or an HTTP answer sent: close first */
		}
	}
	for (int i = 0; i < nkids; i++) {
		kill(kids[i], SIGTERM);
		waitpid(kids[i], NULL, 0);
	}
	(void)accepted;
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	raise_nofile();
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "tcp-hold"))
		return tcp_hold(argv[2], argv[3], atoi(argv[4]), argc == 6 ? atoi(argv[5]) : 256);
	if (argc == 4 && !strcmp(argv[1], "refused-tcp"))
		return refused_tcp(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "refused-udp"))
		return refused_udp(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "udp-peers"))
		return udp_peers(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "echo-server"))
		return server(argv[2], false, argc == 4 ? atoi(argv[3]) : 2);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "http-server"))
		return server(argv[2], true, argc == 4 ? atoi(argv[3]) : 1);
	fprintf(stderr, "usage: peer tcp-hold ADDR PORT N [PARALLEL] | refused-tcp ADDR PORT |\n"
			"       refused-udp ADDR PORT | udp-peers ADDR PORT N ROUNDS |\n"
			"       echo-server PORT [WORKERS] | http-server PORT [WORKERS]\n");
	return 2;
}
