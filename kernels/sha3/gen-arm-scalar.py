#!/usr/bin/env python3
"""Generate kernels/sha3/arm-scalar/kernel.c: Keccak on AArch64 general
purpose registers with lazy rotations.

    python3 kernels/sha3/gen-arm-scalar.py      (from the repository root)

AArch64 EOR and BIC rotate their second operand for free
(`eor x0, x1, x2, ror #k`).  So no lane is ever rotated explicitly: each
value is kept as (variable, offset) with true value = ROL(variable, offset)
and every rotation (theta's rol 1, rho) only changes the offset, known
here at generation time.  Combining two values folds the difference of
their offsets into the second operand:

    ROL(u, p) ^ ROL(v, q) = ROL(u ^ ROL(v, q - p), p)
    ROL(v, q) & ~ROL(u, p) = ROL(v & ~ROL(u, p - q), q)

A round is then 20 EOR (parities) + 5 EOR (theta's d) + 25 EOR (theta)
+ 25 BIC + 25 EOR (chi) + 1 EOR (iota) = 101 instructions instead of
~125 with explicit rotations.  Offsets differ from round to round, hence
all 24 rounds are written out (the compiler also folds the fixed padding
into round 0 and drops the lanes of round 23 the digest does not read).
Lane (0, 0) always keeps offset 0, so iota XORs the plain round constant;
the digest lanes are rotated back to offset 0 once per hash.
"""
import os
import sys

# What this generator writes, relative to its folder; `--outputs` prints
# it for make regen and tests/test_21_generated.py, so no list repeats it.
OUTPUTS = ["arm-scalar/kernel.c"]

RHO = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
       [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]   # RHO[x][y]


def rc_table():
    rc, r = [], 1
    for _ in range(24):
        v = 0
        for j in range(7):
            if r & 1:
                v |= 1 << ((1 << j) - 1)
            r = (r << 1) ^ (0x171 if r & 0x80 else 0)
        rc.append(v)
    return rc


def lane(x, y):
    return (x % 5) + 5 * (y % 5)


def rot(var, k):
    k %= 64
    return var if k == 0 else "ROL64(%s, %d)" % (var, k)


class Gen:
    def __init__(self, indent):
        self.lines = []
        self.ind = indent

    def let(self, name, expr):
        self.lines.append("%sconst uint64_t %s = %s;" % (self.ind, name,
                                                          expr))

    def prune(self, keep):
        """Drop definitions nothing reads (the lanes of round 23 that the
        digest does not need), so -Wunused-variable stays quiet."""
        import re
        while True:
            text = "\n".join(self.lines) + " " + " ".join(keep)
            used = set(re.findall(r"\br\d+_[a-z]\d+\b", text))
            kept = []
            for line in self.lines:
                name = line.split()[2]
                if text.count(name) > 1 or name in keep:
                    kept.append(line)
            if len(kept) == len(self.lines):
                return
            self.lines = kept
            del used

    def rounds(self, state):
        """state: list of 25 (var, offset); returns the state after 24
        rounds (offsets tracked, variables renamed every round)."""
        for r, rc in enumerate(rc_table()):
            t = "r%d_" % r
            c = []
            for x in range(5):
                base, bo = state[lane(x, 0)]
                terms = [base] + [rot(state[lane(x, y)][0],
                                      state[lane(x, y)][1] - bo)
                                  for y in range(1, 5)]
                self.let("%sc%d" % (t, x), " ^ ".join(terms))
                c.append(("%sc%d" % (t, x), bo))
            d = []
            for x in range(5):
                (u, p), (v, q) = c[(x - 1) % 5], c[(x + 1) % 5]
                self.let("%sd%d" % (t, x), "%s ^ %s" % (u, rot(v, q + 1 - p)))
                d.append(("%sd%d" % (t, x), p))
            b = [None] * 25
            for x in range(5):
                for y in range(5):
                    var, o = state[lane(x, y)]
                    dv, do = d[x]
                    name = "%sa%02d" % (t, lane(x, y))
                    self.let(name, "%s ^ %s" % (var, rot(dv, do - o)))
                    # rho is free: only the offset moves; pi renames
                    b[lane(y, 2 * x + 3 * y)] = (name, o + RHO[x][y])
            new = [None] * 25
            for y in range(5):
                for x in range(5):
                    (b0, o0), (b1, o1), (b2, o2) = (b[lane(x, y)],
                                                    b[lane(x + 1, y)],
                                                    b[lane(x + 2, y)])
                    n = "%sn%02d" % (t, lane(x, y))
                    self.let(n, "%s & ~%s" % (b2, rot(b1, o1 - o2)))
                    out = "%sx%02d" % (t, lane(x, y))
                    expr = "%s ^ %s" % (b0, rot(n, o2 - o0))
                    if x == 0 and y == 0:
                        assert o0 % 64 == 0
                        expr += " ^ 0x%016xULL" % rc
                    self.let(out, expr)
                    new[lane(x, y)] = (out, o0 % 64)
            state = new
        return state


