"""The arithmetic studies of seed 001 (mul, mul-wide, mul32) end to end,
and the disassembly check of the instructions a variant forbids.

- `seqorch run --study mul,mul-wide,mul32 --hosts local`: every variant of
  this architecture measured, every sample valid against the coordinator's
  reference and equal to the Python chain of tests/refs.py; every variant
  that declares instructions or forbidden ones has a disasm row, ok.
- A variant whose binary holds an instruction it forbids is flagged
  (status forbidden, the mnemonic in `present`), warned about, and the
  report shows the warning: once with a real, vectorized rebuild of the
  scalar mul32 round built into a temporary copy of the tree, once with a
  forbidden list widened by a wrapper around the real agent's --list.
- A database from before `forbidden` keeps its disasm rows through the
  migration that rebuilds the table.
- The x86-64 feature-gated variants are skipped, never executed, on CPU
  models without their features (qemu-x86_64), as the ARM ones are on
  aarch64 (tests/test_20_kernels.py).
"""
import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess

import pytest

from conftest import (ROOT, copy_tree, locked, query, runs_here, seqorch,
                      write_hosts)
from refs import chain_hex
from lib_fakecc import FAKE_CC
from lib_kernels import (assert_all_pass, build_check, expect_args,
                         manifest, need, obj_cache, run_check)

STUDIES = ("mul", "mul-wide", "mul32")
ARCH = platform.machine()
STEPS = 20000


def arch_manifest():
    return manifest("aarch64" if ARCH in ("aarch64", "arm64") else ARCH)


def test_arith_studies_run_and_check(scratch):
    r = seqorch(scratch, "run", "--study", ",".join(STUDIES), "--hosts",
                "local", "--steps", STEPS, "--samples", 2)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    want = arch_manifest()
    for study in STUDIES:
        rows = query(db, "SELECT variant, digest, valid FROM samples WHERE "
                     "study = ?", study)
        here = runs_here(study, want[study])
        assert sorted({v for v, _, _ in rows}) == sorted(here), rows
        assert len(rows) == 2 * len(here)
        digest = chain_hex(study, STEPS)
        assert all(d == digest and ok == 1 for _, d, ok in rows), rows
        (method,), = query(db, "SELECT DISTINCT method FROM refs WHERE "
                           "study = ?", study)
        assert method.startswith("plain C on the coordinator")
        checked = query(db, "SELECT variant, status, forbidden, present "
                        "FROM disasm WHERE study = ?", study)
        # every variant here declares insns or forbidden instructions
        assert sorted({v for v, *_ in checked}) == sorted(want[study])
        for variant, status, forbidden, present in checked:
            assert status == "ok" and present is None, (variant, status)
            assert forbidden, variant
    r = seqorch(scratch, "report", "--study", "mul")
    assert r.returncode == 0, r.stderr
    assert "ns/round" in r.stdout and "rounds/s over" in r.stdout


# The mul32 round through GCC vector extensions: the same results as the
# scalar control, as a compiler that vectorized it would build it.  It
# declares the control's forbidden list, which must catch it.
REBUILT_C = r'''
#include "kernel.h"
#include <string.h>

typedef uint32_t v16 __attribute__((vector_size(64)));

static __attribute__((noinline)) void
rebuilt_rounds(uint32_t *w, uint64_t steps)
{
	v16 v, t, n, a;
	int i;

	memcpy(&v, w, 64);
	for (i = 0; i < 16; i++)
		a[i] = (uint32_t)(2 * i + 1) * 0x9e3779b9u;
	while (steps--) {
		t = v * 0x85ebca6bu + a;
		n = __builtin_shuffle(t, (v16){ 1, 2, 3, 4, 5, 6, 7, 8, 9,
		    10, 11, 12, 13, 14, 15, 0 });
		v = t ^ ((n >> 13) | (n << 19));
	}
	memcpy(w, &v, 64);
}

static int
rebuilt_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint32_t w[16];

	(void)ctx;
	memcpy(w, x, 64);
	rebuilt_rounds(w, steps);
	memcpy(x, w, 64);
	return 0;
}

static const char *const forbidden[] = { "vpmulld", "pmulld", "mla",
	NULL };

const struct kernel KERNEL_THIS = {
	.description = "test only: the scalar round rebuilt as vectors",
	.forbidden = forbidden,
	.symbol = "rebuilt_rounds",
	.chain = rebuilt_chain,
};
'''


