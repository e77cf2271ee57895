#!/usr/bin/env python3
"""Generate the AVX-512 sha3 kernels' assembly (kernel.S of avx512-wrapped,
avx512-fused and avx512-unrolled).

    python3 kernels/sha3/gen-avx512.py      (from the repository root)

Layout: one Keccak lane per xmm register (low 64 bits; the high half is
never read into the low half, so whatever it holds is harmless).  Lane
x + 5y lives in %xmm<x+5y> at the start of every round; %xmm25-%xmm31 are
scratch.  That is 32 registers exactly, which is why this is assembly:
both compilers spill at this pressure (see docs/studies.md).

Per round: parity 10 vpternlogq, theta rotations 5 vprolq, theta applied
with 25 vpternlogq (a ^ c[x-1] ^ rol(c[x+1])), rho 24 vprolq written to
the lane's pi destination, chi 25 vpternlogq (imm 0xd2 = a ^ (~b & c)),
iota one vpxorq with an embedded broadcast of the round constant.  The
moves (parity seed, chi copies, the one temporary of the pi cycle) are
register renames that Zen 5 eliminates.
"""
import os
import sys

RHO = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
       [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]   # RHO[x][y]
K16 = 0x8000000000000000    # last padding bit: lane 16 = (1, 3)


def lane(x, y):
    return (x % 5) + 5 * (y % 5)


def pi(i):
    x, y = i % 5, i // 5
    return lane(y, 2 * x + 3 * y)


def xmm(r):
    return "%%xmm%d" % r


class Asm:
    def __init__(self):
        self.out = []

    def op(self, s):
        self.out.append("\t" + s)

    def label(self, s):
        self.out.append(s + ":")

    def tern(self, imm, dst, b, c):
        """dst = f(dst, b, c); c may be a memory operand string."""
        cs = c if isinstance(c, str) else xmm(c)
        self.op("vpternlogq $0x%02x, %s, %s, %s" % (imm, cs, xmm(b), xmm(dst)))

    def rol(self, dst, src, n):
        self.op("vprolq $%d, %s, %s" % (n, xmm(src), xmm(dst)))

    def xor(self, dst, a, b):
        """dst = a ^ b; b may be a memory operand string."""
        bs = b if isinstance(b, str) else xmm(b)
        self.op("vpxorq %s, %s, %s" % (bs, xmm(a), xmm(dst)))

    def mov(self, dst, src):
        if dst != src:
            self.op("vmovdqa64 %s, %s" % (xmm(src), xmm(dst)))


XOR3, CHI = 0x96, 0xd2
C = [25, 26, 27, 28, 29]       # column parities
T = [30, 31]                   # scratch


def parity(a, reg):
    """c[x] into C[x]: seed with a move so both ternlogs are 3-input."""
    for x in range(5):
        a.mov(C[x], reg[lane(x, 0)])
        a.tern(XOR3, C[x], reg[lane(x, 1)], reg[lane(x, 2)])
        a.tern(XOR3, C[x], reg[lane(x, 3)], reg[lane(x, 4)])


def theta_apply(a, reg, lanes_of):
    """a ^= c[x-1] ^ rol(c[x+1], 1) column by column; c[x] dies after its
    second use, so two scratch registers hold the rotated parities."""
    t = 0
    for x in (0, 2, 4, 1, 3):
        a.rol(T[t], C[(x + 1) % 5], 1)
        for i in lanes_of(x):
            a.tern(XOR3, reg[i], C[(x - 1) % 5], T[t])
        t ^= 1


def chi_row(a, reg, y, iota, copies):
    """Row y in place: out[x] = b[x] ^ (~b[x+1] & b[x+2]); b[0], b[1]
    are copied first because out[3], out[4] still need them."""
    b = [reg[lane(x, y)] for x in range(5)]
    s0, s1 = copies
    a.mov(s0, b[0])
    a.mov(s1, b[1])
    a.tern(CHI, b[0], b[1], b[2])
    a.tern(CHI, b[1], b[2], b[3])
    a.tern(CHI, b[2], b[3], b[4])
    a.tern(CHI, b[3], b[4], s0)
    a.tern(CHI, b[4], s0, s1)
    if y == 0 and iota is not None:
        a.xor(b[0], b[0], iota)


