"""A study is one folder plus one registration line (kernels/kernel.h).

In a temporary copy of the tree, a throwaway study `toy` is added as
kernels/toy/ (study.c, reference.c, two variant folders) and registered by
one line in kernels/studies.txt; no other file changes.  The copy then
builds, lists the study and its unit, self-tests both variants, runs on the
local host, checks every sample against the coordinator's reference of the
new study, and reports in the study's own unit.  The expected digest is
computed here in Python from the toy's definition."""
import subprocess
from pathlib import Path

from conftest import copy_build, copy_tree, query

M64 = (1 << 64) - 1

STUDY_C = r'''
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x = 3x + 1 mod 2^64, a throwaway study",
	.unit = "toyop",
	.unit_plural = "toyops",
	.state_len = 8,
	.seed_hex = "0100000000000000",
	.default_steps = 5000,
	.control = "plain",
};
'''

REFERENCE_C = r'''
#include "kernel.h"

static int
toy_chain(uint8_t *x, uint64_t steps, volatile sig_atomic_t *stop,
    char *why, size_t whylen)
{
	uint64_t v = 0;
	int i;

	(void)stop; (void)why; (void)whylen;
	for (i = 7; i >= 0; i--)
		v = v << 8 | x[i];
	while (steps--)
		v = 3 * v + 1;
	for (i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return 0;
}

const struct study_reference REFERENCE_THIS = {
	.method = "plain C toy",
	.chain = toy_chain,
};
'''

KERNEL_C = r'''
#include "kernel.h"
#include <string.h>

static int
chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t v;

	(void)ctx;
	memcpy(&v, x, 8);	/* little-endian hosts only: a toy */
	while (steps--)
		v = %s;
	memcpy(x, &v, 8);
	return 0;
}

const struct kernel KERNEL_THIS = {
	.description = "toy variant",
	.symbol = "chain",
	.chain = chain,
};
'''


def toy(steps, x=1):
    for _ in range(steps):
        x = (3 * x + 1) & M64
    return x.to_bytes(8, "little").hex()


def test_a_new_study_is_one_folder_and_one_line(tmp_path):
    tree = tmp_path / "tree"
    copy_tree(tree, build=False)
    before = {p.relative_to(tree): p.read_bytes()
              for p in tree.rglob("*") if p.is_file()}

    toy_dir = tree / "kernels" / "toy"
    (toy_dir / "plain").mkdir(parents=True)
    (toy_dir / "shifted").mkdir()
    (toy_dir / "study.c").write_text(STUDY_C)
    (toy_dir / "reference.c").write_text(REFERENCE_C)
    (toy_dir / "plain" / "kernel.c").write_text(KERNEL_C % "3 * v + 1")
    (toy_dir / "shifted" / "kernel.c").write_text(
        KERNEL_C % "(v << 1) + v + 1")
    with open(tree / "kernels" / "studies.txt", "a") as f:
        f.write("toy\n")

    after = {p.relative_to(tree) for p in tree.rglob("*") if p.is_file()}
    changed = [p for p in before if (tree / p).read_bytes() != before[p]]
    assert changed == [Path("kernels/studies.txt")]
    assert sorted(after - set(before)) == sorted(
        Path("kernels/toy") / p for p in (
            "study.c", "reference.c", "plain/kernel.c",
            "shifted/kernel.c"))

    # The session's build, so that make rebuilds what the new study
    # touches, not the whole tree.
    copy_build(tree)
    r = subprocess.run(["make", "-s", "all"], cwd=tree, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr

    def run(*args):
        return subprocess.run([str(tree / "seqorch"), *map(str, args)],
                              cwd=tree, capture_output=True, text=True,
                              timeout=600)

    r = run("studies")
    assert r.returncode == 0, r.stderr
    assert "toy: x = 3x + 1 mod 2^64" in r.stdout
    assert "unit toyop, 5000 toyops per sample" in r.stdout
    assert "reference plain C toy" in r.stdout

    (tree / "hosts.toml").write_text(
        '[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{tmp_path / "wd"}"\n')
    r = run("run", "--study", "toy", "--hosts", "local", "--samples", 2)
    assert r.returncode == 0, r.stderr
    db = tree / "results.db"
    rows = query(db, "select variant, steps, digest, valid from samples "
                 "order by variant, sample_index")
    want = toy(5000)
    assert rows == [(v, 5000, want, 1) for v in ("plain", "plain",
                                                "shifted", "shifted")]
    st = query(db, "select variant, status from variants "
               "order by variant")
    assert st == [("plain", "ok"), ("shifted", "ok")]
    ref = query(db, "select steps, digest, method from refs "
                "where study = 'toy' order by steps")
    assert ref[-1][:2] == (5000, want) and "plain C toy" in ref[-1][2]

    r = run("report", "--latest")
    assert r.returncode == 0, r.stderr
    assert "ns/toyop" in r.stdout and "toyops/s over the n valid" in \
        r.stdout


def test_a_misspelt_kernel_file_is_refused(tmp_path):
    """A variant folder without kernel.c or kernel.S (here kernal.c) is a
    mistake: registry.sh and so make stop naming the folder, rather than
    leave the variant out of every table."""
    tree = tmp_path / "tree"
    copy_tree(tree, build=False)
    (tree / "kernels" / "sha3" / "c-typo").mkdir()
    (tree / "kernels" / "sha3" / "c-typo" / "kernal.c").write_text(KERNEL_C)
    want = 'kernels/registry.sh: variant folder "kernels/sha3/c-typo" ' \
        'has no kernel.c or kernel.S (it holds: kernal.c)'
    for args in (["manifest"], ["files", "x86_64"], ["agent", "x86_64"],
                 ["coordinator"]):
        r = subprocess.run(["sh", "kernels/registry.sh", *args], cwd=tree,
                           capture_output=True, text=True)
        assert r.returncode == 1, (args, r.stdout)
        assert want in r.stderr, (args, r.stderr)
    r = subprocess.run(["make", "all"], cwd=tree, capture_output=True,
                       text=True)
    assert r.returncode == 2, r.stdout
    assert want in r.stderr, r.stderr
    assert not (tree / "seqorch").exists()
