/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Classic BPF of SO_ATTACH_REUSEPORT_CBPF with the kernel's semantics (src/cbpf.c): which
 * programs attach (bpf_check_classic, the eBPF conversion's jump offsets, the optmem_max size),
 * what they compute (32-bit ALU, shifts by X masked to 5 bits, division by X = 0, indirect
 * offsets truncated to 32 bits, loads past the payload, header offsets, every ancillary load),
 * and the member a lookup gets through the socket API. The expected values and errnos were read
 * on Linux 6.18.44 (x86_64, lo in a fresh namespace) with the same programs.
 */
#include <linux/if_ether.h>

#include "cbpf.h"
#include "check.h"
#include "reuseport.h"

#define STMT(c, k) ((struct sock_filter){ (uint16_t)(c), 0, 0, (uint32_t)(k) })
#define JUMP(c, k, t, f) ((struct sock_filter){ (uint16_t)(c), (t), (f), (uint32_t)(k) })
#define RET_A STMT(BPF_RET | BPF_A, 0)
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define AD(x) ((uint32_t)(SKF_AD_OFF + (x)))

static struct sock_filter big[BPF_MAXINSNS + 2];

/* Run @f (which must pass the check) over @data/@len as a UDP datagram on CPU @cpu: its value,
 * or -1 when it has none. */
static long long run_cpu(const struct sock_filter *f, uint32_t n, const void *data, uint32_t len,
			 int cpu)
{
	struct socktab__cbpf_pkt pkt = { .data = data, .len = len, .tcp = false,
					 .l3proto = ETH_P_IP, .cpu = &cpu };
	uint32_t v = 0xdeadbeef;

	if (socktab__cbpf_check(f, n))
		return -2;
	return socktab__cbpf_run(f, n, &pkt, &v) ? (long long)v : -1;
}

static long long run(const struct sock_filter *f, uint32_t n, const void *data, uint32_t len)
{
	return run_cpu(f, n, data, len, 0);
}

/* bpf_check_classic: what the kernel refuses with EINVAL, and what it takes. */
TEST(check_classic)
{
	const struct sock_filter ok[] = { RET_A };
	const struct sock_filter noret[] = { STMT(BPF_LD | BPF_IMM, 1) };
	const struct sock_filter bad[][2] = {
		{ STMT(0xff, 0), RET_A },
		{ STMT(BPF_LDX | BPF_W | BPF_ABS, 0), RET_A }, /* seccomp's load */
		{ STMT(BPF_ALU | BPF_DIV | BPF_K, 0), RET_A },
		{ STMT(BPF_ALU | BPF_MOD | BPF_K, 0), RET_A },
		{ STMT(BPF_ALU | BPF_LSH | BPF_K, 32), RET_A },
		{ STMT(BPF_ALU | BPF_RSH | BPF_K, 32), RET_A },
		{ STMT(BPF_ST, 16), RET_A },
		{ STMT(BPF_STX, 16), RET_A },
		{ STMT(BPF_JMP | BPF_JA, 1), RET_A },
		{ JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), RET_A },
		{ JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 1), RET_A },
		{ STMT(BPF_LD | BPF_MEM, 3), RET_A },       /* never written */
		{ STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_MAX)), RET_A },
		{ STMT(BPF_LD | BPF_B | BPF_ABS, AD(1)), RET_A },
		{ STMT(BPF_LD | BPF_H | BPF_ABS, 0xffffffffu), RET_A },
		{ STMT(BPF_LD | BPF_W | BPF_ABS, 0xfffff100u), RET_A },
	};
	/* A cell written on one path only is unreadable where the paths meet. */
	const struct sock_filter onepath[] = {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), STMT(BPF_ST, 2), STMT(BPF_LDX | BPF_MEM, 2),
		RET_A,
	};
	const struct sock_filter bothpaths[] = {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2), STMT(BPF_ST, 2), STMT(BPF_JMP | BPF_JA, 1),
		STMT(BPF_STX, 2), STMT(BPF_LDX | BPF_MEM, 2), RET_A,
	};
	/* The kernel takes every known ancillary offset, any size, and the header offsets. */
	const uint32_t anc[] = { SKF_AD_PROTOCOL, SKF_AD_PKTTYPE, SKF_AD_IFINDEX, SKF_AD_NLATTR,
				 SKF_AD_NLATTR_NEST, SKF_AD_MARK, SKF_AD_QUEUE, SKF_AD_HATYPE,
				 SKF_AD_RXHASH, SKF_AD_CPU, SKF_AD_ALU_XOR_X, SKF_AD_VLAN_TAG,
				 SKF_AD_VLAN_TAG_PRESENT, SKF_AD_PAY_OFFSET, SKF_AD_RANDOM,
				 SKF_AD_VLAN_TPID };
	const uint32_t taken[] = { (uint32_t)SKF_NET_OFF, (uint32_t)SKF_NET_OFF + 9,
				   (uint32_t)SKF_LL_OFF + 12, 0x80000000u, 0x7fffffffu };

	CHECK_EQ(socktab__cbpf_check(NULL, 1), -EINVAL);
	CHECK_EQ(socktab__cbpf_check(ok, 0), -EINVAL);
	CHECK_EQ(socktab__cbpf_check(ok, 1), 0);
	CHECK_EQ(socktab__cbpf_check(noret, 1), -EINVAL);
	for (uint32_t i = 0; i < N(bad); i++) {
		if (socktab__cbpf_check(bad[i], 2) != -EINVAL)
			fprintf(stderr, "bad program %u taken\n", i);
		CHECK_EQ(socktab__cbpf_check(bad[i], 2), -EINVAL);
	}
	CHECK_EQ(socktab__cbpf_check(onepath, N(onepath)), -EINVAL);
	CHECK_EQ(socktab__cbpf_check(bothpaths, N(bothpaths)), 0);
	for (uint32_t i = 0; i < N(anc); i++) {
		for (uint16_t sz = BPF_W; sz <= BPF_B; sz += BPF_H) {
			const struct sock_filter f[] = { STMT(BPF_LD | sz | BPF_ABS, AD(anc[i])),
							 RET_A };

			CHECK_EQ(socktab__cbpf_check(f, 2), 0);
		}
	}
	for (uint32_t i = 0; i < N(taken); i++) {
		const struct sock_filter f[] = { STMT(BPF_LD | BPF_B | BPF_ABS, taken[i]), RET_A };
		const struct sock_filter g[] = { STMT(BPF_LD | BPF_W | BPF_IND, taken[i]), RET_A };
		const struct sock_filter h[] = { STMT(BPF_LDX | BPF_B | BPF_MSH, taken[i]), RET_A };

		CHECK_EQ(socktab__cbpf_check(f, 2), 0);
		CHECK_EQ(socktab__cbpf_check(g, 2), 0);
		CHECK_EQ(socktab__cbpf_check(h, 2), 0);
	}
	/* Not ancillary outside BPF_ABS: an indirect load or BPF_MSH at SKF_AD_OFF + 1. */
	{
		const struct sock_filter g[] = { STMT(BPF_LD | BPF_W | BPF_IND, AD(1)), RET_A };
		const struct sock_filter h[] = { STMT(BPF_LDX | BPF_B | BPF_MSH, AD(1)), RET_A };

		CHECK_EQ(socktab__cbpf_check(g, 2), 0);
		CHECK_EQ(socktab__cbpf_check(h, 2), 0);
	}
	/* BPF_MAXINSNS instructions, and one more. */
	for (uint32_t i = 0; i < BPF_MAXINSNS; i++)
		big[i] = STMT(BPF_LD | BPF_IMM, i);
	big[BPF_MAXINSNS - 1] = RET_A;
	CHECK_EQ(socktab__cbpf_check(big, BPF_MAXINSNS), 0);
	big[BPF_MAXINSNS] = RET_A;
	CHECK_EQ(socktab__cbpf_check(big, BPF_MAXINSNS + 1), -EINVAL);
}

