/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab: the Linux kernel's TCP/UDP socket tables as a userspace C library.
 *
 * Error policy: every int-returning function returns 0 (or a non-negative value where stated) on
 * success and a negative errno on failure; a failed call leaves every table exactly as it was.
 * Constructors return NULL and set errno. A lookup miss is NULL, not an error. See docs/errors.md.
 *
 * Threads and RCU: socktab uses liburcu's urcu-memb flavour. Every thread that calls any socktab
 * function other than socktab_net_params_init() must first call socktab_thread_register() (and
 * socktab_thread_unregister() before it exits). Lookups are lock-free and may run on any
 * registered thread concurrently with control calls on other threads.
 *
 * Control calls (bind, connect, close, setsockopt...) on *different* sockets may run concurrently;
 * they take per-bucket locks. Calls on the *same* socket are serialised by a per-socket lock.
 */
#ifndef SOCKTAB_SOCKTAB_H
#define SOCKTAB_SOCKTAB_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOCKTAB_VERSION_MAJOR 0
#define SOCKTAB_VERSION_MINOR 1

struct socktab_net;
struct socktab_sock;

/* Transport protocol of a socket (socktab_socket()). */
enum socktab_proto {
	SOCKTAB_TCP = 1,
	SOCKTAB_UDP = 2, /* UDP: see the UDP section below */
};

/* TCP states, numbered as the kernel's (include/net/tcp_states.h). */
enum socktab_tcp_state {
	SOCKTAB_TCP_ESTABLISHED = 1,
	SOCKTAB_TCP_SYN_SENT = 2,
	SOCKTAB_TCP_SYN_RECV = 3,
	SOCKTAB_TCP_FIN_WAIT1 = 4,
	SOCKTAB_TCP_FIN_WAIT2 = 5,
	SOCKTAB_TCP_TIME_WAIT = 6,
	SOCKTAB_TCP_CLOSE = 7,
	SOCKTAB_TCP_CLOSE_WAIT = 8,
	SOCKTAB_TCP_LAST_ACK = 9,
	SOCKTAB_TCP_LISTEN = 10,
	SOCKTAB_TCP_CLOSING = 11,
};

/*
 * connect() port-choice variants. LINUX is the kernel's algorithm (6.15+: RCU pre-check, lport
 * added after hashing); LINUX_6_1 is the same walk before the seeds (locked check only, lport hashed
 * inside the ehash hash). SOCKTAB is the library's default; today it is identical to LINUX.
 */
enum socktab_variant {
	SOCKTAB_VARIANT_SOCKTAB = 0,
	SOCKTAB_VARIANT_LINUX = 1,
	SOCKTAB_VARIANT_LINUX_6_1 = 2,
};

/* Clock: returns nanoseconds of a monotonic time line. */
typedef uint64_t (*socktab_clock_fn)(void *arg);

/*
 * Parameters of a network namespace. Always start from socktab_net_params_init(), then change
 * what you need. Sizes of 0 mean "default"; other sizes are rounded up to a power of two.
 */
