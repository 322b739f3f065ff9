/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Classic BPF programs of SO_ATTACH_REUSEPORT_CBPF (R108, R110), checked and run as Linux 6.18
 * does. Linux never interprets classic BPF: sk_reuseport_attach_filter() checks the program
 * (bpf_check_classic), converts it to eBPF (bpf_convert_filter, convert_bpf_extensions,
 * convert_bpf_ld_abs in net/core/filter.c) and run_bpf_filter() runs the result over the
 * packet pulled past its transport header. This file reads classic instructions directly and
 * gives them the converted program's meaning, not the classic interpreters' (libpcap's, BSD's):
 *
 * - A and X are 32-bit; every ALU operation wraps at 32 bits; a shift by X uses X's low five
 *   bits (X = 33 shifts by 1), a constant shift must be below 32 (checked).
 * - A division or modulo by X = 0 ends the program with 0; by a constant 0 it is refused.
 * - A load at a non-negative offset reads the payload, big-endian; one that does not fit ends
 *   the program with 0. An indirect load's offset is X + (s32)k computed in 64 bits, as
 *   the helper's int argument takes it: truncated to 32 bits, then signed (X = 0xffffffff,
 *   k = 2 reads byte 1). BPF_MSH loads like BPF_ABS and keeps A.
 * - Negative offsets are the helper's: [SKF_NET_OFF, 0) from the network header,
 *   [SKF_LL_OFF, SKF_NET_OFF) from the link-layer header, below SKF_LL_OFF the program ends with
 *   0. A BPF_ABS load at SKF_AD_OFF and above is an ancillary load instead (any size: the value
 *   is never truncated), and one the kernel does not know is refused.
 * - Jumps compare 32-bit values unsigned. RET gives a 32-bit value.
 * - The check refuses what the kernel refuses, in its order: bpf_check_classic (opcodes,
 *   constant divisors and shifts, scratch cells, jumps, the final RET, scratch reads before a
 *   write on some path), then the conversion, whose jumps must fit eBPF's signed 16-bit offset
 *   in both of its passes (in the first, the addresses ahead of a jump are still 0: a jump
 *   placed past about 32768 eBPF instructions fails, however short it is), then the size of
 *   the converted program against net.core.optmem_max (-ENOMEM). The sizes are those of
 *   6.18 on x86_64 (and arm64: architectures with efficient unaligned loads), counted per
 *   instruction as the conversion emits them.
 *
 * Where socktab departs: it has the payload and the lookup, not the sk_buff. A program that
 * loads what only the sk_buff has gets no value (socktab__cbpf_run() returns false) and the
 * group's hash picks the member, as for an index out of range:
 * - header bytes: a load in [SKF_LL_OFF, 0) within 128 KiB of the header (the kernel reads the
 *   IP, TCP/UDP or link-layer header there, and the payload past them). Further out every
 *   packet Linux can receive has ended, and the value is the kernel's 0.
 * - SKF_AD_IFINDEX, SKF_AD_HATYPE (the ingress device), SKF_AD_MARK, SKF_AD_QUEUE,
 *   SKF_AD_RXHASH (the sk_buff's own fields), SKF_AD_PROTOCOL when the caller cannot tell the
 *   family (a dual-stack IPv6 group also receives IPv4), SKF_AD_PAY_OFFSET for a TCP payload
 *   of 65476 bytes or more, SKF_AD_CPU when no CPU is known.
 * What socktab gives as the kernel does: SKF_AD_CPU is the lookup's receiving CPU (the one
 * SO_INCOMING_CPU compares, socktab_set_rx_cpu()); SKF_AD_RANDOM a fresh 32-bit draw;
 * SKF_AD_ALU_XOR_X is A ^= X; SKF_AD_NLATTR and SKF_AD_NLATTR_NEST search netlink attributes
 * (host byte order) in the payload from offset A for type X and give the attribute's offset or
 * 0; SKF_AD_PAY_OFFSET is what the kernel's flow dissector reports once the transport header
 * was pulled: the payload length + 8 for UDP (the length capped at 65528), the payload length
 * for TCP; SKF_AD_PKTTYPE is PACKET_HOST (0) and the three VLAN loads are 0: a socket lookup
 * only sees packets whose VLAN tag was taken off (Linux reads 1, PACKET_BROADCAST, for a UDP
 * datagram to a unicast address in a link-layer broadcast frame; socktab sees no link layer).
 * Fixed limits: net.core.optmem_max is its default, 131072 bytes. The payload is one flat
 * buffer, as a small datagram's sk_buff is linear; on a non-linear one (a large datagram) the
 * kernel's netlink searches give 0.
 */
