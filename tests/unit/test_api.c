/* SPDX-License-Identifier: BSD-2-Clause */
/* API contract: bad input gets a negative errno and changes nothing; options (R65, R67). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* The child died of SIGABRT after printing @msg. */
#define CHECK_ABORTED(status, err, msg)                                                            \
	do {                                                                                       \
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(err, msg)) {    \
			fprintf(stderr, "%s:%d: expected an abort with \"%s\"; status %#x, "       \
					"stderr: %s\n",                                            \
				__FILE__, __LINE__, msg, (unsigned)(status), err);                 \
			check__failed = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

TEST(net_params_validation)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.port_low = 0;
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
	socktab_net_params_init(&p);
	p.port_low = 5000;
	p.port_high = 4000;
	CHECK(!socktab_net_new(&p));
	socktab_net_params_init(&p);
	p.tw_reuse = 3;
	CHECK(!socktab_net_new(&p));
	socktab_net_params_init(&p);
	p.port_low = 500; /* below ip_unprivileged_port_start */
	CHECK(!socktab_net_new(&p));
}

/* socktab_net_params_init(NULL) is ignored. */
TEST(net_params_init_null)
{
	socktab_net_params_init(NULL);
}

/* Table sizes of 0 take the defaults, as socktab/net.h says. */
TEST(net_params_zero_sizes_default)
{
	struct socktab_net_params p;
	struct socktab_udp_stats us;
	struct socktab_net *net;

	socktab_net_params_init(&p);
	p.ehash_entries = 0;
	p.ehash_locks = 0;
	p.bhash_entries = 0;
	p.udp_hash_entries = 0;
	errno = 0;
	net = socktab_net_new(&p);
	CHECK(net != NULL);
	CHECK_EQ(socktab_udp_stats(net, &us), 0);
	CHECK_EQ(us.slots, 16384);
	CHECK_EQ(us.slots4, 16384); /* hash4 as hash2, as the kernel's */
	/* The tables work: a connect() and its lookup. */
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET), *f;
	int port;

	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	port = check_port(sk);
	CHECK(port > 0);
	f = socktab_lookup_established4(net, htonl(0x7f000001), htons(80), htonl(0x7f000001),
					htons((uint16_t)port), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == sk);
	socktab_sock_put(f);
	socktab_close(sk);
	socktab_net_free(net);
}

static void net_new_child(void *arg)
{
	struct socktab_net *net = socktab_net_new(arg);

	_exit(net ? 1 : errno == EINVAL ? 0 : 2);
}

/* Sizes above their maximum are -EINVAL (each in a child: without the check, rounding 2^31 + 1
 * up to a power of two would never end). */
TEST(net_params_size_limits)
{
	static const struct {
		size_t off;
		uint32_t v;
	} bad[] = {
		{ offsetof(struct socktab_net_params, ehash_entries), (1u << 24) + 1 },
		{ offsetof(struct socktab_net_params, ehash_entries), UINT32_MAX },
		{ offsetof(struct socktab_net_params, ehash_locks), (1u << 24) + 1 },
		{ offsetof(struct socktab_net_params, ehash_locks), (1u << 31) + 1 },
		{ offsetof(struct socktab_net_params, ehash_locks), UINT32_MAX },
		{ offsetof(struct socktab_net_params, bhash_entries), 65537 },
		{ offsetof(struct socktab_net_params, bhash_entries), UINT32_MAX },
		{ offsetof(struct socktab_net_params, udp_hash_entries), 65537 },
		{ offsetof(struct socktab_net_params, udp_hash_entries), UINT32_MAX },
		{ offsetof(struct socktab_net_params, udp_hash4_entries), (1u << 24) + 1 },
		{ offsetof(struct socktab_net_params, udp_hash4_entries), UINT32_MAX },
	};
	struct socktab_net_params p;
	struct socktab_net *net;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		socktab_net_params_init(&p);
		memcpy((char *)&p + bad[i].off, &bad[i].v, sizeof(uint32_t));
		int st = check_run_child(net_new_child, &p, err, sizeof(err));

		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fprintf(stderr, "size case %zu (value %" PRIu32 "): status %#x\n", i,
				bad[i].v, (unsigned)st);
		CHECK(WIFEXITED(st));
		CHECK_EQ(WEXITSTATUS(st), 0);
	}
	/* More locks than slots are cut to the slots, as before. */
	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	p.ehash_locks = 1u << 24;
	net = socktab_net_new(&p);
	CHECK(net != NULL);
	socktab_net_free(net);
}

