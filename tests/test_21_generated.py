"""The generated kernel sources in the repository are exactly what their
generators write: a change to a generator that was not rerun, or a hand
edit to its output, fails here."""
import importlib.util
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.fixture(scope="session", autouse=True)
def built():
    """Generators and their outputs only: no binary is needed, so these
    tests do not wait for conftest's `make all`."""


def generated():
    """{(study folder, generator): [outputs]}: every kernels/*/gen-*.py,
    asked for the files it writes (`--outputs`, the one list of them;
    make regen runs the same generators)."""
    out = {}
    for gen in sorted((ROOT / "kernels").glob("*/gen-*.py")):
        r = subprocess.run([sys.executable, str(gen), "--outputs"],
                           capture_output=True, text=True, check=True)
        out[gen.parent.name, gen.name] = r.stdout.split()
    return out


GENERATED = generated()


def test_every_generator_names_its_outputs():
    assert len(GENERATED) >= 4
    for (study, generator), outs in GENERATED.items():
        assert outs, f"{generator} names no output"
        for out in outs:
            assert (ROOT / "kernels" / study / out).is_file(), \
                f"{generator} names {out}, which is not in kernels/{study}"


@pytest.mark.parametrize("study,generator", sorted(GENERATED))
def test_generated_sources_are_current(tmp_path, study, generator):
    # A copy, so the generator writes beside itself and not into the tree.
    folder = ROOT / "kernels" / study
    copy = tmp_path / study
    shutil.copytree(folder, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    for out in GENERATED[study, generator]:
        (copy / out).unlink()
    subprocess.run([sys.executable, str(copy / generator)], check=True,
                   cwd=tmp_path)
    for out in GENERATED[study, generator]:
        assert (copy / out).read_bytes() == (folder / out).read_bytes(), \
            f"{out} differs from what {generator} writes: rerun it"
    # What it writes is what --outputs says: nothing else was touched.
    written = {str(p.relative_to(copy)) for p in copy.rglob("*")
               if p.is_file() and before.get(p) != p.stat().st_mtime_ns}
    assert written == set(GENERATED[study, generator])


def gen_avx512():
    spec = importlib.util.spec_from_file_location(
        "gen_avx512", ROOT / "kernels" / "sha3" / "gen-avx512.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("r_lives_on", [False, True])
def test_late_rule_overwrites_the_latest_source(r_lives_on):
    """t = a ^ b ^ rol(c, 1), a dying there: the default allocation
    overwrites a, the "zen4-late" one the rotate's result (ready a cycle
    later than a), through a copy when that result is used again."""
    g = gen_avx512()
    graph = g.Graph(3)
    r = graph.rol(2, 1)
    t = graph.tern(g.XOR3, 0, 1, r)
    outs = [t, 1] + ([r] if r_lives_on else [])
    homes = [5, 1] + ([6] if r_lives_on else [])
    regs = {0: 0, 1: 1, 2: 2}

    def tern_dst(model):
        order = g.schedule(graph, [0, 1, 2], outs, model)
        lines = g.allocate(order, dict(regs), outs, homes,
                           model in g.LATE_DST)
        rol = next(x for x in lines if x.startswith("vprolq"))
        tern = next(x for x in lines if x.startswith("vpternlogq"))
        moves = [x for x in lines[:lines.index(tern)]
                 if x.startswith("vmovdqa64")]
        return rol.split()[-1], tern.split()[-1], moves

    _, dst, _ = tern_dst("zen4")
    assert dst == "%xmm0", "the default overwrites the dying state lane"
    r_reg, dst, moves = tern_dst("zen4-late")
    if r_lives_on:
        assert dst != r_reg and moves == [f"vmovdqa64 {r_reg}, {dst}"]
    else:
        assert dst == r_reg and not moves