#include <errno.h>
#include <string.h>

#include "cbpf.h"
#include "common.h"

/* Linux 6.18, x86_64: offsetof(struct bpf_prog, insns), the header bpf_prog_size() counts, and
 * the default net.core.optmem_max sk_reuseport_attach_filter() compares the size with. */
#define CBPF_PROG_HDR 96u
#define CBPF_OPTMEM_MAX 131072u
/* Past this many bytes from its link-layer or network header every packet has ended (an IPv6
 * packet is at most 40 + 65535 bytes, a link-layer header far below 64 KiB). */
#define CBPF_HDR_REACH 0x20000
/* The first pass of bpf_convert_filter() computes a forward jump's offset as 0 - its own
 * address - 1 - its place in its instruction's block. */
#define CBPF_OFF_MIN 32768

/* ---- the check (bpf_check_classic, bpf_convert_filter, sk_reuseport_attach_filter) ---- */

/* Is @code an opcode the kernel's classic BPF takes (chk_code_allowed)? */
static bool code_allowed(uint16_t code)
{
	switch (code) {
	case BPF_ALU | BPF_ADD | BPF_K: case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K: case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K: case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K: case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_MOD | BPF_K: case BPF_ALU | BPF_MOD | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K: case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K: case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K: case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K: case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_W | BPF_ABS: case BPF_LD | BPF_H | BPF_ABS: case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND: case BPF_LD | BPF_B | BPF_IND:
	case BPF_LD | BPF_W | BPF_LEN: case BPF_LD | BPF_IMM: case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_W | BPF_LEN: case BPF_LDX | BPF_B | BPF_MSH:
	case BPF_LDX | BPF_IMM: case BPF_LDX | BPF_MEM:
	case BPF_ST: case BPF_STX:
	case BPF_MISC | BPF_TAX: case BPF_MISC | BPF_TXA:
	case BPF_RET | BPF_K: case BPF_RET | BPF_A:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K: case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K: case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	}
	return false;
}

static bool is_cond_jump(uint16_t code)
{
	return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA;
}

/*
 * The eBPF instructions convert_bpf_extensions() emits for the ancillary load at @k: 0 when
 * @k is below SKF_AD_OFF (a packet load), -1 for an ancillary offset the kernel does not know
 * (bpf_anc_helper), which bpf_check_classic refuses.
 */
static int anc_len(uint32_t k)
{
	if (k < (uint32_t)SKF_AD_OFF)
		return 0;
	switch (k - (uint32_t)SKF_AD_OFF) {
	case SKF_AD_MARK: case SKF_AD_RXHASH: case SKF_AD_QUEUE: case SKF_AD_VLAN_TAG:
	case SKF_AD_ALU_XOR_X:
		return 1; /* one field load, or A ^= X */
	case SKF_AD_PROTOCOL: case SKF_AD_VLAN_TPID:
		return 2; /* a 16-bit field, then its byte swap */
	case SKF_AD_PKTTYPE:
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		return 3; /* the bit field's byte, its mask, a shift */
#else
		return 2;
#endif
	case SKF_AD_VLAN_TAG_PRESENT:
		return 3; /* the field, a test, 1 */
	case SKF_AD_IFINDEX: case SKF_AD_HATYPE:
		return 4; /* the device, a NULL test, an exit, the field */
	case SKF_AD_PAY_OFFSET: case SKF_AD_NLATTR: case SKF_AD_NLATTR_NEST: case SKF_AD_CPU:
	case SKF_AD_RANDOM:
		return 4; /* three argument moves and a helper call */
	}
	return -1;
}

/* The eBPF instructions convert_bpf_ld_abs() emits for the packet load @code at @k. */
static uint32_t ld_len(uint16_t code, uint32_t k)
{
	/* The helper call: ctx, data and headlen into arguments, the offset (and for BPF_IND,
	 * X plus k), the call, then "A >= 0, else A = 0 and exit". */
	uint32_t n = 3 + 1 + 1 + 3;
	int32_t off = (int32_t)k;

	if (BPF_MODE(code) == BPF_IND)
		return n + (k != 0);
	if (off >= 0) /* before it, a direct load from the linear part when the bytes are there */
		n += 1 + (off != 0) + 1 + (off <= INT16_MAX ? 1 : 3) + (BPF_SIZE(code) != BPF_B) +
		     1;
	return n;
}