/* The params' size field: what a caller built against another version passes. */
TEST(net_params_size)
{
	struct {
		struct socktab_net_params p;
		unsigned char later[16]; /* fields a newer header would have */
	} big;
	struct socktab_net_params p;
	struct socktab_net *net;

	socktab_net_params_init(&p);
	CHECK_EQ(p.size, sizeof(p));
	p.size = 0; /* never initialised */
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
	p.size = sizeof(size_t) + 4; /* shorter than any version */
	CHECK(!socktab_net_new(&p));
	/* A newer caller: unknown trailing fields are accepted only while zero. */
	memset(&big, 0, sizeof(big));
	socktab_net_params_init(&big.p);
	big.p.size = sizeof(big);
	big.p.port_low = 40000;
	net = socktab_net_new(&big.p);
	CHECK(net != NULL);
	int lo, hi;

	CHECK_EQ(socktab_net_get_port_range(net, &lo, &hi), 0);
	CHECK_EQ(lo, 40000);
	socktab_net_free(net);
	big.later[3] = 1;
	errno = 0;
	CHECK(!socktab_net_new(&big.p));
	CHECK_EQ(errno, EINVAL);
	/* An older caller, whose struct ends before udp_hash4_entries: the bytes past its size are
	 * not read (garbage there changes nothing), and the field takes its default, hash4 as
	 * large as hash2. */
	struct socktab_udp_stats us;

	memset(&big, 0xab, sizeof(big));
	socktab_net_params_init(&big.p);
	big.p.size = offsetof(struct socktab_net_params, udp_hash4_entries);
	big.p.udp_hash_entries = 1024;
	memset(&big.p.udp_hash4_entries, 0xab, sizeof(big.p.udp_hash4_entries));
	CHECK_EQ(big.p.size % _Alignof(struct socktab_net_params), 0);
	net = socktab_net_new(&big.p);
	CHECK(net != NULL);
	CHECK_EQ(socktab_udp_stats(net, &us), 0);
	CHECK_EQ(us.slots, 1024);
	CHECK_EQ(us.slots4, 1024);
	socktab_net_free(net);
}

/* A size no version of the struct has is refused before anything past the caller's struct is
 * read (ASan sees any such read): larger than any struct may grow, or not a multiple of the
 * struct's alignment. The struct is on the heap, so its end is where ASan watches. */
TEST(net_params_size_bogus)
{
	static const size_t bad[] = { (size_t)-1, (size_t)-8, SIZE_MAX / 2, 1u << 20, 4097,
				      sizeof(struct socktab_net_params) + 1 };
	struct socktab_net_params *p = malloc(sizeof(*p));

	CHECK(p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		socktab_net_params_init(p);
		p->size = bad[i];
		errno = 0;
		CHECK(!socktab_net_new(p));
		CHECK_EQ(errno, EINVAL);
	}
	free(p);
}

TEST(version)
{
	CHECK(strcmp(socktab_version(), SOCKTAB_VERSION_STRING) == 0);
	CHECK_EQ(socktab_version_num(), SOCKTAB_VERSION_NUM);
	CHECK_EQ(SOCKTAB_VERSION_NUM, SOCKTAB_VERSION_MAJOR * 10000 + SOCKTAB_VERSION_MINOR * 100 +
					  SOCKTAB_VERSION_PATCH);
}

