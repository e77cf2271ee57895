"""Bad input gets a clear error naming the place, a non-zero exit, and
loses nothing already collected."""
import os
import re
import stat
import subprocess

import pytest

from conftest import (ROOT, SEQORCH, cpu_lacks, query, seqorch, sha3_chain,
                      write_hosts)
from lib_fakecc import GERMAN_CC


def run(scratch, *extra, **kw):
    """A short run, with extra's options in place of these (an option is
    given once); kw goes to subprocess.run."""
    base = {"--study": "sha3", "--hosts": "local", "--steps": "500",
            "--samples": "1"}
    args = [x for k, v in base.items() if k not in extra for x in (k, v)]
    return seqorch(scratch, "run", *args, *extra, **kw)


@pytest.mark.parametrize("text,where,what", [
    ('[hosts.local]\ntransport = "local"\ncpu = \n', "hosts.toml:3:", ""),
    ('[hosts.local]\ntransport = "local"\ncpus = 1\n', "hosts.toml:3:",
     'unknown key "cpus"'),
    ('[hosts.local]\ntransport = "local"\nport = "x"\n', "hosts.toml:3:",
     '"port"'),
    ('[hosts.a]\naddress = "127.0.0.2"\npassword = "hunter2"\n',
     "hosts.toml:3:", "password"),
])
def test_bad_config(scratch, text, where, what):
    (scratch / "hosts.toml").write_text(text)
    r = run(scratch)
    assert r.returncode == 2, r.stderr
    assert where in r.stderr and what in r.stderr
    assert not (scratch / "results.db").exists()


@pytest.mark.parametrize("args,msg", [
    (["--steps", "0"], 'invalid --steps "0"'),
    (["--steps", "-5"], 'invalid --steps "-5"'),
    (["--steps", "99999999999999999999"], "invalid --steps"),
    (["--steps", "12abc"], "invalid --steps"),
    (["--samples", "0"], 'invalid --samples "0"'),
    (["--samples", "100000"], "invalid --samples"),
    (["--variants", "c-fused,nope"], 'unknown variant "nope" of study '
     '"sha3" (valid: '),
    (["--hosts", "nosuch"], '"nosuch"'),
    (["--max-cv", "abc"], 'invalid --max-cv "abc"'),
    (["--max-cv", "150%"], 'invalid --max-cv "150%"'),
    # A bare 0.5 once meant 50%: below 1, a percentage takes its sign.
    (["--max-cv", "0.5"], 'invalid --max-cv "0.5": expected a percentage '
     'below 100, such as 2, 1% or 0.5% (below 1 with its %)'),
    (["--samples", "3", "--max-samples", "2"],
     "--max-samples 2 is below --samples 3"),
    (["--lease-expiry", "0"], 'invalid --lease-expiry "0"'),
    (["--warmup", "-1"], 'invalid --warmup "-1": expected an integer from '
     '0 to 1000'),
    # 0, the default, parses: what refuses it here is --resume.
    (["--resume", "1", "--warmup", "0"],
     "--warmup cannot be given with --resume"),
    (["--parallel", "0"], 'invalid --parallel "0"'),
])
def test_bad_options(scratch, args, msg):
    r = run(scratch, *args)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr
    assert not (scratch / "results.db").exists()