/* eBPF instructions bpf_convert_filter() emits for @fp; sets *ld_abs when they cache the
 * packet's data and length in the prologue (seen_ld_abs). */
static uint32_t insn_len(const struct sock_filter *fp, bool *ld_abs)
{
	switch (fp->code) {
	case BPF_ALU | BPF_DIV | BPF_X: case BPF_ALU | BPF_MOD | BPF_X:
		return 5; /* X's 32 bits, "X != 0, else A = 0 and exit", the operation */
	case BPF_LD | BPF_W | BPF_ABS: case BPF_LD | BPF_H | BPF_ABS: case BPF_LD | BPF_B | BPF_ABS:
		if (anc_len(fp->k) > 0)
			return (uint32_t)anc_len(fp->k);
		*ld_abs = true;
		return ld_len(fp->code, fp->k);
	case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND: case BPF_LD | BPF_B | BPF_IND:
		*ld_abs = true;
		return ld_len(fp->code, fp->k);
	case BPF_LDX | BPF_B | BPF_MSH:
		*ld_abs = true; /* X = A, the byte load, & 0xf, << 2, and three moves */
		return 1 + ld_len(BPF_LD | BPF_B | BPF_ABS, fp->k) + 5;
	case BPF_RET | BPF_K:
		return 2;
	}
	if (is_cond_jump(fp->code)) {
		/* A negative constant goes through a register first; a jump whose false branch is
		 * the next instruction is one jump, so is one whose true branch is (inverted, but
		 * for JSET), any other a jump and a JA. */
		uint32_t n = BPF_SRC(fp->code) == BPF_K && (int32_t)fp->k < 0;

		if (fp->jf == 0 || (fp->jt == 0 && BPF_OP(fp->code) != BPF_JSET))
			return n + 1;
		return n + 2;
	}
	return 1;
}

/* Does the conversion accept a jump at place @pos of instruction @i's block to instruction
 * @t, given the eBPF addresses @addrs of the classic instructions? Both passes' offsets must
 * fit in a signed 16-bit field. */
static bool jump_fits(const uint32_t *addrs, uint32_t i, uint32_t pos, uint32_t t)
{
	if ((uint64_t)addrs[i] + 1 + pos > CBPF_OFF_MIN)
		return false; /* first pass: 0 - addrs[i] - 1 - pos */
	return (int64_t)addrs[t] - addrs[i] - 1 - pos <= INT16_MAX;
}

/* bpf_convert_filter() and the size check of sk_reuseport_attach_filter(). @addrs has room
 * for @len addresses. */
static int check_conversion(const struct sock_filter *f, uint32_t len, uint32_t *addrs)
{
	bool ld_abs = false;
	uint32_t total = 0;

	for (uint32_t i = 0; i < len; i++) {
		addrs[i] = total;
		total += insn_len(&f[i], &ld_abs);
	}
	/* The prologue: A = 0, X = 0, the context; with packet loads, data and headlen too. */
	for (uint32_t i = 0; i < len; i++)
		addrs[i] += 3 + (ld_abs ? 4 : 0);
	total += 3 + (ld_abs ? 4 : 0);
	for (uint32_t i = 0; i < len; i++) {
		const struct sock_filter *fp = &f[i];
		uint32_t pos;

		if (fp->code == (BPF_JMP | BPF_JA)) {
			if (!jump_fits(addrs, i, 0, i + 1 + fp->k))
				return -EINVAL;
			continue;
		}
		if (!is_cond_jump(fp->code))
			continue;
		pos = BPF_SRC(fp->code) == BPF_K && (int32_t)fp->k < 0;
		if (fp->jf == 0) {
			if (!jump_fits(addrs, i, pos, i + 1 + fp->jt))
				return -EINVAL;
		} else if (fp->jt == 0 && BPF_OP(fp->code) != BPF_JSET) {
			if (!jump_fits(addrs, i, pos, i + 1 + fp->jf))
				return -EINVAL;
		} else if (!jump_fits(addrs, i, pos, i + 1 + fp->jt) ||
			   !jump_fits(addrs, i, pos + 1, i + 1 + fp->jf)) {
			return -EINVAL;
		}
	}
	/* bpf_prog_size() of the converted program against net.core.optmem_max. */
	if ((uint64_t)CBPF_PROG_HDR + (uint64_t)total * 8 > CBPF_OPTMEM_MAX)
		return -ENOMEM;
	return 0;
}

/* check_load_and_stores(): no path reads a scratch cell it has not written. @masks has room
 * for @len cells. */
