#!/usr/bin/env python3
"""Generate kernels/sha3/keccak-avx2.h, the AVX2 Keccak-f[1600] round of
the avx2-* sha3 variants.

    python3 kernels/sha3/gen-avx2.py      (from the repository root)

Layout: seven ymm registers, four lanes each, chosen so that pi moves
lanes only inside a register (the idea of the Keccak team's and
CRYPTOGAMS' AVX2 code; the derivation and the code here are our own).
With lane (x, y) at x + 5y and slot j = 0..3 of a register:

    lane0   (0, 0) in all four slots
    row0    (j + 1, 0)                 row 0 without (0, 0)
    col0    (0, 2(j + 1))              column 0 without (0, 0)
    diagK   (j + 1, K(j + 1)), K=1..4  the line y = Kx without (0, 0)

Pi, (x, y) -> (y, 2x + 3y), is linear, so it maps each line through
(0, 0) onto another one: diag1 -> row0, row0 -> col0 in place, col0 ->
diag3, diag2 -> diag4, diag3 -> diag2, diag4 -> diag1 with one vpermq
each.  Slot j of every register except lane0 and col0 is column j + 1,
so theta adds one vector of column effects to five registers at once.
Chi needs rows instead: pi's vpermq already put the new diagonals in
"row order" (slot j is row 2(j + 1), as in col0), so each chi neighbour
vector is a vpblendd of the registers that hold it in that slot, and one
vpermq per diagonal (none for diag2) restores column order afterwards.
Rho is vpsllvq + vpsrlvq + vpor with per-slot counts.

The generator builds each round as a list of operations, checks it
against a plain Keccak-f[1600] on random states, orders it with a list
scheduler (longest path first on this core's ports, at most 16 values
live) and writes it out as C intrinsics.  Intrinsics rather than
assembly: the state and the temporaries fit in the 16 registers, so the
compilers keep the order without spilling in the loop, and the same
text serves the wrapper and the fused chain, where the compilers fold
round 0's constant lanes.  Side by side the scheduled order is 6% faster
than the unscheduled one built with clang, and 1% with gcc (which
reorders less).  The variants' flags add -mno-avx512f: with -march=native the compilers
otherwise turn these intrinsics into EVEX code (vpternlogq, vprolvq).
"""
import os
import random
import sys

# What this generator writes, relative to its folder; `--outputs` prints
# it for make regen and tests/test_21_generated.py, so no list repeats it.
OUTPUTS = ["keccak-avx2.h"]

RHO = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61],
       [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]   # RHO[x][y]
RC = [0x0000000000000001, 0x0000000000008082, 0x800000000000808a,
      0x8000000080008000, 0x000000000000808b, 0x0000000080000001,
      0x8000000080008081, 0x8000000000008009, 0x000000000000008a,
      0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
      0x000000008000808b, 0x800000000000008b, 0x8000000000008089,
      0x8000000000008003, 0x8000000000008002, 0x8000000000000080,
      0x000000000000800a, 0x800000008000000a, 0x8000000080008081,
      0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
M64 = (1 << 64) - 1
INV = {1: 1, 2: 3, 3: 2, 4: 4}       # multiplicative inverses mod 5
ROWS = [2 * (j + 1) % 5 for j in range(4)]    # col0's rows: 2, 4, 1, 3

# Column-ordered layouts between rounds, lane (x, y) per slot.
LAYOUT = {"lane0": [(0, 0)] * 4,
          "row0": [(j + 1, 0) for j in range(4)],
          "col0": [(0, r) for r in ROWS]}
for K in range(1, 5):
    LAYOUT["diag%d" % K] = [(j + 1, K * (j + 1) % 5) for j in range(4)]
STATE = ["lane0", "row0", "col0", "diag1", "diag2", "diag3", "diag4"]
# Chi's row order: slot j of every rows 1-4 register is row ROWS[j].
ROWORDER = {"col0": LAYOUT["col0"]}
for K in range(1, 5):
    ROWORDER["diag%d" % K] = [(r * INV[K] % 5, r) for r in ROWS]


def pi(x, y):
    return (y, (2 * x + 3 * y) % 5)


def rol(v, n):
    n %= 64
    return ((v << n) | (v >> (64 - n))) & M64 if n else v


class Round:
    """A straight-line list of ymm operations on named values."""

    def __init__(self):
        self.ops = []       # (name, kind, args)
        self.n = 0

    def op(self, kind, *args):
        name = "t%d" % self.n
        self.n += 1
        self.ops.append((name, kind, args))
        return name

    def xor(self, a, b):
        return self.op("xor", a, b)

    def andn(self, a, b):                 # ~a & b
        return self.op("andn", a, b)

    def perm(self, a, idx):               # out[s] = a[idx[s]]
        if list(idx) == [0, 1, 2, 3]:
            return a
        return self.op("perm", a, tuple(idx))

    def blend(self, a, b, slots):         # slots of b into a
        return self.op("blend", a, b, tuple(slots))

    def rol1(self, a):
        return self.op("or", self.op("add", a, a), self.op("srl", a, 63))

    def rolv(self, a, counts):
        left = self.op("sllv", a, tuple(counts))
        right = self.op("srlv", a, tuple(64 - c for c in counts))
        return self.op("or", left, right)


def gather(g, want, have):
    """A vector whose slot j is lane want[j], from registers `have` (name
    -> lanes per slot) that hold it in slot j: one vpblendd per extra
    source register."""
    src = []
    for j, w in enumerate(want):
        regs = [r for r, lanes in have.items() if lanes[j] == w]
        assert len(regs) == 1, (want, j)
        src.append(regs[0])
    # A tree of blends, two levels instead of a chain of three.
    parts = [(r, [j for j in range(4) if src[j] == r])
             for r in sorted(set(src), key=src.index)]
    while len(parts) > 1:
        nxt = []
        for i in range(0, len(parts) - 1, 2):
            (a, sa), (b, sb) = parts[i], parts[i + 1]
            nxt.append((g.blend(a, b, sb), sa + sb))
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0][0]


