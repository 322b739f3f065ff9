/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The packet path: find the socket a segment or datagram belongs to. Lookups are lock-free (RCU)
 * and may run on any registered thread while control calls change the tables on others.
 * Addresses and ports are in network byte order; saddr/sport are the packet's source (the remote
 * peer), daddr/dport its destination (local).
 *
 * Every lookup takes the packet's ingress device: @dif, the ifindex of the device it arrived on
 * (for traffic a stack sends to itself, the device that holds the destination address: lo for
 * 127.0.0.1 and ::1, R91), and @sdif, the ifindex of that device's VRF or 0 (socktab/dev.h). A
 * socket bound to a device (SO_BINDTODEVICE, or a link-local scope) takes only packets whose
 * dif or sdif is that device; an unbound socket takes packets of a VRF only with
 * net.ipv4.tcp_l3mdev_accept / udp_l3mdev_accept (R92). The same 4-tuple may therefore be
 * connected once per device.
 *
 * Two forms of every lookup:
 * - socktab_lookup_*() return the socket with a reference (release it with socktab_sock_put()),
 *   so it may be kept after the call; they enter the RCU read side themselves.
 * - socktab_lookup_*_rcu() take no reference and write nothing but a changed SO_INCOMING_CPU
 *   (below): call them between socktab_rcu_read_lock() and socktab_rcu_read_unlock(); the
 *   result is valid until the unlock, and not after (every socket and TIME_WAIT entry is freed
 *   only after a grace period, so it cannot be reused meanwhile, though it may be closing: its
 *   state may change under you). To keep one beyond the section, take a reference with
 *   socktab_sock_hold() inside it.
 *   A poll-mode core wraps a whole burst of packets in one section, or goes online
 *   (socktab_thread_online(), socktab/net.h) and needs no section at all: there a result is
 *   valid until the thread's next socktab_quiescent_state(). The read side is liburcu's
 *   urcu-memb flavour: a section costs two thread-local writes and no fence.
 *
 * A net's dispatch callbacks (socktab/sk_lookup.h, R125) run inside every form of the lookups
 * below, single and batch: TCP after the established table missed and before the listeners,
 * UDP after the connected sockets and before the unconnected ones. A socket they select is
 * returned as a listener or unconnected UDP socket would be; a drop returns NULL.
 *
 * Every lookup is taken for the receipt of its packet (R107): a TCP connection it returns (not
 * a request or TIME_WAIT entry, not a listener) and a connected UDP socket take the calling
 * thread's receiving CPU (socktab_set_rx_cpu()) as their SO_INCOMING_CPU, as the kernel does
 * for every segment and datagram; every form does it, single and burst or batch, referenced or
 * RCU-scoped. The lookup compares the value in the socket's line it already read and writes it
 * only when it differs (once per flow while a flow's packets stay on one CPU); CPUs above 14
 * are compared in the socket's cold part, one more line.
 */
#ifndef SOCKTAB_LOOKUP_H
#define SOCKTAB_LOOKUP_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Enter / leave an RCU read-side section (nests). A thread must be registered
 * (socktab_thread_register(); a library built with -Dpacket_path_checks=true asserts it).
 * Inside a section, do not call the functions that wait for a grace period (socktab_net_free(),
 * socktab_sk_lookup_detach()) or socktab_thread_unregister(); docs/concurrency.md lists what may run there. An online thread
 * (socktab_thread_online(), socktab/net.h) needs no section.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * socktab_rcu_read_unlock() ends only a section the caller opened (it aborts otherwise).
 */
void socktab_rcu_read_lock(void);
void socktab_rcu_read_unlock(void);

/*
 * Take a reference on @sk, found by an _rcu lookup in the current section: 0, or -ENOENT when
 * its last reference is gone (it is being freed or already freed: treat it as not found),
 * -EINVAL for NULL. Outside the section that found it, @sk may be a new socket reusing the
 * memory: no call can tell.
 * Context: registered thread, only inside an RCU read-side section.
 */
int socktab_sock_hold(struct socktab_sock *sk);

/*
 * The TCP socket a segment belongs to: established, request (state SOCKTAB_TCP_NEW_SYN_RECV) and
 * TIME_WAIT entries first, then listeners
 * (rules R30-R35: a specific address beats the wildcard, scores, SO_REUSEPORT selection by the
 * 4-tuple hash). socktab_lookup_established4/6 and socktab_lookup_listener4/6 do one half each.
 * Returns a socket with a reference held (release it with socktab_sock_put()) or NULL.
 * The v6 forms take IPv6 addresses; a v4-mapped pair is looked up as IPv4, so a dual-stack socket
 * talking to a v4-mapped peer is found by both forms.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * Each enters a read-side section of its own (nested in the caller's) and takes no lock.
 */
struct socktab_sock *socktab_lookup_tcp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_tcp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_established4(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_established6(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_listener4(struct socktab_net *net, uint32_t saddr,
					      uint16_t sport, uint32_t daddr, uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_listener6(struct socktab_net *net,
					      const struct in6_addr *saddr, uint16_t sport,
					      const struct in6_addr *daddr, uint16_t dport, int dif, int sdif);
/* The RCU-scoped forms of the lookups above: no reference.
 * Context: registered thread, only inside an RCU read-side section. The result lives until it
 * ends. */
struct socktab_sock *socktab_lookup_tcp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif);
struct socktab_sock *socktab_lookup_tcp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif);
struct socktab_sock *socktab_lookup_established4_rcu(struct socktab_net *net, uint32_t saddr,
						     uint16_t sport, uint32_t daddr,
						     uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_established6_rcu(struct socktab_net *net,
						     const struct in6_addr *saddr, uint16_t sport,
						     const struct in6_addr *daddr, uint16_t dport,
						     int dif, int sdif);
struct socktab_sock *socktab_lookup_listener4_rcu(struct socktab_net *net, uint32_t saddr,
						  uint16_t sport, uint32_t daddr, uint16_t dport,
						  int dif, int sdif);
struct socktab_sock *socktab_lookup_listener6_rcu(struct socktab_net *net,
						  const struct in6_addr *saddr, uint16_t sport,
						  const struct in6_addr *daddr, uint16_t dport,
						  int dif, int sdif);

/* Family-dispatching form of socktab_lookup_tcp4/6: @saddr/@daddr point to a uint32_t
 * (AF_INET) or struct in6_addr.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 */
struct socktab_sock *socktab_lookup_tcp(struct socktab_net *net, int family, const void *saddr,
					uint16_t sport, const void *daddr, uint16_t dport, int dif, int sdif);

/* An IPv4 segment's addresses and ports (network byte order; source = the remote peer) and its
 * ingress device and VRF. */
struct socktab_tuple4 {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	int32_t dif, sdif;
};

/* socktab_lookup_tcp_burst() and socktab_lookup_batch4/6() flags: established and TIME_WAIT
 * entries only, no listeners; no references (the RCU-scoped form: call inside a read-side
 * section). */
#define SOCKTAB_LOOKUP_ESTABLISHED 1u
#define SOCKTAB_LOOKUP_NOREF 2u

/*
 * Burst form of socktab_lookup_tcp4() (or of socktab_lookup_established4() with
 * SOCKTAB_LOOKUP_ESTABLISHED): out[i] is the socket for keys[i], with a reference held, or NULL.
 * The keys go in groups of 32, each stage by stage: all are hashed and their slots prefetched,
 * then every slot is read and its first two entries prefetched (with the caller's area after
 * each; the slot names its chain's second entry), then every key is matched against its first
 * entry and, where that is another connection's, its second; a key standing further down has
 * its next entry prefetched and walks on after the group's matches. So the cache misses of
 * different keys overlap. Returns how many keys were found, or -EINVAL (NULL
 * net, NULL arrays with n > 0, unknown flag).
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * With SOCKTAB_LOOKUP_NOREF only inside one: the results live as long as it; without it each
 * out[i] must be released with socktab_sock_put().
 */
int socktab_lookup_tcp_burst(struct socktab_net *net, const struct socktab_tuple4 *keys,
			     unsigned int n, struct socktab_sock **out, unsigned int flags);

/* An IPv6 segment's addresses and ports (network byte order; source = the remote peer) and its
 * ingress device and VRF. */
struct socktab_tuple6 {
	struct in6_addr saddr, daddr;
	uint16_t sport, dport;
	int32_t dif, sdif;
};

/* What a batch lookup found for a key (struct socktab_hit.kind). */
enum socktab_hit_kind {
	SOCKTAB_HIT_NONE = 0,      /* nothing: sk and priv are NULL */
	SOCKTAB_HIT_ESTABLISHED,   /* a TCP connection in ehash, in any state but TIME_WAIT */
	SOCKTAB_HIT_TIME_WAIT,     /* a TIME_WAIT entry: socktab_sock_tw(sk) gives it */
	SOCKTAB_HIT_LISTENER,      /* a TCP listener (no connection had the 4-tuple) */
	SOCKTAB_HIT_UDP_CONNECTED, /* a connected UDP socket */
	SOCKTAB_HIT_UDP,           /* an unconnected UDP socket */
	SOCKTAB_HIT_REQUEST,       /* a request entry (TCP_NEW_SYN_RECV): socktab_req_listener(sk)
				    * gives its listener */
};

/* One key's result: the socket, the caller's area (socktab_sock_priv(), socktab_tw_priv() of
 * a TIME_WAIT entry or socktab_req_priv() of a request entry; NULL when there is none) and what
 * was found. */
struct socktab_hit {
	struct socktab_sock *sk;
	void *priv;
	int kind; /* enum socktab_hit_kind */
};

/*
 * The batch lookups of a poll loop: out[i] is what the single lookup of @proto (SOCKTAB_TCP:
 * socktab_lookup_tcp4/6(), or socktab_lookup_established4/6() with SOCKTAB_LOOKUP_ESTABLISHED;
 * SOCKTAB_UDP: socktab_lookup_udp4/6()) returns for keys[i], with its kind and area, so the
 * caller needs no further call to dispatch it. TCP keys go through the pipeline of
 * socktab_lookup_tcp_burst() (batch6: IPv6 keys, a v4-mapped pair keyed as IPv4); UDP keys
 * through one of their own (groups of 32 keys, stage by stage: every key's hash2 and hash4
 * slots are prefetched, then every first hash4 entry's socket line (and its chain link where
 * the slot holds more); then the hash4 chains are walked a step per key per round, each step
 * prefetching the next entry; a
 * key that finds no connected socket there is looked up whole). A reuseport program sees the payload the thread
 * named with socktab_set_rx_payload() for every key of the batch: datagrams for groups with a
 * program are looked up one at a time. The whole batch runs in one read-side section. Returns how many keys were
 * found, or -EINVAL (NULL net, NULL arrays with n > 0, @proto neither SOCKTAB_TCP nor
 * SOCKTAB_UDP, an unknown flag, SOCKTAB_LOOKUP_ESTABLISHED with SOCKTAB_UDP) with out[]
 * untouched.
 * With SOCKTAB_LOOKUP_NOREF (the poll-loop form) no reference is taken: the caller is inside a
 * read-side section and every sk and priv stays valid until it ends. Without it, each found sk
 * holds a reference, released with socktab_sock_put(), and priv lives as long as that reference.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * With SOCKTAB_LOOKUP_NOREF only inside one (above).
 */
int socktab_lookup_batch4(struct socktab_net *net, int proto, const struct socktab_tuple4 *keys,
			  unsigned int n, struct socktab_hit *out, unsigned int flags);
int socktab_lookup_batch6(struct socktab_net *net, int proto, const struct socktab_tuple6 *keys,
			  unsigned int n, struct socktab_hit *out, unsigned int flags);

/*
 * One key's lookup with what it found: the single lookup of @proto for *@key, as
 * socktab_lookup_batch4/6() do it for each of theirs (same flags, same struct socktab_hit, the
 * same results), without the batch's pipeline. The form new code should use for a packet looked
 * up on its own: its kind comes back with it, where socktab_lookup_tcp4/6() and the other single
 * lookups return the socket alone. Returns 1 (found), 0 (*@out has SOCKTAB_HIT_NONE) or -EINVAL
 * (NULL net, key or out, @proto neither SOCKTAB_TCP nor SOCKTAB_UDP, an unknown flag,
 * SOCKTAB_LOOKUP_ESTABLISHED with SOCKTAB_UDP) with *@out untouched.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * With SOCKTAB_LOOKUP_NOREF only inside one: the result lives until it ends; without it the
 * found socket holds a reference, released with socktab_sock_put().
 */
int socktab_lookup_one4(struct socktab_net *net, int proto, const struct socktab_tuple4 *key,
			struct socktab_hit *out, unsigned int flags);
int socktab_lookup_one6(struct socktab_net *net, int proto, const struct socktab_tuple6 *key,
			struct socktab_hit *out, unsigned int flags);

/* An address of a struct socktab_key: @v4 for AF_INET, @v6 for AF_INET6. */
union socktab_key_addr {
	uint32_t v4;
	struct in6_addr v6;
};

/* struct socktab_key.dif: the key arrived on the call's device (its dif and sdif). */
#define SOCKTAB_KEY_CALL_DEV (-1)

/*
 * A key of a mixed burst (socktab_lookup_mixed()): one TCP segment or UDP datagram, IPv4 or
 * IPv6, its addresses and ports in network byte order (source = the remote peer), and its
 * ingress device: @dif SOCKTAB_KEY_CALL_DEV takes the call's dif and sdif (@sdif is then not
 * read), any other value is the key's own pair, as the single lookups take it.
 */
struct socktab_key {
	union socktab_key_addr saddr, daddr;
	uint16_t sport, dport;
	uint8_t proto;  /* SOCKTAB_TCP or SOCKTAB_UDP */
	uint8_t family; /* AF_INET or AF_INET6 */
	int32_t dif, sdif;
};

/* socktab_lookup_mixed() flag: a repeat of a datagram answered by an unconnected UDP socket
 * also ends the call (below). */
#define SOCKTAB_LOOKUP_UDP_ORDER 4u

/*
 * The lookup of a poll loop's whole burst, TCP and UDP, IPv4 and IPv6 mixed: out[i] is what
 * socktab_lookup_one4/6() (the same @flags, less SOCKTAB_LOOKUP_UDP_ORDER) returns for keys[i],
 * with the device of the key or of the call (@dif, @sdif), for every i below the return value r.
 * The keys run through the pipelines of socktab_lookup_batch4/6(), one per protocol over the
 * keys of both families, the two in step, in one read-side section: a mixed burst costs about
 * what its keys cost sorted into the four per-kind calls (bench batch --mixed). The form new code should use for a burst
 * (socktab_lookup_batch4/6() and socktab_lookup_tcp_burst() keep working).
 *
 * Repeats: a burst's keys are answered as if looked up one after the other, with the caller's
 * handling of each key before the next. A lookup changes no table, so the answers of the keys
 * below r are exactly those of socktab_lookup_one4/6() called for each in order. Handling a key
 * may create or replace what a later key of the same 4-tuple would find (a SYN that found its
 * listener makes a request entry, whose retransmission then finds that request; a final ACK
 * that found its request makes the child, which the data behind it then finds; a SYN that
 * found a TIME_WAIT entry takes it over). So the call ends before the first key i that repeats
 * the protocol, addresses and ports (whatever the devices; a v4-mapped IPv6 pair repeats its
 * IPv4 pair) of an earlier key of the call answered SOCKTAB_HIT_LISTENER, SOCKTAB_HIT_REQUEST
 * or SOCKTAB_HIT_TIME_WAIT; with SOCKTAB_LOOKUP_ESTABLISHED also SOCKTAB_HIT_NONE of a TCP key
 * (the caller's own listener step follows); with SOCKTAB_LOOKUP_UDP_ORDER also SOCKTAB_HIT_UDP
 * (for a service that connects a socket to a peer on its first datagram). It returns that i:
 * the caller handles out[0..r) and calls again from keys + r, whose lookup then sees what the
 * handling made, as it would one key at a time. A repeat of a connection (SOCKTAB_HIT_ESTABLISHED,
 * SOCKTAB_HIT_UDP_CONNECTED) or of an unconnected socket without SOCKTAB_LOOKUP_UDP_ORDER does
 * not end the call: it finds the same socket; if handling an earlier key closed that socket,
 * its state says so, as it does when another thread closes it. Keys are looked up in chunks
 * of 64: the keys from r to the end of r's chunk were looked up too (a dispatch callback may
 * have run for them); their answers are dropped (without SOCKTAB_LOOKUP_NOREF, their
 * references released). Keys of later chunks were not looked up. out[r..n) is not written.
 *
 * Returns r: n when no key ends the call (0 for n = 0), else the index of the first repeat
 * (at least 1); or -EINVAL (NULL net, NULL arrays with n > 0, a key whose proto is neither
 * SOCKTAB_TCP nor SOCKTAB_UDP or whose family is neither AF_INET nor AF_INET6, @dif or @sdif
 * negative, an unknown flag, SOCKTAB_LOOKUP_ESTABLISHED with a UDP key) with out[] untouched.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * With SOCKTAB_LOOKUP_NOREF only inside one: the results live as long as it; without it each
 * found sk holds a reference, released with socktab_sock_put().
 */
int socktab_lookup_mixed(struct socktab_net *net, const struct socktab_key *keys, unsigned int n,
			 int dif, int sdif, struct socktab_hit *out, unsigned int flags);

/*
 * The UDP socket a datagram from (saddr, sport) to (daddr, dport) is delivered to (R72): the
 * 4-tuple hash first when the (daddr, dport) slot counts connected sockets, then the
 * exact-address chain with scoring (R71) and SO_REUSEPORT selection (R35, R36), then the
 * wildcard chain, then the port chain. The v6 form looks a v4-mapped pair up as IPv4. Returns the
 * socket with a reference held (release it with socktab_sock_put()) or NULL.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * Each enters a read-side section of its own (nested in the caller's) and takes no lock.
 */
struct socktab_sock *socktab_lookup_udp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif);
struct socktab_sock *socktab_lookup_udp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif);
/* The RCU-scoped forms: no reference.
 * Context: registered thread, only inside an RCU read-side section. */
struct socktab_sock *socktab_lookup_udp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif);
struct socktab_sock *socktab_lookup_udp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif);

