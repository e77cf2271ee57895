/*
 * Software pext/pdep for a fixed mask (Hacker's Delight, 7-4 and 7-5):
 * six stages that each move the bits still to go by 1, 2, 4, ... 32 places.
 * The stage masks depend only on the mask, so setup() computes them once
 * and the round is 6 masked shifts per gather or scatter: 2 or 3 dependent
 * operations each instead of a loop over the mask's bits.
 */
#ifndef SEQORCH_BITPERM_NETWORK_H
#define SEQORCH_BITPERM_NETWORK_H

#include <stdint.h>

struct bitperm_net {
	uint64_t mask;
	uint64_t mv[6];		/* bits that move by 1 << i in stage i */
};

static inline void
bitperm_net_init(struct bitperm_net *n, uint64_t m)
{
	uint64_t mk = ~m << 1, mp, mv;
	int i, s;

	n->mask = m;
	for (i = 0; i < 6; i++) {
		/* mp: parity of the zeros of m below each bit (prefix xor) */
		mp = mk;
		for (s = 1; s < 64; s <<= 1)
			mp ^= mp << s;
		mv = mp & m;
		n->mv[i] = mv;
		m = (m ^ mv) | (mv >> (1 << i));
		mk &= ~mp;
	}
}

/* Written out stage by stage: constant shifts, no loop in the round. */
#define BITPERM_NET_EX(n, x, i) \
	((x) = ((x) & ~(n)->mv[i]) | (((x) & (n)->mv[i]) >> (1 << (i))))
#define BITPERM_NET_DEP(n, x, i) \
	((x) = ((x) & ~(n)->mv[i]) | (((x) << (1 << (i))) & (n)->mv[i]))

/* pext(x, mask): the bits of x under mask, packed at the bottom. */
static inline uint64_t
bitperm_net_extract(const struct bitperm_net *n, uint64_t x)
{
	x &= n->mask;
	BITPERM_NET_EX(n, x, 0);
	BITPERM_NET_EX(n, x, 1);
	BITPERM_NET_EX(n, x, 2);
	BITPERM_NET_EX(n, x, 3);
	BITPERM_NET_EX(n, x, 4);
	BITPERM_NET_EX(n, x, 5);
	return x;
}

/* pdep(x, mask): the low bits of x spread to the positions of mask. */
static inline uint64_t
bitperm_net_deposit(const struct bitperm_net *n, uint64_t x)
{
	BITPERM_NET_DEP(n, x, 5);
	BITPERM_NET_DEP(n, x, 4);
	BITPERM_NET_DEP(n, x, 3);
	BITPERM_NET_DEP(n, x, 2);
	BITPERM_NET_DEP(n, x, 1);
	BITPERM_NET_DEP(n, x, 0);
	return x & n->mask;
}

#endif