HEAD = '''/*
 * Generated by kernels/sha3/gen-arm-scalar.py; edit the generator, not
 * this file.
 *
 * sha3/arm-scalar: Keccak-f[1600] on AArch64 general-purpose registers
 * with lazy rotations: every rotation is folded into the rotated second
 * operand of an EOR or BIC (101 instructions a round instead of ~125),
 * all 24 rounds written out.  The whole chain runs in one function with
 * the digest in four lanes and the rest of the state reset to the
 * padding of a 32-byte message.  On Neoverse V1/V2 class cores this
 * beats the SHA3 unit; on Apple cores the SHA3 unit wins.
 */
#include "kernel.h"
#include "sha3/keccak-c.h"
'''

TAIL = '''
static int
arm_scalar_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	(void)ctx;
	return sha3_256_short(msg, len, out, arm_scalar_permute);
}

static const char *const arm_scalar_insns[] = { "eor", "bic", NULL };

const struct kernel KERNEL_THIS = {
	.description = "AArch64 general-purpose registers, rotations folded "
	    "into EOR/BIC operands, 24 rounds written out, whole chain",
	.insns = arm_scalar_insns,
	.symbol = "arm_scalar_chain",
	.hash = arm_scalar_hash,
	.chain = arm_scalar_chain,
};
'''


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    out = [HEAD]

    g = Gen("\t")
    st = g.rounds([("s%d" % i, 0) for i in range(25)])
    out.append("/* The permutation through memory, for kernel->hash. */")
    out.append("static __attribute__((noinline)) void")
    out.append("arm_scalar_permute(uint64_t s[25])")
    out.append("{")
    for i in range(25):
        out.append("\tconst uint64_t s%d = s[%d];" % (i, i))
    out.append("")
    out += g.lines
    out.append("")
    for i in range(25):
        out.append("\ts[%d] = %s;" % (i, rot(st[i][0], st[i][1])))
    out.append("}")
    out.append("")

    g = Gen("\t\t")
    init = [("h0", 0), ("h1", 0), ("h2", 0), ("h3", 0),
            ("SHA3_256_PAD32_LANE4", 0)] + [("0", 0)] * 20
    init[16] = ("SHA3_256_PAD32_LANE16", 0)
    st = g.rounds(init)
    g.prune([rot(st[i][0], st[i][1]) for i in range(4)])
    out.append("static int")
    out.append("arm_scalar_chain(void *ctx, uint8_t *x, uint64_t steps)")
    out.append("{")
    out.append("\tuint64_t h0 = load64_le(x), h1 = load64_le(x + 8);")
    out.append("\tuint64_t h2 = load64_le(x + 16), h3 = load64_le(x + 24);")
    out.append("\tuint64_t i;")
    out.append("")
    out.append("\t(void)ctx;")
    out.append("\tfor (i = 0; i < steps; i++) {")
    out += g.lines
    for i in range(4):
        out.append("\t\th%d = %s;" % (i, rot(st[i][0], st[i][1])))
    out.append("\t}")
    out.append("\tstore64_le(x, h0);")
    out.append("\tstore64_le(x + 8, h1);")
    out.append("\tstore64_le(x + 16, h2);")
    out.append("\tstore64_le(x + 24, h3);")
    out.append("\treturn 0;")
    out.append("}")
    out.append(TAIL)
    os.makedirs(os.path.join(root, "arm-scalar"), exist_ok=True)
    with open(os.path.join(root, OUTPUTS[0]), "w") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--outputs"]:
        print("\n".join(OUTPUTS))
        sys.exit(0)
    sys.exit(main())