def warnings(db):
    return [m for m, in query(db, "SELECT message FROM events WHERE "
                              "level = 'warning'")]


def test_a_rebuilt_chain_is_flagged(tmp_path):
    if shutil.which("gcc") is None:
        pytest.fail("gcc not found: install build-essential (make deps)")
    tree = tmp_path / "tree"
    copy_tree(tree)
    variant = tree / "kernels" / "mul32" / "scalar-rebuilt"
    variant.mkdir()
    (variant / "kernel.c").write_text(REBUILT_C)
    if ARCH == "x86_64":
        # PMULLD is SSE4.1: without it gcc splits the multiply.
        (variant / "flags").write_text("-msse4.1\n")
    r = subprocess.run(["make", "-s", "all"], cwd=tree, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    write_hosts(tree / "hosts.toml", tmp_path / "wd", 'cc = "gcc"\n')
    r = subprocess.run([str(tree / "seqorch"), "run", "--study", "mul32",
                        "--hosts", "local", "--steps", "1000", "--samples", "1",
                        "--variants", "c,scalar-rebuilt"], cwd=tree,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    db = tree / "results.db"
    rows = dict((v, (s, p, e)) for v, s, p, e in query(
        db, "SELECT variant, status, present, excerpt FROM disasm WHERE "
        "study = 'mul32' AND variant IN ('c', 'scalar-rebuilt')"))
    assert rows["c"][:2] == ("ok", None), rows
    status, present, excerpt = rows["scalar-rebuilt"]
    assert status == "forbidden", rows
    assert present in ("vpmulld", "pmulld", "mla"), present
    assert f"\t{present}" in excerpt, excerpt
    # Its digests are right, yet it times another chain: its samples are
    # stored, invalid, with the reason, and it is never a rate or the best.
    got = query(db, "SELECT variant, digest, valid, invalid_reason FROM "
                "samples")
    assert {d for _, d, _, _ in got} == {chain_hex("mul32", 1000)}
    assert {(v, ok) for v, _, ok, _ in got} == {("c", 1),
                                               ("scalar-rebuilt", 0)}, got
    assert {why for v, _, _, why in got if v == "scalar-rebuilt"} == {
        f"its disassembly holds instructions it forbids ({present}): not "
        "the study's chain"}
    assert any(f"mul32/scalar-rebuilt ({present})" in m and
               "their samples are stored invalid" in m
               for m in warnings(db)), warnings(db)
    r = subprocess.run([str(tree / "seqorch"), "report", "--latest"],
                       cwd=tree, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "forbidden instructions in 1 variant" in r.stdout, r.stdout
    r = subprocess.run([str(tree / "seqorch"), "report", "--latest",
                        "--format", "json"], cwd=tree, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    rep, = json.loads(r.stdout)["runs"]
    assert [b["variant"] for b in rep["best"]] == ["c"], rep["best"]
    rows = {w["variant"]: w for w in rep["cells"]}
    assert rows["scalar-rebuilt"]["n"] == 0, rows


def test_the_scalar_control_stays_scalar_whatever_the_flags():
    """mul32/c, as build.sh compiles it (its registry cflags), at -O2 and
    -O3 with gcc for aarch64 (gcc 12 vectorized it at -O2: two MLA) and
    for this machine: no vector multiply in its symbol."""
    src = "kernels/mul32/c/kernel.c"
    flags = subprocess.run(["sh", "kernels/registry.sh", "cflags", src],
                           cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.split()
    compilers = [(need("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
                  need("aarch64-linux-gnu-objdump",
                       "binutils-aarch64-linux-gnu"), "-mcpu=neoverse-v1"),
                 (need("gcc", "build-essential"), need("objdump", "binutils"),
                  "-march=native")]
    for cc, objdump, native in compilers:
        for opt in ("-O2", "-O3", f"-O3 {native}"):
            out = ROOT / "build" / f"test24-mul32c-{os.getpid()}.o"
            subprocess.run([cc, *opt.split(), "-std=c11", "-D_GNU_SOURCE",
                            "-Ikernels", "-Iagent", *flags, "-c", src, "-o",
                            str(out)], cwd=ROOT, check=True)
            dis = subprocess.run([objdump, "-d", "--no-show-raw-insn",
                                  str(out)], check=True, capture_output=True,
                                 text=True).stdout
            out.unlink()
            body = dis.split("<mul32_c_chain>:", 1)[1].split("\n\n", 1)[0]
            vec = [ln for ln in body.splitlines()
                   if re.search(r"\t(v?pmulld|mla|mul)\s+(v|z|%[xyz]mm)",
                                ln) or re.search(r"\tv?pmulld\s", ln)]
            assert not vec, (cc, opt, vec)


# A wrapper around the real agent that adds an instruction mul/c really
# contains to the list of those it forbids; an objdump first in PATH sends
# the real objdump to the real agent behind the wrapper.
OBJDUMP = """#!/bin/sh
n=$#
while [ $n -gt 0 ]; do
    a=$1; shift; n=$((n - 1))
    if [ -f "$a.real" ]; then a=$a.real; fi
    set -- "$@" "$a"
done
exec %s "$@"
"""
FORBID = ('case " $* " in *" --list "*) "$0.real" "$@" | sed '
          '\'/"study":"mul","variant":"c"/'
          's/"forbidden":\\[/"forbidden":["%s",/\' ;; '
          '*) "$0.real" "$@" --out "$out" ;; esac')


def test_a_forbidden_instruction_in_the_listed_kernel_is_flagged(
        scratch, workdir):
    insn = "imul" if ARCH == "x86_64" else "madd"
    cc = scratch / "cc-forbids"
    cc.write_text(FAKE_CC % (FORBID % insn))
    cc.chmod(0o755)
    write_hosts(scratch / "hosts.toml", workdir, f'cc = "{cc}"\n')
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    (bin_dir / "objdump").write_text(OBJDUMP % need("objdump", "binutils"))
    (bin_dir / "objdump").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    r = seqorch(scratch, "run", "--study", "mul", "--hosts", "local",
                "--steps", 1000, "--samples", 1, "--variants", "c", env=env)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    (status, forbidden, present, excerpt), = query(
        db, "SELECT status, forbidden, present, excerpt FROM disasm WHERE "
        "study = 'mul' AND variant = 'c'")
    assert (status, present) == ("forbidden", insn)
    assert forbidden.split()[0] == insn and f"\t{insn}" in excerpt
    assert any(m.endswith(f"forbidden instructions in 1 variant, a chain "
                          f"other than the study's: mul/c ({insn}) (table "
                          "disasm; their samples are stored invalid)")
               for m in warnings(db)), warnings(db)
    assert query(db, "SELECT valid, invalid_reason FROM samples") == [
        (0, f"its disassembly holds instructions it forbids ({insn}): not "
            "the study's chain")]
    # a second run of the same binary copies the check, flag included
    r = seqorch(scratch, "run", "--study", "mul", "--hosts", "local",
                "--steps", 1000, "--samples", 1, "--variants", "c", env=env)
    assert r.returncode == 0, r.stderr
    assert sum(f"mul/c ({insn})" in m for m in warnings(db)) == 2
    rows = query(db, "SELECT status, present FROM disasm WHERE study = "
                 "'mul' AND variant = 'c' ORDER BY build_id")
    assert rows == [("forbidden", insn)] * 2


@pytest.mark.skipif(ARCH != "x86_64", reason="x86-64 CPU models")
@pytest.mark.parametrize("model,skips", [
    ("Nehalem", {"mul": {"x86-rorx"}, "mul-wide": {"x86-rorx", "avx512"},
                 "mul32": {"avx2", "avx512"}}),
    ("Haswell-noTSX", {"mul": set(), "mul-wide": {"avx512"},
                       "mul32": {"avx512"}}),
])
def test_x86_feature_variants_skipped_under_qemu(tmp_path, tmp_path_factory,
                                                 model, skips):
    """On a CPU model without a variant's features the variant is reported
    as skipped and never called; the others run (AVX2 and BMI2 ones
    too, on Haswell) and pass."""
    need("qemu-x86_64", "qemu-user")
    exe = build_check("cc", "x86_64", tmp_path, nolibs=True,
                      cache=obj_cache(tmp_path_factory), static=True)
    want = manifest("x86_64", nolibs=True)
    for study in STUDIES:
        rc, out = run_check(["qemu-x86_64", "-cpu", model, exe, "-S", study,
                             *expect_args(study, (1, 2, 1000))])
        assert rc == 0, out
        have, by = assert_all_pass(out, study, want[study], (1, 2, 1000))
        skipped = {v for v, res in by.items() if res[0][0] == "skip"}
        assert skipped == skips[study], (study, model, out)
        assert "avx512f+vl" not in have, have


@pytest.mark.skipif(ARCH != "x86_64", reason="an x86-64 CPU model")
def test_kernel_bench_refuses_a_variant_the_cpu_lacks():
    """build/kernel-bench asked for a variant whose features the CPU lacks
    says which and exits 2 (it died of SIGILL); one the CPU has runs."""
    need("qemu-x86_64", "qemu-user")
    with locked(ROOT / "build" / "pytest-make.lock"):
        subprocess.run(["make", "-s", "build/kernel-bench"], cwd=ROOT,
                       check=True)
    exe = [need("qemu-x86_64", "qemu-user"), "-cpu", "Nehalem",
           str(ROOT / "build" / "kernel-bench"), "-S", "sha512", "-n", "10",
           "-s", "1"]
    p = subprocess.run(exe + ["x86-rorx-avx"], capture_output=True,
                       text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr == 'bench: variant "x86-rorx-avx" needs avx2,bmi2, ' \
        "which this cpu lacks\n"
    p = subprocess.run(exe + ["c-fused"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("sha512: 10 hashes x 1 samples"), p.stdout


def test_disasm_rows_survive_the_forbidden_migration(tmp_path):
    """A database at the schema before `forbidden` (its disasm table
    rebuilt with a wider status CHECK) keeps its disasm rows, with NULL
    forbidden and present, and then accepts status forbidden."""
    schema = (ROOT / "schema.sql").read_text()
    sections = re.split(r"^-- version: (\d+)$", schema, flags=re.M)
    body = {int(v): sql for v, sql in zip(sections[1::2], sections[2::2])}
    new = max(v for v, sql in body.items() if "disasm_v" in sql)
    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    for v in range(1, new):
        con.executescript(body[v])
    con.execute(f"PRAGMA user_version = {new - 1}")
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("INSERT INTO runs (id, study, started_at, status, steps, "
                "samples_per_variant, command, seed, hosts, coordinator, "
                "version) VALUES (1, 'sha3', '2026-01-01T00:00:00Z', 'ok', "
                "1, 1, 'seqorch run', '00', 'local', 'test', 'test')")
    con.execute("INSERT INTO builds (id, run_id, host, compiler, cflags, "
                "status, created_at) VALUES (1, 1, 'local', 'cc', '-O3', "
                "'ok', '2026-01-01T00:00:00Z')")
    con.execute("INSERT INTO disasm (build_id, study, variant, symbol, "
                "required, missing, status, tool, excerpt) VALUES (1, "
                "'sha3', 'avx512-fused', 'chain', 'vprolq', NULL, 'ok', "
                "'objdump', 'x')")
    con.commit()
    con.close()
    r = seqorch(tmp_path, "report", "--db", db)
    assert "schema" not in r.stderr and "migration" not in r.stderr, r.stderr
    assert query(db, "PRAGMA user_version")[0][0] >= new
    assert query(db, "SELECT build_id, variant, status, excerpt, forbidden, "
                 "present FROM disasm") == [
        (1, "avx512-fused", "ok", "x", None, None)]
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("INSERT INTO disasm (build_id, study, variant, symbol, "
                "required, status, forbidden, present) VALUES (1, 'mul', "
                "'c', 'c_chain', '', 'forbidden', 'imul', 'imul')")
    con.commit()
    con.close()
