"""The arithmetic studies div32, div64 and bitperm beyond test_20's chains.

- Exactness of the floating-point quotient estimates at the edges of the
  operand ranges docs/studies.md proves them for: Python computes each
  variant's estimate the way the variant does (IEEE double and single
  rounding), checks that it is within one of the true quotient everywhere
  tested, and that the chosen cases really make the correction step up and
  step down; then every variant of the study, natively and under
  qemu-aarch64 -cpu max, runs one round from each such state and must end
  on the state Python computes.
- Declared instructions: each variant's `insns` are in its built code and
  its `forbidden` are not, with the default flags and -march=native.
- Feature skips: on qemu CPU models without SVE (cortex-a57) or without
  SVE2 bit permutations (a64fx has SVE only) the variants that need them
  are reported skipped, never executed, and the others still pass.
"""
import random
import re
import struct
import subprocess

import pytest

import lib_kernels as lib
from refs import DIV32_C, DIV64_C, chain_hex

STEPS = (1, 2, 1000)


@pytest.fixture(scope="session", autouse=True)
def built():
    """Like test_20: the check harness is built here, not `make all`."""


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """(arch, check binary) for this machine, without library variants."""
    arch = subprocess.run([lib.need("cc", "build-essential"),
                           "-dumpmachine"], capture_output=True, text=True,
                          check=True).stdout.split("-")[0]
    return arch, lib.build_check("cc", arch, tmp_path_factory.mktemp("n"),
                                 nolibs=True,
                                 cache=lib.obj_cache(tmp_path_factory))


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    cc = lib.need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu and "
                  "libc6-dev-arm64-cross")
    lib.need("qemu-aarch64", "qemu-user")
    return lib.build_check(cc, "aarch64", tmp_path_factory.mktemp("a"),
                           nolibs=True, cache=lib.obj_cache(tmp_path_factory),
                           static=True)


# --- the estimates, as each variant computes them -------------------------