def build_round(last=False):
    """One round on the STATE values: the operations and the value that
    becomes each register.  With last=True the outputs are lane0 and row0
    (the digest) only, and prune() drops what they do not need."""
    g = Round()
    L = LAYOUT
    # theta: column parities; row0 and the diagonals are column-ordered.
    c14 = g.xor(g.xor(g.xor("row0", "diag1"), g.xor("diag2", "diag3")),
                "diag4")
    u = g.xor("col0", g.op("swap64", "col0"))      # (p, p, q, q)
    c0 = g.xor(g.xor(u, "lane0"), g.perm(u, [2, 3, 0, 1]))
    rc14, rc0 = g.rol1(c14), g.rol1(c0)
    t4 = g.perm(c14, [3, 0, 1, 2])                  # c4 c1 c2 c3
    d0 = g.perm(g.xor(t4, rc14), [0, 0, 0, 0])      # c4 ^ rol(c1, 1)
    d14 = g.xor(g.blend(t4, c0, [0]),
                g.blend(g.perm(rc14, [1, 2, 3, 0]), rc0, [3]))
    lane0 = g.xor("lane0", d0)
    after = {"row0": g.xor("row0", d14)}
    for K in (1, 2, 3, 4):
        after["diag%d" % K] = g.xor("diag%d" % K, d14)
    if not last:
        after["col0"] = g.xor("col0", d0)
    # rho, then pi as a vpermq into chi's row order.
    rho = {}
    for r, v in after.items():
        rho[r] = g.rolv(v, [RHO[x][y] for x, y in L[r]])
    newrow0 = rho["diag1"]
    assert [pi(*p) for p in L["diag1"]] == L["row0"]
    # row 0: b0 in lane0 (all slots), b1..b4 in newrow0.
    n1 = g.blend(g.perm(newrow0, [1, 2, 3, 3]), lane0, [3])   # b2 b3 b4 b0
    n2 = g.blend(g.perm(newrow0, [2, 3, 0, 0]), lane0, [2])   # b3 b4 b0 b1
    e = g.andn(newrow0, n1)                                   # ~b1 & b2
    out0 = g.xor(g.xor(lane0, "rc"), g.perm(e, [0, 0, 0, 0]))
    out1 = g.xor(newrow0, g.andn(n1, n2))
    if last:
        return g, {"lane0": out0, "row0": out1}
    moved = {"col0": rho["row0"]}
    assert [pi(*p) for p in L["row0"]] == ROWORDER["col0"]
    for r in ("col0", "diag2", "diag3", "diag4"):
        dest = [pi(*p) for p in L[r]]
        tgt = [k for k, lanes in ROWORDER.items() if sorted(lanes) ==
               sorted(dest)][0]
        moved[tgt] = g.perm(rho[r], [dest.index(p) for p in ROWORDER[tgt]])
    # chi on rows 1-4, all five registers in row order.
    have = {moved[k]: ROWORDER[k] for k in moved}
    out = {"lane0": out0, "row0": out1}
    for r in ("col0", "diag1", "diag2", "diag3", "diag4"):
        lanes = ROWORDER[r]
        b1 = gather(g, [((x + 1) % 5, y) for x, y in lanes], have)
        b2 = gather(g, [((x + 2) % 5, y) for x, y in lanes], have)
        v = g.xor(moved[r], g.andn(b1, b2))
        out[r] = g.perm(v, [lanes.index(p) for p in LAYOUT[r]])
    return g, out