@pytest.mark.parametrize("args,msg", [
    (["run", "--study", "sha3", "--steps", "0"],
     'invalid --steps "0": expected a whole number from 1 to 100000000000 '
     '(1000000, 1e6, 10M, 2.5M; suffixes k, M, G)'),
    (["run", "--study", "sha3", "--parallel", "257"],
     'invalid --parallel "257": expected an integer from 1 to 256'),
    (["run", "--resume", "0"], 'invalid --resume "0": expected a run id'),
    (["deploy", "--parallel", "x"],
     'invalid --parallel "x": expected an integer from 1 to 256'),
    (["hosts", "check", "--parallel", "-1"],
     'invalid --parallel "-1": expected an integer from 1 to 256'),
    (["report", "--run", "1.5"], 'invalid --run "1.5": expected a run id'),
    (["windows", "--run", "abc"], 'invalid --run "abc": expected a run id'),
])
def test_integer_options_of_every_command(scratch, args, msg):
    """Every command names the option, the value and what it expects."""
    r = seqorch(scratch, *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"seqorch: {msg}\n"
    assert not (scratch / "results.db").exists()


def test_unknown_study_lists_valid(scratch):
    r = seqorch(scratch, "run", "--study", "nosuch", "--hosts", "local")
    assert r.returncode == 2
    assert 'unknown study "nosuch" (valid: ' in r.stderr
    assert "sha3" in r.stderr


def test_unknown_host_lists_valid(scratch):
    r = run(scratch, "--hosts", "genoa")
    assert r.returncode == 2
    assert '"genoa"' in r.stderr and "local" in r.stderr


def test_unwritable_db(scratch):
    ro = scratch / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.geteuid() == 0:
        target = "/proc/seqorch-results.db"     # not writable even by root
    else:
        target = str(ro / "results.db")
    r = run(scratch, "--db", target)
    assert r.returncode == 3, r.stderr
    assert "results.db" in r.stderr and "cannot open" in r.stderr


def fake_run(scratch, workdir, bad_cc, mode):
    """A run whose agent misbehaves as mode says (conftest's BAD_MODES)."""
    write_hosts(scratch / "hosts.toml", workdir, f'cc = "{bad_cc}"\n')
    return seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                   "--steps", "500", "--samples", "2",
                   env=dict(os.environ, SEQORCH_BAD_AGENT=mode))


@pytest.mark.parametrize("mode,msg", [
    ("garbage", "not a JSON object"),
    ("crash", "died of signal 11"),
    ("nonhex", 'field "digest" must be lowercase hex'),
    ("unknown", 'unknown field "x"'),
    ("huge", "longer than 65536 bytes"),
])
def test_misbehaving_agent(scratch, workdir, bad_cc, mode, msg):
    r = fake_run(scratch, workdir, bad_cc, mode)
    assert r.returncode == 1, r.stderr
    assert msg in r.stderr and "local" in r.stderr
    db = scratch / "results.db"
    (status,), = query(db, "SELECT status FROM run_hosts")
    assert status == "failed"
    events = query(db, "SELECT host, message FROM events WHERE level = "
                   "'error'")
    assert any(h == "local" and msg in m for h, m in events)
    # Whatever arrived before the bad record is kept, and is correct.
    want = sha3_chain(500)
    for digest, valid in query(db, "SELECT digest, valid FROM samples"):
        assert valid == 1 and digest == want
    (run_status,), = query(db, "SELECT status FROM runs")
    assert run_status in ("partial", "failed")
    # These wrappers also break --list: the disassembly check says it was
    # not done, and measuring went on regardless.
    warnings = [m for m, in query(db, "SELECT message FROM events WHERE "
                                  "level = 'warning'")]
    assert any("disassembly check not done" in m and "--list" in m
               for m in warnings), warnings


def test_wrong_digest_stored_invalid(scratch, workdir, bad_cc):
    r = fake_run(scratch, workdir, bad_cc, "wrong")
    assert r.returncode == 1, r.stderr
    db = scratch / "results.db"
    rows = query(db, "SELECT valid, invalid_reason FROM samples")
    assert rows and all(v == 0 and "reference" in why for v, why in rows)
    assert query(db, "SELECT count(*) FROM summary") == [(0,)]
    (status,), = query(db, "SELECT status FROM runs")
    assert status == "failed"
    rep = seqorch(scratch, "report", "--latest")
    assert "invalid" in rep.stdout.lower()


def test_failed_build_is_recorded(scratch, workdir):
    write_hosts(scratch / "hosts.toml", workdir, 'cc = "/nonexistent/cc"\n')
    r = run(scratch)
    assert r.returncode == 1, r.stderr
    assert ('seqorch: local: failed: no compiler produced a working agent: '
            'build with "/nonexistent/cc": compiler "/nonexistent/cc" does '
            'not run (the build log: seqorch report --run 1)\n') in r.stderr
    db = scratch / "results.db"
    (status,), = query(db, "SELECT status FROM builds")
    assert status == "failed"
    statuses = {s for s, in query(db, "SELECT status FROM variants")}
    assert statuses == {"unavailable"}