def cycle():
    q = [1]
    while pi(q[-1]) != 1:
        q.append(pi(q[-1]))
    assert len(q) == 24
    return q


def rho_pi_home(a, src):
    """b[pi(p)] = rol(a'[p]) written back to the home register of pi(p).
    pi is one 24-cycle on lanes 1..24, walked backwards so each register
    is read before it is overwritten; one scratch closes the cycle.
    src[p] is the register holding a'[p] (home, or a parity register in
    the specialised first round)."""
    q = cycle()
    a.rol(T[0], src[q[23]], RHO[q[23] % 5][q[23] // 5])
    for k in range(22, -1, -1):
        p = q[k]
        a.rol(pi(p), src[p], RHO[p % 5][p // 5])
    a.mov(q[0], T[0])
    if src[0] != 0:
        a.mov(0, src[0])


HOME = list(range(25))


def round_generic(a, iota):
    parity(a, HOME)
    theta_apply(a, HOME, lambda x: [lane(x, y) for y in range(5)])
    rho_pi_home(a, HOME)
    for y in range(5):
        chi_row(a, HOME, y, iota if y == 0 else None, (C[0], C[1]))


def round_first(a, iota):
    """Round 0 of x = SHA3-256(x): lanes 0-3 hold x, lane 4 is 0x06,
    lane 16 is 0x80 << 56, the other 19 are zero, so the parities are
    c = (a0, a1 ^ K16, a2, a3, 6) and theta on a zero lane is d[x]
    itself.  Folding those constants saves ~30 ops and the parity
    latency; nothing is skipped: every lane of round 0 is computed."""
    d = C
    a.rol(d[0], 1, 1)                       # rol(a1 ^ K16, 1) ^ 6 = rol(a1) ^ 7
    a.xor(d[0], d[0], ".Lk7(%rip){1to2}")
    a.rol(d[1], 2, 1)                       # a0 ^ rol(a2)
    a.xor(d[1], d[1], 0)
    a.rol(d[2], 3, 1)                       # a1 ^ K16 ^ rol(a3)
    a.tern(XOR3, d[2], 1, ".Lk16(%rip){1to2}")
    a.xor(d[3], 2, ".Lk12(%rip){1to2}")      # a2 ^ rol(6, 1)
    a.rol(d[4], 0, 1)                       # a3 ^ rol(a0)
    a.xor(d[4], d[4], 3)
    for i in range(4):
        a.xor(i, i, d[i])
    a.xor(4, d[4], ".Lk6(%rip){1to2}")
    a.xor(16, d[1], ".Lk16(%rip){1to2}")
    src = [i if i in (0, 1, 2, 3, 4, 16) else d[i % 5] for i in range(25)]
    rho_pi_home(a, src)
    for y in range(5):
        chi_row(a, HOME, y, iota if y == 0 else None, (T[0], T[1]))


def round_last(a, iota):
    """Round 23 computes the lanes the digest is made of, out[0..3] of
    row 0, which need b[0..4] of row 0 = rho of the diagonal lanes
    (x, x).  The other 21 lanes of the last round are never read."""
    parity(a, HOME)
    diag = [lane(x, x) for x in range(5)]
    for x in range(5):
        a.rol(T[0] if x % 2 == 0 else T[1], C[(x + 1) % 5], 1)
        a.tern(XOR3, diag[x], C[(x - 1) % 5], T[0] if x % 2 == 0 else T[1])
    f = [0, 5, 7, 8, 9]                     # b[x]: dead lane registers
    for x in range(1, 5):
        a.rol(f[x], diag[x], RHO[x][x])
    a.mov(3, f[3])
    a.tern(CHI, 3, f[4], 0)
    a.mov(2, f[2])
    a.tern(CHI, 2, f[3], f[4])
    a.mov(1, f[1])
    a.tern(CHI, 1, f[2], f[3])
    a.tern(CHI, 0, f[1], f[2])
    a.xor(0, 0, iota)


def consts(a, fused):
    a.out.append("\t.section .rodata")
    a.out.append("\t.balign 64")
    a.label(".Lrc")
    for r in RC:
        a.op(".quad 0x%016x" % r)
    if fused:
        for name, v in ((".Lk6", 6), (".Lk7", 7), (".Lk12", 12), (".Lk16", K16)):
            a.label(name)
            a.op(".quad 0x%016x" % v)
    a.out.append("\t.text")


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


RC = rc_table()


def func(a, name):
    a.out.append("\t.globl %s" % name)
    a.out.append("\t.hidden %s" % name)
    a.out.append("\t.type %s, @function" % name)
    a.out.append("\t.balign 64")
    a.label(name)


def endfunc(a, name):
    a.op("ret")
    a.out.append("\t.size %s, .-%s" % (name, name))


def permute(a, name):
    """void name(uint64_t s[25]): the full permutation through memory."""
    func(a, name)
    for i in range(25):
        a.op("vmovq %d(%%rdi), %s" % (8 * i, xmm(i)))
    a.op("leaq .Lrc(%rip), %rax")
    a.op("leaq 192(%rax), %rdx")
    a.label(".Lround_" + name)
    round_generic(a, "(%rax){1to2}")
    a.op("addq $8, %rax")
    a.op("cmpq %rdx, %rax")
    a.op("jne .Lround_" + name)
    for i in range(25):
        a.op("vmovq %s, %d(%%rdi)" % (xmm(i), 8 * i))
    endfunc(a, name)


def chain(a, name, unrolled):
    """void name(uint8_t x[32], uint64_t steps): x = SHA3-256(x) steps
    times, x held in lanes 0-3 between hashes."""
    func(a, name)
    a.op("testq %rsi, %rsi")
    a.op("jz .Ldone_" + name)
    for i in range(4):
        a.op("vmovq %d(%%rdi), %s" % (8 * i, xmm(i)))
    a.op(".balign 32")
    a.label(".Lhash_" + name)
    round_first(a, ".Lrc(%rip){1to2}")
    if unrolled:
        for r in range(1, 23):
            round_generic(a, ".Lrc+%d(%%rip){1to2}" % (8 * r))
    else:
        a.op("leaq .Lrc+8(%rip), %rax")
        a.op("leaq .Lrc+184(%rip), %rdx")
        a.op(".balign 32")
        a.label(".Lround_" + name)
        round_generic(a, "(%rax){1to2}")
        a.op("addq $8, %rax")
        a.op("cmpq %rdx, %rax")
        a.op("jne .Lround_" + name)
    round_last(a, ".Lrc+184(%rip){1to2}")
    a.op("decq %rsi")
    a.op("jnz .Lhash_" + name)
    for i in range(4):
        a.op("vmovq %s, %d(%%rdi)" % (xmm(i), 8 * i))
    a.label(".Ldone_" + name)
    endfunc(a, name)


HEAD = """/*
 * Generated by kernels/sha3/gen-avx512.py; edit the generator, not this
 * file.  %s
 */
"""
TAIL = '\t.section .note.GNU-stack,"",@progbits\n'


def emit(path, what, fused, unrolled):
    a = Asm()
    consts(a, fused)
    prefix = "sha3_" + os.path.basename(os.path.dirname(path)).replace("-", "_")
    permute(a, prefix + "_permute")
    if fused:
        chain(a, prefix + "_chain", unrolled)
    with open(path, "w") as f:
        f.write(HEAD % what)
        f.write("\n".join(a.out) + "\n")
        f.write(TAIL)


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    emit(os.path.join(root, "avx512-wrapped", "kernel.S"),
         "Keccak-f[1600] on 25 lanes in xmm0-24, 24-round loop.",
         False, False)
    emit(os.path.join(root, "avx512-fused", "kernel.S"),
         "The whole chain: round 0 folded for the fixed padding, rounds "
         "1-22 in a loop, round 23 only for the digest lanes.", True, False)
    emit(os.path.join(root, "avx512-unrolled", "kernel.S"),
         "As avx512-fused with rounds 1-22 expanded inline.", True, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