# --- checking against plain Keccak ------------------------------------


def keccak_round(a, rc):
    c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]
         for x in range(5)]
    d = [c[(x - 1) % 5] ^ rol(c[(x + 1) % 5], 1) for x in range(5)]
    b = [0] * 25
    for x in range(5):
        for y in range(5):
            X, Y = pi(x, y)
            b[X + 5 * Y] = rol(a[x + 5 * y] ^ d[x], RHO[x][y])
    return [b[i] ^ (~b[(i % 5 + 1) % 5 + 5 * (i // 5)] & M64 &
                    b[(i % 5 + 2) % 5 + 5 * (i // 5)]) ^ (rc if i == 0
                                                          else 0)
            for i in range(25)]


def simulate(g, regs, rc):
    v = dict(regs)
    v["rc"] = [rc] * 4
    for name, kind, args in g.ops:
        a = [v.get(x) if isinstance(x, str) else x for x in args]
        if kind == "xor":
            r = [p ^ q for p, q in zip(a[0], a[1])]
        elif kind == "andn":
            r = [~p & q & M64 for p, q in zip(a[0], a[1])]
        elif kind == "or":
            r = [p | q for p, q in zip(a[0], a[1])]
        elif kind == "add":
            r = [(p + q) & M64 for p, q in zip(a[0], a[1])]
        elif kind == "srl":
            r = [p >> args[1] for p in a[0]]
        elif kind == "sllv":
            r = [(p << n) & M64 for p, n in zip(a[0], args[1])]
        elif kind == "srlv":
            r = [p >> n if n < 64 else 0 for p, n in zip(a[0], args[1])]
        elif kind == "perm":
            r = [a[0][i] for i in args[1]]
        elif kind == "blend":
            r = [a[1][j] if j in args[2] else a[0][j] for j in range(4)]
        elif kind == "swap64":
            r = [a[0][1], a[0][0], a[0][3], a[0][2]]
        else:
            raise ValueError(kind)
        v[name] = r
    return v


def check():
    rnd = random.Random(1)
    full, fout = build_round()
    last, lout = build_round(last=True)
    for t in range(20):
        a = [rnd.getrandbits(64) for _ in range(25)]
        rc = RC[t]
        regs = {r: [a[x + 5 * y] for x, y in LAYOUT[r]] for r in STATE}
        want = keccak_round(a, rc)
        v = simulate(full, regs, rc)
        for r in STATE:
            got = v[fout[r]]
            assert got == [want[x + 5 * y] for x, y in LAYOUT[r]], r
        v = simulate(last, regs, rc)
        assert v[lout["lane0"]] == [want[0]] * 4
        assert v[lout["row0"]] == want[1:5]


# --- C output ------------------------------------------------------------


def prune(g, out):
    """Drop the operations no output depends on (round 23's)."""
    live = set(out.values())
    keep = []
    for op in reversed(g.ops):
        if op[0] in live:
            keep.append(op)
            live.update(a for a in op[2] if isinstance(a, str))
    g.ops = keep[::-1]
    return g


# Ports and latencies of this core (Intel, 256-bit): vpermq only on port
# 5 with latency 3, shifts on 0/1, in-lane shuffles on 1/5, the rest on
# 0/1/5 with latency 1.
PORTS = {"perm": "5", "swap64": "15", "sllv": "01", "srlv": "01",
         "srl": "01"}
LATENCY = {"perm": 3}


def schedule(g, regs=16):
    """Reorder g's operations as a list scheduler on the port model would
    issue them, longest path to the end of the round first: the cores
    bind an instruction to a port when it is allocated and then run the
    oldest ready one, so the order of the text is the order of issue.
    While `regs` values are live only instructions that free one start
    (unless nothing else can issue), so the compilers need not spill."""
    ops = {op[0]: op for op in g.ops}
    users = {}
    for n, _, args in g.ops:
        for a in set(args):
            if isinstance(a, str):
                users.setdefault(a, []).append(n)
    height = {}
    for n, kind, _ in reversed(g.ops):
        height[n] = LATENCY.get(kind, 1) + max(
            [height[u] for u in users.get(n, [])], default=0)
    left = {v: len(u) for v, u in users.items()}
    live = len([v for v in users if v not in ops and v != "rc"])
    ready_at = {}
    done, order, cycle, idle = set(), [], 0, 0
    while len(order) < len(g.ops):
        free = set("015")
        cand = [op for op in g.ops if op[0] not in done and all(
            a not in ops or ready_at.get(a, 1 << 30) <= cycle
            for a in op[2])]
        cand.sort(key=lambda op: (-height[op[0]], len(PORTS.get(
            op[1], "015"))))
        for n, kind, args in cand:
            dying = [a for a in set(args) if a in left and left[a] == 1
                     and a != "rc"]
            if live >= regs and not dying and idle < 3:
                continue
            ports = [p for p in PORTS.get(kind, "015") if p in free]
            if ports:
                free.discard(ports[0])
                done.add(n)
                order.append((n, kind, args))
                ready_at[n] = cycle + LATENCY.get(kind, 1)
                for a in set(args):
                    if a in left:
                        left[a] -= 1
                live += 1 - len(dying)
        idle = idle + 1 if len(free) == 3 else 0
        cycle += 1
    g.ops = order
    g.cycles = cycle
    return g


def cexpr(kind, args):
    a = ["(rc)" if x == "rc" else x for x in args if isinstance(x, str)]
    if kind in ("xor", "or"):
        return "_mm256_%s_si256(%s, %s)" % (kind, a[0], a[1])
    if kind == "andn":
        return "_mm256_andnot_si256(%s, %s)" % (a[0], a[1])
    if kind == "add":
        return "_mm256_add_epi64(%s, %s)" % (a[0], a[1])
    if kind == "srl":
        return "_mm256_srli_epi64(%s, %d)" % (a[0], args[1])
    if kind in ("sllv", "srlv"):
        return "_mm256_%s_epi64(%s, _mm256_setr_epi64x(%s))" % (
            kind, a[0], ", ".join(str(c) for c in args[1]))
    if kind == "perm":
        imm = sum(i << (2 * j) for j, i in enumerate(args[1]))
        return "_mm256_permute4x64_epi64(%s, 0x%02x)" % (a[0], imm)
    if kind == "blend":
        imm = sum(3 << (2 * j) for j in args[2])
        return "_mm256_blend_epi32(%s, %s, 0x%02x)" % (a[0], a[1], imm)
    if kind == "swap64":
        return "_mm256_shuffle_epi32(%s, 0x4e)" % a[0]
    raise ValueError(kind)


def macro(head, lines):
    """A multi-line #define with the backslashes aligned at column 72."""
    text = []
    for ln in [head] + lines:
        width = len(ln.expandtabs())
        pad = "\t" * max(1, (72 - width + 7) // 8) if width < 72 else " "
        text.append(ln + pad + "\\")
    return "\n".join(text) + "\n"


def round_macro(name, g, out):
    lines = []
    for dst, kind, args in g.ops:
        e = cexpr(kind, args)
        ln = "\t__m256i %s = %s;" % (dst, e)
        if len(ln.expandtabs()) > 70:
            cut = e.index(", ") + 1
            lines += ["\t__m256i %s = %s" % (dst, e[:cut]),
                      "\t    %s;" % e[cut + 1:]]
        else:
            lines.append(ln)
    for r in STATE:
        if r in out:
            lines.append("\t%s = %s;" % (r, out[r]))
    text = macro("#define %s(rc) do {" % name, lines)
    return text + "} while (0)\n"


def header():
    full, fout = build_round()
    last, lout = build_round(last=True)
    schedule(full)
    schedule(prune(last, lout))
    print("round %d ops, %d modelled cycles; last round %d ops" % (
        len(full.ops), full.cycles, len(last.ops)), file=sys.stderr)
    nfull, nlast = len(full.ops), len(last.ops)
    kinds = {}
    for _, k, _ in full.ops:
        kinds[k] = kinds.get(k, 0) + 1

    def lanes(r):
        return ", ".join("(s)[%d]" % (x + 5 * y) for x, y in LAYOUT[r])

    loads = ["\tlane0 = _mm256_set1_epi64x((long long)(s)[0]);",
             "\trow0 = _mm256_loadu_si256((const __m256i *)(const void *)"
             "&(s)[1]);"]
    stores = ["\t_mm_storel_epi64((__m128i *)(void *)&(s)[0],",
              "\t    _mm256_castsi256_si128(lane0));",
              "\t_mm256_storeu_si256((__m256i *)(void *)&(s)[1], row0);"]
    for r in STATE[2:]:
        loads.append("\t%s = _mm256_setr_epi64x((long long)%s," % (
            r, lanes(r).split(", ")[0]))
        loads.append("\t    (long long)%s);" % ", (long long)".join(
            lanes(r).split(", ")[1:]))
        stores.append("\tkeccak_store4_avx2((s), %s, %s);" % (
            r, ", ".join(str(x + 5 * y) for x, y in LAYOUT[r])))
    return HEADER % {
        "nfull": nfull, "nlast": nlast,
        "blend": kinds["blend"], "perm": kinds["perm"],
        "shift": kinds["sllv"] + kinds["srlv"] + kinds["srl"] +
        kinds["add"], "logic": kinds["xor"] + kinds["or"] + kinds["andn"],
        "round": round_macro("KECCAK_ROUND_AVX2", full, fout),
        "last": round_macro("KECCAK_LAST_ROUND_AVX2", last, lout),
        "load": macro("#define KECCAK_LOAD_AVX2(s) do {", loads) +
        "} while (0)\n",
        "store": macro("#define KECCAK_STORE_AVX2(s) do {", stores) +
        "} while (0)\n",
    }


HEADER = """\
/*
 * Keccak-f[1600] with AVX2 (VEX, 16 ymm registers) for the avx2-*
 * variants, whose flags add -mavx2 -mno-avx512f (so that -march=native
 * builds stay VEX); include it nowhere else.  Generated
 * by gen-avx2.py, which derives the layout, checks the round against a
 * plain Keccak and explains it; edit the generator, not this file.
 *
 * Seven ymm registers hold the state so that pi only moves lanes inside
 * a register (slot j = 0..3, lane (x, y) at x + 5y):
 *
 *   lane0  (0, 0) in every slot       col0   (0, 2(j + 1))
 *   row0   (j + 1, 0)                 diagK  (j + 1, K(j + 1)), K = 1..4
 *
 * A round is %(nfull)d instructions: %(logic)d vpxor/vpor/vpandn, %(shift)d shifts
 * (rho's vpsllvq/vpsrlvq, theta's rotate by one), %(perm)d vpermq (pi, theta,
 * chi's return to column order), %(blend)d vpblendd (chi's neighbour lanes);
 * the last round of a chained hash, which only needs the digest lanes
 * (lane0, row0), is %(nlast)d.  The order is gen-avx2.py's list schedule,
 * which keeps at most 16 values live so the compilers do not spill.
 */
#ifndef SEQORCH_KECCAK_AVX2_H
#define SEQORCH_KECCAK_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#include "sha3/keccak-c.h"

#define KECCAK_STATE_AVX2						\\
	__m256i lane0, row0, col0, diag1, diag2, diag3, diag4

/* One round on the seven registers; rc is the round constant, broadcast. */
%(round)s
/* Round 23 of a chained hash: only lane0 and row0 (the digest lanes). */
%(last)s
%(load)s
/* Slots 0-3 of v to lanes i0-i3 of s. */
static inline void
keccak_store4_avx2(uint64_t s[25], __m256i v, int i0, int i1, int i2, int i3)
{
	uint64_t t[4];

	_mm256_storeu_si256((__m256i *)(void *)t, v);
	s[i0] = t[0];
	s[i1] = t[1];
	s[i2] = t[2];
	s[i3] = t[3];
}

%(store)s
#define KECCAK_RC_AVX2(r) _mm256_set1_epi64x((long long)keccak_rc[r])

/* The permutation through memory; noinline so it has its own symbol. */
static __attribute__((noinline)) void
keccak_f1600_avx2(uint64_t s[25])
{
	KECCAK_STATE_AVX2;
	int r;

	KECCAK_LOAD_AVX2(s);
	for (r = 0; r < 24; r++)
		KECCAK_ROUND_AVX2(KECCAK_RC_AVX2(r));
	KECCAK_STORE_AVX2(s);
}

#endif
"""


if __name__ == "__main__":
    if sys.argv[1:] == ["--outputs"]:
        print("\n".join(OUTPUTS))
        sys.exit(0)
    check()
    root = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(root, OUTPUTS[0]), "w") as f:
        f.write(header())
