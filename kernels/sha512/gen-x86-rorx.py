#!/usr/bin/env python3
"""Generate x86-rorx/kernel.S: SHA-512 for the chain, scalar rounds with
BMI2 rorx/andn and the message schedule in AVX-512VL xmm registers; and
x86-rorx-avx/kernel.S, the same rounds for cores without AVX-512 (AVX2
machines, VMs that hide it).  Its schedule is VEX in xmm0-15 / ymm0-15:
a rotate is two shifts (vpshufb for sigma0's rotate by 8), a sigma 7 or 9
ops instead of 3, so from pair 16 on W[t-16] + W[t-7] + sigma0(W[t-15])
is made for two pairs at once in a ymm from the stored W, and
vextracti128 hands the second pair its half; sigma1 stays one pair at a
time (it needs the pair before).  vpalignr stands in for valignq.

    python3 kernels/sha512/gen-x86-rorx.py     (writes beside itself)

One hash is written as straight-line code on values (every instruction
defines a new one) with the constants worked out here: in the chain the
state starts from the IV and words 8-15 of the block are the padding of a
64-byte message, so the first rounds and the first schedule steps fold
(round 0 is two adds; every W[8..15] term is a constant).  The order is
the hand schedule below, registers are then given by a linear scan, and
nothing spills: the 15 general registers hold the state and temporaries,
the digest goes through the stack between hashes (it is the next block's
words 0-7, which the schedule loads as pairs anyway; how, below).

A round (T1 = h + K + W + S1(e) + Ch(e, f, g); e' = d + T1;
a' = T1 + S0(a) + Maj(a, b, c)) is written so that both chains are
4 cycles (rorx -> xor -> xor -> add), not 5:
    e'          ((h + KW) + d + (~e & g) + (e & f)) + S1(e): the Ch terms
                have no bit in common, so they are added, not xored, and
                only S1 is left to add once e is known
    a'          ((e' + ((b & c) - d)) + (a & (b ^ c))) + S0(a): T1 is
                e' - d, and Maj = (a & (b ^ c)) + (b & c) (again no
                common bit), so a reaches a' through one and or S0
    b ^ c, b & c  the previous round's a ^ b and a & b, off both chains
    S1, S0      3 rorx + 2 xor each (rorx does not touch its source)
    h + K + W   one add from the stack, where the schedule left K + W
24 general-register ops, two more than the 5-cycle form (T1 + S0 + Maj
with Maj = ((a ^ b) & (b ^ c)) ^ b): measured 4% faster here (194 ->
186 ns a hash), so the rounds wait on their chains more than on ports.
Both chains run through rorx, which this core issues on two ports only,
so the order matters: the code of round t is its e side, then the a side
of round t - 1 (which e' does not need), each with its three rorx first;
the scheduler takes the oldest ready op, so the e chain wins the ports
(186 -> 181 ns).  Two-operand ops copy their operand that is ready first
(b for a ^ b and a & b, f for e & f).

The schedule makes W[t], W[t + 1] per xmm pair: vprorq/vpsrlq +
vpternlogq for each sigma, three vpaddq, one vpaddq of K and two stores
(K + W for the rounds, W for later pairs), placed between the scalar ops
of the rounds 16 words earlier.  The unaligned pairs W[t - 15..t - 14]
and W[t - 7..t - 6] are loads from the stored W (valignq only for the
first words): 12 vector ALU ops per two rounds, and none of them on
port 5 alone (179.5 ns a hash, from 181.4 with valignq).  Words 0-7,
the digest the previous hash stored as eight 8-byte words, are loaded
as 8-byte halves (vmovq, vpinsrq): a 16-byte load across two stores is
not forwarded and waits for them to be written (2% a hash on Zen 5).
Tried and slower here: the schedule four words at a time in ymm
registers (a two-step sigma1, 95 fewer vector ops a hash: 183.6 ns
against 181.4 with valignq pairs), and other placements of the vector
ops among the scalar ones (up to 2% slower).  What was tried on Zen 5
(other Ch and Maj forms, the vector side doing h + K + W, other orders)
is in docs/studies.md.
"""
import os
import sys

