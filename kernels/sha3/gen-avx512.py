#!/usr/bin/env python3
"""Generate the AVX-512 sha3 kernels' assembly (kernel.S of avx512-wrapped,
avx512-fused, avx512-unrolled, avx512-zen5, avx512-zen4, avx512-zen4-late,
avx512-zen5-late and avx512-early-pi; the last has a layout of its own,
described at q_parity below).

    python3 kernels/sha3/gen-avx512.py      (from the repository root)

Layout: lane pairs in xmm registers.  Rows 1-2 and 3-4 of each column
share a register, P[x][0] = (a[x][1], a[x][2]) and P[x][1] = (a[x][3],
a[x][4]); row 0 sits alone in S[x], in both halves.  15 registers hold the
state and every chi, theta and rho instruction works on two lanes:

    theta   vpxorq + vpshufd + vpternlogq per column (parity broadcast to
            both halves), vprolq for rol(c, 1), one vpternlogq per
            register for a ^= c[x-1] ^ rol(c[x+1], 1)          35 ops
    rho     vprolvq with a per-register count vector; S[0] holds lane
            (0, 0), which rho leaves alone                     14 ops
    pi      the new column X is the old row X, one half of each old
            column's register, so each new pair is one vpunpck[lh]qdq
            and S[0] stays where it is                         14 ops
    chi     vpternlogq 0xd2 (a ^ (~b & c)) per register       15 ops
    iota    vpxorq with (rc, rc) on S[0]                        1 op

79 ops a round against 90 with one lane per register.  Round 0 of a
chained hash works on the digest and padding constants only and folds to
60 ops; round 23 computes the four digest lanes only.

The rounds are written as a graph of values (every instruction defines a
new one), ordered by a list scheduler and only then given registers.  The
order matters on Intel cores, which bind each instruction to a port when
it is allocated and then run the oldest ready one: the scheduler issues,
on the port model of model-avx512.py, the instruction with the longest
dependent path first (26.3 modelled cycles a round against 28.0 for the
same instructions in hand-written order; measured here 2-4% fewer cycles
a hash).  Why assembly, and measurements: docs/studies.md.
"""
import os
import sys
import textwrap

# What this generator writes, relative to its folder, and how: the
# description, fused, the rounds each scheduled block of the chain holds
# (24: the whole hash; else rounds 1-22 are a loop of such blocks), the
# port model.  `--outputs` prints the files for make regen and
# tests/test_21_generated.py, so no list repeats them.
KERNELS = [
    ("avx512-wrapped/kernel.S",
     "Keccak-f[1600], lane pairs in xmm, a loop of two rounds.",
     False, 2, "intel"),
    ("avx512-fused/kernel.S",
     "The whole chain: digest in registers, round 0 folded with the "
     "padding, rounds 1-22 in a loop of two, round 23 only for the "
     "digest lanes.", True, 2, "intel"),
    ("avx512-unrolled/kernel.S",
     "As avx512-fused with all rounds of a hash scheduled as one block.",
     True, 24, "intel"),
    ("avx512-zen5/kernel.S",
     "As avx512-fused, ordered for Zen 5's pipes (four vector ALUs, "
     "rotates on two, shuffles on the other two, every op 2 cycles).",
     True, 2, "zen5"),
    ("avx512-zen4/kernel.S",
     "As avx512-fused, ordered for Zen 4's pipes (rotates 2 cycles, "
     "every other op 1).", True, 2, "zen4"),
    ("avx512-zen4-late/kernel.S",
     "As avx512-zen4, with each theta and parity ternlog overwriting "
     "its source ready last (a copy of it if it lives on).", True, 2,
     "zen4-late"),
    # Zen 5: each round a block of its own measured 1.5-2% faster than
    # blocks of two, in which the scheduler moves the second round's
    # first instructions up among the first round's last
    # (docs/studies.md).
    ("avx512-zen5-late/kernel.S",
     "As avx512-zen4-late, with each round scheduled on its own: rounds "
     "1-22 are a loop of one round.", True, 1, "zen4-late"),
]
# The early-pi layout's kernel (q_emit): its output, description, model.
EARLY_PI = ("avx512-early-pi/kernel.S",
            "Row 0 as column pairs (x, x+3), pi's unpacks ahead of theta "
            "(7 steps a round against 8), whole chain as avx512-fused, "
            "ordered for Zen 5's pipes with latency 1 (longest path "
            "first).", "zen5-l1")
OUTPUTS = [k[0] for k in KERNELS] + [EARLY_PI[0]]

RHO = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
       [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]   # RHO[x][y]
K16 = 0x8000000000000000    # last padding bit: lane 16 = (1, 3)
NREG = 32


def lane(x, y):
    return (x % 5) + 5 * (y % 5)


def xmm(r):
    return "%%xmm%d" % r