struct socktab_net_params {
	uint32_t ehash_entries;      /* established table slots (default 65536, max 1<<24) */
	uint32_t ehash_locks;        /* striped ehash locks (default 1024, at most ehash_entries) */
	uint32_t bhash_entries;      /* bhash, bhash2 and lhash2 slots each (default 65536, max 65536) */
	uint16_t port_low;           /* ephemeral range, net.ipv4.ip_local_port_range (32768) */
	uint16_t port_high;          /* (60999) */
	uint16_t unprivileged_port_start; /* net.ipv4.ip_unprivileged_port_start (1024) */
	int tw_reuse;                /* net.ipv4.tcp_tw_reuse: 0, 1, 2 = loopback only (2) */
	uint32_t tw_reuse_delay_ms;  /* net.ipv4.tcp_tw_reuse_delay, 1..60000 (1000) */
	uint32_t tw_len_ms;          /* TIME_WAIT length (60000) */
	int tcp_timestamps;          /* TIME_WAIT entries remember a peer timestamp (1) */
	int autobind_reuse;          /* net.ipv4.ip_autobind_reuse (0) */
	int privileged;              /* callers hold CAP_NET_BIND_SERVICE (1) */
	enum socktab_variant variant; /* connect() port choice (SOCKTAB) */
	int rcu_precheck;            /* -1: from variant; 0/1: force the connect() RCU pre-check */
	int lport_hash_inside;       /* -1: from variant; 0/1: force lport inside the ehash hash */
	int fixed_secret;            /* 1: use .secret instead of random secrets (tests) */
	uint8_t secret[32];          /* hash secrets when fixed_secret is set */
	socktab_clock_fn clock;      /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	size_t sock_priv_size;       /* bytes of caller data per socket (socktab_sock_priv()) */
	struct socktab_net *share_tables_with; /* NULL: private tables; else share that net's */
	uint32_t udp_hash_entries;   /* UDP hash/hash2/hash4 slots each (default 16384, max 65536,
				      * at least 128); the UDP table is always private to the net */
	int udp_hash4;               /* UDP lookups use the 4-tuple hash (1); see
				      * socktab_net_set_udp_hash4() */
};

/*
 * Fill @p with the defaults listed above.
 * Context: any thread; needs no RCU registration.
 */
void socktab_net_params_init(struct socktab_net_params *p);

/*
 * Create a network namespace from @p (NULL: defaults). Returns NULL and sets errno (EINVAL for a
 * bad parameter, ENOMEM). The hash secrets and the netns hash mix are random unless fixed_secret.
 * With share_tables_with, the new net uses that net's ehash/bhash tables (the namespace is part of
 * every key, as in the kernel's shared tables) and keeps its own settings and socket pool.
 * Context: registered thread, outside any RCU read-side section.
 */
struct socktab_net *socktab_net_new(const struct socktab_net_params *p);

/*
 * Close every socket of @net, drop every TIME_WAIT entry, wait for a grace period and free the
 * net (and its tables when no other net shares them). No other thread may use @net or its sockets
 * during or after the call.
 * Context: registered thread, outside any RCU read-side section; may block (synchronize_rcu).
 */
void socktab_net_free(struct socktab_net *net);

/*
 * Expire TIME_WAIT entries whose time is up on the net's clock. Returns how many were removed.
 * Expiry needs no thread of its own: connect()/close() also reap a few lazily.
 * Context: registered thread; takes the TIME_WAIT list lock and bucket locks.
 */
int socktab_net_tick(struct socktab_net *net);

/*
 * Namespace settings that may change at run time, with the kernel's validation (-EINVAL).
 * set_port_range: net.ipv4.ip_local_port_range (1 <= lo <= hi <= 65535, lo >= unprivileged start).
 * set_reserved: mark [lo, hi] as reserved (on != 0) or not, like ip_local_reserved_ports.
 * set_tw_reuse: 0, 1 or 2.
 * Context: any registered thread; takes the net's settings lock.
 */
int socktab_net_set_port_range(struct socktab_net *net, int lo, int hi);
int socktab_net_get_port_range(struct socktab_net *net, int *lo, int *hi);
int socktab_net_set_reserved(struct socktab_net *net, int lo, int hi, int on);
int socktab_net_set_tw_reuse(struct socktab_net *net, int mode);

/*
 * Write a per-net sysctl by its kernel name, value as text (as `sysctl -w` takes it), with the
 * kernel's validation (-EINVAL). Keys: net.ipv4.ip_local_port_range ("LO HI"),
 * net.ipv4.ip_local_reserved_ports ("" or "P1,P2-P3,..."), net.ipv4.ip_autobind_reuse (0/1),
 * net.ipv4.ip_unprivileged_port_start (0..65535, not above the range's low end),
 * net.ipv4.tcp_tw_reuse (0..2), net.ipv4.tcp_tw_reuse_delay (1..60000 ms), net.core.somaxconn
 * (0..INT_MAX), and net.ipv4.tcp_fastopen / net.ipv4.tcp_syncookies (accepted, no effect on the
 * tables). Unknown key: -ENOENT. Context: any registered thread; takes the net's settings lock.
 */