static int check_scratch(const struct sock_filter *f, uint32_t len, uint32_t *masks)
{
	uint32_t valid = 0;

	for (uint32_t pc = 0; pc < len; pc++)
		masks[pc] = 0xffff;
	for (uint32_t pc = 0; pc < len; pc++) {
		const struct sock_filter *fp = &f[pc];

		valid &= masks[pc];
		if (fp->code == BPF_ST || fp->code == BPF_STX) {
			valid |= 1u << fp->k;
		} else if (fp->code == (BPF_LD | BPF_MEM) || fp->code == (BPF_LDX | BPF_MEM)) {
			if (!(valid & (1u << fp->k)))
				return -EINVAL;
		} else if (fp->code == (BPF_JMP | BPF_JA)) {
			masks[pc + 1 + fp->k] &= valid;
			valid = 0xffff;
		} else if (is_cond_jump(fp->code)) {
			masks[pc + 1 + fp->jt] &= valid;
			masks[pc + 1 + fp->jf] &= valid;
			valid = 0xffff;
		}
	}
	return 0;
}

/* bpf_check_classic(), instruction by instruction. */
static int check_classic(const struct sock_filter *f, uint32_t len)
{
	for (uint32_t pc = 0; pc < len; pc++) {
		const struct sock_filter *fp = &f[pc];

		if (!code_allowed(fp->code))
			return -EINVAL;
		switch (fp->code) {
		case BPF_ALU | BPF_DIV | BPF_K: case BPF_ALU | BPF_MOD | BPF_K:
			if (fp->k == 0)
				return -EINVAL;
			break;
		case BPF_ALU | BPF_LSH | BPF_K: case BPF_ALU | BPF_RSH | BPF_K:
			if (fp->k >= 32)
				return -EINVAL;
			break;
		case BPF_LD | BPF_MEM: case BPF_LDX | BPF_MEM: case BPF_ST: case BPF_STX:
			if (fp->k >= BPF_MEMWORDS)
				return -EINVAL;
			break;
		case BPF_JMP | BPF_JA:
			if (fp->k >= len - pc - 1)
				return -EINVAL;
			break;
		case BPF_LD | BPF_W | BPF_ABS: case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			if (anc_len(fp->k) < 0)
				return -EINVAL;
			break;
		default:
			if (is_cond_jump(fp->code) &&
			    (pc + fp->jt + 1 >= len || pc + fp->jf + 1 >= len))
				return -EINVAL;
		}
	}
	return BPF_CLASS(f[len - 1].code) == BPF_RET ? 0 : -EINVAL;
}

int socktab__cbpf_check(const struct sock_filter *f, uint32_t len)
{
	uint32_t scratch[BPF_MAXINSNS + 1];
	int err;

	if (!f || len == 0 || len > BPF_MAXINSNS)
		return -EINVAL;
	err = check_classic(f, len);
	if (!err)
		err = check_scratch(f, len, scratch);
	if (!err)
		err = check_conversion(f, len, scratch);
	return err;
}

/* ---- the run (the converted program, run_bpf_filter) ---- */

/* What a load gives: a value, the kernel's early end with 0, or nothing socktab has. */
enum cbpf_load { LOAD_OK, LOAD_END, LOAD_NONE };

/*
 * The @size bytes at offset @off (bpf_skb_load_helper_{8,16,32} with its int offset), big-endian
 * into *@v.
 */
static enum cbpf_load load(const struct socktab__cbpf_pkt *pkt, int32_t off, uint32_t size,
			   uint32_t *v)
{
	int64_t rel;

	if (off >= 0) {
		const unsigned char *p;

		if ((uint64_t)off + size > pkt->len)
			return LOAD_END;
		p = pkt->data + off;
		*v = size == 4 ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		   : size == 2 ? (uint32_t)p[0] << 8 | p[1]
			       : p[0];
		return LOAD_OK;
	}
	if (off >= SKF_NET_OFF)
		rel = (int64_t)off - SKF_NET_OFF;
	else if (off >= SKF_LL_OFF)
		rel = (int64_t)off - SKF_LL_OFF;
	else
		return LOAD_END; /* the helper's INT_MIN: -EFAULT */
	return rel + size > CBPF_HDR_REACH ? LOAD_END : LOAD_NONE;
}