/* @n copies of @op, then @m of @op2, then @last: the check's verdict. */
static int check_run_of(uint32_t n, struct sock_filter op, uint32_t m, struct sock_filter op2,
			struct sock_filter last)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		big[k++] = op;
	for (uint32_t i = 0; i < m; i++)
		big[k++] = op2;
	big[k++] = last;
	return socktab__cbpf_check(big, k);
}

/*
 * The conversion: a program whose eBPF form exceeds net.core.optmem_max (131072 bytes with a
 * 96-byte header: 16372 instructions) is -ENOMEM; a jump whose offset does not fit 16 bits in
 * either pass is -EINVAL, checked first. Each boundary was found on the kernel.
 */
TEST(check_conversion)
{
	const struct sock_filter divx = STMT(BPF_ALU | BPF_DIV | BPF_X, 0);
	const struct sock_filter addx = STMT(BPF_ALU | BPF_ADD | BPF_X, 0);
	const struct sock_filter ld0 = STMT(BPF_LD | BPF_W | BPF_ABS, 0);
	const struct sock_filter ind0 = STMT(BPF_LD | BPF_W | BPF_IND, 0);
	const struct sock_filter ret0 = STMT(BPF_RET | BPF_K, 0);

	/* 3 + 5 per division + 1 per addition + 2: 16372 fits, 16373 does not. */
	CHECK_EQ(check_run_of(3272, divx, 7, addx, ret0), 0);
	CHECK_EQ(check_run_of(3272, divx, 8, addx, ret0), -ENOMEM);
	CHECK_EQ(check_run_of(3273, divx, 0, addx, ret0), 0);
	CHECK_EQ(check_run_of(3274, divx, 0, addx, ret0), -ENOMEM);
	/* 13 per `ld [0]` (a direct load and the helper), 8 per `ld [x + 0]`, 4 more of
	 * prologue with packet loads. */
	CHECK_EQ(check_run_of(1258, ld0, 0, ld0, ret0), 0);
	CHECK_EQ(check_run_of(1259, ld0, 0, ld0, ret0), -ENOMEM);
	CHECK_EQ(check_run_of(2045, ind0, 0, ind0, ret0), 0);
	CHECK_EQ(check_run_of(2046, ind0, 0, ind0, ret0), -ENOMEM);
	/* A jump at eBPF address 32767 (7 + 13 * 2520) still converts; at 32780 it fails. */
	CHECK_EQ(check_run_of(2520, ld0, 1, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0), ret0),
		 -ENOMEM);
	CHECK_EQ(check_run_of(2521, ld0, 1, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0), ret0),
		 -EINVAL);
	/* Its second half (the JA of "jset jt 1 jf 1") or the jump after a negative constant's
	 * move sits one further: 32767 fails. */
	for (uint32_t i = 0; i < 2519; i++)
		big[i] = ld0;
	big[2519] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 0, 1, 1);
	big[2520] = ret0;
	big[2521] = ret0;
	CHECK_EQ(socktab__cbpf_check(big, 2522), -ENOMEM);
	big[2519] = ld0;
	big[2520] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 0, 1, 1);
	big[2521] = ret0;
	big[2522] = ret0;
	CHECK_EQ(socktab__cbpf_check(big, 2523), -EINVAL);
	CHECK_EQ(check_run_of(2519, ld0, 1, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x80000000u, 0, 0),
			      ret0), -ENOMEM);
	CHECK_EQ(check_run_of(2520, ld0, 1, JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x80000000u, 0, 0),
			      ret0), -EINVAL);
	/* A forward jump over 13 * 2520 instructions fits the second pass; over 13 * 2521 not. */
	big[0] = STMT(BPF_JMP | BPF_JA, 2520);
	for (uint32_t i = 1; i <= 2520; i++)
		big[i] = ld0;
	big[2521] = ret0;
	CHECK_EQ(socktab__cbpf_check(big, 2522), -ENOMEM);
	big[0] = STMT(BPF_JMP | BPF_JA, 2521);
	big[2521] = ld0;
	big[2522] = ret0;
	CHECK_EQ(socktab__cbpf_check(big, 2523), -EINVAL);
}