int socktab_net_sysctl(struct socktab_net *net, const char *key, const char *value);

/*
 * RSS-aware port choice (opt-in). socktab_net_set_rss() gives the net the Toeplitz key (at least
 * 40 bytes; the first 40 are used) and the RETA (reta_len entries, a power of two, each a queue
 * number) of the NIC that receives its traffic; NULL/0/NULL/0 turns it off. A socket that called
 * socktab_sock_set_rss_queue(sk, q) before connect() then gets a local port whose reply 4-tuple
 * (source = the peer, destination = us) hashes to queue q: RETA[toeplitz & (reta_len - 1)] == q.
 * All other port rules hold; -EADDRNOTAVAIL when no usable port maps to q (or no RSS is set).
 * q = -1 (default) asks for nothing. socktab_rss_hash() is the plain Toeplitz hash of @len input
 * bytes (Microsoft RSS: source address, destination address, source port, destination port, all
 * in network order); it needs key_len >= len + 4.
 * Context: set_rss: any registered thread (the old state is freed after a grace period);
 * set_rss_queue: registered thread, takes the socket lock; rss_hash: any thread.
 */
int socktab_net_set_rss(struct socktab_net *net, const uint8_t *key, size_t key_len,
			const uint16_t *reta, uint32_t reta_len);
int socktab_sock_set_rss_queue(struct socktab_sock *sk, int queue);
uint32_t socktab_rss_hash(const uint8_t *key, size_t key_len, const void *input, size_t len);

/* Counters of a net, read without locks (values may be a moment old). */
struct socktab_net_stats {
	uint64_t established;      /* sockets in ehash that are not TIME_WAIT */
	uint64_t time_wait;        /* TIME_WAIT entries */
	uint64_t bind_buckets;     /* bhash buckets (ports in use) */
	uint64_t tw_recycled;      /* TIME_WAIT entries taken over by connect() */
	uint64_t connect_ports_tried; /* candidate ports examined by connect() port choice */
	uint64_t connects;         /* successful connect() calls */
	uint64_t pool_socks;       /* socket objects allocated in the pool (live + free) */
};

/*
 * Read @net's counters into @st.
 * Context: any registered thread.
 */
int socktab_net_stats(struct socktab_net *net, struct socktab_net_stats *st);

/*
 * Register / unregister the calling thread with RCU (liburcu urcu-memb). Required before any other
 * call on that thread. Nesting is counted: only the outermost unregister takes effect.
 * Context: any thread, outside any RCU read-side section.
 */
void socktab_thread_register(void);
void socktab_thread_unregister(void);

/*
 * Create a socket in @net. @proto: SOCKTAB_TCP or SOCKTAB_UDP; @family: AF_INET or AF_INET6.
 * Returns NULL and sets errno (EAFNOSUPPORT, EPROTONOSUPPORT, EINVAL, ENOMEM). The socket comes
 * from the net's type-stable pool: after socktab_close() a TCP socket's memory may be reused at
 * once for another socket, a UDP socket's after a grace period.
 * Context: registered thread.
 */
struct socktab_sock *socktab_socket(struct socktab_net *net, int proto, int family);

/*
 * Caller data area of @sk (sock_priv_size bytes, zeroed by socktab_socket()), or NULL if none.
 * Context: any.
 */
void *socktab_sock_priv(struct socktab_sock *sk);

/*
 * bind(2). @addr must match the socket family (AF_INET: sockaddr_in; AF_INET6: sockaddr_in6).
 * Port 0 chooses a port (bind(0), odd first) unless IP_BIND_ADDRESS_NO_PORT is set.
 * Errors: -EINVAL (already bound, short length, v4-mapped on v6only), -EAFNOSUPPORT,
 * -EADDRNOTAVAIL (address not local: only loopback and wildcard addresses are local by default),
 * -EACCES (privileged port, net not privileged), -EADDRINUSE, -ENOMEM, -EBADF (closed socket).
 * Context: registered thread, outside RCU read side; takes the socket lock, then bhash/bhash2 locks.
 */