/* nla_ok(): an attribute header at @pos with @rem bytes left, of a length that fits. */
static bool nla_fits(const struct socktab__cbpf_pkt *pkt, uint64_t pos, int64_t rem,
		     uint16_t *nla_len, uint16_t *nla_type)
{
	if (rem < 4)
		return false;
	memcpy(nla_len, pkt->data + pos, sizeof(*nla_len));
	memcpy(nla_type, pkt->data + pos + 2, sizeof(*nla_type));
	return *nla_len >= 4 && *nla_len <= rem;
}

/*
 * bpf_skb_get_nlattr / bpf_skb_get_nlattr_nest: the offset of the first attribute of type @x
 * (its flag bits masked off, nla_find) in the attributes from offset @a (@nest: in the one
 * attribute at @a), or 0.
 */
static uint32_t nla_search(const struct socktab__cbpf_pkt *pkt, uint32_t a, uint32_t x, bool nest)
{
	uint16_t nla_len, nla_type;
	uint64_t pos = a;
	int64_t rem;

	if (pkt->len < 4 || a > pkt->len - 4)
		return 0;
	rem = (int64_t)pkt->len - a;
	if (nest) {
		if (!nla_fits(pkt, pos, rem, &nla_len, &nla_type))
			return 0;
		pos += 4;
		rem = nla_len - 4;
	}
	while (nla_fits(pkt, pos, rem, &nla_len, &nla_type)) {
		uint32_t step = ((uint32_t)nla_len + 3) & ~3u;

		if ((nla_type & 0x3fffu) == x) /* NLA_TYPE_MASK */
			return (uint32_t)pos;
		pos += step;
		rem -= step;
	}
	return 0;
}

/* The ancillary load at @k into *@a (A, which some read) with X = @x: false when socktab
 * does not have the value. */
static bool ancillary(const struct socktab__cbpf_pkt *pkt, uint32_t k, uint32_t *a, uint32_t x)
{
	int cpu;

	switch (k - (uint32_t)SKF_AD_OFF) {
	case SKF_AD_PROTOCOL:
		if (pkt->l3proto < 0)
			return false;
		*a = (uint32_t)pkt->l3proto;
		return true;
	case SKF_AD_PKTTYPE: case SKF_AD_VLAN_TAG: case SKF_AD_VLAN_TAG_PRESENT:
	case SKF_AD_VLAN_TPID:
		*a = 0; /* PACKET_HOST; the VLAN tag was taken off before IP saw the packet */
		return true;
	case SKF_AD_NLATTR:
		*a = nla_search(pkt, *a, x, false);
		return true;
	case SKF_AD_NLATTR_NEST:
		*a = nla_search(pkt, *a, x, true);
		return true;
	case SKF_AD_CPU:
		if (*pkt->cpu == SOCKTAB__CPU_UNASKED)
			*pkt->cpu = socktab__rx_cpu();
		cpu = *pkt->cpu;
		if (cpu < 0)
			return false;
		*a = (uint32_t)cpu;
		return true;
	case SKF_AD_ALU_XOR_X:
		*a ^= x;
		return true;
	case SKF_AD_PAY_OFFSET:
		/* __skb_get_poff() with the transport header behind skb->data: the dissector's
		 * transport offset is min((u16)-hdrlen, skb->len), then UDP adds its header; TCP's
		 * data offset byte lies past the payload and is not added. */
		if (!pkt->tcp) {
			*a = (pkt->len < 65528 ? pkt->len : 65528) + 8;
			return true;
		}
		if (pkt->len >= 65536 - 60) /* (u16)-hdrlen is 65476 to 65516: unknown */
			return false;
		*a = pkt->len;
		return true;
	case SKF_AD_RANDOM:
		*a = socktab__random_below(1u << 16) << 16 | socktab__random_below(1u << 16);
		return true;
	}
	return false; /* IFINDEX, HATYPE, MARK, QUEUE, RXHASH: fields of the sk_buff */
}