# Port models the scheduler orders for (docs/studies.md): the execution
# ports of each op kind and one latency for all (or one per kind), as
# measured on the study's Emerald Rapids VM ("intel") and Zen 5 VM
# ("zen5": every op 2 cycles; four vector pipes, rotates on two of them;
# the shuffles are modelled on the other two, which measured 3% faster
# than letting them take any pipe, though the core ran 4 unpacks a cycle
# alone).
# "zen5-l1" is Zen 5's pipes with latency 1: the order is then longest
# path first almost regardless of the pipes, which measured 3% faster
# than "zen5" for avx512-early-pi (and 2% slower for the lane pairs).
# "zen4" is what measured best on the Zen 4 (Genoa) VM among eight
# models side by side: rotates 2 cycles, every other op 1 (as measured
# there), rotates and shuffles modelled on the same two pipes (a model
# with them on separate pipes, as a mix of the two alone runs, was 1.5%
# slower), ternlogs and xors on the other two first.
MODELS = {
    "intel": ({"rot": "01", "shuf": "15", "alu": "015", "tern": "015"}, 1),
    "zen5": ({"rot": "12", "shuf": "03", "alu": "0123", "tern": "0123"}, 2),
    "zen5-l1": ({"rot": "12", "shuf": "03", "alu": "0123", "tern": "0123"},
                1),
    "zen4": ({"rot": "12", "shuf": "12", "alu": "0312", "tern": "0312"},
             {"rot": 2, "shuf": 1, "alu": 1, "tern": 1}),
}
MODELS["zen4-late"] = MODELS["zen4"]
# Models whose theta and parity ternlogs (XOR3) take as destination the
# source the schedule makes ready last, copied when it lives on.  On
# Zen 4 a vpternlogq whose destination operand was ready two or more
# cycles before its latest source waits about one cycle more (1.9
# cycles a step in a chain through its second operand, 1.0 when the
# destination is at most a cycle older): theta's state lane, older than
# rol(c, 1), sat there.
# Chi's sources come from unpacks a cycle apart, and it measured the
# same with the rule and 40 more moves a hash (docs/studies.md).
LATE_DST = {"zen4-late"}
KIND = {"xor": "alu", "tern": "tern", "rol": "rot", "rolv": "rot",
        "shuf": "shuf", "unpckl": "shuf", "unpckh": "shuf", "pick": "shuf",
        "align": "shuf"}


def XOR3(a, b, c):
    return a ^ b ^ c


def CHI(a, b, c):
    return a ^ (~b & c & 1)


class Op:
    def __init__(self, kind, srcs, arg, dst):
        self.kind, self.srcs, self.arg, self.dst = kind, srcs, arg, dst
        self.ready = None       # the cycle schedule() makes dst ready


class Graph:
    """Straight-line code in SSA form.  Values are ints; a source is a
    value or a memory operand string (last source only)."""

    def __init__(self, nin):
        self.ops = []
        self.nval = nin

    def op(self, kind, srcs, arg=None):
        self.ops.append(Op(kind, list(srcs), arg, self.nval))
        self.nval += 1
        return self.nval - 1

    def xor(self, a, b):
        return self.op("xor", (a, b))

    def tern(self, f, a, b, c):
        return self.op("tern", (a, b, c), f)

    def rol(self, a, n):
        return self.op("rol", (a,), n)

    def rolv(self, a, count):
        return self.op("rolv", (a, count))

    def unpck(self, half, lo, hi):
        """(lo[half], hi[half])."""
        return self.op("unpckh" if half else "unpckl", (lo, hi))

    def swap(self, a):
        return self.op("shuf", (a,), 0x4e)

    def pick(self, lo, hlo, hi, hhi):
        """(lo[hlo], hi[hhi])."""
        if hlo == hhi:
            return self.unpck(hlo, lo, hi)
        return self.op("pick", (lo, hi), hlo | hhi << 1)

    def align(self, lo, hi):
        """(hi[1], lo[0]): valignq by one lane (hi may be memory)."""
        return self.op("align", (lo, hi))


class State:
    """P[x][k] (k = 0, 1) holds the pair (a[x][2k+1], a[x][2k+2]); S[x]
    holds a[x][0] in both halves.  Entries are values."""

    def __init__(self, vals):
        self.P = [[vals[3 * x], vals[3 * x + 1]] for x in range(5)]
        self.S = [vals[3 * x + 2] for x in range(5)]

    def vals(self):
        return [v for x in range(5) for v in self.P[x] + [self.S[x]]]


def src_of(X, Y):
    """Column of the lane that pi moves to (X, Y); its row is X."""
    return (3 * (Y - 3 * X)) % 5