TEST(stats_reserved_zeroed)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_net_stats st;
	struct socktab_udp_stats us;

	memset(&st, 0xab, sizeof(st));
	memset(&us, 0xab, sizeof(us));
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(socktab_udp_stats(net, &us), 0);
	for (size_t i = 0; i < sizeof(st.reserved) / sizeof(st.reserved[0]); i++)
		CHECK_EQ(st.reserved[i], 0);
	for (size_t i = 0; i < sizeof(us.reserved) / sizeof(us.reserved[0]); i++)
		CHECK_EQ(us.reserved[i], 0);
	socktab_net_free(net);
}

TEST(sysctl_validation)
{
	struct socktab_net *net = socktab_net_new(NULL);
	int lo, hi;

	CHECK_EQ(socktab_net_set_port_range(net, 40000, 39999), -EINVAL);
	CHECK_EQ(socktab_net_set_port_range(net, 0, 100), -EINVAL);
	CHECK_EQ(socktab_net_set_port_range(net, 1000, 2000), -EINVAL); /* < 1024 */
	CHECK_EQ(socktab_net_set_port_range(net, 40000, 65536), -EINVAL);
	CHECK_EQ(socktab_net_get_port_range(net, &lo, &hi), 0);
	CHECK_EQ(lo, 32768);
	CHECK_EQ(hi, 60999);
	CHECK_EQ(socktab_net_set_port_range(net, 40000, 40000), 0);
	CHECK_EQ(socktab_net_get_port_range(net, &lo, &hi), 0);
	CHECK_EQ(lo, 40000);
	CHECK_EQ(hi, 40000);
	CHECK_EQ(socktab_net_set_tw_reuse(net, 3), -EINVAL);
	CHECK_EQ(socktab_net_set_tw_reuse(net, -1), -EINVAL);
	CHECK_EQ(socktab_net_set_reserved(net, 10, 5, 1), -EINVAL);
	CHECK_EQ(socktab_net_set_port_range(NULL, 1, 2), -EINVAL);
	CHECK_EQ(socktab_net_tick(NULL), -EINVAL);
	socktab_net_free(net);
}

TEST(socket_creation_errors)
{
	struct socktab_net *net = socktab_net_new(NULL);

	errno = 0;
	CHECK(!socktab_socket(net, SOCKTAB_TCP, AF_UNIX));
	CHECK_EQ(errno, EAFNOSUPPORT);
	CHECK(!socktab_socket(net, 99, AF_INET));
	CHECK_EQ(errno, EPROTONOSUPPORT);
	CHECK(!socktab_socket(NULL, SOCKTAB_TCP, AF_INET));
	CHECK_EQ(errno, EINVAL);
	socktab_net_free(net);
}

TEST(priv_area)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *sk;

	socktab_net_params_init(&p);
	p.sock_priv_size = 100;
	net = socktab_net_new(&p);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	unsigned char *priv = socktab_sock_priv(sk);

	CHECK(priv);
	CHECK(((uintptr_t)priv & 15) == 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(priv[i], 0);
	memset(priv, 0xab, 100);
	socktab_close(sk);
	socktab_net_free(net);
	net = socktab_net_new(NULL);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(!socktab_sock_priv(sk));
	socktab_close(sk);
	socktab_net_free(net);
}

TEST(closed_socket_ebadf)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	int one = 1;

	CHECK_EQ(socktab_close(sk), 0);
	/* The object is back in the pool, not reused yet: every call reports -EBADF. */
	CHECK_EQ(socktab_close(sk), -EBADF);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 0), -EBADF);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), -EBADF);
	CHECK_EQ(socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), -EBADF);
	CHECK_EQ(socktab_get_state(sk), -EBADF);
	CHECK_EQ(socktab_sock_family(sk), -EBADF);
	CHECK_EQ(socktab_close(NULL), -EINVAL);
	socktab_net_free(net);
}

