/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TUN device: a network interface of the kernel whose packets come to us through a file
 * descriptor. IFF_TUN gives IP packets (no Ethernet header, so no ARP or neighbour discovery);
 * IFF_NO_PI leaves out the 4-byte packet information header, so each read() is exactly one IP
 * packet and each write() sends one. The kernel side of the link gets the --peer-addr(6)
 * addresses; our own addresses live only in the socktab net (serve.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "stack.h"

/* Create TUN device @name in the current network namespace: its descriptor (non-blocking), or
 * -1 with a message. The device lives as long as the descriptor. */
int tun_open(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "socktab serve: /dev/net/tun: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "socktab serve: TUNSETIFF %s: %s\n", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Run `ip ARGS...` and wait for it: 0 if it exited 0. No shell is involved. */
static int run_ip(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp("ip", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * Give the kernel side of @name its addresses and bring it up, with iproute2 (what an operator
 * would type; netlink would do the same in-process). IPv6 uses `nodad` so the kernel can use its
 * address at once instead of after duplicate address detection. The queue toward us is made
 * longer than the default 500 packets so that bursts (thousands of SYNs) are not dropped while
 * we process the ones before them.
 */
int tun_configure(const char *name, const struct st_cfg *cfg)
{
	char a4[INET_ADDRSTRLEN + 4], a6[INET6_ADDRSTRLEN + 5], dev[IFNAMSIZ];
	char buf4[INET_ADDRSTRLEN], buf6[INET6_ADDRSTRLEN];

	snprintf(dev, sizeof(dev), "%s", name);
	inet_ntop(AF_INET, &cfg->peer4, buf4, sizeof(buf4));
	snprintf(a4, sizeof(a4), "%s/%d", buf4, cfg->plen4);
	char *qlen[] = { "ip", "link", "set", dev, "txqueuelen", "10000", NULL };
	char *add4[] = { "ip", "addr", "add", a4, "dev", dev, NULL };
	char *up[] = { "ip", "link", "set", dev, "up", NULL };

	if (run_ip(qlen) || run_ip(add4))
		goto fail;
	if (cfg->have6) {
		inet_ntop(AF_INET6, &cfg->peer6, buf6, sizeof(buf6));
		snprintf(a6, sizeof(a6), "%s/%d", buf6, cfg->plen6);
		char *add6[] = { "ip", "-6", "addr", "add", a6, "dev", dev, "nodad", NULL };

		if (run_ip(add6))
			goto fail;
	}
	if (run_ip(up))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "socktab serve: could not configure %s with ip(8)\n", name);
	return -1;
}

/* Send one IP packet to the kernel. A full queue or a vanished device drops it, as a wire
 * would; TCP retransmits. */
void tun_write(struct stack *st, const void *pkt, size_t len)
{
	if (st->tun_fd >= 0 && write(st->tun_fd, pkt, len) == (ssize_t)len)
		st->c.tx_packets++;
}
