#!/usr/bin/env python3
"""make bench: for every study, every variant's median rate on this machine
under each compiler, with its ratio to the study's control variant,
measured side by side in one run.

Each round runs one sample of every variant of a study in each compiler's
agent, with the agents alternating, so slow drift of a shared machine hits
all of them alike.  Rates are steps/s in the study's unit; cycles use the
agent's dependent-add clock calibrations taken just before and just after
each sample.  Every sample's digest must agree, and each agent's short
chain must equal the Python reference (tests/refs.py).

With --others (make bench passes build/others), the hash studies are then
also run through libgcrypt and nettle beside our kernels in one process
(tests/kernels/others.c), and the common digest checked against Python.
With --xkcp TARBALL as well (make bench passes XKCP_TARBALL), sha3's run
also holds every single-instance XKCP config built with each compiler
(tests/kernels/xkcp.sh unpacks and builds them under build/xkcp), in
alternating rounds, each round's ratio of our best to XKCP's best
printed.

With --randomx WORKDIR (a host work directory where `seqorch run --study
randomx` built both targetings), upstream's own randomx-benchmark is built
in each build's CMake tree (the fixture's source, the same flags as the
library seqorch measures) and run beside seqorch's agent of that build,
for the same mode (light: --verify, full: --mine), single thread, secure
JIT, one hash after the other (--noBatch, as the chain must), pinned to
--cpu, alternating."""
import re
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from refs import chain_hex  # noqa: E402


def build(cc, cflags):
    out = ROOT / "build" / f"bench-{cc}"
    subprocess.run(["sh", str(ROOT / "agent" / "build.sh"), str(out), cc,
                    cflags], check=True)
    return out / "seqorch-agent"


