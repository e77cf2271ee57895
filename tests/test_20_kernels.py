"""Known answers for every variant of every study, natively and on aarch64.

tests/kernels/check.c is built from kernels/ sources only, with the table
and flags kernels/registry.sh derives from the folders (plus agent/cpu.c
for the feature check), and run for each study:
  - natively with the host compiler (every variant of this architecture,
    those that link libcrypto included);
  - cross-built with aarch64-linux-gnu-gcc -static, without the variants
    that need a library, under qemu-aarch64 -cpu max (every ARM variant
    runs and passes) and -cpu cortex-a57 (no SHA3, no SHA512: arm-sha3-*
    and arm-sha512 are reported skipped by the feature check and never
    called; the others still pass).
Expected digests come from tests/refs.py (Python hashlib and plain Python),
not from check.c.  A missing tool fails the test with the package that
provides it.  Set SEQORCH_LONG_CHAINS=1 to also check the 1M and 10M
chains of every study in chains.json (sha3, sha512) natively and under
qemu -cpu max (about 20 minutes).
"""
import json
import os
import subprocess
import warnings

import pytest

from conftest import ROOT, VECTORS, cpu_lacks, simulated
from refs import CHAINS, KATS, chain_hex
from lib_kernels import (SHORT_STEPS, assert_all_pass, build_check,
                         expect_args, harness_studies, manifest, need,
                         obj_cache, run_check, studies, verdicts)


@pytest.fixture(scope="session", autouse=True)
def built():
    """These tests build their own harness from kernels/ and do not need
    seqorch or seqorch-agent: overrides conftest's `make all`."""


def test_every_study_has_a_python_reference():
    assert sorted(studies()) == sorted(CHAINS), \
        "each study in kernels/studies.txt needs a chain in tests/refs.py"


# The studies whose chains chains.json holds, by its names for them.
VECTOR_NAMES = {"sha3": "sha3-256", "sha512": "sha512"}


@pytest.mark.parametrize("study", sorted(VECTOR_NAMES))
def test_vectors_match_hashlib(study):
    """The shared chains.json digests agree with tests/refs.py."""
    vec = json.loads(VECTORS.read_text())[VECTOR_NAMES[study]]
    assert vec["abc"] == KATS[study](b"abc").hex()
    for n in SHORT_STEPS:
        assert vec["digest_after_steps"][str(n)] == chain_hex(study, n)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    arch = subprocess.run([need("cc", "build-essential"), "-dumpmachine"],
                          capture_output=True, text=True,
                          check=True).stdout.split("-")[0]
    exe = build_check("cc", arch, tmp_path_factory.mktemp("native"),
                      nolibs=False, cache=obj_cache(tmp_path_factory))
    return arch, exe


@pytest.mark.parametrize("study", harness_studies())
def test_native_variants(native, study):
    arch, exe = native
    rc, out = run_check([exe, "-S", study, *expect_args(study, SHORT_STEPS)])
    assert rc == 0, out
    _, by = assert_all_pass(out, study, manifest(arch)[study], SHORT_STEPS)
    # Skipped exactly where /proc/cpuinfo lacks a declared feature: what
    # this CPU has must run.  What it lacks goes unchecked here, and the
    # summary says so (qemu-user has no AVX-512 to run it under).
    skipped = sorted(v for v, res in by.items() if res[0][0] == "skip")
    lacking = {v: f for v in by if (f := cpu_lacks(study, v))}
    assert skipped == sorted(lacking), (skipped, lacking, out)
    for v, flags in sorted(lacking.items()):
        warnings.warn(f"{study}/{v} not checked natively: this cpu lacks "
                      + ",".join(flags) + (
                          "; test_44 runs it in simulation" if simulated(
                              ROOT / "kernels" / study / v) else ""))


def long_vectors(study):
    if os.environ.get("SEQORCH_LONG_CHAINS") != "1":
        pytest.skip("1M/10M chains only with SEQORCH_LONG_CHAINS=1")
    vec = json.loads(VECTORS.read_text())[VECTOR_NAMES[study]][
        "digest_after_steps"]
    assert vec["1000000"] == chain_hex(study, 1000000)
    return vec