/*
 * The receiving CPU of the calling thread's lookups, for SO_INCOMING_CPU (R31, R32, R35, R71,
 * R107). A socket whose SO_INCOMING_CPU equals it scores one more in listener and UDP lookups,
 * and a SO_REUSEPORT group with such a member hands a packet to one of them first; a TCP
 * connection or connected UDP socket a lookup finds takes it as its SO_INCOMING_CPU. The kernel
 * uses the CPU that runs the lookup; so does socktab by default (@cpu -1: the CPU the thread
 * runs on now, sched_getcpu(), asked only when a scored socket names a CPU; a found connection
 * reads it from the thread's rseq area where glibc keeps one, a thread-local load). A stack
 * whose threads each poll one RX queue may name the queue instead (@cpu >= 0, any numbering
 * that its SO_INCOMING_CPU values also use): the lookups of that thread then use it and never
 * ask the scheduler. A child made by socktab_sock_new_child() starts with this value, as the
 * kernel's does. Returns 0, or
 * -EINVAL for @cpu < -1 (nothing changes). socktab_get_rx_cpu(): the value the calling thread's
 * lookups compare with now (what was set, else sched_getcpu(), -1 if that fails).
 * Context: any thread, registered or not. Per calling thread (other threads' lookups are
 * unaffected); no lock.
 */
