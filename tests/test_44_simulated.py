"""The AVX-512 kernels run instruction by instruction in
tests/lib_x86sim.py and checked against independent references.

They cannot run on a CPU without AVX-512 (a Genoa VM that hides it, CI's
machines) and qemu-user has no AVX-512 to run them under, so test_20 can
only skip them there; the fleet's Genoa runs them.  Here their
instructions are executed in simulation wherever the tests run:
- every x86-64 kernel.S our generators write: the permutation or
  compression function through a sponge or Merkle-Damgard of one and two
  blocks, and the fused chain for 1, 3 and 1 + 2 steps, against hashlib;
- every x86-64 C variant built with AVX-512 intrinsics, as this machine's
  cc compiles it with the variant's flags at -O2 and -O3: its chain for
  1, 3 and 1 + 2 steps against tests/refs.py.
The kernels that also run natively (x86-rorx-avx here) check the
simulator itself; a mutated kernel must fail."""
import hashlib
import random
import re
import struct
import subprocess

import pytest

from conftest import ROOT, simulated
from lib_x86sim import Machine, Program, SimError
from refs import CHAINS

# What conftest's simulated() says test_44 covers: our generators' x86-64
# kernel.S, and the C variants built with AVX-512 intrinsics.  The
# openssl-* kernel.S only include OpenSSL's own perlasm output, fetched
# (tested by OpenSSL, and natively where the CPU has its instructions).
VARIANTS = sorted(d for d in ROOT.glob("kernels/*/*") if simulated(d))
KERNELS = [d / "kernel.S" for d in VARIANTS if (d / "kernel.S").exists()]
C_KERNELS = [d for d in VARIANTS if not (d / "kernel.S").exists()]
STUDIES = {"sha3", "sha512"}


@pytest.fixture(scope="session", autouse=True)
def built():
    """The sources only: nothing to build, so no wait for conftest's
    `make all`."""


def symbol(path):
    """The C prefix of a variant's functions: sha3_avx512_fused."""
    study, variant = path.parent.parent.name, path.parent.name
    return f"{study}_{variant}".replace("-", "_")


def ids(p):
    d = p.parent if p.name == "kernel.S" else p
    return f"{d.parent.name}/{d.name}"


def test_every_kernel_has_a_check():
    """A new study's assembly must come with its simulated check here."""
    assert KERNELS, "no x86-64 kernel.S found"
    other = [ids(p) for p in KERNELS if p.parent.parent.name not in STUDIES]
    assert not other, f"no simulated check for {other}"


# -- sha3 ---------------------------------------------------------------

def sha3_sponge(prog, name, msg):
    """SHA3-256(msg) with the kernel's permutation (rate 136)."""
    m = Machine(prog)
    padded = bytearray(msg) + b"\x06" + bytes(-(len(msg) + 1) % 136)
    padded[-1] |= 0x80
    state = m.alloc(bytes(200))
    for off in range(0, len(padded), 136):
        for i in range(136):
            m.mem[state + i] ^= padded[off + i]
        m.call(name, state)
    return bytes(m.mem[state:state + 32])


# -- sha512 -------------------------------------------------------------

# FIPS 180-4, 5.3.5.
IV512 = struct.unpack(">8Q", bytes.fromhex(
    "6a09e667f3bcc908bb67ae8584caa73b3c6ef372fe94f82ba54ff53a5f1d36f1"
    "510e527fade682d19b05688c2b3e6c1f1f83d9abfb41bd6b5be0cd19137e2179"))


def sha512_md(prog, name, msg):
    """SHA-512(msg) with the kernel's compression function, which takes
    the state and the block as host-order words."""
    m = Machine(prog)
    padded = msg + b"\x80" + bytes(-(len(msg) + 17) % 128) + \
        struct.pack(">QQ", 0, 8 * len(msg))
    state = m.alloc(struct.pack("<8Q", *IV512))
    block = m.alloc(bytes(128))
    for off in range(0, len(padded), 128):
        words = struct.unpack(">16Q", padded[off:off + 128])
        m.mem[block:block + 128] = struct.pack("<16Q", *words)
        m.call(name, state, block)
    return struct.pack(">8Q", *struct.unpack(
        "<8Q", bytes(m.mem[state:state + 64])))


def sim_chain(prog, name, x, parts, words):
    """The kernel's chain over x in calls of parts steps each; words:
    it keeps the digest as host-order 64-bit words (sha512's h[8])."""
    def order(b):
        return struct.pack(">8Q", *struct.unpack("<8Q", b)) if words else b
    m = Machine(prog)
    buf = m.alloc(order(x))
    for steps in parts:
        m.call(name, buf, steps)
    return order(bytes(m.mem[buf:buf + len(x)]))