def long_args(vec):
    return [a for n in ("1000000", "10000000") for a in ("-e",
            f"{n}={vec[n]}")]


def assert_long_pass(out, study, variants, vec):
    """Every variant not skipped for a missing feature ends each long
    chain in the shared digest."""
    have, by = verdicts(out, study)
    assert "FAIL" not in out and sorted(by) == sorted(variants), out
    for v, results in by.items():
        if results[0][0] == "skip":
            continue
        for n in ("1000000", "10000000"):
            assert ("ok", f"chain {n} {vec[n]}") in results, (v, results)


@pytest.mark.parametrize("study", sorted(VECTOR_NAMES))
def test_native_long_chains(native, study):
    vec = long_vectors(study)
    arch, exe = native
    rc, out = run_check([exe, "-S", study, *long_args(vec)], timeout=3600)
    assert rc == 0, out
    assert_long_pass(out, study, manifest(arch)[study], vec)


@pytest.fixture(scope="module")
def arm_check(tmp_path_factory):
    cc = need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu and "
              "libc6-dev-arm64-cross")
    need("qemu-aarch64", "qemu-user")
    return build_check(cc, "aarch64", tmp_path_factory.mktemp("aarch64"),
                       nolibs=True, cache=obj_cache(tmp_path_factory),
                       static=True)


@pytest.mark.parametrize("study", harness_studies())
def test_aarch64_cpu_max(arm_check, study):
    """Every ARM variant runs and passes on a CPU model with every
    feature qemu has."""
    rc, out = run_check(["qemu-aarch64", "-cpu", "max", arm_check, "-S",
                         study, *expect_args(study, SHORT_STEPS)])
    assert rc == 0, out
    assert_all_pass(out, study, manifest("aarch64", nolibs=True)[study],
                    SHORT_STEPS, allow_skip=False)


def test_aarch64_without_sha3(arm_check):
    """On a Cortex-A57 the SHA3 variants are skipped, never executed."""
    rc, out = run_check(["qemu-aarch64", "-cpu", "cortex-a57", arm_check,
                         "-S", "sha3", *expect_args("sha3", SHORT_STEPS)])
    assert rc == 0, out
    have, by = assert_all_pass(out, "sha3",
                               manifest("aarch64", nolibs=True)["sha3"],
                               SHORT_STEPS)
    assert "sha3" not in have, out
    for v in ("arm-sha3-wrapped", "arm-sha3-fused", "arm-sha3-unrolled"):
        assert by[v] == [("skip", "cpu lacks sha3")], by[v]
    for v in ("arm-scalar", "c-fused"):
        assert by[v][0][0] == "ok", by[v]


def test_aarch64_without_sha512(arm_check):
    """On a Cortex-A57 (ARMv8.0: no SHA512) arm-sha512 is skipped by the
    feature check and never called; the portable variant still passes."""
    rc, out = run_check(["qemu-aarch64", "-cpu", "cortex-a57", arm_check,
                         "-S", "sha512", *expect_args("sha512",
                                                      SHORT_STEPS)])
    assert rc == 0, out
    variants = manifest("aarch64", nolibs=True)["sha512"]
    have, by = assert_all_pass(out, "sha512", variants, SHORT_STEPS)
    assert "sha512" not in have, out
    assert by["arm-sha512"] == [("skip", "cpu lacks sha512")], by
    assert {k for k, _ in by["c-fused"]} == {"ok"}, by


@pytest.mark.parametrize("study", sorted(VECTOR_NAMES))
def test_aarch64_long_chains(arm_check, study):
    vec = long_vectors(study)
    rc, out = run_check(["qemu-aarch64", "-cpu", "max", arm_check, "-S",
                         study, *long_args(vec)], timeout=3600)
    assert rc == 0, out
    assert_long_pass(out, study, manifest("aarch64", nolibs=True)[study],
                     vec)
