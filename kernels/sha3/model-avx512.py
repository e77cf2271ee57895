#!/usr/bin/env python3
"""A rough issue model of the AVX-512 sha3 rounds (docs/studies.md).

    python3 kernels/sha3/model-avx512.py [--gen GENERATOR.py]

Generates 12 rounds, six of the two-round loop bodies of gen-avx512.py
(or of another version of it, e.g. the one-lane-per-register generator of
commit 6fc6075: `git show 6fc6075:kernels/sha3/gen-avx512.py >
/tmp/lanes.py`, or the unscheduled lane pairs of commit 92a459d), then
schedules the instructions greedily, oldest ready first, on a port and
latency model: "intel" is what was measured on the study's Emerald Rapids
VM, "zen5-issue" what issue 9 stated for Zen 5, "zen5" what was measured
on the Zen 5 VM (docs/studies.md).  --order zen5 takes the rounds as the
generator orders them for Zen 5 (avx512-zen5).  Prints cycles per round.
Not a simulator of either core: no front end, no port binding at
allocation, unlimited window.
"""
import argparse
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = 12


def load(path):
    spec = importlib.util.spec_from_file_location("gen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generate(g, order):
    a = g.Asm()
    if hasattr(g, "two_rounds"):
        extra = (order,) if order else ()
        for r in range(ROUNDS // 2):
            g.block(a, g.two_rounds(("(%rax)", "16(%rax)")), 15, g.HOME,
                    g.HOME, *extra)
    elif hasattr(g, "round_pairs"):
        st = g.State(g.BANK_A)
        for r in range(ROUNDS):
            st = g.round_pairs(a, st, g.BANK_B if r % 2 == 0 else g.BANK_A,
                               "(%rax)")
    else:
        for r in range(ROUNDS):
            g.round_generic(a, "(%rax){1to2}")
    return a.out


def kind(m):
    if m in ("vprolq", "vprolvq"):
        return "rot"
    if m in ("vpunpcklqdq", "vpunpckhqdq", "vpshufd"):
        return "shuf"
    if m == "vmovdqa64":
        return "mov"                # eliminated at rename
    return "alu"


MODELS = {
    # latency(op), extra latency into ternlog's 2nd/3rd operand, ports
    "intel": (lambda m: 1, 0,
              {"rot": "01", "shuf": "15", "alu": "015"}),
    "zen5-issue": (lambda m: 1 if kind(m) == "shuf" else 2, 1,
                   {"rot": "ab", "shuf": "cd", "alu": "abcd"}),
    # measured: every op 2 cycles from any operand, 4 xor / 3 ternlog /
    # 2 rotates / 4 unpacks a cycle
    "zen5": (lambda m: 2, 0, {"rot": "bc", "shuf": "abcd", "alu": "abcd"}),
}


def parse(lines):
    ops = []
    for line in lines:
        t = line.strip().replace(",", " ").split()
        regs = [int(x[4:]) for x in t[1:] if x.startswith("%xmm")]
        srcs = regs[:-1]
        if t[0] == "vpternlogq":
            srcs = [regs[-1]] + regs[:-1]   # destination is operand 0
        ops.append((t[0], srcs, regs[-1]))
    return ops


def schedule(ops, model):
    lat, extra, ports = model
    last, deps = {}, []
    for i, (m, srcs, dst) in enumerate(ops):
        deps.append([(last[s], p) for p, s in enumerate(srcs) if s in last])
        last[dst] = i
    issue = [None] * len(ops)
    cycle = oldest = 0
    while oldest < len(ops):
        free = set("".join(ports.values()))
        for k in range(oldest, len(ops)):
            if issue[k] is not None:
                continue
            m = ops[k][0]
            if any(issue[d] is None or issue[d] + lat(ops[d][0]) +
                   (extra if m == "vpternlogq" and p else 0) > cycle
                   for d, p in deps[k]):
                continue
            if kind(m) == "mov":
                issue[k] = cycle - lat(m)   # ready when its source is
                continue
            for port in ports[kind(m)]:
                if port in free:
                    free.discard(port)
                    issue[k] = cycle
                    break
        while oldest < len(ops) and issue[oldest] is not None:
            oldest += 1
        cycle += 1
    return cycle


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", default=os.path.join(HERE, "gen-avx512.py"))
    ap.add_argument("--order", help="the generator's port model to order "
                    "for (intel, zen5); default its own default")
    args = ap.parse_args()
    ops = parse(generate(load(args.gen), args.order))
    alu = sum(1 for o in ops if kind(o[0]) != "mov")
    for name, model in MODELS.items():
        print("%-10s %5.1f ops a round, %5.1f cycles a round" %
              (name, alu / ROUNDS, schedule(ops, model) / ROUNDS))


if __name__ == "__main__":
    main()
