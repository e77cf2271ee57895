"""Known answers for every sha3 kernel variant, natively and on aarch64.

tests/kernels/check.c is built from kernels/ sources only (plus
agent/cpu.c for the feature check) and run:
  - natively with the host compiler (every variant of this architecture,
    openssl-evp included);
  - cross-built with aarch64-linux-gnu-gcc -static, without openssl-evp,
    under qemu-aarch64 -cpu max (every ARM variant runs and passes) and
    -cpu cortex-a57 (no SHA3: arm-sha3-* are reported skipped by the
    feature check and never called; the GPR variants still pass).
Expected digests come from Python's hashlib here, not from check.c.
A missing tool fails the test with the package that provides it.
Set SEQORCH_LONG_CHAINS=1 to also check the 1M and 10M chains natively
and under qemu -cpu max (about 10 minutes).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, VECTORS, sha3_chain

CFLAGS = ["-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
          "-Ikernels", "-Iagent"]
SHORT_STEPS = (1, 2, 1000)
ABC = hashlib.sha3_256(b"abc").hexdigest()

# Variants each architecture must build, and the CPU feature (as check.c
# names it) each needs; None: runs everywhere.
VARIANTS = {
    "x86_64": {
        "c-wrapped": None, "c-fused": None, "c-unrolled": None,
        "openssl-evp": None,
        "avx2-wrapped": "avx2", "avx2-fused": "avx2",
        "avx512-wrapped": "avx512f+vl", "avx512-fused": "avx512f+vl",
        "avx512-unrolled": "avx512f+vl",
    },
    "aarch64": {
        "c-wrapped": None, "c-fused": None, "c-unrolled": None,
        "arm-scalar": None,
        "arm-sha3-wrapped": "sha3", "arm-sha3-fused": "sha3",
        "arm-sha3-unrolled": "sha3",
    },
}


@pytest.fixture(scope="session", autouse=True)
def built():
    """These tests build their own harness from kernels/ and do not need
    seqorch or seqorch-agent: overrides conftest's `make all`."""


def need(tool, package):
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found: install {package} (make deps)")
    return path


def variant_dirs(arch, with_evp):
    """Variant folders built for arch: those without an `arch` file or
    whose `arch` names it; openssl-evp only when libcrypto is linked."""
    dirs = []
    for d in sorted((ROOT / "kernels").glob("*/*/")):
        if not ((d / "kernel.c").exists() or (d / "kernel.S").exists()):
            continue
        a = d / "arch"
        if a.exists() and a.read_text().strip() != arch:
            continue
        if d.name == "openssl-evp" and not with_evp:
            continue
        dirs.append(d)
    return dirs


def build_check(cc, arch, out, with_evp, static=False):
    """Compile each folder with its own flags, link check; returns path."""
    out.mkdir(parents=True, exist_ok=True)
    objs = []
    for d in variant_dirs(arch, with_evp):
        flags = (d / "flags").read_text().split() if (d / "flags").exists() \
            else []
        for src in ("kernel.c", "kernel.S"):
            if not (d / src).exists():
                continue
            obj = out / f"{d.parent.name}-{d.name}-{src}.o"
            r = subprocess.run([cc, *CFLAGS, *flags, "-c", "-o", obj,
                                d / src], cwd=ROOT, capture_output=True,
                               text=True)
            assert r.returncode == 0, r.stderr
            objs.append(obj)
    exe = out / "check"
    cmd = [cc, *CFLAGS, "-o", exe, "tests/kernels/check.c",
           "kernels/sha3/study.c", "agent/cpu.c", *objs]
    if static:
        cmd.append("-static")
    if with_evp:
        cmd.append("-lcrypto")
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def expect_args(steps):
    args = []
    for n in steps:
        args += ["-e", f"{n}={sha3_chain(n)}"]
    return args