/* ALU: 32 bits, shifts by X masked to 5 bits, division and modulo by X = 0 end with 0. */
TEST(run_alu)
{
	const struct sock_filter shl[] = { STMT(BPF_LD | BPF_IMM, 5), STMT(BPF_LDX | BPF_IMM, 33),
					   STMT(BPF_ALU | BPF_LSH | BPF_X, 0), RET_A };
	const struct sock_filter shr[] = { STMT(BPF_LD | BPF_IMM, 6), STMT(BPF_LDX | BPF_IMM, 33),
					   STMT(BPF_ALU | BPF_RSH | BPF_X, 0), RET_A };
	const struct sock_filter sh32[] = { STMT(BPF_LD | BPF_IMM, 7), STMT(BPF_LDX | BPF_IMM, 32),
					    STMT(BPF_ALU | BPF_LSH | BPF_X, 0), RET_A };
	const struct sock_filter div0[] = { STMT(BPF_LD | BPF_IMM, 9), STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
					    STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter mod0[] = { STMT(BPF_LD | BPF_IMM, 9), STMT(BPF_ALU | BPF_MOD | BPF_X, 0),
					    STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter divx[] = { STMT(BPF_LD | BPF_IMM, 9), STMT(BPF_LDX | BPF_IMM, 4),
					    STMT(BPF_ALU | BPF_DIV | BPF_X, 0), STMT(BPF_ST, 0),
					    STMT(BPF_LD | BPF_IMM, 9), STMT(BPF_ALU | BPF_MOD | BPF_X, 0),
					    STMT(BPF_MISC | BPF_TAX, 0), STMT(BPF_LD | BPF_MEM, 0),
					    STMT(BPF_ALU | BPF_MUL | BPF_K, 10),
					    STMT(BPF_ALU | BPF_ADD | BPF_X, 0), RET_A };
	const struct sock_filter wrap[] = { STMT(BPF_LD | BPF_IMM, 0x80000000u),
					    STMT(BPF_ALU | BPF_MUL | BPF_K, 2),
					    STMT(BPF_ALU | BPF_SUB | BPF_K, 1), RET_A };
	const struct sock_filter neg[] = { STMT(BPF_LD | BPF_IMM, 1), STMT(BPF_ALU | BPF_NEG, 0),
					   STMT(BPF_ALU | BPF_XOR | BPF_K, 0xff000000u),
					   STMT(BPF_ALU | BPF_OR | BPF_K, 0x100),
					   STMT(BPF_ALU | BPF_AND | BPF_K, 0x00ffff00u), RET_A };
	const struct sock_filter tax[] = { STMT(BPF_LD | BPF_IMM, 21), STMT(BPF_MISC | BPF_TAX, 0),
					   STMT(BPF_LD | BPF_IMM, 0), STMT(BPF_MISC | BPF_TXA, 0),
					   STMT(BPF_ALU | BPF_SUB | BPF_X, 0), RET_A };

	CHECK_EQ(run(shl, N(shl), NULL, 0), 10);
	CHECK_EQ(run(shr, N(shr), NULL, 0), 3);
	CHECK_EQ(run(sh32, N(sh32), NULL, 0), 7);
	CHECK_EQ(run(div0, N(div0), NULL, 0), 0);
	CHECK_EQ(run(mod0, N(mod0), NULL, 0), 0);
	CHECK_EQ(run(divx, N(divx), NULL, 0), 21); /* 9 / 4 * 10 + 9 % 4 */
	CHECK_EQ(run(wrap, N(wrap), NULL, 0), 0xffffffffu);
	CHECK_EQ(run(neg, N(neg), NULL, 0), 0x00ffff00u);
	CHECK_EQ(run(tax, N(tax), NULL, 0), 0);
}

/* Jumps compare unsigned 32-bit values; JA skips. */
TEST(run_jumps)
{
	const struct sock_filter jge[] = { STMT(BPF_LD | BPF_IMM, 0x80000000u),
					   JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x7fffffffu, 0, 1),
					   STMT(BPF_RET | BPF_K, 1), STMT(BPF_RET | BPF_K, 2) };
	const struct sock_filter jgt[] = { STMT(BPF_LD | BPF_IMM, 5), STMT(BPF_LDX | BPF_IMM, 0xffffffffu),
					   JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 1),
					   STMT(BPF_RET | BPF_K, 1), STMT(BPF_RET | BPF_K, 2) };
	const struct sock_filter jeq[] = { STMT(BPF_LD | BPF_IMM, 0xfffffffeu),
					   JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xfffffffeu, 1, 0),
					   STMT(BPF_RET | BPF_K, 1), STMT(BPF_RET | BPF_K, 2) };
	const struct sock_filter jset[] = { STMT(BPF_LD | BPF_IMM, 6), STMT(BPF_LDX | BPF_IMM, 1),
					    JUMP(BPF_JMP | BPF_JSET | BPF_X, 0, 0, 2),
					    STMT(BPF_JMP | BPF_JA, 1), STMT(BPF_RET | BPF_K, 7),
					    JUMP(BPF_JMP | BPF_JSET | BPF_K, 4, 0, 1),
					    STMT(BPF_RET | BPF_K, 8), STMT(BPF_RET | BPF_K, 9) };

	CHECK_EQ(run(jge, N(jge), NULL, 0), 1);
	CHECK_EQ(run(jgt, N(jgt), NULL, 0), 2);
	CHECK_EQ(run(jeq, N(jeq), NULL, 0), 2);
	CHECK_EQ(run(jset, N(jset), NULL, 0), 8);
}