def test_one_failed_build_leaves_the_run_partial(scratch, workdir):
    """Of two compilers, the one that does not run is no "ok" run: the
    other build is measured, the run is partial and exits 1."""
    write_hosts(scratch / "hosts.toml", workdir,
                'cc = ["cc", "/nonexistent/cc"]\n')
    r = run(scratch, "--variants", "c-fused")
    assert r.returncode == 1, r.stderr
    assert ('seqorch: local: failed: build with "/nonexistent/cc" failed: '
            'compiler "/nonexistent/cc" does not run (the other builds went '
            'on; the build log: seqorch report --run 1)\n') in r.stderr
    assert "seqorch: run 1 partial: 1 samples (0 invalid)" in r.stderr
    db = scratch / "results.db"
    assert query(db, "SELECT status FROM runs") == [("partial",)]
    assert query(db, "SELECT b.compiler, s.valid FROM samples s JOIN "
                 "builds b ON b.id = s.build_id") == [("cc", 1)]


def test_a_build_a_resume_measured_pairs_with_no_earlier_sample(
        scratch, workdir):
    """A compiler that did not run, then does: the resume measures its
    build in a window of its own, and the report pairs none of its samples
    with the first run's, taken minutes before; the report says so.
    Before, sample k of each build was paired whatever their windows."""
    late = scratch / "late-cc"
    write_hosts(scratch / "hosts.toml", workdir,
                f'cc = ["cc", "{late}"]\n')
    r = run(scratch, "--variants", "c-fused", "--samples", "2")
    assert r.returncode == 1, r.stderr
    late.write_text('#!/bin/sh\nexec cc "$@"\n')
    late.chmod(0o755)
    r = seqorch(scratch, "run", "--resume", "1")
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    wins = query(db, "SELECT b.compiler, s.window_id FROM samples s JOIN "
                 "builds b ON b.id = s.build_id ORDER BY s.id")
    assert len(wins) == 4 and all(w is not None for _, w in wins), wins
    assert {w for c, w in wins if c == "cc"}.isdisjoint(
        {w for c, w in wins if c != "cc"}), wins
    rep = seqorch(scratch, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    text = " ".join(rep.stdout.split())
    assert f'2 samples of c-fused ({late}) on "local" measured in a ' \
        "later launch than cc's, not paired" in text, rep.stdout
    assert "paired over" not in r.stderr, r.stderr


def test_failed_build_says_the_compilers_error(scratch, workdir):
    """The compiler's first error line, not only the report's log."""
    write_hosts(scratch / "hosts.toml", workdir,
                'cflags = "-O3 -mfoo-bar"\n')
    r = run(scratch, "--variants", "c-fused")
    assert r.returncode == 1, r.stderr
    fail, = [x for x in r.stderr.split("\n") if "failed: no compiler" in x]
    assert re.fullmatch(
        r'seqorch: local: failed: no compiler produced a working agent: '
        r'build with "cc": \S*(cc|gcc|clang)\S*: error: [^\n]*-mfoo-bar'
        r'[^\n]* \(the build log: seqorch report --run 1\)',
        fail), fail
    assert len(fail) < 400, fail
    rep = seqorch(scratch, "report", "--run", "1")
    assert "-mfoo-bar" in rep.stdout, rep.stdout


def test_failed_build_in_a_german_locale(scratch, workdir):
    """A user's German locale does not reach the compiler, whose messages
    the coordinator reads: its first error line is still found (before,
    the log's last line, "Kompilierung beendet.", was the reason)."""
    cc = scratch / "übersetzer" / "cc"
    cc.parent.mkdir()
    cc.write_text(GERMAN_CC)
    cc.chmod(0o755)
    write_hosts(scratch / "hosts.toml", workdir,
                f'cc = "{cc}"\ncflags = "-include seqorch-missing.h"\n')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("LC_") and k != "LANGUAGE"}
    r = run(scratch, "--variants", "c-fused",
            env=dict(env, LANG="de_DE.UTF-8", LANGUAGE="de"))
    assert r.returncode == 1, r.stderr
    assert re.search(r'failed: no compiler produced a working agent: build '
                     r'with "[^"]*": [^\n]*fatal error: [^\n]*'
                     r'seqorch-missing\.h', r.stderr), r.stderr