def run_check(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def verdicts(output):
    """{variant: {check: line}} from check's output, and the cpu line."""
    cpu = re.search(r"^cpu features: (.*)$", output, re.M)
    assert cpu, output
    have = set(cpu.group(1).split(",")) - {"none"}
    by = {}
    for line in output.splitlines():
        m = re.match(r"^(ok|FAIL|skip|absent) sha3/([a-z0-9-]+):?\s*(.*)$",
                     line)
        if m:
            by.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return have, by


def assert_all_pass(output, arch, steps):
    have, by = verdicts(output)
    assert "FAIL" not in output, output
    for v, feature in VARIANTS[arch].items():
        assert v in by, f"{v} missing from check output:\n{output}"
        kinds = {k for k, _ in by[v]}
        assert "absent" not in kinds, f"{v} not built for {arch}"
        if feature is not None and feature not in have:
            assert kinds == {"skip"}, (v, by[v])
            continue
        assert kinds == {"ok"}, (v, by[v])
        lines = [rest for _, rest in by[v]]
        assert f"kat {ABC}" in lines, (v, lines)
        for n in steps:
            want = f"chain {n} {sha3_chain(n)}"
            assert want in lines, (v, want, lines)
    return have, by


def test_vectors_match_hashlib():
    """The chains.json digests check.c defaults to are hashlib's."""
    vec = json.loads(VECTORS.read_text())["sha3-256"]
    assert vec["abc"] == ABC
    for n in SHORT_STEPS:
        assert vec["digest_after_steps"][str(n)] == sha3_chain(n)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    arch = subprocess.run([need("cc", "build-essential"), "-dumpmachine"],
                          capture_output=True, text=True,
                          check=True).stdout.split("-")[0]
    if arch not in VARIANTS:
        pytest.fail(f"no expected variant list for architecture {arch}")
    exe = build_check("cc", arch, tmp_path_factory.mktemp("native"),
                      with_evp=True)
    return arch, exe


def test_native_variants(native):
    arch, exe = native
    rc, out = run_check([exe, *expect_args(SHORT_STEPS)])
    assert rc == 0, out
    assert_all_pass(out, arch, SHORT_STEPS)


def long_vectors():
    if os.environ.get("SEQORCH_LONG_CHAINS") != "1":
        pytest.skip("1M/10M chains only with SEQORCH_LONG_CHAINS=1")
    vec = json.loads(VECTORS.read_text())["sha3-256"]["digest_after_steps"]
    assert vec["1000000"] == sha3_chain(1000000)
    return vec


def assert_long(out, arch, vec):
    have, by = assert_all_pass(out, arch, SHORT_STEPS)
    for v, feature in VARIANTS[arch].items():
        if feature is None or feature in have:
            lines = [rest for _, rest in by[v]]
            for n in ("1000000", "10000000"):
                assert f"chain {n} {vec[n]}" in lines, (v, n)


def test_native_long_chains(native):
    vec = long_vectors()
    arch, exe = native
    rc, out = run_check([exe, "-l", *expect_args(SHORT_STEPS)],
                        timeout=3600)
    assert rc == 0, out
    assert_long(out, arch, vec)


@pytest.fixture(scope="module")
def arm_check(tmp_path_factory):
    cc = need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu and "
              "libc6-dev-arm64-cross")
    need("qemu-aarch64", "qemu-user")
    return build_check(cc, "aarch64", tmp_path_factory.mktemp("aarch64"),
                       with_evp=False, static=True)


def test_aarch64_cpu_max(arm_check):
    """Every ARM variant runs and passes on a CPU model with SHA3."""
    rc, out = run_check(["qemu-aarch64", "-cpu", "max", arm_check,
                         *expect_args(SHORT_STEPS)])
    assert rc == 0, out
    have, by = assert_all_pass(out, "aarch64", SHORT_STEPS)
    assert "sha3" in have, out
    assert "openssl-evp" in by and by["openssl-evp"][0][0] == "absent"


def test_aarch64_without_sha3(arm_check):
    """On a Cortex-A57 the SHA3 variants are skipped, never executed."""
    rc, out = run_check(["qemu-aarch64", "-cpu", "cortex-a57", arm_check,
                         *expect_args(SHORT_STEPS)])
    assert rc == 0, out
    have, by = assert_all_pass(out, "aarch64", SHORT_STEPS)
    assert "sha3" not in have, out
    for v in ("arm-sha3-wrapped", "arm-sha3-fused", "arm-sha3-unrolled"):
        assert by[v] == [("skip", "cpu lacks sha3")], by[v]
    for v in ("arm-scalar", "c-fused"):
        assert by[v][0][0] == "ok", by[v]


def test_aarch64_long_chains(arm_check):
    vec = long_vectors()
    rc, out = run_check(["qemu-aarch64", "-cpu", "max", arm_check, "-l",
                         *expect_args(SHORT_STEPS)], timeout=3600)
    assert rc == 0, out
    assert_long(out, "aarch64", vec)
