#!/usr/bin/env python3
"""Generate the AVX-512 sha3 kernels' assembly (kernel.S of avx512-wrapped,
avx512-fused and avx512-unrolled).

    python3 kernels/sha3/gen-avx512.py      (from the repository root)

Layout: lane pairs in xmm registers.  Rows 0-1 and 2-3 of each column
share a register, P[x][0] = (a[x][0], a[x][1]) and P[x][1] = (a[x][2],
a[x][3]); row 4 sits alone in S[x], in both halves.  15 registers hold the
state, so there is no spilling and every chi, theta and rho instruction
works on two lanes:

    theta   vpxorq + vpshufd + vpternlogq per column (parity broadcast to
            both halves), vprolq for rol(c, 1), one vpternlogq per
            register for a ^= c[x-1] ^ rol(c[x+1], 1)          35 ops
    rho     vprolvq with a per-register count vector          15 ops
    pi      the new row X is the old row X spread over the five column
            registers, so each new pair is one vpunpck[lh]qdq  14 ops
    chi     vpternlogq 0xd2 (a ^ (~b & c)) per register       15 ops
    iota    vpxorq with (rc, 0)                                 1 op

80 ops a round against 90 with one lane per register (and that layout
needs all 32 registers).  Rounds alternate between two register banks so
pi writes fresh registers and nothing is moved back.  The few moves left
(chi's copies) are eliminated at rename.  Why assembly, and measurements:
docs/studies.md.
"""
import os
import sys
import textwrap

RHO = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
       [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]   # RHO[x][y]
K16 = 0x8000000000000000    # last padding bit: lane 16 = (1, 3)


def lane(x, y):
    return (x % 5) + 5 * (y % 5)


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

# Register banks: the state alternates between A and B every round, so
# pi's regrouping writes fresh registers and no moves restore a layout.
BANK_A = list(range(0, 15))
BANK_B = list(range(15, 30))
COPY = (30, 31)                  # chi's two copies per row group


class State:
    """P[x][k] (k = 0, 1) holds the pair (a[x][2k], a[x][2k+1]); S[x]
    holds a[x][4] in both halves."""

    def __init__(self, bank):
        self.P = [[bank[3 * x], bank[3 * x + 1]] for x in range(5)]
        self.S = [bank[3 * x + 2] for x in range(5)]


def src_of(X, Y):
    """Column of the lane that pi moves to (X, Y); its row is X."""
    return (3 * (Y - 3 * X)) % 5


