#!/usr/bin/env python3
"""make bench: every sha3 variant's median rate on this machine, under each
compiler, with its ratio to openssl-evp measured side by side in one run.

Each round runs one sample of every variant in each compiler's agent, with
the agents alternating, so slow drift of a shared machine hits all of them
alike.  Rates are hashes/s; cycles/hash uses the agent's dependent-add clock
calibrations taken just before and just after each sample."""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(cc, cflags):
    out = ROOT / "build" / f"bench-{cc}"
    subprocess.run(["sh", str(ROOT / "agent" / "build.sh"), str(out), cc,
                    cflags], check=True)
    return out / "seqorch-agent"


def run_agent(agent, steps, cpu, order):
    p = subprocess.run([str(agent), "--study", "sha3", "--steps", str(steps),
                        "--samples", "1", "--cpu", str(cpu), "--order",
                        order], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=min(1, os.cpu_count() - 1))
    ap.add_argument("--cflags", default="-O3 -march=native")
    args = ap.parse_args()

    agents = {cc: build(cc, args.cflags) for cc in ("gcc", "clang")
              if shutil.which(cc)}
    rates, cycles, digests = {}, {}, set()
    for rnd in range(args.rounds):
        names = list(agents) if rnd % 2 == 0 else list(agents)[::-1]
        for cc in names:
            recs = run_agent(agents[cc], args.steps, args.cpu,
                             "rotate" if rnd % 2 == 0 else "reverse")
            for r in recs:
                if r["type"] != "sample":
                    continue
                key = (r["variant"], cc)
                rate = r["steps"] * 1e9 / r["ns"]
                rates.setdefault(key, []).append(rate)
                # The clock estimates just before and just after.
                if r["calib_mhz"] > 0 and r["calib_after_mhz"] > 0:
                    mhz = (r["calib_mhz"] + r["calib_after_mhz"]) / 2
                    cycles.setdefault(key, []).append(mhz * 1e6 / rate)
                digests.add(r["digest"])
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr)

    # One control for all: the EVP variant calls the same libcrypto under
    # either compiler, so all its samples estimate the same thing.
    evp = [r for (v, _), rs in rates.items() if v == "openssl-evp"
           for r in rs]
    control = statistics.median(evp) if evp else float("nan")
    print(f"sha3 chain, {args.steps} steps x {args.rounds} rounds, "
          f"cflags {args.cflags!r}, cpu {args.cpu}")
    print(f"{'variant':18} {'cc':6} {'median/s':>10} {'ns/hash':>8} "
          f"{'cycles':>7} {'min-max M/s':>13} {'x evp':>6}")
    rows = sorted(rates, key=lambda k: -statistics.median(rates[k]))
    for key in rows:
        v, cc = key
        med = statistics.median(rates[key])
        cyc = statistics.median(cycles[key]) if key in cycles else 0
        ratio = med / control
        print(f"{v:18} {cc:6} {med / 1e6:9.3f}M {1e9 / med:8.1f} "
              f"{cyc:7.0f} {min(rates[key]) / 1e6:6.3f}-"
              f"{max(rates[key]) / 1e6:.3f} {ratio:6.2f}")
    x = bytes(32)
    for _ in range(args.steps):
        x = hashlib.sha3_256(x).digest()
    if digests != {x.hex()}:
        print(f"ERROR: digests {digests} differ from hashlib's {x.hex()}")
        return 1
    print(f"all samples end in {x.hex()}, as Python hashlib computes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