# What this generator writes, relative to its folder; `--outputs` prints
# it for make regen and tests/test_21_generated.py, so no list repeats it.
OUTPUTS = ["x86-rorx/kernel.S", "x86-rorx-avx/kernel.S"]

M = (1 << 64) - 1
IV = [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b,
      0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f,
      0x1f83d9abfb41bd6b, 0x5be0cd19137e2179]


def primes(n):
    p, i = [], 2
    while len(p) < n:
        if all(i % q for q in p):
            p.append(i)
        i += 1
    return p


def icbrt(n):
    lo, hi = 0, 1 << 100
    while lo < hi:
        m = (lo + hi + 1) // 2
        lo, hi = (m, hi) if m ** 3 <= n else (lo, m - 1)
    return lo


# FIPS 180-4: the first 64 bits of the fractional parts of cube roots.
K = [icbrt(p << 192) & M for p in primes(80)]
PAD = [1 << 63, 0, 0, 0, 0, 0, 0, 512]     # words 8-15, 64-byte message
# vpshufb's control for a right rotate by 8 of both words: byte i of a
# word takes byte i + 1, the top byte takes byte 0.
ROR8 = (0x0007060504030201, 0x080f0e0d0c0b0a09)

GPRS = ["%rax", "%rbx", "%rcx", "%rdx", "%rsi", "%rdi", "%rbp", "%r8",
        "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15"]
XMMS = ["%%xmm%d" % i for i in range(32)]


def ror(x, n):
    return ((x >> n) | (x << (64 - n))) & M


class Val:
    """An SSA value in a register of class 'g' (general) or 'x' (xmm)."""
    def __init__(self, cls, n):
        self.cls, self.n = cls, n


class Mem:
    def __init__(self, text):
        self.text = text


class Aff:
    """A word in memory plus a constant not added yet (sums of constants
    and loaded words fold into one add, made when a register is needed)."""
    def __init__(self, mem, c):
        self.mem, self.c, self.val = mem, c, None