def test_resume_names_what_is_missing(scratch):
    r = seqorch(scratch, "run", "--resume", "7")
    assert r.returncode == 3
    assert 'no database "results.db"' in r.stderr
    assert run(scratch).returncode == 0
    r = seqorch(scratch, "run", "--resume", "7")
    assert r.returncode == 2
    assert "no run with id 7" in r.stderr and "results.db" in r.stderr
    r = seqorch(scratch, "run", "--resume", "x")
    assert r.returncode == 2 and 'invalid --resume "x"' in r.stderr
    # What the run measured cannot be changed on resuming it.
    for extra in (["--steps", "5"], ["--hosts", "local"], ["--explore"],
                  ["--seed", "00"], ["--samples", "2"],
                  ["--variants", "c-fused"], ["--max-cv", "2%"],
                  ["--max-samples", "9"]):
        r = seqorch(scratch, "run", "--resume", "1", *extra)
        assert r.returncode == 2, r.stderr
        assert f"seqorch: {extra[0]} cannot be given with --resume" in \
            r.stderr


def test_fuzz_config_seeds_never_crash(tmp_path):
    """Every hosts.toml in the fuzzer's seed corpus, including the inputs
    that once crashed (toml++ internal asserts), gets an answer: accepted,
    or refused with a message naming the file, never a signal."""
    seeds = sorted((ROOT / "tests" / "fuzz" / "seeds-config").iterdir())
    assert any(p.name.startswith("toml-assert") for p in seeds)
    for p in seeds:
        r = subprocess.run([str(SEQORCH), "hosts", "list", "--config",
                            str(p)], cwd=tmp_path, capture_output=True,
                           text=True)
        assert r.returncode in (0, 2), (p.name, r.returncode, r.stderr)
        if r.returncode == 2:
            assert r.stderr.startswith("seqorch: "), (p.name, r.stderr)
            assert "Assertion" not in r.stderr, (p.name, r.stderr)


# A stand-in for a build_wrapper's container image (gcc:14 under docker):
# the build links a library that exists only inside it, here a directory
# of its own, as a container's libraries are not the host's.
CONTAINER = r'''#!/bin/sh
lib=%s
mkdir -p "$lib"
if [ ! -f "$lib/libseqorchwrap.so" ]; then
	echo 'int seqorch_wrapped(void) { return 1; }' > "$lib/w.c" &&
	cc -shared -fPIC -o "$lib/libseqorchwrap.so" "$lib/w.c" || exit 1
fi
sh=$1 script=$2 out=$3 cc=$4
shift 4
exec "$sh" "$script" "$out" "$cc -L$lib -Wl,--no-as-needed -lseqorchwrap" "$@"
'''


def test_a_wrapped_build_that_cannot_run_on_the_host(tmp_path):
    """The agent a build_wrapper built links the wrapper's libraries, and
    runs on the host outside it: the loader's refusal is reported before
    any launch, with its words (issue 21, item 13)."""
    wrap = tmp_path / "container.sh"
    wrap.write_text(CONTAINER % (tmp_path / "container-lib"))
    wd = tmp_path / "wd"
    write_hosts(tmp_path / "hosts.toml", wd,
                f'build_wrapper = "sh {wrap}"\n')
    r = seqorch(tmp_path, "run", "--study", "sha3", "--hosts", "local",
                "--variants", "c-fused", "--steps", 1000, "--samples", 1)
    assert r.returncode != 0
    assert 'host "local": the agent built through build_wrapper does not ' \
        "run on the host, outside the wrapper: " in r.stderr, r.stderr
    assert "libseqorchwrap.so: cannot open shared object file" in r.stderr
    assert query(tmp_path / "results.db", "SELECT count(*) FROM samples") \
        == [(0,)]