TEST(options)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *s6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	int v = 0;
	socklen_t len = sizeof(v);
	uint32_t r;
	char small = 1;

	CHECK_EQ(check_setint(s4, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(socktab_getsockopt(s4, SOL_SOCKET, SO_REUSEADDR, &v, &len), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(socktab_setsockopt(s4, SOL_SOCKET, SO_REUSEPORT, &small, 1), -EINVAL);
	CHECK_EQ(socktab_setsockopt(s4, SOL_SOCKET, SO_REUSEPORT, NULL, 4), -EINVAL);
	CHECK_EQ(check_setint(s4, SOL_SOCKET, 12345, 1), -ENOPROTOOPT);
	CHECK_EQ(check_setint(s4, IPPROTO_IPV6, IPV6_V6ONLY, 1), -ENOPROTOOPT);
	/* R65: IP_LOCAL_PORT_RANGE needs exactly 4 bytes and lo <= hi when both are set. */
	r = (40000u << 16) | 50000u;
	CHECK_EQ(socktab_setsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, 4), -EINVAL);
	r = (50000u << 16) | 40000u;
	CHECK_EQ(socktab_setsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, 8), -EINVAL);
	CHECK_EQ(socktab_setsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, 4), 0);
	r = 0;
	len = sizeof(r);
	CHECK_EQ(socktab_getsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, &len), 0);
	CHECK_EQ(r, (50000u << 16) | 40000u);
	r = 50000u; /* lo only: valid */
	CHECK_EQ(socktab_setsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, 4), 0);
	/* R67: IPV6_V6ONLY only while the socket has no port. */
	CHECK_EQ(check_setint(s6, IPPROTO_IPV6, IPV6_V6ONLY, 1), 0);
	len = sizeof(v);
	CHECK_EQ(socktab_getsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(check_bind6(s6, "::1", 0), 0);
	CHECK_EQ(check_setint(s6, IPPROTO_IPV6, IPV6_V6ONLY, 0), -EINVAL);
	CHECK_EQ(check_setint(s6, SOCKTAB_SOL, SOCKTAB_SO_UID, 5), -EINVAL);
	struct linger lg = { 1, 0 }, lg2;

	CHECK_EQ(socktab_setsockopt(s4, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg) - 1), -EINVAL);
	CHECK_EQ(socktab_setsockopt(s4, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	len = sizeof(lg2);
	CHECK_EQ(socktab_getsockopt(s4, SOL_SOCKET, SO_LINGER, &lg2, &len), 0);
	CHECK_EQ(lg2.l_onoff, 1);
	CHECK_EQ(lg2.l_linger, 0);
	socktab_close(s4);
	socktab_close(s6);
	socktab_net_free(net);
}

TEST(set_state_rules)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(socktab_get_state(sk), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED), -EINVAL); /* not hashed */
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(socktab_get_state(sk), SOCKTAB_TCP_SYN_SENT);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_TIME_WAIT), -EINVAL);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_LISTEN), -EINVAL);
	CHECK_EQ(socktab_set_state(sk, 77), -EINVAL);
	CHECK_EQ(socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_get_state(sk), SOCKTAB_TCP_ESTABLISHED);
	socktab_close(sk);
	socktab_net_free(net);
}

/* Closing a socket that is still in SYN_SENT leaves no TIME_WAIT; stats go back to zero. */
TEST(stats_balance)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_net_stats st;
	struct socktab_sock *s[10];

	for (int i = 0; i < 10; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
	}
	socktab_net_stats(net, &st);
	CHECK_EQ(st.established, 10);
	CHECK_EQ(st.bind_buckets, 10);
	CHECK_EQ(st.connects, 10);
	for (int i = 0; i < 10; i++)
		socktab_close(s[i]);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.established, 0);
	CHECK_EQ(st.time_wait, 0);
	CHECK_EQ(st.bind_buckets, 0);
	CHECK_EQ(socktab_net_stats(net, NULL), -EINVAL);
	socktab_net_free(net);
}

/* socktab_sock_put() on a socket whose count is already 0 aborts with a message instead of
 * wrapping the count; socktab_sock_hold() on it fails. */
static void put_freed_child(void *arg)
{
	struct socktab_sock *sk = arg;

	socktab_sock_put(sk); /* the caller's reference went with close() */
	/* Reached only without the check: the wrapped count lets hold succeed. */
	socktab_rcu_read_lock();
	int held = socktab_sock_hold(sk);

	socktab_rcu_read_unlock();
	_exit(held == 0 ? 3 : 4);
}

