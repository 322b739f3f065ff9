/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel side of the AF_XDP tests and of scripts/xdp-pps.sh, one subcommand per role:
 *
 *   offload-off DEV                 checksum and segmentation offloads off on DEV (a veth's TCP
 *                                   and UDP packets then carry full checksums, and no segment is
 *                                   larger than the MTU: an AF_XDP socket on the other end sees
 *                                   frames as they would be on a wire)
 *   tcp DEV DSTMAC N SECONDS        ACK segments to the N synthetic connections of
 *                                   `socktab serve --bench-conns N` (198.51.100.(1 + i % 200),
 *                                   port 1024 + i / 200, to 192.0.2.2:5001), in a shuffled order
 *   udp DEV DSTMAC PEERS SECONDS    datagrams from 192.0.2.1, ports 40000..40000+PEERS-1, to
 *                                   192.0.2.2:4433, each a sockperf message that asks for no reply
 *   kernel-udp PEERS SECONDS        the kernel's UDP stack receiving that stream: one socket bound
 *                                   to 192.0.2.2:4433 and PEERS connected to the peers' ports
 *                                   (SO_REUSEADDR), read with recvmmsg for SECONDS
 *
 * The senders write prebuilt Ethernet frames to an AF_PACKET socket (sendmmsg, qdisc bypass) as
 * fast as it takes them, for SECONDS, and print sent=N pps=R. Every address is a documentation
 * address. Every loop ends by its count or its time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define FRAME_LEN 74 /* 14 + 20 + 40 (TCP: 20 header + 20 payload; UDP: 8 + 32) */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
	for (; n >= 2; p += 2, n -= 2)
		s += (uint32_t)(p[0] << 8 | p[1]);
	if (n)
		s += (uint32_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static int offload_off(const char *dev)
{
	static const uint32_t cmds[] = { ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), bad = 0;

	if (fd < 0)
		return 2;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct ethtool_value v = { .cmd = cmds[i], .data = 0 };
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
		ifr.ifr_data = (void *)&v;
		if (ioctl(fd, SIOCETHTOOL, &ifr) && i == 0) { /* TSO and GSO follow TX checksums */
			fprintf(stderr, "xdp_gen: %s: ETHTOOL_STXCSUM: %s\n", dev, strerror(errno));
			bad = 1;
		}
	}
	close(fd);
	return bad;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* An IPv4 frame from @src to @dst, with @l4 (its checksum field at @ck_off filled here). */
static void build(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, uint32_t src, uint32_t dst,
		  uint8_t proto, uint8_t *l4, size_t l4len, size_t ck_off)
{
	uint8_t *ip = f + 14;
	uint32_t s;
	uint16_t ck;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08, f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + l4len) >> 8), ip[3] = (uint8_t)(20 + l4len);
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	ck = fold(sum16(0, ip, 20));
	ip[10] = (uint8_t)(ck >> 8), ip[11] = (uint8_t)ck;
	s = sum16(0, ip + 12, 8) + proto + (uint32_t)l4len;
	l4[ck_off] = l4[ck_off + 1] = 0;
	ck = fold(sum16(s, l4, l4len));
	if (proto == IPPROTO_UDP && !ck)
		ck = 0xffff;
	l4[ck_off] = (uint8_t)(ck >> 8), l4[ck_off + 1] = (uint8_t)ck;
	memcpy(ip + 20, l4, l4len);
}

static int send_frames(const char *dev, uint8_t *frames, size_t n, double seconds)
{
	int fd = socket(AF_PACKET, SOCK_RAW, 0), one = 1;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(dev),
				   .sll_halen = 6 };
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	uint64_t sent = 0;
	size_t next = 0;
	double t0, end;

	if (fd < 0 || !sll.sll_ifindex) {
		fprintf(stderr, "xdp_gen: AF_PACKET on %s: %s\n", dev, strerror(errno));
		return 2;
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	memcpy(sll.sll_addr, frames, 6);
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 64; i++) {
			iov[i].iov_base = frames + next * FRAME_LEN;
			iov[i].iov_len = FRAME_LEN;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &sll;
			msgs[i].msg_hdr.msg_namelen = sizeof(sll);
			next = next + 1 == n ? 0 : next + 1;
		}
		int k = sendmmsg(fd, msgs, 64, 0);

		if (k > 0)
			sent += (uint64_t)k;
		else if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			break;
	}
	printf("sent=%llu pps=%.0f\n", (unsigned long long)sent, (double)sent / (now_s() - t0));
	close(fd);
	return 0;
}

