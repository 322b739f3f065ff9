/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A kernel TCP client that stops reading: the peer of tests/real/zerowin.sh.
 *
 *   slow_reader ADDR PORT BYTES HOLD_S
 * connects with a small receive buffer, sends up to BYTES to an echo server without reading
 * (the echo fills our receive buffer, so we advertise a zero window and the server has to
 * probe it), then holds the connection for HOLD_S seconds, checking once a second that it is
 * still ESTABLISHED (a reset would close it). Then it reads, sending the rest, until every
 * byte it sent has come back. Prints key=value lines; exit 0 when the connection held and the
 * echo was complete, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	return ti.tcpi_state;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long total, sent = 0, got = 0;
	int fd, rcvbuf = 4096, hold, held = 0;
	double end;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: slow_reader ADDR PORT BYTES HOLD_S\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	total = atol(argv[3]);
	hold = atoi(argv[4]);
	memset(buf, 'z', sizeof(buf));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("slow_reader: connect");
		return 1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	/* Send until both directions are stuck: 2 s without progress, or everything sent. */
	end = now_s() + 2;
	while (sent < total && now_s() < end) {
		long n = total - sent < (long)sizeof(buf) ? total - sent : (long)sizeof(buf);
		ssize_t w = send(fd, buf, (size_t)n, MSG_NOSIGNAL);

		if (w > 0) {
			sent += w;
			end = now_s() + 2;
		} else if (w < 0 && errno != EAGAIN) {
			perror("slow_reader: send");
			return 1;
		} else {
			usleep(10000);
		}
	}
	printf("sent_before_hold=%ld\n", sent);
	for (held = 0; held < hold; held++) {
		sleep(1);
		if (tcp_state(fd) != TCP_ESTABLISHED)
			break;
	}
	printf("held_s=%d state=%d\n", held, tcp_state(fd));
	/* Read everything back, sending the rest meanwhile: 20 s at most. */
	end = now_s() + 20;
	while (got < total && now_s() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN | (sent < total ? POLLOUT : 0) };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		if (p.revents & POLLIN) {
			n = recv(fd, buf, sizeof(buf), 0);
			if (n <= 0) {
				printf("recv=%s\n", n ? strerror(errno) : "eof");
				break;
			}
			got += n;
		}
		if ((p.revents & POLLOUT) && sent < total) {
			long k = total - sent < (long)sizeof(buf) ? total - sent : (long)sizeof(buf);

			n = send(fd, buf, (size_t)k, MSG_NOSIGNAL);
			if (n > 0)
				sent += n;
		}
	}
	printf("sent=%ld echoed=%ld\n", sent, got);
	close(fd);
	return held == hold && got == total && sent == total ? 0 : 1;
}