/* Packet loads: big-endian, 0 past the payload, indirect offsets truncated to 32 bits. */
TEST(run_loads)
{
	const unsigned char pl[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	const struct sock_filter w[] = { STMT(BPF_LD | BPF_W | BPF_ABS, 6), RET_A };
	const struct sock_filter w7[] = { STMT(BPF_LD | BPF_W | BPF_ABS, 7), RET_A };
	const struct sock_filter h[] = { STMT(BPF_LD | BPF_H | BPF_ABS, 8), RET_A };
	const struct sock_filter h9[] = { STMT(BPF_LD | BPF_H | BPF_ABS, 9), RET_A };
	const struct sock_filter b10[] = { STMT(BPF_LD | BPF_IMM, 5),
					   STMT(BPF_LD | BPF_B | BPF_ABS, 10), STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter far[] = { STMT(BPF_LD | BPF_B | BPF_ABS, 0x7fffffffu), RET_A };
	const struct sock_filter below_ll[] = { STMT(BPF_LD | BPF_B | BPF_ABS, 0x80000000u),
						STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter ind[] = { STMT(BPF_LDX | BPF_IMM, 0xffffffffu),
					   STMT(BPF_LD | BPF_B | BPF_IND, 2), RET_A };
	const struct sock_filter ind_neg_k[] = { STMT(BPF_LDX | BPF_IMM, 5),
						 STMT(BPF_LD | BPF_B | BPF_IND, 0xffffffffu), RET_A };
	const struct sock_filter ind_wrap[] = { STMT(BPF_LDX | BPF_IMM, 0x80000000u),
						STMT(BPF_LD | BPF_H | BPF_IND, 0x80000001u), RET_A };
	const struct sock_filter ind_past[] = { STMT(BPF_LDX | BPF_IMM, 8),
						STMT(BPF_LD | BPF_W | BPF_IND, 0), RET_A };
	const struct sock_filter len[] = { STMT(BPF_LD | BPF_W | BPF_LEN, 0),
					   STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
					   STMT(BPF_ALU | BPF_ADD | BPF_X, 0), RET_A };
	const struct sock_filter msh[] = { STMT(BPF_LD | BPF_IMM, 77),
					   STMT(BPF_LDX | BPF_B | BPF_MSH, 2), RET_A };
	const struct sock_filter msh_x[] = { STMT(BPF_LDX | BPF_B | BPF_MSH, 9),
					     STMT(BPF_MISC | BPF_TXA, 0), RET_A };
	const struct sock_filter msh_past[] = { STMT(BPF_LD | BPF_IMM, 77),
						STMT(BPF_LDX | BPF_B | BPF_MSH, 30), RET_A };

	CHECK_EQ(run(w, N(w), pl, sizeof(pl)), 0x0708090a);
	CHECK_EQ(run(w7, N(w7), pl, sizeof(pl)), 0);
	CHECK_EQ(run(h, N(h), pl, sizeof(pl)), 0x090a);
	CHECK_EQ(run(h9, N(h9), pl, sizeof(pl)), 0);
	CHECK_EQ(run(b10, N(b10), pl, sizeof(pl)), 0); /* the program ends: not RET #3 */
	CHECK_EQ(run(b10, N(b10), NULL, 0), 0);
	CHECK_EQ(run(far, N(far), pl, sizeof(pl)), 0);
	CHECK_EQ(run(below_ll, N(below_ll), pl, sizeof(pl)), 0);
	CHECK_EQ(run(ind, N(ind), pl, sizeof(pl)), 2);       /* X + 2 = 1 */
	CHECK_EQ(run(ind_neg_k, N(ind_neg_k), pl, sizeof(pl)), 5); /* X - 1 = 4 */
	CHECK_EQ(run(ind_wrap, N(ind_wrap), pl, sizeof(pl)), 0x0203);
	CHECK_EQ(run(ind_past, N(ind_past), pl, sizeof(pl)), 0);
	CHECK_EQ(run(len, N(len), pl, sizeof(pl)), 20);
	CHECK_EQ(run(len, N(len), NULL, 0), 0);
	CHECK_EQ(run(msh, N(msh), pl, sizeof(pl)), 77);      /* A is kept */
	CHECK_EQ(run(msh_x, N(msh_x), pl, sizeof(pl)), 40);  /* 4 * (10 & 0xf) */
	CHECK_EQ(run(msh_past, N(msh_past), pl, sizeof(pl)), 0);
}

/* Header offsets: socktab has no headers, so no value, but far past every packet the kernel's 0. */
TEST(run_header_offsets)
{
	const unsigned char pl[4] = { 1, 2, 3, 4 };
	const uint32_t none[] = { (uint32_t)SKF_NET_OFF, (uint32_t)SKF_NET_OFF + 9,
				  (uint32_t)SKF_NET_OFF + 28, (uint32_t)SKF_LL_OFF,
				  (uint32_t)SKF_LL_OFF + 12, (uint32_t)SKF_NET_OFF + 0x1ffff };
	/* 128 KiB past the link-layer header (the kernel's 0 on lo) and further. */
	const uint32_t past[] = { (uint32_t)SKF_LL_OFF + 0x20000, (uint32_t)SKF_NET_OFF - 1,
				  (uint32_t)SKF_NET_OFF + 0x20000 };
	/* X = 0, k = SKF_AD_OFF + SKF_AD_CPU: a network-header offset of 0xff024, past the end. */
	const struct sock_filter ind_far[] = { STMT(BPF_LD | BPF_IMM, 9),
					       STMT(BPF_LD | BPF_B | BPF_IND, AD(SKF_AD_CPU)),
					       STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter msh_far[] = { STMT(BPF_LDX | BPF_B | BPF_MSH, AD(SKF_AD_CPU)),
					       STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter below_ll[] = { STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_LL_OFF - 1),
						STMT(BPF_RET | BPF_K, 3) };
	const struct sock_filter ind_net[] = { STMT(BPF_LDX | BPF_IMM, 9),
					       STMT(BPF_LD | BPF_B | BPF_IND, (uint32_t)SKF_NET_OFF),
					       RET_A };
	const struct sock_filter msh_net[] = { STMT(BPF_LDX | BPF_B | BPF_MSH, (uint32_t)SKF_NET_OFF),
					       STMT(BPF_RET | BPF_K, 3) };

	for (uint32_t i = 0; i < N(none); i++) {
		const struct sock_filter f[] = { STMT(BPF_LD | BPF_B | BPF_ABS, none[i]), RET_A };

		CHECK_EQ(run(f, N(f), pl, sizeof(pl)), -1);
	}
	for (uint32_t i = 0; i < N(past); i++) {
		const struct sock_filter f[] = { STMT(BPF_LD | BPF_B | BPF_ABS, past[i]),
						 STMT(BPF_RET | BPF_K, 3) };

		CHECK_EQ(run(f, N(f), pl, sizeof(pl)), 0);
	}
	CHECK_EQ(run(ind_net, N(ind_net), pl, sizeof(pl)), -1);
	CHECK_EQ(run(msh_net, N(msh_net), pl, sizeof(pl)), -1);
	CHECK_EQ(run(ind_far, N(ind_far), pl, sizeof(pl)), 0);
	CHECK_EQ(run(msh_far, N(msh_far), pl, sizeof(pl)), 0);
	CHECK_EQ(run(below_ll, N(below_ll), pl, sizeof(pl)), 0);
}

static long long anc_pkt(uint32_t ad, uint16_t size, uint32_t a0, uint32_t x0,
			 struct socktab__cbpf_pkt *pkt)
{
	const struct sock_filter f[] = { STMT(BPF_LD | BPF_IMM, a0), STMT(BPF_LDX | BPF_IMM, x0),
					 STMT(BPF_LD | size | BPF_ABS, AD(ad)), RET_A };
	uint32_t v;

	if (socktab__cbpf_check(f, N(f)))
		return -2;
	return socktab__cbpf_run(f, N(f), pkt, &v) ? (long long)v : -1;
}

static long long anc(uint32_t ad, uint16_t size, uint32_t a0, uint32_t x0, const void *data,
		     uint32_t len, bool tcp)
{
	int cpu = 3;
	struct socktab__cbpf_pkt pkt = { .data = data, .len = len, .tcp = tcp,
					 .l3proto = ETH_P_IP, .cpu = &cpu };

	return anc_pkt(ad, size, a0, x0, &pkt);
}

/* Ancillary loads: what socktab knows, the constants of a socket lookup, and no value for the
 * sk_buff's own fields. The value is never truncated to the load's size. */
TEST(run_ancillary)
{
	const unsigned char pl[10] = { 0 };
	int cpu = SOCKTAB__CPU_UNASKED;
	struct socktab__cbpf_pkt pkt = { .data = pl, .len = 10, .l3proto = -1, .cpu = &cpu };
	uint32_t seen_or = 0, seen_and = 0xffffffffu, first = 0;
	bool differ = false;

	CHECK_EQ(anc(SKF_AD_CPU, BPF_W, 0, 0, NULL, 0, false), 3);
	CHECK_EQ(anc(SKF_AD_CPU, BPF_B, 0, 0, NULL, 0, false), 3);
	/* Unasked: the thread's receiving CPU, which the lookup then keeps. */
	CHECK_EQ(socktab_set_rx_cpu(300), 0);
	CHECK_EQ(anc_pkt(SKF_AD_CPU, BPF_B, 0, 0, &pkt), 300);
	CHECK_EQ(cpu, 300);
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
	cpu = -1; /* no CPU known */
	CHECK_EQ(anc_pkt(SKF_AD_CPU, BPF_W, 0, 0, &pkt), -1);
	CHECK_EQ(anc_pkt(SKF_AD_PROTOCOL, BPF_W, 0, 0, &pkt), -1); /* dual-stack group */
	CHECK_EQ(anc(SKF_AD_PROTOCOL, BPF_B, 0, 0, NULL, 0, false), ETH_P_IP);
	CHECK_EQ(anc(SKF_AD_ALU_XOR_X, BPF_W, 1, 3, NULL, 0, false), 2);
	CHECK_EQ(anc(SKF_AD_PKTTYPE, BPF_W, 9, 9, NULL, 0, false), 0);
	CHECK_EQ(anc(SKF_AD_VLAN_TAG, BPF_H, 9, 9, NULL, 0, false), 0);
	CHECK_EQ(anc(SKF_AD_VLAN_TAG_PRESENT, BPF_W, 9, 9, NULL, 0, false), 0);
	CHECK_EQ(anc(SKF_AD_VLAN_TPID, BPF_W, 9, 9, NULL, 0, false), 0);
	/* The flow dissector's payload offset: UDP adds its header, TCP nothing. */
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, pl, 10, false), 18);
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, NULL, 0, false), 8);
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, pl, 70000, false), 65536);
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, pl, 10, true), 10);
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, NULL, 0, true), 0);
	CHECK_EQ(anc(SKF_AD_PAY_OFFSET, BPF_W, 0, 0, pl, 65476, true), -1);
	/* The sk_buff's own fields. */
	CHECK_EQ(anc(SKF_AD_IFINDEX, BPF_W, 0, 0, NULL, 0, false), -1);
	CHECK_EQ(anc(SKF_AD_HATYPE, BPF_W, 0, 0, NULL, 0, false), -1);
	CHECK_EQ(anc(SKF_AD_MARK, BPF_W, 0, 0, NULL, 0, false), -1);
	CHECK_EQ(anc(SKF_AD_QUEUE, BPF_W, 0, 0, NULL, 0, false), -1);
	CHECK_EQ(anc(SKF_AD_RXHASH, BPF_W, 0, 0, NULL, 0, false), -1);
	/* Random: 32 bits that change. */
	for (int i = 0; i < 64; i++) {
		long long r = anc(SKF_AD_RANDOM, BPF_B, 0, 0, NULL, 0, false);

		CHECK(r >= 0);
		if (i == 0)
			first = (uint32_t)r;
		differ |= (uint32_t)r != first;
		seen_or |= (uint32_t)r;
		seen_and &= (uint32_t)r;
	}
	CHECK(differ);
	CHECK_EQ(seen_or, 0xffffffffu);
	CHECK_EQ(seen_and, 0);
}