int socktab_bind(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * connect(2) for TCP: choose a local address (loopback source for loopback destinations) and port
 * (net variant), insert the socket into ehash in state SYN_SENT. A bound socket keeps its port.
 * Errors: -EAFNOSUPPORT, -EINVAL, -EISCONN (connected), -EALREADY (SYN_SENT), -ENETUNREACH
 * (no route: non-loopback destination without a bound source, or v4-mapped on v6only),
 * -EADDRNOTAVAIL (no unique 4-tuple), -ENOMEM, -EBADF.
 * Context: registered thread, outside RCU read side; takes the socket lock, bhash/bhash2 and ehash
 * bucket locks; enters the RCU read side internally for the pre-checks.
 */
int socktab_connect(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * listen(2): bind(0) first if the socket has no port (odd port, R49), re-validate the port in
 * LISTEN state (R46), join or create a SO_REUSEPORT group (R34) and enter the listener table.
 * @backlog is clamped to net.core.somaxconn; listen() on a listener only updates the backlog.
 * Errors: -EINVAL (connected or connecting socket), -EADDRINUSE, -ENOMEM, -EBADF.
 * Context: registered thread, outside RCU read side; socket lock, then bhash/bhash2 and lhash2 locks.
 */
int socktab_listen(struct socktab_sock *sk, int backlog);

/* The backlog a listener was given (after clamping), or a negative errno. Context: any. */
int socktab_listen_backlog(struct socktab_sock *sk);

/*
 * Create the child socket of @listener for a connection from @remote to @local (the SYN's source
 * and destination): it inherits the listener's port and owner (kernel __inet_inherit_port), is
 * inserted into ehash in state SYN_RECV and returned with the caller's reference (close it with
 * socktab_close()). Errors (NULL, errno): EINVAL (not a listener, bad address), EADDRINUSE (the
 * 4-tuple exists), ENOMEM. Context: registered thread, outside RCU read side.
 */
struct socktab_sock *socktab_sock_new_child(struct socktab_sock *listener,
					    const struct sockaddr *local,
					    const struct sockaddr *remote, socklen_t len);

/*
 * Move a hashed TCP socket to @state (the embedding stack drives the state machine:
 * SYN_SENT -> ESTABLISHED -> FIN_WAIT1...). SOCKTAB_TCP_CLOSE is the kernel's tcp_done() (a reset
 * or a refused connect): the socket leaves ehash and, unless bind() locked it, its port; it stays
 * open. LISTEN and TIME_WAIT are reached through socktab_listen()/socktab_close() only (-EINVAL).
 * Context: registered thread; socket lock.
 */
int socktab_set_state(struct socktab_sock *sk, int state);

/* Current state of @sk (SOCKTAB_TCP_*), or -EBADF for a closed socket. Context: any. */
int socktab_get_state(struct socktab_sock *sk);

/*
 * close(2). An actively closed connection (ESTABLISHED, FIN_WAIT1/2, CLOSING) leaves a TIME_WAIT
 * entry that keeps its 4-tuple and port until it expires or is recycled, unless SO_LINGER {1, 0}
 * is set (abortive close: everything is removed at once). After the call @sk must not be used:
 * its memory returns to the pool; a second close of a not-yet-reused socket gives -EBADF.
 * Context: registered thread, outside RCU read side; takes socket, bucket and TIME_WAIT locks.
 */
int socktab_close(struct socktab_sock *sk);

/* Socket option levels/names beyond <netinet/in.h> that some libcs lack. */
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif
/* socktab's own option level, for what has no kernel name. */
#define SOCKTAB_SOL 0x50c7
#define SOCKTAB_SO_UID 1          /* int: owner uid (SO_REUSEPORT same-owner rule), before bind */
#define SOCKTAB_SO_BOUND_DEV_IF 2 /* int: bound device index (SO_BINDTODEVICE), before bind */

/*
 * setsockopt(2) / getsockopt(2). Supported: SOL_SOCKET SO_REUSEADDR, SO_REUSEPORT, SO_LINGER
 * (struct linger); IPPROTO_IPV6 IPV6_V6ONLY (-EINVAL once the socket has a port); IPPROTO_IP
 * IP_BIND_ADDRESS_NO_PORT, IP_LOCAL_PORT_RANGE (u32 hi<<16|lo; optlen must be 4; lo > hi with both
 * nonzero -> -EINVAL); SOCKTAB_SOL options above. Unknown options: -ENOPROTOOPT. Int options need
 * optlen >= sizeof(int) (-EINVAL). getsockopt writes at most *optlen bytes and updates *optlen.
 * Context: registered thread; takes the socket lock.
 */
int socktab_setsockopt(struct socktab_sock *sk, int level, int optname, const void *optval,
		       socklen_t optlen);
int socktab_getsockopt(struct socktab_sock *sk, int level, int optname, void *optval,
		       socklen_t *optlen);

/*
 * getsockname(2)/getpeername(2) into @addr (up to *len bytes; *len is updated).
 * getpeername on an unconnected socket: -ENOTCONN. Context: registered thread; socket lock.
 */
int socktab_getsockname(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);
int socktab_getpeername(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);

/*
 * Packet-path lookup of the TCP socket a segment from (saddr, sport) to (daddr, dport) belongs to:
 * established and TIME_WAIT entries first, then listeners (R30-R35; socktab_lookup_listener4/6
 * alone, socktab_lookup_established4/6 alone). Addresses and ports in network byte order; saddr/sport are
 * the packet's source (the remote peer), daddr/dport its destination (local). Returns a socket
 * with a reference held (release it with socktab_sock_put()) or NULL.
 * The v6 form takes IPv6 addresses; a v4-mapped pair is looked up as IPv4, so a dual-stack socket
 * talking to a v4-mapped peer is found by both forms.
 * Context: registered thread; enters the RCU read side itself (callers may already be inside one).
 */
struct socktab_sock *socktab_lookup_tcp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport);
struct socktab_sock *socktab_lookup_tcp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport);
struct socktab_sock *socktab_lookup_established4(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport);
struct socktab_sock *socktab_lookup_established6(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport);
struct socktab_sock *socktab_lookup_listener4(struct socktab_net *net, uint32_t saddr,
					      uint16_t sport, uint32_t daddr, uint16_t dport);