class Gen:
    def __init__(self, avx512):
        self.avx512 = avx512    # else VEX only: shifts for rotates, vpxor
        self.mov = "vmovdqu64" if avx512 else "vmovdqu"
        self.n = 0
        self.pool = {}          # constant -> label
        self.out = None         # list the builders append ops to

    def new(self, cls):
        self.n += 1
        return Val(cls, self.n)

    def const(self, c):
        """A memory operand holding constant c (int, or (lo, hi))."""
        if c not in self.pool:
            self.pool[c] = ".Lc%d" % len(self.pool)
        return Mem(self.pool[c] + "(%rip)")

    def op(self, kind, srcs, arg=None, cls="g", dst=True):
        v = self.new(cls) if dst else None
        self.out.append((kind, v, list(srcs), arg))
        return v

    # -- general registers; ints are constants, folded here ----------
    def reg(self, x):
        if isinstance(x, Val):
            return x
        if isinstance(x, Aff):
            if x.val is None:
                x.val = self.op("add", [self.reg(x.mem),
                                        self.operand(x.c)])
            return x.val
        src = self.const(x) if isinstance(x, int) else x
        return self.op("load", [src])

    def operand(self, x):
        """Second operand: register, memory, or imm32 / pool constant."""
        if isinstance(x, int):
            sx = x - (1 << 64) if x >> 63 else x
            return ("$%d" % sx) if -2**31 <= sx < 2**31 else self.const(x)
        return x

    def ror(self, x, n):
        if isinstance(x, Aff):
            x = self.reg(x)
        if isinstance(x, int):
            return ror(x, n)
        return self.op("rorx", [self.reg(x)], n)

    def bin(self, kind, x, y, fn):
        x, y = [self.reg(z) if isinstance(z, Aff) else z for z in (x, y)]
        if isinstance(x, int) and isinstance(y, int):
            return fn(x, y) & M
        if not isinstance(x, Val) and isinstance(y, Val):
            x, y = y, x
        return self.op(kind, [self.reg(x), self.operand(y)])

    def xor(self, x, y):
        return self.bin("xor", x, y, lambda a, b: a ^ b)

    def and_(self, x, y):
        return self.bin("and", x, y, lambda a, b: a & b)

    def add(self, x, y):
        """Constants fold; a loaded word keeps its constant pending, a
        register value gets it at once (off the later critical path)."""
        def parts(z):
            if isinstance(z, int):
                return None, z
            if isinstance(z, Aff):
                return (z.mem, z.c) if z.val is None else (z.val, 0)
            return z, 0
        (xv, xc), (yv, yc) = parts(x), parts(y)
        c = (xc + yc) & M
        if xv is not None and yv is not None:
            if not isinstance(xv, Val):
                xv, yv = yv, xv
            v = self.op("add", [self.reg(xv), yv])
        else:
            v = xv if xv is not None else yv
        if v is None:
            return c
        if c == 0:
            return v
        if isinstance(v, Mem):
            return Aff(v, c)
        return self.op("add", [v, self.operand(c)])

    def sub(self, x, y):
        """x - y (the allocator never swaps its operands)."""
        x, y = [self.reg(z) if isinstance(z, Aff) else z for z in (x, y)]
        if isinstance(y, int):
            return self.add(x, -y & M)
        if isinstance(x, int):
            x = self.reg(x)
        return self.op("sub", [x, y])

    def andn(self, x, y):
        """~x & y."""
        x, y = [self.reg(z) if isinstance(z, Aff) else z for z in (x, y)]
        if isinstance(x, int):
            return self.and_(y, ~x & M)
        if isinstance(y, int):
            y = self.const(y) if y else 0
            if y == 0:
                return 0
        return self.op("andn", [self.reg(x), y])

    def store(self, x, mem):
        self.op("store", [self.reg(x), mem], dst=False)

    # -- xmm pairs; tuples are constant pairs ------------------------
    def xreg(self, x):
        if isinstance(x, Val):
            return x
        src = self.const(x) if isinstance(x, tuple) else x
        return self.op("vload", [src], cls="x")

    def xoperand(self, x):
        return self.const(x) if isinstance(x, tuple) else x

    def vsigma(self, x, r1, r2, s, y="v"):
        """sigma of a pair, or with y="y" of two pairs in a ymm."""
        if isinstance(x, tuple):
            return tuple(ror(w, r1) ^ ror(w, r2) ^ (w >> s) for w in x)
        x = self.xreg(x) if y == "v" else \
            self.op("yload", [x], cls="x")
        if self.avx512:
            return self.op("vxor3", [self.op("vror", [x], r1, "x"),
                                     self.op("vror", [x], r2, "x"),
                                     self.op("vshr", [x], s, "x")], cls="x")
        # Without AVX-512 a rotate is two shifts: five shifts, four xors.
        def vxor(u, v):
            return self.op(y + "xor", [u, v], cls="x")
        if r2 == 8:
            # A rotate by a whole byte is one vpshufb.
            sh = [self.op(y + k[1:], [x], n, "x") for k, n in
                  (("vshr", r1), ("vshl", 64 - r1), ("vshr", s))]
            b8 = self.op(y + "shufb", [x, self.const(
                ROR8 if y == "v" else ROR8 * 2)], cls="x")
            return vxor(vxor(sh[0], sh[1]), vxor(b8, sh[2]))
        sh = [self.op(y + k[1:], [x], n, "x") for k, n in
              (("vshr", r1), ("vshl", 64 - r1), ("vshr", r2),
               ("vshl", 64 - r2), ("vshr", s))]
        return vxor(vxor(vxor(sh[0], sh[1]), vxor(sh[2], sh[3])), sh[4])

    def vadd(self, terms):
        """Sum of pairs: the constant ones added here, then one vpaddq
        per register term and one for the constant."""
        c = (0, 0)
        regs = []
        for t in terms:
            if isinstance(t, tuple):
                c = ((c[0] + t[0]) & M, (c[1] + t[1]) & M)
            else:
                regs.append(t)
        if not regs:
            return c
        acc = self.xreg(regs[0])
        for t in regs[1:]:
            acc = self.op("vadd", [acc, self.xoperand(t)], cls="x")
        if c != (0, 0):
            acc = self.op("vadd", [acc, self.const(c)], cls="x")
        return acc

    def valign(self, lo, hi):
        """(lo[1], hi[0]): the pair that starts one word after lo."""
        if isinstance(lo, tuple) and isinstance(hi, tuple):
            return (lo[1], hi[0])
        return self.op("valign", [self.xreg(hi), self.xoperand(lo)],
                       cls="x")