/* Netlink attribute searches over the payload (the kernel's values for the same bytes). */
TEST(run_nlattr)
{
	/* At 0: length 8, type 5; at 8: length 6, type 7 with NLA_F_NET_BYTEORDER; at 16:
	 * length 4, type 9. Then a nest: length 20, type 1, holding types 5 and 6. */
	unsigned char nl[20] = { 0 }, ns[24] = { 0 }, bad[12] = { 0 };
	uint16_t v;

	v = 8; memcpy(nl + 0, &v, 2);
	v = 5; memcpy(nl + 2, &v, 2);
	v = 6; memcpy(nl + 8, &v, 2);
	v = 0x4007; memcpy(nl + 10, &v, 2);
	v = 4; memcpy(nl + 16, &v, 2);
	v = 9; memcpy(nl + 18, &v, 2);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 5, nl, 20, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 7, nl, 20, false), 8);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 9, nl, 20, false), 16);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 3, nl, 20, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 0x4007, nl, 20, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 8, 9, nl, 20, false), 16);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 8, 5, nl, 20, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 17, 9, nl, 20, false), 0); /* A > len - 4 */
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 9, nl, 3, false), 0);   /* len < 4 */
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 9, nl, 19, false), 0);  /* the last one cut */
	v = 20; memcpy(ns + 0, &v, 2);
	v = 1; memcpy(ns + 2, &v, 2);
	v = 8; memcpy(ns + 4, &v, 2);
	v = 5; memcpy(ns + 6, &v, 2);
	v = 8; memcpy(ns + 12, &v, 2);
	v = 6; memcpy(ns + 14, &v, 2);
	CHECK_EQ(anc(SKF_AD_NLATTR_NEST, BPF_W, 0, 4, ns, 24, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR_NEST, BPF_W, 0, 5, ns, 24, false), 4);
	CHECK_EQ(anc(SKF_AD_NLATTR_NEST, BPF_W, 0, 6, ns, 24, false), 12);
	CHECK_EQ(anc(SKF_AD_NLATTR_NEST, BPF_W, 0, 7, ns, 24, false), 0);
	CHECK_EQ(anc(SKF_AD_NLATTR_NEST, BPF_W, 0, 6, ns, 19, false), 0); /* nest cut */
	/* An attribute shorter than its header ends the search. */
	v = 2; memcpy(bad + 0, &v, 2);
	v = 9; memcpy(bad + 2, &v, 2);
	CHECK_EQ(anc(SKF_AD_NLATTR, BPF_W, 0, 9, bad, 12, false), 0);
}