static int gen(const char *what, const char *dev, const char *dmac_s, int n, double seconds)
{
	uint8_t dmac[6], smac[6], l4[40];
	struct ifreq ifr;
	uint8_t *frames = malloc((size_t)n * FRAME_LEN);
	uint32_t *order = malloc((size_t)n * sizeof(*order));
	uint32_t me = htonl(0xc0000202u), peer = htonl(0xc0000201u), x = 2463534242u;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (!frames || !order || fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) ||
	    parse_mac(dmac_s, dmac)) {
		fprintf(stderr, "xdp_gen: %s: bad device or MAC\n", dev);
		return 2;
	}
	close(fd);
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	/* A shuffled order (xorshift, fixed seed): consecutive frames hit unrelated slots. */
	for (int i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (int i = n - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		uint32_t j = x % (uint32_t)(i + 1), t = order[i];

		order[i] = order[j], order[j] = t;
	}
	for (int k = 0; k < n; k++) {
		uint32_t i = order[k];
		uint16_t sport, dport;

		memset(l4, 0, sizeof(l4));
		if (!strcmp(what, "tcp")) {
			sport = htons((uint16_t)(1024 + i / 200));
			dport = htons(5001);
			memcpy(l4, &sport, 2);
			memcpy(l4 + 2, &dport, 2);
			l4[4] = 0x10, l4[11] = 1;   /* seq, ack: anything */
			l4[12] = 5 << 4;
			l4[13] = 0x10;              /* ACK */
			l4[14] = 0xff, l4[15] = 0xff;
			build(frames + (size_t)k * FRAME_LEN, dmac, smac,
			      htonl(0xc6336400u + 1 + i % 200), me, IPPROTO_TCP, l4, 40, 16);
		} else {
			sport = htons((uint16_t)(40000 + i));
			dport = htons(4433);
			memcpy(l4, &sport, 2);
			memcpy(l4 + 2, &dport, 2);
			l4[5] = 40;                 /* UDP length */
			l4[8 + 7] = (uint8_t)i;     /* sockperf: sequence number */
			l4[8 + 9] = 1;              /* flags: client, no reply asked */
			l4[8 + 13] = 32;            /* message length */
			build(frames + (size_t)k * FRAME_LEN, dmac, smac, peer, me, IPPROTO_UDP, l4,
			      40, 6);
		}
	}
	rc = send_frames(dev, frames, (size_t)n, seconds);
	free(frames);
	free(order);
	return rc;
}

/* The kernel's UDP stack receiving the stream of `udp`: what it takes, and the CPU time this
 * process spent (the softirq part runs on the sender's side of the veth and is not counted). */
static int kernel_udp(int peers, double seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4433) };
	int ep = epoll_create1(0), one = 1;
	struct epoll_event ev, evs[64];
	uint64_t got = 0;
	static char bufs[64][64];
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	struct rusage r0, r1;
	struct rlimit rl = { 4096, 4096 };
	double t0, end, first = 0, last = 0;

	setrlimit(RLIMIT_NOFILE, &rl);
	a.sin_addr.s_addr = htonl(0xc0000202u);
	for (int i = -1; i < peers; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			fprintf(stderr, "xdp_gen: bind 192.0.2.2:4433: %s\n", strerror(errno));
			return 2;
		}
		if (i >= 0) {
			struct sockaddr_in p = { .sin_family = AF_INET,
						 .sin_port = htons((uint16_t)(40000 + i)),
						 .sin_addr.s_addr = htonl(0xc0000201u) };

			if (connect(fd, (struct sockaddr *)&p, sizeof(p))) {
				fprintf(stderr, "xdp_gen: connect: %s\n", strerror(errno));
				return 2;
			}
		}
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	for (int i = 0; i < 64; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
	}
	printf("listening=1\n");
	fflush(stdout);
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		int k = epoll_wait(ep, evs, 64, 100);

		for (int i = 0; i < k; i++) {
			int m;

			do {
				memset(msgs, 0, sizeof(msgs));
				for (int j = 0; j < 64; j++) {
					msgs[j].msg_hdr.msg_iov = &iov[j];
					msgs[j].msg_hdr.msg_iovlen = 1;
				}
				m = recvmmsg(evs[i].data.fd, msgs, 64, MSG_DONTWAIT, NULL);
				if (m > 0) {
					if (!got)
						first = now_s();
					got += (uint64_t)m;
					last = now_s();
				}
			} while (m == 64);
		}
	}
	getrusage(RUSAGE_SELF, &r1);
	double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
		     (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
		     (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
		     (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	printf("received=%llu pps=%.0f cpu_ns_per_packet=%.0f\n", (unsigned long long)got,
	       last > first ? (double)got / (last - first) : 0.0, got ? cpu * 1e9 / (double)got : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "offload-off"))
		return offload_off(argv[2]);
	if (argc == 6 && (!strcmp(argv[1], "tcp") || !strcmp(argv[1], "udp"))) {
		int n = atoi(argv[4]);
		double s = atof(argv[5]);

		if (n < 1 || n > (strcmp(argv[1], "tcp") ? 25000 : 200 * 64512) || s <= 0 || s > 60)
			return fprintf(stderr, "xdp_gen: bad count or seconds\n"), 2;
		return gen(argv[1], argv[2], argv[3], n, s);
	}
	if (argc == 4 && !strcmp(argv[1], "kernel-udp")) {
		int n = atoi(argv[2]);
		double s = atof(argv[3]);

		if (n < 0 || n > 4000 || s <= 0 || s > 60)
			return fprintf(stderr, "xdp_gen: bad count or seconds\n"), 2;
		return kernel_udp(n, s);
	}
	fprintf(stderr, "usage: xdp_gen offload-off DEV | tcp DEV DSTMAC N SECONDS |\n"
			"       udp DEV DSTMAC PEERS SECONDS | kernel-udp PEERS SECONDS\n");
	return 2;
}
