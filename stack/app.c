/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The applications. TCP calls them when a connection is established (app_open), when in-order
 * bytes arrive (app_data), when the peer's FIN arrives (app_fin) and when the connection ends
 * (app_gone); they answer with conn_send() and close with CF_APP_CLOSED (TCP then sends FIN
 * after the buffered bytes). UDP calls app_udp() for each datagram.
 *
 *   echo      every byte back; closes after the peer does
 *   http      reads a request up to the blank line, answers 200 with Content-Length and
 *             Connection: close, and closes first, so that this stack holds the TIME_WAIT
 *   sockperf  sockperf's server side: each message comes back with the client flag cleared
 *             (sockperf's client rejects its own messages echoed as they were); messages that
 *             ask for no reply are read and dropped
 *   client    the active flows of --connect (client.c)
 */
#include <stdio.h>
#include <string.h>

#include "stack.h"

#define HTTP_MAX_REQUEST 65536 /* a request without a blank line by then is dropped */
#define HTTP_BODY "Hello from socktab serve\n"

/* sockperf's message header (network order): sequence number (8 bytes), flags (2), total
 * message length including the header (4). */
#define SP_HDR 14
#define SP_CLIENT 1      /* set by the client; the server clears it in its reply */
#define SP_PONG_REQ 2    /* the client wants this message back */
#define SP_MAX 65536

static void http_data(struct stack *st, struct conn *c, const uint8_t *d, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		c->u.http.last4 = c->u.http.last4 << 8 | d[i];
		/* The headers end with an empty line: CRLF CRLF (or bare LF LF). */
		if (c->u.http.last4 != 0x0d0a0d0a && (c->u.http.last4 & 0xffff) != 0x0a0a)
			continue;
		char resp[256];
		int len = snprintf(resp, sizeof(resp),
				   "HTTP/1.1 200 OK\r\n"
				   "Server: socktab-serve\r\n"
				   "Content-Type: text/plain\r\n"
				   "Content-Length: %zu\r\n"
				   "Connection: close\r\n"
				   "\r\n" HTTP_BODY,
				   sizeof(HTTP_BODY) - 1);

		conn_send(st, c, resp, (uint32_t)len);
		c->flags |= CF_APP_CLOSED;
		st->c.http_responses++;
		return;
	}
	c->u.http.bytes += n;
	if (c->u.http.bytes > HTTP_MAX_REQUEST)
		c->flags |= CF_APP_CLOSED;
}

static void sockperf_data(struct stack *st, struct conn *c, const uint8_t *d, uint32_t n)
{
	while (n) {
		if (c->u.sp.got < SP_HDR) { /* collect the header */
			uint32_t k = SP_HDR - c->u.sp.got;

			if (k > n)
				k = n;
			memcpy(c->u.sp.hdr + c->u.sp.got, d, k);
			c->u.sp.got = (uint8_t)(c->u.sp.got + k);
			d += k;
			n -= k;
			if (c->u.sp.got < SP_HDR)
				return;
			uint8_t *h = c->u.sp.hdr;
			uint32_t len = (uint32_t)h[10] << 24 | (uint32_t)h[11] << 16 |
				       (uint32_t)h[12] << 8 | h[13];

			if (len < SP_HDR || len > SP_MAX) { /* not sockperf: stop talking */
				c->flags |= CF_APP_CLOSED;
				return;
			}
			c->u.sp.reply = h[9] & SP_PONG_REQ;
			c->u.sp.left = len - SP_HDR;
			if (c->u.sp.reply) {
				h[9] &= (uint8_t)~SP_CLIENT;
				conn_send(st, c, h, SP_HDR);
			}
		}
		uint32_t k = c->u.sp.left < n ? c->u.sp.left : n;

		if (k && c->u.sp.reply)
			conn_send(st, c, d, k);
		d += k;
		n -= k;
		c->u.sp.left -= k;
		if (!c->u.sp.left)
			c->u.sp.got = 0; /* next message */
	}
}

void app_open(struct stack *st, struct conn *c)
{
	if (c->app == APP_CLIENT)
		client_open(st, c);
}

/* @n never exceeds conn_rcv_space(): the echoes always find room in the send buffer. */
void app_data(struct stack *st, struct conn *c, const uint8_t *d, uint32_t n)
{
	switch (c->app) {
	case APP_ECHO:
		conn_send(st, c, d, n);
		break;
	case APP_HTTP:
		http_data(st, c, d, n);
		break;
	case APP_SOCKPERF:
		sockperf_data(st, c, d, n);
		break;
	case APP_CLIENT:
		client_data(st, c, d, n);
		break;
	}
}

/* The peer is done sending: every application closes too, after what it still has to send. */
void app_fin(struct stack *st, struct conn *c)
{
	(void)st;
	c->flags |= CF_APP_CLOSED;
}

void app_gone(struct stack *st, struct conn *c)
{
	if (c->app == APP_CLIENT)
		client_gone(st, c);
}

size_t app_udp(int app, const uint8_t *d, size_t n, uint8_t *out)
{
	switch (app) {
	case APP_ECHO:
		memcpy(out, d, n);
		return n;
	case APP_SOCKPERF:
		if (n < SP_HDR || !(d[9] & SP_PONG_REQ))
			return 0;
		memcpy(out, d, n);
		out[9] &= (uint8_t)~SP_CLIENT;
		return n;
	}
	return 0;
}