/* ---- through the socket API ---- */

static int attach(struct socktab_sock *sk, const struct sock_filter *f, uint32_t n)
{
	struct sock_fprog fp = { .len = (unsigned short)n, .filter = (struct sock_filter *)f };

	return socktab_setsockopt(sk, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp));
}

static struct socktab_sock *lookup_udp(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk =
		socktab_lookup_udp4(net, check_ip4("127.0.0.1"), htons((uint16_t)sport), check_ip4("127.0.0.1"),
				    htons((uint16_t)dport), SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk); /* only compared; the sockets stay open */
	return sk;
}

static struct socktab_sock *lookup_udp6(struct socktab_net *net, const char *src, int sport,
					const char *dst, int dport)
{
	struct in6_addr s, d;
	struct socktab_sock *sk;

	inet_pton(AF_INET6, src, &s);
	inet_pton(AF_INET6, dst, &d);
	sk = socktab_lookup_udp6(net, &s, htons((uint16_t)sport), &d, htons((uint16_t)dport),
				 SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_sock_put(sk);
	return sk;
}

static void group(struct socktab_net *net, struct socktab_sock **m, int n, int family,
		  const char *addr, int port, int v6only)
{
	for (int i = 0; i < n; i++) {
		m[i] = socktab_socket(net, SOCKTAB_UDP, family);
		check_setint(m[i], SOL_SOCKET, SO_REUSEPORT, 1);
		if (family == AF_INET6) {
			check_setint(m[i], IPPROTO_IPV6, IPV6_V6ONLY, v6only);
			check_bind6(m[i], addr, port);
		} else {
			check_bind4(m[i], addr, port);
		}
	}
}

/* SKF_AD_CPU picks the member of the receiving CPU (the selftest's reuseport_bpf_cpu). */
TEST(api_cpu)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[4];
	const struct sock_filter f[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_CPU)), RET_A };

	group(net, m, 4, AF_INET, "127.0.0.1", 7500, 0);
	CHECK_EQ(attach(m[0], f, N(f)), 0);
	for (int c = 0; c < 4; c++) {
		CHECK_EQ(socktab_set_rx_cpu(c), 0);
		for (int s = 0; s < 8; s++)
			CHECK(lookup_udp(net, 40000 + s, 7500) == m[c]);
	}
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
	for (int i = 0; i < 4; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* A program with no value here (a header byte, the ingress device) leaves the pick to the hash,
 * as an index out of range does. */
TEST(api_no_value_uses_hash)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[4], *byhash[16];
	const struct sock_filter hdr[] = { STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF + 9),
					   RET_A };
	const struct sock_filter ifindex[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_IFINDEX)),
					       STMT(BPF_RET | BPF_K, 0) };
	const struct sock_filter zero[] = { STMT(BPF_RET | BPF_K, 0) };
	int moved = 0;

	group(net, m, 4, AF_INET, "127.0.0.1", 7600, 0);
	for (int s = 0; s < 16; s++)
		byhash[s] = lookup_udp(net, 40000 + s, 7600);
	for (int s = 0; s < 16; s++)
		moved += byhash[s] != m[0];
	CHECK(moved > 0); /* the hash spreads these 4-tuples */
	CHECK_EQ(attach(m[1], hdr, N(hdr)), 0);
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp(net, 40000 + s, 7600) == byhash[s]);
	CHECK_EQ(attach(m[1], ifindex, N(ifindex)), 0);
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp(net, 40000 + s, 7600) == byhash[s]);
	CHECK_EQ(attach(m[1], zero, N(zero)), 0);
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp(net, 40000 + s, 7600) == m[0]);
	for (int i = 0; i < 4; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* SKF_AD_PROTOCOL from the group's family: IPv4, IPv6 with IPV6_V6ONLY; a dual-stack group's
 * packets may be either, so the hash picks. */
TEST(api_protocol)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a[4], *b[4], *c[4], *byhash[16];
	const struct sock_filter f[] = { STMT(BPF_LD | BPF_H | BPF_ABS, AD(SKF_AD_PROTOCOL)),
					 JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 1),
					 STMT(BPF_RET | BPF_K, 1),
					 JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 1),
					 STMT(BPF_RET | BPF_K, 2), STMT(BPF_RET | BPF_K, 3) };

	group(net, a, 4, AF_INET, "127.0.0.1", 7700, 0);
	group(net, b, 4, AF_INET6, "::1", 7700, 1);
	group(net, c, 4, AF_INET6, "::", 7701, 0);
	for (int s = 0; s < 16; s++)
		byhash[s] = lookup_udp6(net, "::1", 40000 + s, "::1", 7701);
	CHECK_EQ(attach(a[0], f, N(f)), 0);
	CHECK_EQ(attach(b[0], f, N(f)), 0);
	CHECK_EQ(attach(c[0], f, N(f)), 0);
	CHECK(lookup_udp(net, 40000, 7700) == a[1]);
	CHECK(lookup_udp6(net, "::1", 40000, "::1", 7700) == b[2]);
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp6(net, "::1", 40000 + s, "::1", 7701) == byhash[s]);
	for (int i = 0; i < 4; i++) {
		socktab_close(a[i]);
		socktab_close(b[i]);
		socktab_close(c[i]);
	}
	socktab_net_free(net);
}