int socktab_set_rx_cpu(int cpu);
int socktab_get_rx_cpu(void);

/*
 * The payload of the packet the calling thread's next lookups are for: the @len bytes at @data
 * that follow the UDP header (for TCP, the TCP header and options). Only a SO_REUSEPORT group
 * with a program attached (SO_ATTACH_REUSEPORT_CBPF, R108-R111) reads it: the program runs over
 * these bytes, as the kernel runs it over the datagram past its header, and its value picks the
 * member (an index out of range falls back to the 4-tuple hash). Without a program no lookup
 * reads it, so setting it costs nothing there. The bytes are not copied: they must stay valid
 * and unchanged until the lookups that may read them have returned, or until it is set again;
 * socktab_set_rx_payload(NULL, 0) clears it (a program then sees an empty payload, like a SYN
 * without data). Returns 0, or -EINVAL for a NULL @data with @len > 0 or a @len above
 * UINT32_MAX (nothing changes).
 * Context: any thread, registered or not. Per calling thread (other threads' lookups are
 * unaffected); no lock.
 */
int socktab_set_rx_payload(const void *data, size_t len);

/*
 * Drop a reference returned by a lookup or socktab_sock_hold(). A NULL @sk is ignored. Dropping
 * a reference the caller does not hold, once the count is already zero (a socket closed and
 * released, not yet reused), would wrap it and let socktab_sock_hold() revive a freed socket: it
 * prints "socktab: socktab_sock_put on a freed socket" on stderr and aborts instead (every build).
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It waits for nothing: the last reference's socket goes back to its pool a grace period later.
 */
void socktab_sock_put(struct socktab_sock *sk);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_LOOKUP_H */