# -- the checks ---------------------------------------------------------

MESSAGES = [b"", b"abc", bytes(range(135)),
            random.Random(7).randbytes(200)]


def check(path, text=None):
    """Run every function of the kernel against hashlib; the first
    mismatch as a string, or None."""
    if text is not None:
        mutated = path.parent / "mutated.S"
        mutated.write_text(text)
        path = mutated
    prog = Program(path)
    sym, study = symbol(path.parent / "kernel.S"), path.parent.parent.name
    x0 = random.Random(11).randbytes(32 if study == "sha3" else 64)
    chain, ref = sym + "_chain", CHAINS[study][1]
    if study == "sha3":
        block, one, h = sym + "_permute", sha3_sponge, hashlib.sha3_256
    else:
        block, one, h = sym + "_block", sha512_md, hashlib.sha512
    for msg in MESSAGES:
        got = one(prog, block, msg)
        if got != h(msg).digest():
            return f"{block}: {len(msg)}-byte message: {got.hex()}"
    if chain in prog.labels:
        for x in (bytes(len(x0)), x0):
            for parts in ((1,), (3,), (1, 2)):
                got = sim_chain(prog, chain, x, parts, study == "sha512")
                if got != ref(x, sum(parts)):
                    return f"{chain}: {parts} steps from {x.hex()[:16]}"
    return None


@pytest.mark.parametrize("path", KERNELS, ids=ids)
def test_simulated(path):
    assert check(path) is None


@pytest.mark.parametrize("path", [p for p in KERNELS if p.parent.name in (
    "avx512-fused", "x86-rorx")], ids=ids)
def test_mutation_fails(path, tmp_path):
    """The check can fail: one rotate count or ternary-logic table
    changed in the kernel gives a wrong digest (or a fault, stopped)."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if "vpternlogq $0x96" in line:
            lines[i] = line.replace("$0x96", "$0x69", 1)
            break
        if line.strip().startswith("rorx $14,"):
            lines[i] = line.replace("$14,", "$15,", 1)
            break
    else:
        pytest.fail("nothing to mutate in " + str(path))
    copy = tmp_path / path.parent.parent.name / path.parent.name
    copy.mkdir(parents=True)
    try:
        assert check(copy / "kernel.S", "\n".join(lines) + "\n") \
            is not None
    except SimError:
        pass


def check_c(variant, source, opt, tmp_path):
    """The chain function of source (a kernel.c of variant) as cc
    compiles it, from zeros and from a random state, against the study's
    Python reference: the first mismatch as a string, or None."""
    study = variant.parent.name
    chain = re.search(r"\.chain\s*=\s*(\w+),", source).group(1)
    src, asm = tmp_path / "kernel.c", tmp_path / "kernel.s"
    src.write_text(source)
    subprocess.run(["cc", opt, *(variant / "flags").read_text().split(),
                    "-std=c11", "-D_GNU_SOURCE", "-I", str(ROOT / "kernels"),
                    "-I", str(ROOT / "agent"),
                    "-DSEQORCH_KERNEL_SYM=kernel_simulated", "-S", "-o",
                    str(asm), str(src)], check=True)
    prog = Program(asm, preprocess=False)
    size, ref = CHAINS[study]
    for x in (bytes(size), random.Random(13).randbytes(size)):
        for parts in ((1,), (3,), (1, 2)):
            m = Machine(prog)
            buf = m.alloc(x)
            for steps in parts:
                m.call(chain, 0, buf, steps)
            if bytes(m.mem[buf:buf + size]) != ref(x, sum(parts)):
                return f"{chain}: {parts} steps from {x.hex()[:16]}"
    return None


@pytest.mark.parametrize("opt", ["-O2", "-O3"])
@pytest.mark.parametrize("variant", C_KERNELS, ids=ids)
def test_simulated_c(variant, opt, tmp_path):
    assert check_c(variant, (variant / "kernel.c").read_text(), opt,
                   tmp_path) is None


def test_mutation_fails_c(tmp_path):
    """The C check can fail: mul32's rotate by 13 made 12."""
    variant = ROOT / "kernels" / "mul32" / "avx512"
    source = (variant / "kernel.c").read_text()
    assert "_mm512_ror_epi32(n, 13)" in source
    assert check_c(variant, source.replace("_mm512_ror_epi32(n, 13)",
                                           "_mm512_ror_epi32(n, 12)"),
                   "-O2", tmp_path) is not None


def test_c_kernels_found():
    """The C variants the tests above simulate (the arithmetic studies'
    AVX-512 ones today): none may be lost to a change of their layout."""
    assert {ids(d) for d in C_KERNELS} >= {
        "mul-wide/avx512", "mul32/avx512", "div64/avx512-fp"}