/* SKF_AD_PAY_OFFSET: payload length + 8 for a UDP group, the payload length for TCP. */
TEST(api_pay_offset)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *u[4], *t[4];
	const unsigned char pl[3] = { 9, 9, 9 };
	const struct sock_filter fu[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_PAY_OFFSET)),
					  STMT(BPF_ALU | BPF_SUB | BPF_K, 8), RET_A };
	const struct sock_filter ft[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_PAY_OFFSET)),
					  RET_A };

	group(net, u, 4, AF_INET, "127.0.0.1", 7800, 0);
	for (int i = 0; i < 4; i++) {
		t[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		check_setint(t[i], SOL_SOCKET, SO_REUSEPORT, 1);
		CHECK_EQ(check_bind4(t[i], "127.0.0.1", 7800), 0);
		CHECK_EQ(socktab_listen(t[i], 16), 0);
	}
	CHECK_EQ(attach(u[0], fu, N(fu)), 0);
	CHECK_EQ(attach(t[0], ft, N(ft)), 0);
	for (uint32_t len = 0; len < 4; len++) {
		struct socktab_sock *sk;

		CHECK_EQ(socktab_set_rx_payload(pl, len), 0);
		CHECK(lookup_udp(net, 40000, 7800) == u[len]);
		sk = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.1"),
					 htons(7800), SOCKTAB_LOOPBACK_IFINDEX, 0);
		socktab_sock_put(sk);
		CHECK(sk == t[len]);
	}
	CHECK_EQ(socktab_set_rx_payload(NULL, 0), 0);
	for (int i = 0; i < 4; i++) {
		socktab_close(u[i]);
		socktab_close(t[i]);
	}
	socktab_net_free(net);
}