def sha512_body(g, state, words, kw_slot, w_slot, out_slots):
    """One compression: state (8 ints or Mems), words (16 ints or Mems).
    Writes state + state_in to out_slots.  Returns the op list in the
    hand-scheduled order."""
    # The schedule, pair by pair, into its own lists.  A pair of words in
    # memory is two 8-byte loads: in the chain they are the digest the
    # previous hash stored as eight words, and a 16-byte load across two
    # stores is not forwarded from them (it waits until they are written).
    vec = {}
    pairs = []
    # The loads go with the first schedule step (pair 8), which reads them.
    g.out = vec.setdefault(8, [])
    for p in range(8):
        lo, hi = words[2 * p], words[2 * p + 1]
        if isinstance(lo, int):
            pairs.append((lo, hi))
        else:
            pairs.append(g.op("vpair", [lo, hi], cls="x"))

    def skew(i):
        """W[2i + 1], W[2i + 2]: a load once both pairs are stored."""
        if i >= 8:
            return Mem("%d(%%rsp)" % (w_slot + 16 * i + 8))
        return g.valign(pairs[i], pairs[i + 1])
    def wmem(i, skewed=0):
        return Mem("%d(%%rsp)" % (w_slot + 16 * i + skewed))
    upper = None
    for p in range(8, 40):
        g.out = vec.setdefault(p, [])
        w2 = pairs[p - 1]
        if not g.avx512 and p >= 16 and p % 2 == 0:
            # Without AVX-512 the sigmas cost 9 ops, so every term but
            # sigma1 is made for two pairs at once in a ymm, from W in
            # memory: W[t-16] + W[t-7] + sigma0(W[t-15]) for p and p + 1.
            both = g.op("yadd", [g.op("yadd", [
                g.op("yload", [wmem(p - 8)], cls="x"), wmem(p - 4, 8)],
                cls="x"), g.vsigma(wmem(p - 8, 8), 1, 8, 7, "y")], cls="x")
            upper = g.op("vextract", [both], cls="x")
            new = g.vadd([both, g.vsigma(w2, 19, 61, 6)])
        elif upper is not None:
            new, upper = g.vadd([upper, g.vsigma(w2, 19, 61, 6)]), None
        else:
            w16, w15 = pairs[p - 8], skew(p - 8)
            w7 = skew(p - 4)
            s0 = g.vsigma(w15, 1, 8, 7)
            s1 = g.vsigma(w2, 19, 61, 6)
            new = g.vadd([w16, w7, s0, s1])
        pairs.append(new)
        g.op("vstore", [new, Mem("%d(%%rsp)" % (w_slot + 16 * p))],
             cls="x", dst=False)
        kw = g.vadd([new, (K[2 * p], K[2 * p + 1])])
        g.op("vstore", [g.xreg(kw), Mem("%d(%%rsp)" % (kw_slot + 16 * p))],
             cls="x", dst=False)

    # Round t's scalar ops are its e side, then round t - 1's a side: the
    # e side does not wait for a', and being older it wins the ports
    # (rorx has two) when both sides are ready at once.
    scal = []
    a, b, c, d, e, f, gg, h = state
    bc = None
    a_side = []
    for t in range(80):
        g.out = []
        if t < 16:
            w = words[t]
            hk = g.add(g.add(h, K[t]), w) if isinstance(h, int) \
                else g.add(g.add(h, w), K[t])
        else:
            hk = g.add(h, Mem("%d(%%rsp)" % (kw_slot + 8 * t)))
        r1, r2, r3 = g.ror(e, 14), g.ror(e, 18), g.ror(e, 41)
        x = g.add(g.add(g.add(hk, d), g.andn(e, gg)), g.and_(f, e))
        e2 = g.add(x, g.xor(g.xor(r1, r2), r3))
        scal.append(g.out + a_side)
        g.out = a_side = []
        if bc is None:
            bc, bac = g.xor(b, c), g.and_(b, c)
        r1, r2, r3 = g.ror(a, 28), g.ror(a, 34), g.ror(a, 39)
        m = g.and_(bc, a)
        s0 = g.xor(g.xor(r1, r2), r3)
        w = g.sub(bac, d)
        bc, bac = g.xor(b, a), g.and_(b, a)
        a2 = g.add(g.add(g.add(e2, w), m), s0)
        a, b, c, d, e, f, gg, h = a2, a, b, c, e2, e, f, gg
    for i, (v, s0) in enumerate(zip((a, b, c, d, e, f, gg, h), state)):
        if isinstance(s0, Mem):
            s0 = g.reg(s0)
        g.store(g.add(v, s0), out_slots[i])
    scal[79] += a_side

    # Each pair of schedule ops goes between the scalar ops of the two
    # rounds that come 16 words earlier.
    ops = []
    for t in range(80):
        v = []
        p = t // 2 + 8
        if p < 40:
            vs = vec[p]
            half = (len(vs) + 1) // 2
            v = vs[:half] if t % 2 == 0 else vs[half:]
        s = scal[t]
        step = max(1, len(s) // (len(v) + 1)) if v else 0
        vi = 0
        for i, o in enumerate(s):
            ops.append(o)
            if v and vi < len(v) and (i + 1) % step == 0:
                ops.append(v[vi])
                vi += 1
        ops.extend(v[vi:])
    return ops


# The vector ops by kind without its "v" (xmm) or "y" (ymm) prefix.
VEC = {"shr": "vpsrlq $%d, %s, %s", "shl": "vpsllq $%d, %s, %s",
       "shufb": "vpshufb %s, %s, %s", "xor": "vpxor %s, %s, %s",
       "add": "vpaddq %s, %s, %s"}


def allocate(ops, g):
    """Linear scan: registers to values, two-operand forms made of the
    three-address ops.  Returns assembly lines.  Without AVX-512 only
    xmm0-15 exist and moves are VEX (vmovdqu)."""
    last = {}
    for i, (kind, dst, srcs, arg) in enumerate(ops):
        for s in srcs:
            if isinstance(s, Val):
                last[s.n] = i
    free = {"g": list(GPRS), "x": list(XMMS if g.avx512 else XMMS[:16])}
    where = {}
    lines = []

    def take(cls):
        if not free[cls]:
            raise SystemExit("gen-x86-rorx: out of %s registers" % cls)
        return free[cls].pop(0)

    def ymm(name):
        return name.replace("%xmm", "%ymm")

    def loc(x):
        return where[x.n] if isinstance(x, Val) else x.text \
            if isinstance(x, Mem) else x

    for i, (kind, dst, srcs, arg) in enumerate(ops):
        dying = [s for s in srcs if isinstance(s, Val) and last[s.n] == i]
        if kind in ("xor", "and", "add", "vxor3", "sub"):
            x = srcs[0]
            if x not in dying and kind != "sub":
                for j, s in enumerate(srcs[1:], 1):
                    if s in dying and isinstance(s, Val):
                        srcs = [s] + srcs[:j] + srcs[j + 1:]
                        x = s
                        break
            rest = srcs[1:]
            if x in dying:
                r = where.pop(x.n)
            elif kind == "add" and isinstance(rest[0], Val):
                r = take("g")
                lines.append("lea (%s,%s), %s" % (loc(x), loc(rest[0]), r))
                for s in dying:
                    free["g"].append(where.pop(s.n))
                where[dst.n] = r
                continue
            else:
                r = take(x.cls)
                lines.append(("mov %s, %s" if x.cls == "g" else
                               "vmovdqa64 %s, %s") % (loc(x), r))
            if kind == "vxor3":
                lines.append("vpternlogq $0x96, %s, %s, %s"
                             % (loc(rest[1]), loc(rest[0]), r))
            else:
                lines.append("%sq %s, %s" % (kind, loc(rest[0]), r))
            for s in dying:
                if s is not x:
                    free[s.cls].append(where.pop(s.n))
            where[dst.n] = r
            continue
        text = [loc(s) for s in srcs]
        for s in dying:
            free[s.cls].append(where.pop(s.n))
        if dst is not None:
            r = take(dst.cls)
            where[dst.n] = r
        if kind == "load":
            lines.append("mov %s, %s" % (text[0], r))
        elif kind == "rorx":
            lines.append("rorx $%d, %s, %s" % (arg, text[0], r))
        elif kind == "andn":
            lines.append("andn %s, %s, %s" % (text[1], text[0], r))
        elif kind == "store":
            lines.append("mov %s, %s" % (text[0], text[1]))
        elif kind == "vpair":
            lines.append("vmovq %s, %s" % (text[0], r))
            lines.append("vpinsrq $1, %s, %s, %s" % (text[1], r, r))
        elif kind == "vload":
            lines.append("%s %s, %s" % (g.mov, text[0], r))
        elif kind == "vror":
            lines.append("vprorq $%d, %s, %s" % (arg, text[0], r))
        elif kind[0] in "vy" and kind[1:] in VEC:
            if kind[0] == "y":
                text, r = [ymm(t) for t in text], ymm(r)
            lines.append(VEC[kind[1:]] % ((arg, text[0], r) if arg is not
                                          None else (text[1], text[0], r)))
        elif kind == "valign" and g.avx512:
            lines.append("valignq $1, %s, %s, %s" % (text[1], text[0], r))
        elif kind == "valign":
            lines.append("vpalignr $8, %s, %s, %s" % (text[1], text[0], r))
        elif kind == "vstore":
            lines.append("%s %s, %s" % (g.mov, text[0], text[1]))
        elif kind == "vextract":
            lines.append("vextracti128 $1, %s, %s" % (ymm(text[0]), r))
        elif kind == "yload":
            lines.append("vmovdqu %s, %s" % (text[0], ymm(r)))
        else:
            raise SystemExit("gen-x86-rorx: unknown op " + kind)
    return lines


# Stack frame (rsp 64-aligned): the digest / state words, the block
# words, K + W for rounds 16-79 (at KW + 8t), the saved arguments and
# stack pointer (every general register but rsp is in use), W[16..79]
# (at WS + 8t, from 896 on).
HS, WB, KW, ARG0, ARG1, SP, WS = 0, 64, 192, 832, 840, 848, 768
FRAME = WS + 8 * 80
SAVED = ["%rbx", "%rbp", "%r12", "%r13", "%r14", "%r15"]


def function(name, body, pre, post):
    lines = ["", ".globl SYM(%s)" % name, "HIDDEN(%s)" % name,
             "FUNCTION(%s)" % name, ".p2align 6", "SYM(%s):" % name]
    lines += ["push %s" % r for r in SAVED]
    lines += ["mov %rsp, %rax", "sub $%d, %%rsp" % FRAME, "and $-64, %rsp",
              "mov %%rax, %d(%%rsp)" % SP]
    lines += pre + body + post
    lines += ["mov %d(%%rsp), %%rsp" % SP]
    lines += ["pop %s" % r for r in reversed(SAVED)]
    lines += ["vzeroupper", "ret", "SIZE(%s)" % name]
    return lines


def kernel(prefix, avx512):
    """The chain and the one-block functions, named prefix_chain and
    prefix_block; returns (lines, constant pool)."""
    g = Gen(avx512)
    mov = g.mov
    hs = [Mem("%d(%%rsp)" % (HS + 8 * i)) for i in range(8)]
    # chain(uint64_t h[8], uint64_t steps): h in host order, steps > 0.
    chain = allocate(sha512_body(g, IV, hs + PAD, KW, WS, hs), g)
    pre = ["mov %%rdi, %d(%%rsp)" % ARG0, "mov %%rsi, %d(%%rsp)" % ARG1]
    pre += ["%s %d(%%rdi), %%xmm%d" % (mov, 16 * i, i) for i in range(4)]
    pre += ["%s %%xmm%d, %d(%%rsp)" % (mov, i, HS + 16 * i)
            for i in range(4)]
    pre += ["test %rsi, %rsi", "jz 2f", ".p2align 5", "1:"]
    post = ["decq %d(%%rsp)" % ARG1, "jnz 1b", "2:",
            "mov %d(%%rsp), %%rdi" % ARG0]
    post += ["%s %d(%%rsp), %%xmm%d" % (mov, HS + 16 * i, i)
             for i in range(4)]
    post += ["%s %%xmm%d, %d(%%rdi)" % (mov, i, 16 * i) for i in range(4)]
    out = function(prefix + "_chain", chain, pre, post)

    # block(uint64_t state[8], const uint64_t w[16]): the known answer.
    wb = [Mem("%d(%%rsp)" % (WB + 8 * i)) for i in range(16)]
    block = allocate(sha512_body(g, hs, wb, KW, WS, hs), g)
    pre = ["mov %%rdi, %d(%%rsp)" % ARG0]
    pre += ["%s %d(%%rdi), %%xmm%d" % (mov, 16 * i, i) for i in range(4)]
    pre += ["%s %%xmm%d, %d(%%rsp)" % (mov, i, HS + 16 * i)
            for i in range(4)]
    pre += ["%s %d(%%rsi), %%xmm%d" % (mov, 16 * i, i) for i in range(8)]
    pre += ["%s %%xmm%d, %d(%%rsp)" % (mov, i, WB + 16 * i)
            for i in range(8)]
    post = ["mov %d(%%rsp), %%rdi" % ARG0]
    post += ["%s %d(%%rsp), %%xmm%d" % (mov, HS + 16 * i, i)
             for i in range(4)]
    post += ["%s %%xmm%d, %d(%%rdi)" % (mov, i, 16 * i) for i in range(4)]
    out += function(prefix + "_block", block, pre, post)
    return out, g.pool


def main():
    for path, prefix, avx512 in zip(OUTPUTS, ("sha512_x86_rorx",
                                              "sha512_x86_rorx_avx"),
                                    (True, False)):
        write(path, *kernel(prefix, avx512))


def write(rel, out, pool):
    text = ["/* Generated by kernels/sha512/gen-x86-rorx.py; edit the "
            "generator, not this file. */",
            "",
            "/* ELF (Linux, BSD) or Mach-O (macOS): symbol names and "
            "sections differ. */",
            "#if defined(__APPLE__)",
            "#define SYM(x) _##x",
            "#define HIDDEN(x) .private_extern _##x",
            "#define FUNCTION(x)",
            "#define SIZE(x)",
            "#define RODATA .section __TEXT,__const",
            "#else",
            "#define SYM(x) x",
            "#define HIDDEN(x) .hidden x",
            "#define FUNCTION(x) .type x, @function",
            "#define SIZE(x) .size x, .-x",
            "#define RODATA .section .rodata",
            "#endif",
            ".text"] + out
    text += ["", "RODATA", ".p2align 4"]
    for c, label in pool.items():
        vals = c if isinstance(c, tuple) else (c,)
        text.append("%s: .quad %s" % (label, ", ".join(
            "0x%016x" % v for v in vals)))
    text += ["", "#if !defined(__APPLE__)",
             '.section .note.GNU-stack, "", @progbits', "#endif"]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), rel)
    with open(path, "w") as f:
        f.write("\n".join(l if l.endswith(":") or l.startswith(
            (".", "/", "#", "SYM", "HIDDEN", "FUNCTION", "SIZE", "RODATA"))
            or l == "" else "\t" + l for l in text) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--outputs"]:
        print("\n".join(OUTPUTS))
        sys.exit(0)
    main()