struct socktab_sock *socktab_lookup_listener6(struct socktab_net *net,
					      const struct in6_addr *saddr, uint16_t sport,
					      const struct in6_addr *daddr, uint16_t dport);
/* Family-dispatching form: @saddr/@daddr point to a uint32_t (AF_INET) or struct in6_addr.
 * Context: as above (registered thread; enters the RCU read side itself). */
struct socktab_sock *socktab_lookup_tcp(struct socktab_net *net, int family, const void *saddr,
					uint16_t sport, const void *daddr, uint16_t dport);

/* An IPv4 segment's addresses and ports, network byte order: source = the remote peer. */
struct socktab_tuple4 {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

/* socktab_lookup_tcp_burst() flag: established and TIME_WAIT entries only, no listeners. */
#define SOCKTAB_LOOKUP_ESTABLISHED 1u

/*
 * Burst form of socktab_lookup_tcp4() (or of socktab_lookup_established4() with
 * SOCKTAB_LOOKUP_ESTABLISHED): out[i] is the socket for keys[i], with a reference held, or NULL.
 * The batch is hashed and its slots and first entries prefetched before any chain is walked, so
 * the cache misses of different keys overlap. Returns how many keys were found, or -EINVAL (NULL
 * net, NULL arrays with n > 0, unknown flag).
 * Context: registered thread; enters the RCU read side itself (callers may already be inside
 * one). Each out[i] must be released with socktab_sock_put().
 */
int socktab_lookup_tcp_burst(struct socktab_net *net, const struct socktab_tuple4 *keys,
			     unsigned int n, struct socktab_sock **out, unsigned int flags);

/*
 * Drop a reference returned by a lookup. Context: any registered thread.
 */
void socktab_sock_put(struct socktab_sock *sk);

/*
 * Address family of @sk (AF_INET / AF_INET6), and SOCKTAB_TCP / SOCKTAB_UDP; -EBADF when closed.
 * Context: any.
 */
int socktab_sock_family(const struct socktab_sock *sk);

/*
 * ==============================================================================================
 * UDP (issue 4; spec section 12, R68-R76)
 *
 * socktab_socket(net, SOCKTAB_UDP, family) makes a datagram socket. The common calls apply with
 * UDP semantics: socktab_bind (R68 conflicts: no listen state, SO_REUSEADDR on both sides always
 * coexists, SO_REUSEPORT needs the same owner uid; port 0 is R69's random walk, -EADDRINUSE when
 * the range is full), socktab_connect (autobind first, -EAGAIN when no port is free; the source
 * address comes from the route when unset: 127.0.0.1, ::1 or ::ffff:127.0.0.1; a connected socket
 * may connect again; -EACCES for a broadcast destination without SO_BROADCAST, -ENETUNREACH for a
 * v4-mapped destination on a v6only socket or no route, -EAFNOSUPPORT), connect with AF_UNSPEC
 * (disconnect, R75: the port is lost unless bind() named it, the bound device is cleared),
 * socktab_close, socktab_setsockopt (also SO_BROADCAST), socktab_getsockname/getpeername.
 * socktab_listen gives -EOPNOTSUPP and socktab_set_state -EOPNOTSUPP on UDP sockets.
 * UDP sockets go back to the pool only after a grace period (SOCK_RCU_FREE, R23).
 * ==============================================================================================
 */

/*
 * Packet-path lookup of the UDP socket a datagram from (saddr, sport) to (daddr, dport) is
 * delivered to (R72): the 4-tuple hash first when the (daddr, dport) slot counts connected
 * sockets, then the exact-address chain with scoring (R71) and SO_REUSEPORT selection (R35, R36),
 * then the wildcard chain, then the port chain. Addresses and ports in network byte order; the v6
 * form looks a v4-mapped pair up as IPv4. Returns the socket with a reference held (release it
 * with socktab_sock_put()) or NULL.
 * Context: registered thread; lock-free, enters the RCU read side itself.
 */
struct socktab_sock *socktab_lookup_udp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport);
struct socktab_sock *socktab_lookup_udp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport);