def f32(v):
    """Round a double to the nearest single (the double itself being the
    correctly rounded quotient of two singles, this is the single-precision
    division: 53 >= 2 * 24 + 2 makes the double rounding harmless)."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def est_div64_c_fp(a, d):
    # (double)(int64_t)(a >> 11) * 2048.0 / (double)(int64_t)d, truncated
    return int(float(a >> 11) * 2048.0 / float(d))


def est_div64_avx512(a, d):
    # VCVTUQQ2PD rounds to nearest, as Python's int -> float does
    return int(float(a) / float(d))


def est_div32_float(a, d):
    return int(f32(f32(float(a >> 8)) * 256.0 / f32(float(d))))


def est_div32_double(a, d):
    return int(float(a) / float(d))


def edge_pairs(width, estimates):
    """(a, d) pairs at the edges of the round's ranges: a in [0, 2^width),
    d in [2^h, 2^(h+1)), around multiples of d, and cases found by search
    where an estimate is one above or one below the true quotient."""
    h = width // 2
    top = (1 << width) - 1
    ds = [1 << h, (1 << h) + 1, (1 << (h + 1)) - 1, (1 << (h + 1)) - 2,
          3 << (h - 1)]
    pairs = set()
    for d in ds:
        kmax = top // d
        for a in (0, 1, d - 1, d, d + 1, top, top - 1, top - (top % d),
                  top - (top % d) - 1, (kmax - 1) * d, (kmax - 1) * d - 1):
            pairs.add((a, d))
    rng = random.Random(9)
    want = {(name, s): None for name in estimates for s in (1, -1)}
    for _ in range(200000):
        if all(v is not None for v in want.values()):
            break
        d = rng.randrange(1 << h, 1 << (h + 1))
        k = rng.randrange(top // d - (1 << (h - 2)), top // d + 1)
        a = k * d + rng.choice((-3, -2, -1, 0, 1, 2, 3))
        if not 0 <= a <= top:
            continue
        for name, est in estimates.items():
            off = est(a, d) - a // d
            if off in (1, -1) and want[(name, off)] is None:
                want[(name, off)] = (a, d)
    return sorted(pairs), want


def seed_for(width, a, d):
    h = width // 2
    b = d - (1 << h)        # low h bits of b give d; the rest stays zero
    return struct.pack("<QQ" if width == 64 else "<II", a, b)


@pytest.mark.parametrize("study,width,estimates,two_sided", [
    ("div64", 64, {"c-fp": est_div64_c_fp,
                   "avx512-fp": est_div64_avx512}, True),
    ("div32", 32, {"c-float": est_div32_float}, True),
    ("div32", 32, {"c-double": est_div32_double}, False),
])
def test_estimates_at_range_edges(native, arm, study, width, estimates,
                                  two_sided):
    pairs, found = edge_pairs(width, estimates)
    for name, est in estimates.items():
        for a, d in pairs + [p for p in found.values() if p]:
            off = est(a, d) - a // d
            if two_sided:
                assert off in (-1, 0, 1), (name, a, d, off)
            else:
                assert off == 0, (name, a, d, off)
        if two_sided:
            # the correction really goes both ways on these inputs
            assert found[(name, 1)] and found[(name, -1)], (name, found)
        else:
            assert not any(found[(name, s)] for s in (1, -1)), found
    cases = pairs + [p for p in found.values() if p]
    arch, exe = native
    variants_native = lib.manifest(arch, nolibs=True)[study]
    variants_arm = lib.manifest("aarch64", nolibs=True)[study]
    for a, d in cases:
        seed = seed_for(width, a, d)
        want = chain_hex(study, 1, seed)
        args = ["-S", study, "-s", seed.hex(), "-e", f"1={want}"]
        rc, out = lib.run_check([exe, *args])
        assert rc == 0, (a, d, out)
        have, by = lib.assert_all_pass(out, study, variants_native, ())
        ran = [v for v in by if by[v][0][0] == "ok"]
        assert out.count(f"chain 1 {want}") == len(ran) > 0, out
        rc, out = lib.run_check(["qemu-aarch64", "-cpu", "max", arm, *args])
        assert rc == 0, (a, d, out)
        assert out.count(f"chain 1 {want}") == len(variants_arm), out


def test_division_never_by_zero_and_quotient_ranges():
    """The Python round's invariants on a long stretch of the chain: the
    divisor in [2^h, 2^(h+1)), the quotient below 2^h (what lets the
    variants compute the next divisor as p ^ q), the remainder below d."""
    for width, c in ((32, DIV32_C), (64, DIV64_C)):
        h = width // 2
        a = b = 0
        for _ in range(20000):
            d = (1 << h) | (b & ((1 << h) - 1))
            q, r = divmod(a, d)
            assert 1 << h <= d < 1 << (h + 1)
            assert q < 1 << h and r < d
            p = (1 << h) | (a & ((1 << h) - 1))
            nb = (a ^ q ^ (r << h)) & ((1 << width) - 1)
            assert (1 << h) | (nb & ((1 << h) - 1)) == p ^ q
            a, b = b ^ c, nb


@pytest.mark.parametrize("cpu,study,skipped,reason", [
    ("cortex-a57", "div32", ["sve-udiv"], "cpu lacks sve"),
    ("cortex-a57", "div64", ["sve-udiv"], "cpu lacks sve"),
    ("cortex-a57", "bitperm", ["sve2-bitperm"], "cpu lacks sve2-bitperm"),
    ("a64fx", "div64", [], None),
    ("a64fx", "bitperm", ["sve2-bitperm"], "cpu lacks sve2-bitperm"),
])
def test_aarch64_feature_skips(arm, cpu, study, skipped, reason):
    rc, out = lib.run_check(["qemu-aarch64", "-cpu", cpu, arm, "-S", study,
                             *lib.expect_args(study, STEPS)])
    assert rc == 0, out
    variants = lib.manifest("aarch64", nolibs=True)[study]
    have, by = lib.assert_all_pass(out, study, variants, STEPS)
    for v in variants:
        if v in skipped:
            assert by[v] == [("skip", reason)], (v, by[v])
        else:
            assert by[v][0][0] == "ok", (v, by[v])
    if cpu == "a64fx":
        assert "sve" in have and "sve2-bitperm" not in have, out


def test_kernel_symbols_are_unique():
    """The disassembly check finds a variant's code by its `symbol`; two
    static functions of one name (say c_div_chain in div32 and div64) are
    read as one body and mix their instructions.  No two kernels of any
    study may name the same symbol."""
    syms = {}
    for src in sorted(lib.ROOT.glob("kernels/*/*/kernel.c")):
        for name in re.findall(r'\.symbol\s*=\s*"(\w+)"', src.read_text()):
            syms.setdefault(name, []).append(str(src))
    assert len(syms) > 10, syms
    dup = {k: v for k, v in syms.items() if len(v) > 1}
    assert not dup, dup


def mnemonics(dump, symbol):
    """The mnemonics of every part of symbol in objdump's output (as
    orchestrator/disasm.c reads it: the word after the address's tab)."""
    seen = set()
    for m in re.finditer(r"<%s(?:\.[^>]*)?>:\n(.*?)(?:\n\n|\Z)"
                         % re.escape(symbol), dump, re.S):
        for line in m.group(1).splitlines():
            parts = line.split("\t")
            if len(parts) > 1 and parts[1].strip():
                seen.add(parts[1].split()[0])
    return seen