TEST(sock_put_freed_aborts)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET), *l;
	char err[256];
	int st;

	/* A balanced hold/put pair is fine. */
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_sock_hold(sk), 0);
	socktab_rcu_read_unlock();
	socktab_sock_put(sk);
	CHECK_EQ(socktab_close(sk), 0);
	/* Closed and released, not yet reused: hold refuses it. */
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_sock_hold(sk), -ENOENT);
	socktab_rcu_read_unlock();
	st = check_run_child(put_freed_child, sk, err, sizeof(err));
	CHECK_ABORTED(st, err, "socktab: socktab_sock_put on a freed socket");
	/* The same through a lookup's reference dropped twice. */
	l = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(check_bind4(l, "127.0.0.1", 5000), 0);
	struct socktab_sock *f = socktab_lookup_udp4(net, htonl(0x7f000001), htons(9),
						     htonl(0x7f000001), htons(5000),
						     SOCKTAB_LOOPBACK_IFINDEX, 0);

	CHECK(f == l);
	socktab_sock_put(f);
	CHECK_EQ(socktab_close(l), 0);
	st = check_run_child(put_freed_child, l, err, sizeof(err));
	CHECK_ABORTED(st, err, "socktab: socktab_sock_put on a freed socket");
	socktab_net_free(net);
}

/* socktab_net_free() inside a read-side section would wait for itself: it aborts instead. */
static void net_free_in_section_child(void *arg)
{
	socktab_rcu_read_lock();
	socktab_net_free(arg);
	_exit(5);
}

TEST(net_free_in_read_section_aborts)
{
	struct socktab_net *net = socktab_net_new(NULL);
	char err[256];
	int st;

	CHECK(net != NULL);
	st = check_run_child(net_free_in_section_child, net, err, sizeof(err));
	CHECK_ABORTED(st, err, "socktab: socktab_net_free inside an RCU read-side section");
	socktab_net_free(net);
}

/* The one port of [lo, hi] that the reserved list @list leaves free, as connect() finds it,
 * or a negative errno (from the sysctl, or from connect()). */
static int only_free_port(int lo, int hi, const char *list)
{
	struct socktab_net *net = check_net(lo, hi, NULL);
	struct socktab_sock *sk;
	int ret = socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", list);

	if (ret == 0) {
		sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		ret = check_connect4(sk, "127.0.0.1", 80);
		if (ret == 0)
			ret = check_port(sk);
		socktab_close(sk);
	}
	socktab_net_free(net);
	return ret;
}

/* ip_local_reserved_ports reads lists as the kernel's proc_do_large_bitmap() does (each case
 * checked against Linux 6.18). */
TEST(reserved_ports_kernel_rules)
{
	static const struct {
		const char *v;
		int ret;
	} cases[] = {
		{ "1,2", 0 },		{ "1, 2", -EINVAL },	{ " 1", -EINVAL },
		{ "1 ", -EINVAL },	{ "010", 0 },		{ "0x10", 0 },
		{ "0X1f", 0 },		{ "08", -EINVAL },	{ "1\n2", 0 },
		{ "\n\n5", 0 },	{ "1,", 0 },		{ "1,,2", -EINVAL },
		{ "1-", -EINVAL },	{ "1-2-3", -EINVAL },	{ "5-3", -EINVAL },
		{ "65535", 0 },		{ "65536", -EINVAL },	{ "-1", -EINVAL },
		{ "1--2", -EINVAL },	{ "1-0x3", 0 },		{ "1\n", 0 },
		{ "1-3\n\n", 0 },	{ "1,-", -EINVAL },	{ "", 0 },
		{ "0", 0 },		{ "0-65535", 0 },	{ "7,3-5,4", 0 },
		{ "0x", -EINVAL },	{ "0xg", -EINVAL },	{ "1\nfoo", -EINVAL },
		{ "00000000000000000001", 0 },  /* 20 characters */
		{ "000000000000000000001", -EINVAL }, /* 21 */
		{ "99999999999999999999999999", -EINVAL },
	};
	struct socktab_net *net = socktab_net_new(NULL);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", cases[i].v);

		if (r != cases[i].ret)
			fprintf(stderr, "reserved ports \"%s\"\n", cases[i].v);
		CHECK_EQ(r, cases[i].ret);
	}
	socktab_net_free(net);
	/* What the lists set: bases, ranges across and within 64-port words, newlines. */
	CHECK_EQ(only_free_port(40000, 40009, "0x9c40-0116107\n40009"), 40008);
	CHECK_EQ(only_free_port(40000, 40200, "0-40099,40101-65535"), 40100);
	CHECK_EQ(only_free_port(40000, 40200, "40000-40063,40064-40099,40101-40127,40128-40200"),
		 40100);
	CHECK_EQ(only_free_port(40000, 40200, "39990-40150,40152-40300"), 40151);
	CHECK_EQ(only_free_port(40000, 40200, "40001-40200,40000-40000"), -EADDRNOTAVAIL);
	CHECK_EQ(only_free_port(40000, 40200, "40000-40200\n"), -EADDRNOTAVAIL);
}