def where(st, x, y):
    """(value, half) holding lane (x, y)."""
    if y == 0:
        return st.S[x], 0
    return st.P[x][(y - 1) // 2], (y - 1) % 2


def cnt(x, k):
    """Memory operand: rho counts of P[x][k] (k = 2: S[x]); None for
    S[0], lane (0, 0), which rho does not rotate."""
    if (x, k) == (0, 2):
        return None
    return ".Lrho%d%d(%%rip)" % (x, k)


def parity(g, st):
    """Column parities broadcast to both halves: c[x] = the five lanes
    of column x xored, in both halves; S[x] enters last."""
    c = []
    for x in range(5):
        u = g.xor(st.P[x][0], st.P[x][1])
        c.append(g.tern(XOR3, g.swap(u), u, st.S[x]))
    return c


def theta_rho(g, v, x, c, r, count):
    """Register v of column x after theta and rho."""
    v = g.tern(XOR3, v, c[(x - 1) % 5], r[x])
    return v if count is None else g.rolv(v, count)


def pi_chi(g, st, iota):
    """pi, chi and iota of a round whose theta and rho are done in st:
    the new column X is the old row X, which is one half (the same one)
    of every old column's register, so each new pair is one unpack of
    two old registers and each new S[X] one unpack of a register with
    itself; new S[0] is old S[0]."""
    def pair(X, y1, y2):
        (lo, h), (hi, _) = where(st, src_of(X, y1), X), \
            where(st, src_of(X, y2), X)
        return g.unpck(h, lo, hi)

    P = [[pair(X, 2 * k + 1, 2 * k + 2) for k in range(2)]
         for X in range(5)]
    S = [st.S[0]] + [pair(X, 0, 0) for X in range(1, 5)]
    groups = [[P[X][0] for X in range(5)], [P[X][1] for X in range(5)], S]
    out = [[g.tern(CHI, b[x], b[(x + 1) % 5], b[(x + 2) % 5])
            for x in range(5)] for b in groups]
    out[2][0] = g.xor(out[2][0], iota)
    return State([v for x in range(5) for v in (out[0][x], out[1][x],
                                                 out[2][x])])


def round_full(g, st, iota):
    c = parity(g, st)
    r = [g.rol(c[(x + 1) % 5], 1) for x in range(5)]
    mid = State([theta_rho(g, v, x, c, r, cnt(x, k)) for x in range(5)
                 for k, v in enumerate(st.P[x] + [st.S[x]])])
    return pi_chi(g, mid, iota)


def round_first(g, digest):
    """Round 0 of a chained hash: the state is the digest in S[0..3],
    lane 4 = 0x06 (S[4]), lane 16 = K16 (low half of P[1][1]) and zeros,
    so the parities are S[x] but c[1] = S[1] ^ K16, every zero register
    becomes d[x] = c[x-1] ^ rol(c[x+1], 1) before its rho, and the
    constants are memory operands: theta is 16 ops instead of 35."""
    S = digest
    c1 = g.xor(S[1], ".Lpad16(%rip){1to2}")
    d = [g.xor(g.rol(c1, 1), ".Lpad4(%rip){1to2}"),        # c[4] = 0x06
         g.xor(S[0], g.rol(S[2], 1)),
         g.xor(c1, g.rol(S[3], 1)),
         g.xor(S[2], ".Lpad4+8(%rip){1to2}"),              # rol(0x06, 1)
         g.xor(S[3], g.rol(S[0], 1))]
    p11 = g.xor(d[1], ".Lpad16(%rip)")
    s = [g.xor(S[x], d[x]) for x in range(4)]
    s.append(g.xor(d[4], ".Lpad4(%rip){1to2}"))
    vals = []
    for x in range(5):
        for k in range(2):
            vals.append(g.rolv(p11 if (x, k) == (1, 1) else d[x],
                               cnt(x, k)))
        vals.append(s[x] if x == 0 else g.rolv(s[x], cnt(x, 2)))
    return pi_chi(g, State(vals), ".Lrc(%rip)")


def round_last(g, st, iota):
    """Round 23 for the digest only: row 0 of the output needs b[0..4],
    the diagonal lanes (x, x) after theta and rho; the other 21 lanes of
    the last round are never read.  Each b[x] is broadcast first, so chi
    leaves the digest in both halves, the layout of S[0..3] the next
    hash starts from."""
    c = parity(g, st)
    r = [g.rol(c[(x + 1) % 5], 1) for x in range(5)]
    b = []
    for x in range(5):
        v, h = where(st, x, x)
        k = 2 if x == 0 else (x - 1) // 2
        v = theta_rho(g, v, x, c, r, cnt(x, k))
        b.append(v if x == 0 else g.unpck(h, v, v))
    out = [g.tern(CHI, b[x], b[x + 1], b[(x + 2) % 5]) for x in range(4)]
    out[0] = g.xor(out[0], iota)
    return out


# Early pi (avx512-early-pi, q_ below): row 0 held as column pairs.  P[x][k] as
# above; T[a] = (a[a][0], a[a+3][0]), so every row-0 lane is in two
# registers (as S[x] held it twice).  pi's unpacks then take the round's
# input registers, before theta: every register after pi holds two lanes
# of columns (x, x+3), so theta needs the parity pairs Q[a] = (c[a],
# c[a+3]) and rol(Q[a], 1), which come from the row sums u[x] = P[x][0]
# ^ P[x][1] with two unpacks and one ternlog each: the round's path is
# xor, unpack, ternlog, rol, theta ternlog, rho, chi (7 steps against
# 8), at 85 instructions against 79.

def qcnt(X, k):
    return ".Lqrho%d%d(%%rip)" % (X, k)


def q_parity(g, P, T):
    u = [g.xor(P[x][0], P[x][1]) for x in range(5)]
    Q = [g.tern(XOR3, g.unpck(0, u[a], u[(a + 3) % 5]),
                g.unpck(1, u[a], u[(a + 3) % 5]), T[a]) for a in range(5)]
    return Q, [g.rol(Q[a], 1) for a in range(5)]


def q_where(P, T, x, y):
    if y == 0:
        return T[x], 0
    return P[x][(y - 1) // 2], (y - 1) % 2


def q_theta(g, m, x, Q, R, count):
    return g.rolv(g.tern(XOR3, m, Q[(x - 1) % 5], R[(x + 1) % 5]), count)


def q_pi_P(g, P, T, X, k):
    """Unpacked (before theta) new P[X][k], and the column of its low
    lane (the high one is 3 columns on)."""
    x1, x2 = src_of(X, 2 * k + 1), src_of(X, 2 * k + 2)
    if X == 0:
        return T[x1], x1
    (r1, h), (r2, _) = q_where(P, T, x1, X), q_where(P, T, x2, X)
    return g.unpck(h, r1, r2), x1


def q_pi_T(g, P, T, A):
    (r1, h1), (r2, h2) = q_where(P, T, A, A), \
        q_where(P, T, (A + 3) % 5, (A + 3) % 5)
    return g.pick(r1, h1, r2, h2)


def q_chi(g, NP, NT, iota):
    OP = [[g.tern(CHI, NP[x][k], NP[(x + 1) % 5][k], NP[(x + 2) % 5][k])
           for x in range(5)] for k in range(2)]
    OT = [g.tern(CHI, NT[x], NT[(x + 1) % 5], NT[(x + 2) % 5])
          for x in range(5)]
    OT[0] = g.xor(OT[0], iota[0])           # lane (0, 0): T[0] low
    OT[2] = g.xor(OT[2], iota[1])           # and T[2] high
    return [[OP[0][x], OP[1][x]] for x in range(5)], OT


def q_round(g, P, T, iota):
    Q, R = q_parity(g, P, T)
    NP = [[None, None] for _ in range(5)]
    for X in range(5):
        for k in range(2):
            m, x = q_pi_P(g, P, T, X, k)
            NP[X][k] = q_theta(g, m, x, Q, R, qcnt(X, k))
    NT = [q_theta(g, q_pi_T(g, P, T, A), A, Q, R, qcnt(A, 2))
          for A in range(5)]
    return q_chi(g, NP, NT, iota)


def q_first(g, T):
    """Round 0 of a chained hash: T holds the digest and lane (4, 0) =
    0x06; the only other non-zero lane is (1, 3) = K16, the low half of
    P[1][1].  So u[1] = (K16, 0) and the other row sums are 0, and after
    pi only new P[3][0] (K16 low) and T[0], T[2] (lane (0, 0)) take a
    lane of the state: every other register is theta's column term."""
    Q = list(T)
    Q[1] = g.xor(T[1], ".Lpad16(%rip)")             # (K16, 0)
    Q[3] = g.xor(T[3], ".Lpad16h(%rip)")            # (0, K16)
    R = [g.rol(Q[a], 1) for a in range(5)]
    NP = [[None, None] for _ in range(5)]
    for X in range(5):
        for k in range(2):
            x1 = src_of(X, 2 * k + 1)
            a, b = Q[(x1 - 1) % 5], R[(x1 + 1) % 5]
            if X == 0:
                v = g.tern(XOR3, T[x1], a, b)
            elif (X, k) == (3, 0):
                v = g.tern(XOR3, a, b, ".Lpad16(%rip)")
            else:
                v = g.xor(a, b)
            NP[X][k] = g.rolv(v, qcnt(X, k))
    NT = []
    for A in range(5):
        a, b = Q[(A - 1) % 5], R[(A + 1) % 5]
        if A == 0:
            v = g.tern(XOR3, g.unpck(0, T[0], ".Lzero(%rip)"), a, b)
        elif A == 2:
            v = g.tern(XOR3, g.align(T[0], ".Lzero(%rip)"), a, b)
        else:
            v = g.xor(a, b)
        NT.append(g.rolv(v, qcnt(A, 2)))
    P, T = q_chi(g, NP, NT, (".Lrcq(%rip)", ".Lrcq+16(%rip)"))
    return [v for x in range(5) for v in P[x] + [T[x]]]


def q_last(g, P, T, iota):
    """Round 23 for the digest only: new T[0], T[2], T[3] hold its four
    lanes ((d0, d3), (d2, d0), (d3, d1)); T[1] = (d1, 0x06) and T[4] =
    (0x06, d2) are the next hash's padding, made from them."""
    Q, R = q_parity(g, P, T)
    NT = [q_theta(g, q_pi_T(g, P, T, A), A, Q, R, qcnt(A, 2))
          for A in range(5)]
    o = {x: g.tern(CHI, NT[x], NT[(x + 1) % 5], NT[(x + 2) % 5])
         for x in (0, 2, 3)}
    o[0] = g.xor(o[0], iota[0])
    o[2] = g.xor(o[2], iota[1])
    o[1] = g.unpck(1, o[3], ".Lpad4h(%rip)")
    o[4] = g.align(o[2], ".Lpad4h(%rip)")
    return [o[x] for x in range(5)]


def q_two_rounds(g, v):
    P = [[v[3 * x], v[3 * x + 1]] for x in range(5)]
    T = [v[3 * x + 2] for x in range(5)]
    P, T = q_round(g, P, T, ("(%rax)", "16(%rax)"))
    P, T = q_round(g, P, T, ("32(%rax)", "48(%rax)"))
    return [w for x in range(5) for w in P[x] + [T[x]]]



def schedule(g, ins, outs, model):
    """Order g's ops: list scheduling on the port model, longest path
    to an output first, at most NREG - 1 values live (one spare for a
    ternlog whose sources all live on)."""
    ports, lat = MODELS[model]
    if isinstance(lat, int):
        lat = dict.fromkeys(ports, lat)
    ops = g.ops
    prod = {o.dst: i for i, o in enumerate(ops)}
    users = [[] for _ in ops]
    nuses = {}
    for i, o in enumerate(ops):
        for s in o.srcs:
            if isinstance(s, int):
                nuses[s] = nuses.get(s, 0) + 1
                if s in prod:
                    users[prod[s]].append(i)
    for v in outs:
        nuses[v] = nuses.get(v, 0) + 1
    height = [0] * len(ops)
    for i in reversed(range(len(ops))):
        height[i] = lat[KIND[ops[i].kind]] + max(
            [height[u] for u in users[i]], default=0)
    ready_at = dict.fromkeys(ins, 0)
    left = dict(nuses)
    live = len(ins)
    order, pending, cycle = [], set(range(len(ops))), 0
    while pending:
        ready = sorted((i for i in pending if all(
            s in ready_at and ready_at[s] <= cycle for s in ops[i].srcs
            if isinstance(s, int))), key=lambda i: (-height[i], i))
        free = set("".join(ports.values()))
        for kinds in (("rot", "shuf"), ("alu", "tern")):
            for i in ready:
                o = ops[i]
                if KIND[o.kind] not in kinds:
                    continue
                dies = sum(1 for s in set(o.srcs) if isinstance(s, int)
                           and left[s] == o.srcs.count(s))
                if live + 1 - dies > NREG - 1:
                    continue
                port = [p for p in ports[KIND[o.kind]] if p in free]
                if not port:
                    continue
                free.discard(port[0])
                for s in set(s for s in o.srcs if isinstance(s, int)):
                    left[s] -= o.srcs.count(s)
                    live -= left[s] == 0
                live += 1
                ready_at[o.dst] = cycle + lat[KIND[o.kind]]
                o.ready = ready_at[o.dst]
                pending.discard(i)
                order.append(o)
        if ready and not any(i not in pending for i in ready):
            # only the register budget holds back every ready op
            raise RuntimeError("out of registers at cycle %d" % cycle)
        cycle += 1
    return order


def ternlog_imm(f, perm):
    """Immediate of f(a, b, c) with operand i of the instruction
    (destination, second, third) being argument perm[i] of f."""
    imm = 0
    for i in range(8):
        bits = [(i >> 2) & 1, (i >> 1) & 1, i & 1]
        args = [0, 0, 0]
        for pos, arg in enumerate(perm):
            args[arg] = bits[pos]
        imm |= (f(*args) & 1) << i
    return imm


def allocate(order, regs, outs, homes, late=False):
    """Registers for the ordered ops: regs maps the input values to
    their registers, output value outs[i] must end in homes[i].  Returns
    the instruction lines.  A ternlog overwrites a source that dies at it
    (any of the three, through the immediate), else a copy of one
    (vmovdqa64, eliminated at rename).  With late, an XOR3 ternlog
    overwrites its source ready last in the schedule (a copy of it if it
    lives on)."""
    ready = {o.dst: o.ready for o in order}     # inputs: 0
    last = {}
    for i, o in enumerate(order):
        for s in o.srcs:
            if isinstance(s, int):
                last[s] = i
    for v in outs:
        last[v] = len(order)
    want = dict(zip(outs, homes))
    # a ternlog's result lands where its dying source was: pass the
    # wish for a home down to that source, so few moves end the block
    for i in reversed(range(len(order))):
        o = order[i]
        if o.kind == "tern" and o.dst in want:
            src = next((s for s in o.srcs if isinstance(s, int) and
                        last[s] == i and o.srcs.count(s) == 1), None)
            if src is not None and src not in want:
                want[src] = want[o.dst]
    reg = dict(regs)
    free = sorted(set(range(NREG)) - set(reg.values()))
    lines = []

    def take(v):
        # other values keep off the homes while they can
        r = want.get(v)
        if r not in free:
            r = min(free, key=lambda r: (r in homes, r))
        free.remove(r)
        reg[v] = r
        return r

    for i, o in enumerate(order):
        dying = [s for s in dict.fromkeys(o.srcs)
                 if isinstance(s, int) and last[s] == i]
        if o.kind == "tern":
            mem = [p for p, s in enumerate(o.srcs) if isinstance(s, str)]
            cand = [p for p, s in enumerate(o.srcs)
                    if s in dying and o.srcs.count(s) == 1]
            if late and o.arg is XOR3:
                d = max((p for p, s in enumerate(o.srcs)
                         if isinstance(s, int)),
                        key=lambda p: (ready.get(o.srcs[p], 0), p in cand,
                                       reg[o.srcs[p]] == want.get(o.dst)))
            elif cand:
                d = next((p for p in cand
                          if reg[o.srcs[p]] == want.get(o.dst)), cand[0])
            else:
                d = next(p for p in range(3) if p not in mem)
            if d in cand:
                rd = reg[o.srcs[d]]
                dying.remove(o.srcs[d])
            else:
                rd = take(o.dst)
                lines.append("vmovdqa64 %s, %s" % (xmm(reg[o.srcs[d]]),
                                                   xmm(rd)))
            rest = [p for p in range(3) if p != d]
            rest.sort(key=lambda p: p in mem)   # memory operand last
            perm = [d] + rest
            args = [o.srcs[p] if isinstance(o.srcs[p], str)
                    else xmm(reg[o.srcs[p]]) for p in perm]
            lines.append("vpternlogq $0x%02x, %s, %s, %s" % (
                ternlog_imm(o.arg, perm), args[2], args[1], xmm(rd)))
            reg[o.dst] = rd
            for s in dying:
                free.append(reg[s])
            continue
        srcs = [s if isinstance(s, str) else xmm(reg[s]) for s in o.srcs]
        for s in dying:
            free.append(reg[s])
        free.sort()
        rd = xmm(take(o.dst))
        if o.kind == "xor":
            lines.append("vpxorq %s, %s, %s" % (srcs[1], srcs[0], rd))
        elif o.kind == "rol":
            lines.append("vprolq $%d, %s, %s" % (o.arg, srcs[0], rd))
        elif o.kind == "rolv":
            lines.append("vprolvq %s, %s, %s" % (srcs[1], srcs[0], rd))
        elif o.kind == "shuf":
            lines.append("vpshufd $0x%02x, %s, %s" % (o.arg, srcs[0], rd))
        elif o.kind == "pick":
            lines.append("vshufpd $%d, %s, %s, %s" % (o.arg, srcs[1], srcs[0],
                                                     rd))
        elif o.kind == "align":
            lines.append("valignq $1, %s, %s, %s" % (srcs[1], srcs[0], rd))
        else:
            lines.append("vp%sqdq %s, %s, %s" % (o.kind, srcs[1], srcs[0],
                                                 rd))
    # outputs not in their homes: moves (eliminated at rename), through
    # a free register when they form a cycle
    at = {reg[v]: v for v in outs}
    todo = [(reg[v], h) for v, h in zip(outs, homes) if reg[v] != h]
    while todo:
        for j, (r, h) in enumerate(todo):
            if h not in at:
                lines.append("vmovdqa64 %s, %s" % (xmm(r), xmm(h)))
                at[h] = at.pop(r)
                todo.pop(j)
                break
        else:
            r, h = todo[0]
            t = next(t for t in range(NREG) if t not in at)
            lines.append("vmovdqa64 %s, %s" % (xmm(r), xmm(t)))
            at[t] = at.pop(r)
            todo[0] = (t, h)
    return lines


def block(a, build, nin, regs, homes, model="intel"):
    """Emit the code that build(g, inputs) -> outputs describes, inputs
    in registers regs, outputs left in registers homes, ordered for the
    port model named model."""
    g = Graph(nin)
    outs = build(g, list(range(nin)))
    order = schedule(g, list(range(nin)), outs, model)
    for line in allocate(order, dict(enumerate(regs)), outs, homes,
                         model in LATE_DST):
        a.op(line)


class Asm:
    def __init__(self):
        self.out = []

    def op(self, s):
        self.out.append("\t" + s)

    def label(self, s):
        self.out.append(s + ":")


HOME = list(range(15))              # state registers between blocks
DIGEST = [HOME[3 * x + 2] for x in range(4)]     # S[0..3]


def two_rounds(iota):
    return lambda g, v: round_full(g, round_full(g, State(v), iota[0]),
                                   iota[1]).vals()


def consts(a):
    a.out.append("\tRODATA")
    a.out.append("\t.balign 64")
    a.label(".Lrc")                  # lane (0, 0) is S[0], both halves
    for r in RC:
        a.op(".quad 0x%016x, 0x%016x" % (r, r))
    for x in range(5):
        for k in range(2):
            a.label(".Lrho%d%d" % (x, k))
            a.op(".quad %d, %d" % (RHO[x][2 * k + 1], RHO[x][2 * k + 2]))
        if x:
            a.label(".Lrho%d2" % x)
            a.op(".quad %d, %d" % (RHO[x][0], RHO[x][0]))
    a.label(".Lpad16")                # lane 16: K16 in the low half only
    a.op(".quad 0x%016x, 0" % K16)
    a.label(".Lpad4")                 # lane 4 = 0x06 and rol(0x06, 1)
    a.op(".quad 0x06, 0x0c")
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


def permute(a, name, model):
    """void name(uint64_t s[25]): the full permutation through memory."""
    func(a, name)
    st = State(HOME)
    for x in range(5):
        for k in range(2):
            reg = st.P[x][k]
            a.op("vmovq %d(%%rdi), %s" % (8 * lane(x, 2 * k + 1),
                                         xmm(reg)))
            a.op("vpinsrq $1, %d(%%rdi), %s, %s" %
                 (8 * lane(x, 2 * k + 2), xmm(reg), xmm(reg)))
        a.op("vpbroadcastq %d(%%rdi), %s" % (8 * lane(x, 0), xmm(st.S[x])))
    a.op("leaq .Lrc(%rip), %rax")
    a.op("leaq 384(%rax), %rdx")
    a.label(".Lround_" + name)
    block(a, two_rounds(("(%rax)", "16(%rax)")), 15, HOME, HOME, model)
    a.op("addq $32, %rax")
    a.op("cmpq %rdx, %rax")
    a.op("jne .Lround_" + name)
    for x in range(5):
        for k in range(2):
            reg = st.P[x][k]
            a.op("vmovq %s, %d(%%rdi)" % (xmm(reg), 8 * lane(x, 2 * k + 1)))
            a.op("vpextrq $1, %s, %d(%%rdi)" %
                 (xmm(reg), 8 * lane(x, 2 * k + 2)))
        a.op("vmovq %s, %d(%%rdi)" % (xmm(st.S[x]), 8 * lane(x, 0)))
    endfunc(a, name)


def chain(a, name, rounds, model):
    """void name(uint8_t x[32], uint64_t steps): x = SHA3-256(x) steps
    times, x held in S[0..3] (row 0, both halves) between hashes; each
    block scheduled holds the given number of rounds (24: all of a
    hash; 2 or 1: rounds 1-22 are a loop of that many)."""
    func(a, name)
    a.op("testq %rsi, %rsi")
    a.op("jz .Ldone_" + name)
    for i in range(4):
        a.op("vpbroadcastq %d(%%rdi), %s" % (8 * i, xmm(DIGEST[i])))
    a.op(".balign 32")
    a.label(".Lhash_" + name)
    if rounds == 24:
        def whole(g, d):
            st = round_first(g, d)
            for r in range(1, 23):
                st = round_full(g, st, ".Lrc+%d(%%rip)" % (16 * r))
            return round_last(g, st, ".Lrc+368(%rip)")
        block(a, whole, 4, DIGEST, DIGEST, model)
    else:
        block(a, lambda g, d: round_first(g, d).vals(), 4, DIGEST, HOME, model)
        a.op("leaq .Lrc+16(%rip), %rax")
        a.op("leaq .Lrc+368(%rip), %rdx")
        a.op(".balign 32")
        a.label(".Lround_" + name)
        if rounds == 2:
            block(a, two_rounds(("(%rax)", "16(%rax)")), 15, HOME, HOME,
                  model)
        else:
            block(a, lambda g, v: round_full(g, State(v), "(%rax)").vals(),
                  15, HOME, HOME, model)
        a.op("addq $%d, %%rax" % (16 * rounds))
        a.op("cmpq %rdx, %rax")
        a.op("jne .Lround_" + name)
        block(a, lambda g, v: round_last(g, State(v), ".Lrc+368(%rip)"),
              15, HOME, DIGEST, model)
    a.op("decq %rsi")
    a.op("jnz .Lhash_" + name)
    for i in range(4):
        a.op("vmovq %s, %d(%%rdi)" % (xmm(DIGEST[i]), 8 * i))
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


def emit(path, what, fused, rounds, model="intel"):
    a = Asm()
    consts(a)
    prefix = "sha3_" + os.path.basename(os.path.dirname(path)).replace("-", "_")
    permute(a, prefix + "_permute", model)
    if fused:
        chain(a, prefix + "_chain", rounds, model)
    with open(path, "w") as f:
        f.write(HEAD % "\n * ".join(textwrap.wrap(what, 60)))
        f.write("\n".join(a.out) + "\n")
        f.write(TAIL)


def q_consts(a):
    a.out.append("\tRODATA")
    a.out.append("\t.balign 64")
    a.label(".Lrcq")        # lane (0, 0): T[0] low, T[2] high
    for r in RC:
        a.op(".quad 0x%016x, 0, 0, 0x%016x" % (r, r))
    for X in range(5):
        for k in range(2):
            a.label(".Lqrho%d%d" % (X, k))
            a.op(".quad %d, %d" % (RHO[src_of(X, 2 * k + 1)][X],
                                   RHO[src_of(X, 2 * k + 2)][X]))
        a.label(".Lqrho%d2" % X)
        a.op(".quad %d, %d" % (RHO[X][X], RHO[(X + 3) % 5][(X + 3) % 5]))
    a.label(".Lpad16")
    a.op(".quad 0x%016x, 0" % K16)
    a.label(".Lpad16h")
    a.op(".quad 0, 0x%016x" % K16)
    a.label(".Lpad4h")
    a.op(".quad 0, 0x06")
    a.label(".Lzero")
    a.op(".quad 0, 0")
    a.out.append("\t.text")


def q_round_loop(a, name, model):
    """Two rounds a pass, %rax over the round constants up to %rdx."""
    a.label(".Lround_" + name)
    block(a, q_two_rounds, 15, HOME, HOME, model)
    a.op("addq $64, %rax")
    a.op("cmpq %rdx, %rax")
    a.op("jne .Lround_" + name)


def q_permute(a, name, model):
    """void name(uint64_t s[25]), the early-pi layout."""
    func(a, name)
    for x in range(5):
        for k in range(2):
            reg = HOME[3 * x + k]
            a.op("vmovq %d(%%rdi), %s" % (8 * lane(x, 2 * k + 1), xmm(reg)))
            a.op("vpinsrq $1, %d(%%rdi), %s, %s" %
                 (8 * lane(x, 2 * k + 2), xmm(reg), xmm(reg)))
        reg = HOME[3 * x + 2]
        a.op("vmovq %d(%%rdi), %s" % (8 * lane(x, 0), xmm(reg)))
        a.op("vpinsrq $1, %d(%%rdi), %s, %s" %
             (8 * lane(x + 3, 0), xmm(reg), xmm(reg)))
    a.op("leaq .Lrcq(%rip), %rax")
    a.op("leaq 768(%rax), %rdx")
    q_round_loop(a, name, model)
    for x in range(5):
        for k in range(2):
            reg = HOME[3 * x + k]
            a.op("vmovq %s, %d(%%rdi)" % (xmm(reg), 8 * lane(x, 2 * k + 1)))
            a.op("vpextrq $1, %s, %d(%%rdi)" %
                 (xmm(reg), 8 * lane(x, 2 * k + 2)))
        a.op("vmovq %s, %d(%%rdi)" % (xmm(HOME[3 * x + 2]), 8 * lane(x, 0)))
    endfunc(a, name)


def q_chain(a, name, model):
    """void name(uint8_t x[32], uint64_t steps): row 0 (the digest and
    lane (4, 0) = 0x06) held in T[0..4] between hashes."""
    func(a, name)
    TH = [HOME[3 * x + 2] for x in range(5)]
    a.op("testq %rsi, %rsi")
    a.op("jz .Ldone_" + name)
    for x in range(5):
        lo, hi = x, (x + 3) % 5
        a.op("vmovq %s, %s" % ("%d(%%rdi)" % (8 * lo) if lo < 4
                                else ".Lpad4h+8(%rip)", xmm(TH[x])))
        a.op("vpinsrq $1, %s, %s, %s" % ("%d(%%rdi)" % (8 * hi) if hi < 4
                                          else ".Lpad4h+8(%rip)",
                                          xmm(TH[x]), xmm(TH[x])))
    a.op(".balign 32")
    a.label(".Lhash_" + name)
    block(a, q_first, 5, TH, HOME, model)
    a.op("leaq .Lrcq+32(%rip), %rax")
    a.op("leaq .Lrcq+736(%rip), %rdx")
    a.op(".balign 32")
    q_round_loop(a, name, model)

    def last(g, v):
        P = [[v[3 * x], v[3 * x + 1]] for x in range(5)]
        T = [v[3 * x + 2] for x in range(5)]
        return q_last(g, P, T, (".Lrcq+736(%rip)", ".Lrcq+752(%rip)"))
    block(a, last, 15, HOME, TH, model)
    a.op("decq %rsi")
    a.op("jnz .Lhash_" + name)
    for x in range(4):
        a.op("vmovq %s, %d(%%rdi)" % (xmm(TH[x]), 8 * x))
    a.label(".Ldone_" + name)
    endfunc(a, name)


def q_emit(path, what, model):
    a = Asm()
    q_consts(a)
    prefix = "sha3_" + os.path.basename(os.path.dirname(path)).replace("-", "_")
    q_permute(a, prefix + "_permute", model)
    q_chain(a, prefix + "_chain", model)
    with open(path, "w") as f:
        f.write(HEAD % "\n * ".join(textwrap.wrap(what, 60)))
        f.write("\n".join(a.out) + "\n")
        f.write(TAIL)


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    for out, what, fused, rounds, model in KERNELS:
        emit(os.path.join(root, out), what, fused, rounds, model)
    out, what, model = EARLY_PI
    q_emit(os.path.join(root, out), what, model)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--outputs"]:
        print("\n".join(OUTPUTS))
        sys.exit(0)
    sys.exit(main())