def where(st, x, y):
    """(register, half) holding lane (x, y)."""
    if y == 4:
        return st.S[x], 0
    return st.P[x][y // 2], y % 2


def cnt(x, k):
    """Memory operand: rho counts of P[x][k] (k = 2: S[x])."""
    return ".Lrho%d%d(%%rip)" % (x, k)


def theta(a, st, scratch, regs_of):
    """Column parities broadcast to both halves (xor, swap, ternlog with
    the S lane), r[x] = rol(c[x+1]), then every (register, rho count) of
    column x gets c[x-1] ^ r[x] in one ternlog and its rho rotation."""
    c, r, u = scratch[0:5], scratch[5:10], scratch[10:15]
    for x in range(5):
        a.xor(u[x], st.P[x][0], st.P[x][1])
        a.op("vpshufd $0x4e, %s, %s" % (xmm(u[x]), xmm(c[x])))
        # the swapped half arrives last: it is the destination operand,
        # the fast input of vpternlogq on cores where that differs
        a.tern(XOR3, c[x], u[x], st.S[x])
    for x in range(5):
        a.rol(r[x], c[(x + 1) % 5], 1)
    for x in range(5):
        for reg, count in regs_of(x):
            a.tern(XOR3, reg, c[(x - 1) % 5], r[x])
            # rho right behind its theta: rotates (ports 0/1) interleave
            # with ternlogs in program order, which measured 3% faster
            # than a block of 15 rotates on Intel's allocation-time
            # port binding
            a.op("vprolvq %s, %s, %s" % (count, xmm(reg), xmm(reg)))


def chi(a, b):
    """Row group in place: out[x] = b[x] ^ (~b[x+1] & b[x+2])."""
    s0, s1 = COPY
    a.mov(s0, b[0])
    a.mov(s1, b[1])
    a.tern(CHI, b[0], b[1], b[2])
    a.tern(CHI, b[1], b[2], b[3])
    a.tern(CHI, b[2], b[3], b[4])
    a.tern(CHI, b[3], b[4], s0)
    a.tern(CHI, b[4], s0, s1)


def unpck(a, half, lo_src, hi_src, dst):
    """dst = (lo_src[half], hi_src[half])."""
    op = "vpunpckhqdq" if half else "vpunpcklqdq"
    a.op("%s %s, %s, %s" % (op, xmm(hi_src), xmm(lo_src), xmm(dst)))


def round_pairs(a, st, bank, iota):
    """One full round from st into the other bank; returns the new
    State.  The destination bank is theta's scratch until pi fills it."""
    theta(a, st, bank, lambda x: ((st.P[x][0], cnt(x, 0)),
                                  (st.P[x][1], cnt(x, 1)),
                                  (st.S[x], cnt(x, 2))))
    new = State(bank)
    # pi: the new row X is the old row X (one half of each column's
    # register), so each new pair is one unpack of two old registers;
    # each row group's chi follows its unpacks
    for k in range(2):
        for X in range(5):
            r1, h = where(st, src_of(X, 2 * k), X)
            r2, _ = where(st, src_of(X, 2 * k + 1), X)
            unpck(a, h, r1, r2, new.P[X][k])
        chi(a, [new.P[X][k] for X in range(5)])
        if k == 0:
            a.xor(new.P[0][0], new.P[0][0], iota)
    for X in range(5):
        r4, h = where(st, src_of(X, 4), X)
        if X == 4:
            a.mov(new.S[X], r4)         # already both halves
        else:
            unpck(a, h, r4, r4, new.S[X])
    chi(a, new.S)
    return new


def round_last(a, st, out, iota):
    """Round 23 for the digest only: out[0..3] of row 0 need b[0..4] of
    row 0, the rho of the diagonal lanes (x, x); the other 21 lanes of
    the last round are never read.  The digest lands in the low halves
    of out[0..3] with zero high halves, ready for the next hash."""
    scratch = [r for r in range(30) if r not in st.P[0] + st.P[1] +
               st.P[2] + st.P[3] + st.P[4] + st.S]
    diag = [where(st, x, x) for x in range(5)]
    counts = [cnt(0, 0), cnt(1, 0), cnt(2, 1), cnt(3, 1), cnt(4, 2)]
    theta(a, st, scratch[:15], lambda x: ((diag[x][0], counts[x]),))
    t = scratch[0:5]                 # pairs (b0,b1) (b1,b2) ... (b4,b0)
    for x in range(5):
        lo, hi = diag[x], diag[(x + 1) % 5]
        imm = lo[1] | hi[1] << 1
        a.op("vshufpd $%d, %s, %s, %s" % (imm, xmm(hi[0]), xmm(lo[0]),
                                          xmm(t[x])))
    a.tern(CHI, t[0], t[1], t[2])   # (out0, out1)
    a.tern(CHI, t[2], t[3], t[4])   # (out2, out3)
    a.xor(t[0], t[0], iota)
    zero = COPY[1]
    a.op("vpxord %s, %s, %s" % (xmm(zero), xmm(zero), xmm(zero)))
    unpck(a, 1, t[0], zero, out[1])     # high halves first: out[0] is t[0]
    unpck(a, 1, t[2], zero, out[3])
    a.op("vmovq %s, %s" % (xmm(t[0]), xmm(out[0])))
    a.op("vmovq %s, %s" % (xmm(t[2]), xmm(out[2])))


def pad32(a, st):
    """The rest of a 32-byte message's padded state around the digest in
    the low halves of P[0..3][0]: lane 4 = 0x06 in P[4][0], lane 16
    (1, 3) = 0x80 << 56 in the high half of P[1][1], the rest zero."""
    a.op("vmovdqa64 .Lpad4(%%rip), %s" % xmm(st.P[4][0]))
    a.op("vmovdqa64 .Lpad16(%%rip), %s" % xmm(st.P[1][1]))
    for reg in [st.P[x][1] for x in (0, 2, 3, 4)] + st.S:
        a.op("vpxord %s, %s, %s" % (xmm(reg), xmm(reg), xmm(reg)))


def consts(a):
    a.out.append("\tRODATA")
    a.out.append("\t.balign 64")
    a.label(".Lrc")                  # (rc, 0): iota touches lane (0, 0) only
    for r in RC:
        a.op(".quad 0x%016x, 0" % r)
    for x in range(5):
        for k in range(2):
            a.label(".Lrho%d%d" % (x, k))
            a.op(".quad %d, %d" % (RHO[x][2 * k], RHO[x][2 * k + 1]))
        a.label(".Lrho%d2" % x)
        a.op(".quad %d, %d" % (RHO[x][4], RHO[x][4]))
    a.label(".Lpad4")
    a.op(".quad 0x06, 0")
    a.label(".Lpad16")
    a.op(".quad 0, 0x%016x" % K16)
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
    a.out.append("\t.globl SYM(%s)" % name)
    a.out.append("\tHIDDEN(%s)" % name)
    a.out.append("\tFUNCTION(%s)" % name)
    a.out.append("\t.balign 64")
    a.label("SYM(%s)" % name)


def endfunc(a, name):
    a.op("ret")
    a.out.append("\tSIZE(%s)" % name)


def permute(a, name):
    """void name(uint64_t s[25]): the full permutation through memory."""
    func(a, name)
    st = State(BANK_A)
    for x in range(5):
        for k in range(2):
            reg = st.P[x][k]
            a.op("vmovq %d(%%rdi), %s" % (8 * lane(x, 2 * k), xmm(reg)))
            a.op("vpinsrq $1, %d(%%rdi), %s, %s" %
                 (8 * lane(x, 2 * k + 1), xmm(reg), xmm(reg)))
        a.op("vpbroadcastq %d(%%rdi), %s" % (8 * lane(x, 4), xmm(st.S[x])))
    a.op("leaq .Lrc(%rip), %rax")
    a.op("leaq 384(%rax), %rdx")
    a.label(".Lround_" + name)
    mid = round_pairs(a, st, BANK_B, "(%rax)")
    end = round_pairs(a, mid, BANK_A, "16(%rax)")
    a.op("addq $32, %rax")
    a.op("cmpq %rdx, %rax")
    a.op("jne .Lround_" + name)
    for x in range(5):
        for k in range(2):
            reg = end.P[x][k]
            a.op("vmovq %s, %d(%%rdi)" % (xmm(reg), 8 * lane(x, 2 * k)))
            a.op("vpextrq $1, %s, %d(%%rdi)" %
                 (xmm(reg), 8 * lane(x, 2 * k + 1)))
        a.op("vmovq %s, %d(%%rdi)" % (xmm(end.S[x]), 8 * lane(x, 4)))
    endfunc(a, name)


def chain(a, name, unrolled):
    """void name(uint8_t x[32], uint64_t steps): x = SHA3-256(x) steps
    times, x held in the low halves of P[0..3][0] between hashes."""
    func(a, name)
    A, B = State(BANK_A), State(BANK_B)
    digest = [A.P[x][0] for x in range(4)]
    a.op("testq %rsi, %rsi")
    a.op("jz .Ldone_" + name)
    for i in range(4):
        a.op("vmovq %d(%%rdi), %s" % (8 * i, xmm(digest[i])))
    a.op(".balign 32")
    a.label(".Lhash_" + name)
    pad32(a, A)
    round_pairs(a, A, BANK_B, ".Lrc(%rip)")
    if unrolled:
        for r in range(1, 23, 2):
            round_pairs(a, B, BANK_A, ".Lrc+%d(%%rip)" % (16 * r))
            round_pairs(a, A, BANK_B, ".Lrc+%d(%%rip)" % (16 * r + 16))
    else:
        a.op("leaq .Lrc+16(%rip), %rax")
        a.op("leaq .Lrc+368(%rip), %rdx")
        a.op(".balign 32")
        a.label(".Lround_" + name)
        round_pairs(a, B, BANK_A, "(%rax)")
        round_pairs(a, A, BANK_B, "16(%rax)")
        a.op("addq $32, %rax")
        a.op("cmpq %rdx, %rax")
        a.op("jne .Lround_" + name)
    round_last(a, B, digest, ".Lrc+368(%rip)")
    a.op("decq %rsi")
    a.op("jnz .Lhash_" + name)
    for i in range(4):
        a.op("vmovq %s, %d(%%rdi)" % (xmm(digest[i]), 8 * i))
    a.label(".Ldone_" + name)
    endfunc(a, name)


HEAD = """/*
 * Generated by kernels/sha3/gen-avx512.py; edit the generator, not this
 * file.
 * %s
 */

/* ELF (Linux, BSD) or Mach-O (macOS): symbol names and sections differ. */
#if defined(__APPLE__)
#define SYM(x) _##x
#define HIDDEN(x) .private_extern _##x
#define FUNCTION(x)
#define SIZE(x)
#define RODATA .section __TEXT,__const
#else
#define SYM(x) x
#define HIDDEN(x) .hidden x
#define FUNCTION(x) .type x, @function
#define SIZE(x) .size x, .-x
#define RODATA .section .rodata
#endif
"""
TAIL = """#if !defined(__APPLE__)
\t.section .note.GNU-stack,"",@progbits
#endif
"""


def emit(path, what, fused, unrolled):
    a = Asm()
    consts(a)
    prefix = "sha3_" + os.path.basename(os.path.dirname(path)).replace("-", "_")
    permute(a, prefix + "_permute")
    if fused:
        chain(a, prefix + "_chain", unrolled)
    with open(path, "w") as f:
        f.write(HEAD % "\n * ".join(textwrap.wrap(what, 60)))
        f.write("\n".join(a.out) + "\n")
        f.write(TAIL)


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    emit(os.path.join(root, "avx512-wrapped", "kernel.S"),
         "Keccak-f[1600], lane pairs in xmm, a loop of two rounds.",
         False, False)
    emit(os.path.join(root, "avx512-fused", "kernel.S"),
         "The whole chain: digest in registers, rounds 1-22 in a loop of "
         "two, round 23 only for the digest lanes.", True, False)
    emit(os.path.join(root, "avx512-unrolled", "kernel.S"),
         "As avx512-fused with rounds 1-22 expanded inline.", True, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