/* Fill @buf (@len bytes, then a NUL) with @pat repeated, after @head. */
static void fill_list(char *buf, size_t len, const char *head, const char *pat)
{
	size_t o = strlen(head), pl = strlen(pat);

	memcpy(buf, head, o);
	while (o + pl <= len) {
		memcpy(buf + o, pat, pl);
		o += pl;
	}
	buf[o] = 0;
}

/* A 512 KiB list of ranges that each span the whole bitmap: parsed in one linear pass (the
 * per-port loop this replaces took seconds), with the same result as a short list. */
TEST(reserved_ports_large_list)
{
	size_t len = 512 * 1024;
	char *buf = malloc(len + 64);
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct socktab_sock *sk;

	CHECK(buf != NULL);
	fill_list(buf, len, "40000-40004,40006-40009,", "0-39999,40010-65535,");
	CHECK_EQ(only_free_port(40000, 40009, buf), 40005);
	fill_list(buf, len, "", "0-65535,");
	CHECK_EQ(only_free_port(40000, 40009, buf), -EADDRNOTAVAIL);
	/* Every port once, one by one, but 40003. */
	size_t o = 0;

	for (int p = 0; p < 65536; p++)
		if (p != 40003)
			o += (size_t)sprintf(buf + o, "%d,", p);
	CHECK_EQ(only_free_port(40000, 40009, buf), 40003);
	/* All or nothing: a bad item at the end of a long list changes nothing. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports",
				    "40000-40006,40008-40009"),
		 0);
	fill_list(buf, len, "", "0-65535,");
	strcpy(buf + strlen(buf) - 1, ",x");
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", buf), -EINVAL);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(sk), 40007);
	socktab_close(sk);
	socktab_net_free(net);
	free(buf);
}

/* net_free closes what the caller left open, TIME_WAIT entries included (ASan checks leaks). */
TEST(net_free_cleans_up)
{
	struct socktab_net *net = socktab_net_new(NULL);

	for (int i = 0; i < 100; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, i & 1 ? AF_INET6 : AF_INET);

		CHECK_EQ(i & 1 ? check_connect6(sk, "::1", 80) : check_connect4(sk, "127.0.0.1", 80), 0);
		if (i % 3 == 0) {
			socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
			socktab_close(sk); /* leaves TIME_WAIT */
		}
	}
	socktab_net_free(net);
	socktab_net_free(NULL);
}

CHECK_MAIN(net_params_validation, net_params_init_null, net_params_zero_sizes_default,
	   net_params_size_limits, net_params_size, net_params_size_bogus, version,
	   stats_reserved_zeroed, sysctl_validation, socket_creation_errors, priv_area,
	   closed_socket_ebadf, options, set_state_rules, stats_balance, net_free_cleans_up, sock_put_freed_aborts,
	   net_free_in_read_section_aborts, reserved_ports_kernel_rules,
	   reserved_ports_large_list)