bool socktab__cbpf_run(const struct sock_filter *f, uint32_t len,
		       const struct socktab__cbpf_pkt *pkt, uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, v;
	enum cbpf_load ld;

	/* A checked program returns before its end and jumps only forward within it. */
	for (uint32_t pc = 0; pc < len; pc++) {
		const struct sock_filter *fp = &f[pc];
		uint32_t k = fp->k;

		switch (fp->code) {
		case BPF_ALU | BPF_ADD | BPF_K: a += k; continue;
		case BPF_ALU | BPF_ADD | BPF_X: a += x; continue;
		case BPF_ALU | BPF_SUB | BPF_K: a -= k; continue;
		case BPF_ALU | BPF_SUB | BPF_X: a -= x; continue;
		case BPF_ALU | BPF_MUL | BPF_K: a *= k; continue;
		case BPF_ALU | BPF_MUL | BPF_X: a *= x; continue;
		case BPF_ALU | BPF_DIV | BPF_K: a /= k; continue;
		case BPF_ALU | BPF_MOD | BPF_K: a %= k; continue;
		case BPF_ALU | BPF_DIV | BPF_X: case BPF_ALU | BPF_MOD | BPF_X:
			if (!x) {
				*ret = 0;
				return true;
			}
			a = BPF_OP(fp->code) == BPF_DIV ? a / x : a % x;
			continue;
		case BPF_ALU | BPF_AND | BPF_K: a &= k; continue;
		case BPF_ALU | BPF_AND | BPF_X: a &= x; continue;
		case BPF_ALU | BPF_OR | BPF_K: a |= k; continue;
		case BPF_ALU | BPF_OR | BPF_X: a |= x; continue;
		case BPF_ALU | BPF_XOR | BPF_K: a ^= k; continue;
		case BPF_ALU | BPF_XOR | BPF_X: a ^= x; continue;
		case BPF_ALU | BPF_LSH | BPF_K: a <<= k & 31; continue;
		case BPF_ALU | BPF_LSH | BPF_X: a <<= x & 31; continue;
		case BPF_ALU | BPF_RSH | BPF_K: a >>= k & 31; continue;
		case BPF_ALU | BPF_RSH | BPF_X: a >>= x & 31; continue;
		case BPF_ALU | BPF_NEG: a = 0u - a; continue;
		case BPF_LD | BPF_W | BPF_ABS: case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			if (k >= (uint32_t)SKF_AD_OFF) {
				if (!ancillary(pkt, k, &a, x))
					return false;
				continue;
			}
			ld = load(pkt, (int32_t)k, BPF_SIZE(fp->code) == BPF_W ? 4 :
						   BPF_SIZE(fp->code) == BPF_H ? 2 : 1, &v);
			break;
		case BPF_LD | BPF_W | BPF_IND: case BPF_LD | BPF_H | BPF_IND:
		case BPF_LD | BPF_B | BPF_IND:
			ld = load(pkt, (int32_t)(x + k), BPF_SIZE(fp->code) == BPF_W ? 4 :
							 BPF_SIZE(fp->code) == BPF_H ? 2 : 1, &v);
			break;
		case BPF_LDX | BPF_B | BPF_MSH: /* X = 4 * (byte & 0xf), A kept */
			ld = load(pkt, (int32_t)k, 1, &v);
			if (ld != LOAD_OK)
				break;
			x = (v & 0xf) << 2;
			continue;
		case BPF_LD | BPF_W | BPF_LEN: a = pkt->len; continue;
		case BPF_LDX | BPF_W | BPF_LEN: x = pkt->len; continue;
		case BPF_LD | BPF_IMM: a = k; continue;
		case BPF_LDX | BPF_IMM: x = k; continue;
		case BPF_LD | BPF_MEM: a = mem[k & (BPF_MEMWORDS - 1)]; continue;
		case BPF_LDX | BPF_MEM: x = mem[k & (BPF_MEMWORDS - 1)]; continue;
		case BPF_ST: mem[k & (BPF_MEMWORDS - 1)] = a; continue;
		case BPF_STX: mem[k & (BPF_MEMWORDS - 1)] = x; continue;
		case BPF_MISC | BPF_TAX: x = a; continue;
		case BPF_MISC | BPF_TXA: a = x; continue;
		case BPF_RET | BPF_K: *ret = k; return true;
		case BPF_RET | BPF_A: *ret = a; return true;
		case BPF_JMP | BPF_JA: pc += k; continue;
		case BPF_JMP | BPF_JEQ | BPF_K: pc += a == k ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JEQ | BPF_X: pc += a == x ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JGT | BPF_K: pc += a > k ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JGT | BPF_X: pc += a > x ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JGE | BPF_K: pc += a >= k ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JGE | BPF_X: pc += a >= x ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JSET | BPF_K: pc += a & k ? fp->jt : fp->jf; continue;
		case BPF_JMP | BPF_JSET | BPF_X: pc += a & x ? fp->jt : fp->jf; continue;
		default: /* the check lets none through */
			*ret = 0;
			return true;
		}
		/* A packet load into A, or BPF_MSH's that failed. */
		if (ld == LOAD_NONE)
			return false;
		if (ld == LOAD_END) {
			*ret = 0;
			return true;
		}
		a = v;
	}
	*ret = 0;
	return true;
}