/*
 * The table side of sendto(2)/send(2) on a UDP socket, without moving data: autobind an unbound
 * socket (-EAGAIN when no port is free), check the destination (@dst NULL: the connected peer, or
 * -EDESTADDRREQ; -EINVAL for port 0 or a short address; -EAFNOSUPPORT; -ENETUNREACH; -EACCES for
 * broadcast without SO_BROADCAST) and write the datagram's source and destination into @src and
 * @to (either may be NULL), in the socket's family (v4-mapped for IPv4 on an AF_INET6 socket).
 * Hand them to socktab_lookup_udp4/6 to find the receiver.
 * Context: registered thread, outside RCU read side; takes the socket lock and slot locks.
 */
int socktab_udp_sendto(struct socktab_sock *sk, const struct sockaddr *dst, socklen_t len,
		       struct sockaddr_storage *src, struct sockaddr_storage *to);

/*
 * Turn the 4-tuple hash on (1) or off (0) for lookups in @net (the before/after of seed 003).
 * Connected sockets stay in hash4 either way, so switching is instant and changes no outcome.
 * Context: any registered thread.
 */
int socktab_net_set_udp_hash4(struct socktab_net *net, int on);

/* Counters of @net's UDP table, read without locks (a moment old). */
struct socktab_udp_stats {
	uint64_t hashed;        /* sockets holding a port */
	uint64_t hashed4;       /* connected sockets in the 4-tuple hash */
	uint32_t slots;         /* slots per hash */
};

/* Context: any registered thread. */
int socktab_udp_stats(struct socktab_net *net, struct socktab_udp_stats *st);

/* SOCKTAB_TCP or SOCKTAB_UDP, or -EBADF for a closed socket. Context: any. */
int socktab_sock_proto(const struct socktab_sock *sk);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_SOCKTAB_H */