def agent_records(agent, *args):
    p = subprocess.run([str(agent), *map(str, args)], capture_output=True,
                       text=True, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


def studies(agent):
    """{study: record} from --list, with the study's kernels in this
    build under "kernels"."""
    recs = agent_records(agent, "--list")
    out = {r["study"]: dict(r, kernels=[]) for r in recs
           if r["type"] == "study"}
    for r in recs:
        if r["type"] == "kernel":
            out[r["study"]]["kernels"].append(r["variant"])
    return out


def bench_study(study, info, agents, args):
    steps = args.steps or max(1, info["default_steps"] // args.divide)
    rates, cycles, digests = {}, {}, set()
    for rnd in range(args.rounds):
        names = list(agents) if rnd % 2 == 0 else list(agents)[::-1]
        for cc in names:
            recs = agent_records(agents[cc], "--study", study, "--steps",
                                 steps, "--samples", 1, "--cpu", args.cpu,
                                 "--order",
                                 "rotate" if rnd % 2 == 0 else "reverse")
            for r in recs:
                if r["type"] != "sample":
                    continue
                key = (r["variant"], cc)
                rate = r["steps"] * 1e9 / r["ns"]
                rates.setdefault(key, []).append(rate)
                if r["calib_mhz"] > 0 and r["calib_after_mhz"] > 0:
                    mhz = (r["calib_mhz"] + r["calib_after_mhz"]) / 2
                    cycles.setdefault(key, []).append(mhz * 1e6 / rate)
                digests.add(r["digest"])
        print(f"{study}: round {rnd + 1}/{args.rounds} done",
              file=sys.stderr)

    control_name = info.get("control")
    ctl = [r for (v, _), rs in rates.items() if v == control_name
           for r in rs]
    control = statistics.median(ctl) if ctl else float("nan")
    unit = info["unit"]
    print(f"\n{study}: {steps} {unit} steps x {args.rounds} rounds, "
          f"cflags {args.cflags!r}, cpu {args.cpu}, control "
          f"{control_name}")
    print(f"{'variant':20} {'cc':6} {'median/s':>10} {'ns/' + unit:>10} "
          f"{'cycles':>8} {'min-max M/s':>15} {'x ctl':>6}")
    floor = info.get("floor_cycles")
    if floor:
        print(f"critical path: {floor:g} cycles per {unit} "
              "(docs/studies.md); x floor = measured cycles / floor")
    for key in sorted(rates, key=lambda k: -statistics.median(rates[k])):
        v, cc = key
        med = statistics.median(rates[key])
        cyc = statistics.median(cycles[key]) if key in cycles else 0
        print(f"{v:20} {cc:6} {med / 1e6:9.3f}M {1e9 / med:10.2f} "
              f"{cyc:8.1f} {min(rates[key]) / 1e6:7.3f}-"
              f"{max(rates[key]) / 1e6:.3f} {med / control:6.2f}"
              + (f"  x{cyc / floor:.2f} floor" if floor and cyc else ""))
    if len(digests) != 1:
        print(f"ERROR: {study}: samples end in different digests "
              f"{sorted(digests)}")
        return 1
    # The long chain is too slow for Python: check a short one per agent.
    want = chain_hex(study, 1000)
    for cc, agent in agents.items():
        got = {r["digest"] for r in agent_records(
            agent, "--study", study, "--steps", 1000, "--samples", 1)
            if r["type"] == "sample"}
        if got != {want}:
            print(f"ERROR: {study} ({cc}): 1000 steps end in {got}, "
                  f"Python computes {want}")
            return 1
    print(f"all samples agree ({digests.pop()[:16]}...); 1000 steps match "
          f"the Python reference under every compiler")
    return 0


# The studies tests/kernels/others.c has library chains for.
OTHERS = ("sha3", "sha512")


def build_xkcp(tarball, ccs, cflags):
    """XKCP's configs built from the fixture tarball: the shared objects,
    or None (and why, printed) when there is no tarball; a tarball that
    does not build (wrong SHA-256) ends the bench."""
    if not tarball.is_file():
        print(f"\nsha3: XKCP not measured: \"{tarball}\": no such file "
              "(make bench XKCP_TARBALL=PATH)")
        return None
    p = subprocess.run(["sh", str(ROOT / "tests" / "kernels" / "xkcp.sh"),
                        str(ROOT / "build" / "xkcp"), str(tarball), cflags,
                        *ccs], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        # xkcp.sh said why on stderr (a wrong SHA-256, a compile error)
        raise SystemExit(f"ERROR: sha3: XKCP from \"{tarball}\" did not "
                         f"build (tests/kernels/xkcp.sh exit {p.returncode})")
    return p.stdout.split()


def bench_others(exe, study, args, xkcp):
    """Our kernels beside libgcrypt, nettle (and, for sha3, OpenSSL EVP
    fetched once and XKCP), in rounds; the digest against Python's."""
    steps, samples, rounds = 2000, 300, 5
    extra = [a for so in (xkcp or []) for a in ("-x", so)] \
        if study == "sha3" else []
    out = subprocess.run([str(exe), "-S", study, "-n", str(steps), "-s",
                          str(samples), "-r", str(rounds), "-c",
                          str(args.cpu), *extra],
                         capture_output=True, text=True)
    print()
    print(out.stdout, end="")
    if out.returncode != 0:
        print(f"ERROR: {study}: {exe} failed: {out.stderr.strip()}")
        return 1
    want = chain_hex(study, steps)
    if f"digest {want}" not in out.stdout.splitlines():
        print(f"ERROR: {study}: libraries and kernels end in a digest "
              f"other than Python's {want}")
        return 1
    print(f"{study}: every implementation ends in Python's digest after "
          f"{steps} steps")
    return 0


def upstream_rate(bench, mode, steps, cpu):
    """H/s of randomx-benchmark in mode, from its Performance line."""
    flags = {"light": ["--verify"],
             "full": ["--mine", "--init", str(os.cpu_count())]}[mode]
    p = subprocess.run([str(bench), *flags, "--jit", "--secure", "--noBatch",
                        "--nonces", str(steps), "--affinity",
                        str(1 << cpu)], capture_output=True, text=True,
                       check=True)
    m = re.search(r"Performance: ([\d.e+-]+) (ms per hash|hashes per second)",
                  p.stdout)
    if m is None:
        raise SystemExit(f"randomx-benchmark said no rate:\n{p.stdout}")
    v = float(m.group(1))
    return 1000 / v if m.group(2) == "ms per hash" else v


def bench_randomx(workdir, args):
    builds = {}
    # The newest build of each targeting; its CMake tree was made where
    # the build was staged, so the benchmark gets a tree of its own, from
    # the same source with prebuild.sh's options and compilers.
    for tree in sorted(Path(workdir, "build").glob("*/prebuild/cmake"),
                       key=lambda t: (t.parent.parent / "seqorch-agent")
                       .stat().st_mtime):
        b = tree.parent.parent
        facts = dict(ln.split("=", 1) for ln in
                     (b / "extra").read_text().splitlines() if "=" in ln)
        cache = (tree / "CMakeCache.txt").read_text()
        cc = {k: re.search(rf"^{k}:\w+=(.*)$", cache, re.M).group(1)
              for k in ("CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER")}
        builds[facts["randomx_arch"]] = (b, cc)
    for t, (b, cc) in list(builds.items()):
        own = b / "bench-cmake"
        subprocess.run(["cmake", "-S", str(b / "prebuild" / "src" /
                                           "RandomX-1.1.10"),
                        "-B", str(own), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DARCH={t}",
                        *(f"-D{k}={v}" for k, v in cc.items())],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(own), "--target",
                        "randomx-benchmark"], check=True,
                       capture_output=True)
        builds[t] = (b / "seqorch-agent", own / "randomx-benchmark")
    if not builds:
        print(f"ERROR: no randomx build under {workdir}/build")
        return 2
    steps = {"light": args.randomx_steps, "full": 5 * args.randomx_steps}
    want = {m: chain_hex("randomx", n) for m, n in steps.items()}
    rates = {}
    for rnd in range(args.rounds):
        order = sorted(builds) if rnd % 2 == 0 else sorted(builds)[::-1]
        for t in order:
            agent, bench = builds[t]
            for mode in args.randomx_modes.split(","):
                recs = agent_records(agent, "--study", "randomx",
                                     "--variants", mode, "--steps",
                                     steps[mode], "--samples", 1, "--cpu",
                                     args.cpu)
                (smp,) = [r for r in recs if r["type"] == "sample"]
                if smp["digest"] != want[mode]:
                    print(f"ERROR: randomx {mode} ({t}) ends in "
                          f"{smp['digest']}, Python's librandomx in "
                          f"{want[mode]}")
                    return 1
                ours = steps[mode] * 1e9 / smp["ns"]
                theirs = upstream_rate(bench, mode, steps[mode], args.cpu)
                rates.setdefault((t, mode), []).append((ours, theirs))
    print(f"\nrandomx: seqorch's agent beside upstream's randomx-benchmark "
          f"(--jit --secure --noBatch, cpu {args.cpu}), {args.rounds} "
          f"rounds, medians")
    print(f"  {'targeting':<10} {'mode':<6} {'seqorch H/s':>12} "
          f"{'upstream H/s':>13} {'ours ms':>9} {'their ms':>9} "
          f"{'ratio':>7}")
    for (t, mode), v in sorted(rates.items()):
        ours = statistics.median(a for a, _ in v)
        theirs = statistics.median(b for _, b in v)
        print(f"  {t:<10} {mode:<6} {ours:12.2f} {theirs:13.2f} "
              f"{1000 / ours:9.2f} {1000 / theirs:9.2f} "
              f"{ours / theirs:7.3f}")
    print("randomx: every seqorch sample ends in Python's librandomx digest")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", action="append",
                    help="only this study (repeatable; default: all)")
    ap.add_argument("--steps", type=int, default=0,
                    help="steps per sample (default: the study's / "
                    "--divide)")
    ap.add_argument("--divide", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=min(1, os.cpu_count() - 1))
    ap.add_argument("--cflags", default="-O3 -march=native")
    ap.add_argument("--others", type=Path,
                    help="tests/kernels/others.c built: also time the "
                    "hash studies through libgcrypt and nettle")
    ap.add_argument("--xkcp", type=Path,
                    help="XKCP's tarball (tests/kernels/xkcp.sh): with "
                    "--others, time its configs beside the sha3 kernels")
    ap.add_argument("--randomx", type=Path, metavar="WORKDIR",
                    help="a host workdir with randomx built: time "
                    "upstream's randomx-benchmark beside our agent")
    ap.add_argument("--randomx-steps", type=int, default=20,
                    help="hashes per light-mode sample (full: 5x)")
    ap.add_argument("--randomx-modes", default="light,full",
                    help="light, full or both (full initialises the "
                    "2 GiB dataset for every sample)")
    args = ap.parse_args()
    if args.randomx:
        return bench_randomx(args.randomx, args)

    # The ratios below are side by side on this CPU, and mean little
    # without its name (bench_report's, so both parts say it alike).
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_report import cpu_model
    print(f"cpu: {cpu_model()}, {os.cpu_count()} cpus; load average "
          f"{os.getloadavg()[0]:.1f}")
    agents = {cc: build(cc, args.cflags) for cc in ("gcc", "clang")
              if shutil.which(cc)}
    infos = studies(next(iter(agents.values())))
    rc = 0
    for study in args.study or list(infos):
        if study not in infos:
            print(f"ERROR: unknown study {study!r}")
            return 2
        if not infos[study]["kernels"]:
            # randomx: its variants link RandomX, which its prebuild
            # compiles on the host (kernels/randomx/prebuild.sh).
            print(f"\n{study}: no variant in a plain agent build (the "
                  f"study builds its library on the host first); measure "
                  f"it with seqorch run --study {study}")
            continue
        rc |= bench_study(study, infos[study], agents, args)
    xkcp = None
    if args.others and args.xkcp and "sha3" in (args.study or infos):
        xkcp = build_xkcp(args.xkcp, list(agents), args.cflags)
    for study in args.study or list(infos):
        if args.others and study in OTHERS:
            rc |= bench_others(args.others, study, args, xkcp)
    rc |= instruction_counts(args.study or list(infos))
    return rc


def instruction_counts(wanted):
    """Instructions a hash of each generated x86-64 chain, counted by
    running it in tests/lib_x86sim.py (the same on every machine, and
    for the AVX-512 kernels also where the CPU cannot run them): the
    difference between 3 steps and 1, halved, so the call's own
    instructions drop out.  The digests are checked against refs.py."""
    from lib_x86sim import Machine, Program
    rows = []
    for p in sorted(ROOT.glob("kernels/*/*/kernel.S")):
        study, v = p.parent.parent.name, p.parent.name
        arch = p.parent / "arch"
        if study not in wanted or not arch.is_file() or \
                arch.read_text().split() != ["x86_64"] or \
                "Generated by kernels/" not in p.read_text()[:300]:
            continue
        prog = Program(p)
        chain = f"{study}_{v}".replace("-", "_") + "_chain"
        if chain not in prog.labels:
            continue
        size, n = (32, 24) if study == "sha3" else (64, 80)
        counts = []
        for steps in (1, 3):
            m = Machine(prog)
            buf = m.alloc(bytes(size))
            counts.append(m.call(chain, buf, steps))
            out = bytes(m.mem[buf:buf + size])
            if study == "sha512":   # its chain keeps host-order words
                out = struct.pack(">8Q", *struct.unpack("<8Q", out))
            if out.hex() != chain_hex(study, steps):
                print(f"ERROR: {study}/{v} in simulation: {steps} steps "
                      f"do not end in Python's digest")
                return 1
        rows.append((study, v, (counts[1] - counts[0]) / 2, n))
    if rows:
        print("\ninstructions a hash, counted in simulation "
              "(tests/lib_x86sim.py; any x86-64 machine)")
        for study, v, per, n in rows:
            print(f"  {study:7} {v:18} {per:6.0f}  ({per / n:5.1f} a "
                  f"round)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