@pytest.mark.parametrize("cflags", ["-O2", "-O3 -march=native"])
def test_declared_instructions_in_the_agent(tmp_path, cflags):
    """Each arithmetic variant's `insns` are in its symbol and none of its
    `forbidden` are, in an agent built as hosts build it (agent/build.sh)
    with the default flags and with -march=native (which makes x86-64's
    scalar divides VEX-encoded)."""
    import json
    out = tmp_path / "agent"
    r = subprocess.run(["sh", "agent/build.sh", str(out), "cc", cflags],
                       cwd=lib.ROOT, capture_output=True, text=True)
    assert r.returncode == 0, (out / "build.log").read_text()
    agent = out / "seqorch-agent"
    kernels = [json.loads(line) for line in subprocess.run(
        [agent, "--list"], capture_output=True, text=True,
        check=True).stdout.splitlines()]
    dump = subprocess.run([lib.need("objdump", "binutils"), "-d",
                           "--no-show-raw-insn", agent], capture_output=True,
                          text=True, check=True).stdout
    checked = 0
    for k in kernels:
        if k["type"] != "kernel" or k["study"] not in (
                "div32", "div64", "bitperm"):
            continue
        seen = mnemonics(dump, k["symbol"])
        assert seen, k
        assert set(k["insns"]) <= seen, (k["variant"], k["insns"])
        assert not set(k["forbidden"]) & seen, (k["variant"], seen)
        checked += 1
    assert checked >= 8, kernels


@pytest.mark.parametrize("study,steps", [("div32", 30000000),
                                         ("div64", 30000000),
                                         ("bitperm", 5000000)])
def test_protocol_length_chains(native, arm, study, steps):
    """With SEQORCH_LONG_CHAINS=1: the seeds' full sample length (30M
    divisions, 5M rounds), every variant natively and under qemu -cpu max,
    against Python (about twenty minutes on a loaded 2-core machine)."""
    import os
    if os.environ.get("SEQORCH_LONG_CHAINS") != "1":
        pytest.skip("protocol-length chains only with SEQORCH_LONG_CHAINS=1")
    want = chain_hex(study, steps)
    args = ["-S", study, "-e", f"{steps}={want}"]
    arch, exe = native
    for cmd, variants in (([exe], lib.manifest(arch, nolibs=True)[study]),
                          (["qemu-aarch64", "-cpu", "max", arm],
                           lib.manifest("aarch64", nolibs=True)[study])):
        rc, out = lib.run_check([*cmd, *args], timeout=3600)
        assert rc == 0, out
        lib.assert_all_pass(out, study, variants, (steps,))
