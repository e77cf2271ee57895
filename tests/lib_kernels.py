"""The kernels' check harness (tests/kernels/check.c) as the kernel tests
build and read it: registry.sh's view of the folders, compiles shared by
every xdist worker, and the verdicts checked against tests/refs.py."""
import hashlib
import os
import random
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, locked, session_root
from refs import KATS, chain_hex

CFLAGS = ["-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
          "-Ikernels", "-Iagent"]
SHORT_STEPS = (1, 2, 1000)


def registry(*args, generated=None):
    """registry.sh's answer; with generated, the directory of the sources
    the coordinator generated (SEQORCH_GENERATED: the variants that need
    them are listed and their files compiled with -I there)."""
    env = dict(os.environ)
    env.pop("SEQORCH_GENERATED", None)
    if generated is not None:
        env["SEQORCH_GENERATED"] = str(generated)
    return subprocess.run(["sh", "kernels/registry.sh", *args], cwd=ROOT,
                          check=True, capture_output=True, text=True,
                          env=env).stdout


def studies():
    return registry("studies").split()


def harness_studies():
    """Studies the check harness builds from kernels/ alone: one with a
    prebuild.sh links what it builds on the host from fetched sources
    (randomx), and is tested end to end instead (test_47_randomx.py)."""
    return [s for s in studies()
            if not (ROOT / "kernels" / s / "prebuild.sh").exists()]


def manifest(arch, nolibs=False):
    """{study: [variant, ...]} that build on arch."""
    out = {}
    for line in registry("manifest", arch,
                         *(["nolibs"] if nolibs else [])).splitlines():
        study, variant = line.split("\t")[:2]
        out.setdefault(study, []).append(variant)
    return out


def need(tool, package):
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found: install {package} (make deps)")
    return path


def obj_cache(tmp_path_factory):
    """Where build_check keeps the objects it compiles, for every xdist
    worker of this pytest run: the tree does not change during a run, so
    one compile of a file with one compiler and set of flags serves every
    harness that links it (native with and without libraries, static)."""
    return session_root(tmp_path_factory) / "check-objs"


def compiled(cc, flags, src, cache):
    """The object of src compiled with cc and flags, compiled once per run
    (the first worker compiles under a lock, the others wait for it)."""
    cmd = [cc, *CFLAGS, *flags, "-c"]
    key = hashlib.sha256(repr((cmd, src)).encode()).hexdigest()[:24]
    cache.mkdir(parents=True, exist_ok=True)
    obj = cache / f"{key}.o"
    with locked(cache / f"{key}.lock"):
        if not obj.exists():
            tmp = cache / f"{key}.tmp.o"
            r = subprocess.run([*cmd, "-o", tmp, src], cwd=ROOT,
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            os.replace(tmp, obj)
    return obj


def build_check(cc, arch, out, nolibs, cache, static=False):
    """Compile each file with the flags registry.sh gives it (objects
    shared through cache, see obj_cache), link check."""
    out.mkdir(parents=True, exist_ok=True)
    extra = ["nolibs"] if nolibs else []
    table = out / "table.c"
    table.write_text(registry("agent", arch, *extra))
    srcs = registry("files", arch, *extra).split()
    # In a random order, so that two workers building the same harness
    # compile different files side by side instead of queueing on one.
    objs = {}
    for src in random.sample(srcs, len(srcs)):
        objs[src] = compiled(cc, registry("cflags", src).split(), src, cache)
    objs = [objs[src] for src in srcs]
    exe = out / "check"
    cmd = [cc, *CFLAGS, "-o", exe, "tests/kernels/check.c", table,
           "agent/registry.c", "agent/cpu.c", *objs]
    if static:
        cmd.append("-static")
    if not nolibs:
        cmd.append("-lcrypto")
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def expect_args(study, steps):
    args = []
    for n in steps:
        args += ["-e", f"{n}={chain_hex(study, n)}"]
    return args


def run_check(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def verdicts(output, study):
    """{variant: [(verdict, rest)]} from check's output, and the cpu line."""
    cpu = re.search(r"^cpu features: (.*)$", output, re.M)
    assert cpu, output
    have = set(cpu.group(1).split(",")) - {"none"}
    by = {}
    for line in output.splitlines():
        m = re.match(rf"^(ok|FAIL|skip) {study}/([a-z0-9-]+):?\s*(.*)$",
                     line)
        if m:
            by.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return have, by


def assert_all_pass(output, study, variants, steps, allow_skip=True):
    """Every variant reported; all checks ok unless skipped for a missing
    CPU feature; the known answer and every chain as Python computes."""
    have, by = verdicts(output, study)
    assert "FAIL" not in output, output
    assert sorted(by) == sorted(variants), (sorted(by), output)
    for v in variants:
        kinds = {k for k, _ in by[v]}
        if kinds == {"skip"}:
            assert allow_skip, (v, by[v])
            assert by[v][0][1].startswith("cpu lacks "), by[v]
            continue
        assert kinds == {"ok"}, (v, by[v])
        lines = [rest for _, rest in by[v]]
        if study in KATS:
            kat = KATS[study](b"abc").hex()
            assert f"kat {kat}" in lines, (v, lines)
        for n in steps:
            want = f"chain {n} {chain_hex(study, n)}"
            assert want in lines, (v, want, lines)
    return have, by