# A variant the cpu lacks is skipped by the agent with a reason: the run
# says it, not only the report (the agent exits 1 after its done record
# when no variant is left, docs/protocol.md).
LACKED = "avx512-fused"


def lacked_reason(db):
    (status, why), = query(db, "SELECT status, reason FROM variants WHERE "
                           "variant = ?", LACKED)
    assert status == "skipped" and why.startswith("cpu lacks "), why
    return why


@pytest.mark.skipif(not cpu_lacks("sha3", LACKED),
                    reason=f"this cpu runs {LACKED}")
def test_only_variant_the_cpu_lacks_says_why(scratch):
    r = run(scratch, "--variants", LACKED)
    assert r.returncode == 1, r.stderr
    why = lacked_reason(scratch / "results.db")
    assert (f'seqorch: local: failed: no variant asked for can run with cc: '
            f'variant "{LACKED}" skipped: {why}\n') in r.stderr, r.stderr
    assert "done record" not in r.stderr, r.stderr
    assert (f'\nvariants not run:\n  variant "{LACKED}" on "local" (cc) '
            f'skipped: {why}\n') in r.stderr, r.stderr


def test_summary_lists_variants_not_run(scratch):
    """A default run skips variants (the cpu's, unfetched sources'): the
    summary has one line per reason, as the report's warnings do."""
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "1000", "--samples", "1")
    assert r.returncode == 0, r.stderr
    rows = query(scratch / "results.db", "SELECT variant, reason FROM "
                 "variants WHERE status = 'skipped' ORDER BY reason, "
                 "variant")
    assert rows, "nothing skipped: no variant not run to list"
    tail = r.stderr.split("\nvariants not run:\n")[1].split("\nnext:")[0]
    lines = [x for x in tail.split("\n") if x.startswith("  ")]
    for why in {w for _, w in rows}:
        names = [v for v, w in rows if w == why]
        what = (f'variant "{names[0]}"' if len(names) == 1 else
                "variants " + ", ".join(names))
        assert f'  {what} on "local" (cc) skipped: {why}' in lines, r.stderr


def online_cpus():
    """This host's online cpu list ("0-1") and how many it names."""
    with open("/sys/devices/system/cpu/online") as f:
        cpus = f.read().strip()
    n = 0
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return cpus, n


def test_cpu_the_host_lacks_is_flagged(scratch, workdir):
    """cpu promises a pin (docs/hosts.md): one the host does not have
    fails hosts check, and the run says its samples are unpinned."""
    cpus, n = online_cpus()
    toml = write_hosts(scratch / "hosts.toml", workdir).read_text()
    (scratch / "hosts.toml").write_text(toml.replace("cpu = 0", "cpu = 999"))
    r = seqorch(scratch, "hosts", "check", "--hosts", "local")
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"\n  pin       cpu 999 is not one of its {n} cpus ({cpus}): "
            "the agent would run unpinned\n") in r.stdout, r.stdout
    assert (f'\n  missing   cpu 999 to pin to (set cpu to one of {cpus}, or '
            '"auto")\n') in r.stdout, r.stdout
    r = run(scratch, "--variants", "c-fused")
    assert r.returncode == 0, r.stderr
    why = f"cpu 999 is not one of its {n} cpus ({cpus})"
    assert query(scratch / "results.db", "SELECT pin_cpu, pinned, "
                 "pin_error FROM run_hosts") == [(999, 0, why)]
    live, tail = r.stderr.split("\nseqorch: run 1 ok:")
    assert f"\nseqorch: local: warning: not pinned (cc): {why}\n" in live, \
        live
    assert f"\n  local: not pinned to cpu 999: {why}\n" in \
        tail.split("\nwarnings (")[1], tail