/* The kernel's attach errors through setsockopt: ancillary loads and header offsets attach;
 * too large a program is -ENOMEM and makes no group. */
TEST(api_attach)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	const struct sock_filter cpu[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_CPU)), RET_A };
	const struct sock_filter ll[] = { STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_LL_OFF), RET_A };
	const struct sock_filter unknown[] = { STMT(BPF_LD | BPF_W | BPF_ABS, AD(SKF_AD_MAX)), RET_A };

	check_setint(s, SOL_SOCKET, SO_REUSEPORT, 1);
	for (uint32_t i = 0; i < BPF_MAXINSNS - 1; i++)
		big[i] = STMT(BPF_ALU | BPF_DIV | BPF_X, 0);
	big[BPF_MAXINSNS - 1] = RET_A;
	CHECK_EQ(attach(s, big, BPF_MAXINSNS), -ENOMEM);
	CHECK_EQ(attach(s, unknown, N(unknown)), -EINVAL);
	CHECK(!atomic_load(&s->cold->reuseport_cb));
	CHECK_EQ(attach(s, cpu, N(cpu)), 0);
	CHECK(atomic_load(&s->cold->reuseport_cb));
	CHECK_EQ(attach(s, ll, N(ll)), 0);
	socktab_close(s);
	socktab_net_free(net);
}

CHECK_MAIN(check_classic, check_conversion, run_alu, run_jumps, run_loads, run_header_offsets,
	   run_ancillary, run_nlattr, api_cpu, api_no_value_uses_hash, api_protocol,
	   api_pay_offset, api_attach)
