"""The seeds as units a user can name: study groups (`--study div`),
`seqorch reproduce` and the published tables beside the measured ones."""
import json
import os
import re
import subprocess
from pathlib import Path

from conftest import ROOT, query, seqorch, write_hosts
from lib_common import check_randomx_published, dead_port
from refs import chain_hex, msg_chain_hex


def openssl_fixture():
    """OpenSSL's release tarball among the shared fixtures."""
    fixtures = ROOT.parent / "shared" / "fixtures"
    if not (fixtures / "openssl").exists():
        fixtures = Path("/work/shared/fixtures")
    return fixtures / "openssl" / "openssl-3.5.7.tar.gz"


def randomx_fixture():
    """RandomX's release tarball among the shared fixtures (test_47's)."""
    return openssl_fixture().parents[1] / "randomx" / \
        "RandomX-1.1.10.tar.gz"


def test_group_runs_its_studies_in_order(scratch):
    # Seed 001's "division" is div32 then div64; div32 named again warns.
    r = seqorch(scratch, "run", "--study", "div,div32", "--hosts", "local",
                "--steps", "200", "--samples", "1", "--variants", "c-div")
    assert r.returncode == 0, r.stderr
    assert ('seqorch: warning: study "div32" is named twice: it runs '
            'twice, each time as a run of its own') in r.stderr
    runs = query(scratch / "results.db", "SELECT study FROM runs ORDER BY id")
    assert [s for s, in runs] == ["div32", "div64", "div32"]
    st = seqorch(scratch, "studies")
    assert "div: group, --study div runs div32,div64 in that order" \
        in st.stdout.splitlines()


def test_reproduce_list_and_dry_run(tmp_path):
    r = seqorch(tmp_path, "reproduce", "--list")
    assert r.returncode == 0, r.stderr
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == \
        ["sha3", "sha512", "umbrella", "ebash"]
    # Seed 000: every sha3 variant the registry lists, 3 x 10M, alternating.
    r = seqorch(tmp_path, "reproduce", "sha3", "--dry-run")
    assert r.returncode == 0, r.stderr
    manifest = subprocess.run(["sh", "kernels/registry.sh", "manifest"],
                              cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    every = [ln.split("\t")[1] for ln in manifest.splitlines()
             if ln.split("\t")[0] == "sha3"]
    line = next(ln for ln in r.stdout.splitlines()
                if ln.startswith("  variants"))
    assert line.split()[1].split(",") == every
    assert "  steps      10000000 hashes per sample\n" in r.stdout
    assert "  samples    3 per variant\n" in r.stdout
    assert "  order      alternating" in r.stdout
    # Seed 001's windows in its order, a group expanded, RandomX full.
    r = seqorch(tmp_path, "reproduce", "umbrella", "--dry-run")
    studies = re.findall(r"^run \d+ \((\w+)\): study (\S+)$", r.stdout, re.M)
    assert studies == [("mul", "mul"), ("sha3", "sha3"), ("div", "div32"),
                       ("div", "div64"), ("randomx", "randomx")]
    assert "  variants   full (1)\n" in r.stdout
    # --steps is a count as `run --steps` takes one
    r = seqorch(tmp_path, "reproduce", "umbrella", "--dry-run", "--steps",
                "5k")
    assert r.returncode == 0, r.stderr
    assert "  steps      5000 rounds per sample" in r.stdout, r.stdout
    assert "(a first look: the seed's 1000000000)" in r.stdout
    assert "  first look light instead of full\n" in r.stdout
    # Seed 002's controls; nothing of the dry run touches a database.
    r = seqorch(tmp_path, "reproduce", "sha512", "--dry-run")
    assert "  hosts      only those whose builds target aarch64\n" in r.stdout
    assert "  control    OpenSSL capability ARMV8_SHA512 cleared, the " \
        "others as detected (--openssl-cap-clear ARMV8_SHA512)\n" in r.stdout
    assert not (tmp_path / "results.db").exists()
    r = seqorch(tmp_path, "reproduce", "sha4")
    assert r.returncode == 2
    assert r.stderr == ('seqorch: unknown protocol "sha4" (valid: sha3, '
                        'sha512, umbrella, ebash)\n')
    # Seed 003: each study at eBASH's four lengths, 16 MiB a sample.
    r = seqorch(tmp_path, "reproduce", "ebash", "--dry-run")
    runs = re.findall(r"^run \d+ \((\S+)\): study (\S+)$", r.stdout, re.M)
    assert runs == [(f"{s}-{n}", s) for s in ("sha3", "sha512")
                    for n in (64, 576, 1536, 4096)]
    assert "  message    4096 bytes a step (--msg-len): the digest, then " \
        "zeros; 16777216 bytes a sample\n" in r.stdout
    assert "  samples    15 per variant\n" in r.stdout


def test_reference_key_names_the_seeds_machines(tmp_path):
    doc = json.loads((ROOT / "reference" / "seeds.json").read_text())
    ids = {e["id"].removeprefix("seed:") for e in doc["references"]}
    # The machine, or the reference's id as --reference takes it.
    for m in sorted(ids) + ["seed:genoa"]:
        (tmp_path / "hosts.toml").write_text(
            f'[hosts.a]\ntransport = "local"\nreference = "{m}"\n')
        r = seqorch(tmp_path, "hosts", "list")
        assert r.returncode == 0, r.stderr
    (tmp_path / "hosts.toml").write_text(
        '[hosts.a]\ntransport = "local"\nreference = "genoa5"\n')
    r = seqorch(tmp_path, "hosts", "list")
    assert r.returncode == 2
    assert r.stderr.startswith('seqorch: hosts.toml:3:13: host "a": key '
                               '"reference" must be "graviton5", "m4" or '
                               '"genoa"'), r.stderr


def test_reproduce_sha512_records_its_protocol(tmp_path, workdir):
    """Seed 002 on the local host, a first look: the tight chain and the
    API control as runs of one reproduction, digests checked against
    hashlib, the published table beside, and the same table again from
    the report."""
    write_hosts(tmp_path / "hosts.toml", workdir, 'reference = "genoa"\n')
    r = seqorch(tmp_path, "reproduce", "sha512", "--hosts", "local",
                "--steps", "3000")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    assert query(db, "SELECT name, steps_cap FROM reproductions") == \
        [("sha512", 3000)]
    assert query(db, "SELECT host, reference FROM reproduction_hosts") == \
        [("local", "genoa")]
    parts = query(db, "SELECT rr.part, r.study, r.variants, r.steps, "
                  "r.samples_per_variant, r.status FROM reproduction_runs rr "
                  "JOIN runs r ON r.id = rr.run_id ORDER BY r.id")
    assert parts == [("tight", "sha512", "openssl-transform", 3000, 2, "ok"),
                     ("api", "sha512", "openssl-api", 3000, 1, "ok")]
    want = chain_hex("sha512", 3000)
    assert query(db, "SELECT DISTINCT digest, valid FROM samples") == \
        [(want, 1)]
    # x86-64 here: the ARM control has no host, and says so.
    assert ("seqorch: reproduce: sha512 (armcap) not run: no host's build "
            "targets aarch64") in r.stderr
    assert "seqorch: a first look: every sample at most 3000 steps" \
        in r.stderr
    out = r.stdout
    assert "ratio graviton5 / genoa: published 1.37x, here: no two hosts " \
        "stand for graviton5 and genoa" in out
    assert "ratio m4 / graviton5: published 1.58x" in out
    # the seed's ratios are of the tight chain, not of the API control
    assert out.count("ratio m4 / graviton5: published") == 1, out
    assert re.search(r"^    local +\S+ hashes/s  openssl-transform, n 2$",
                     out, re.M), out
    assert "indicative only: a first look, every sample at most 3000 " \
        "steps" in out
    rep = seqorch(tmp_path, "report", "--reproduce", "sha512")
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout == out


def test_reproduce_umbrella(tmp_path, workdir):
    """Seed 001 on the local host, a first look: its windows in its order
    (mul, sha3, div32, div64, randomx), every sample on the independent
    reference's digest (hashlib; librandomx through ctypes), RandomX in
    light mode and said so, its native / default ratio and phase shares
    beside Graviton5's, mul's cross-machine ratios; the same table again
    from the report.  The sources come from the shared fixtures and the
    builds from the session's shared build directory (test_47's too)."""
    write_hosts(tmp_path / "hosts.toml", workdir,
                'reference = "graviton5"\n')
    for study, tarball in (("sha3", openssl_fixture()),
                           ("randomx", randomx_fixture())):
        r = seqorch(tmp_path, "fetch", "--study", study, "--from", tarball)
        assert r.returncode == 0, r.stderr
    steps = 2
    r = seqorch(tmp_path, "reproduce", "umbrella", "--hosts", "local",
                "--steps", steps, timeout=1800)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    assert query(db, "SELECT name, steps_cap FROM reproductions") == \
        [("umbrella", steps)]
    runs = query(db, "SELECT rr.part, r.study, r.steps, r.status, r.id "
                 "FROM reproduction_runs rr JOIN runs r ON r.id = "
                 "rr.run_id ORDER BY r.id")
    assert [x[:4] for x in runs] == [
        ("mul", "mul", steps, "ok"), ("sha3", "sha3", steps, "ok"),
        ("div", "div32", steps, "ok"), ("div", "div64", steps, "ok"),
        ("randomx", "randomx", steps, "ok")]
    for part, study, _, _, run_id in runs:
        got = query(db, "SELECT DISTINCT digest, valid FROM samples WHERE "
                    "run_id = ?", run_id)
        assert got == [(chain_hex(study, steps), 1)], study
    rx = runs[-1][4]
    # light in a first look, both targetings interleaved, 10 samples each
    assert query(db, "SELECT b.targeting, s.variant, count(*) FROM samples "
                 "s JOIN builds b ON b.id = s.build_id WHERE s.run_id = ? "
                 "GROUP BY b.targeting, s.variant ORDER BY b.targeting",
                 rx) == [("default", "light", 10), ("native", "light", 10)]
    out = r.stdout
    assert "seqorch: a first look: every sample at most 2 steps" in r.stderr
    # mul: no published rate, the seed's two ratios, one host here
    assert "ratio graviton5 / m4: published 1.52x, here: no two hosts " \
        "stand for graviton5 and m4 (hosts.toml `reference`)\n" in out
    assert "ratio graviton5 / genoa: published 1.82x, here: no two hosts " \
        "stand for graviton5 and genoa (hosts.toml `reference`)\n" in out
    assert re.search(r"^    local +\S+ rounds/s  \S+, n 3$", out, re.M), out
    assert re.search(r"^    local +\S+ hashes/s  \S+, n 3; graviton5's "
                     r"6\.813M: \d\.\d{3}x$", out, re.M), out
    # randomx: the seed's figures, each targeting beside its own
    sec = out[out.index("\nrandomx (run "):out.index("\nindicative only: "
                                                     "a first look")]
    best = dict(query(db, "SELECT b.targeting, MAX(s.median_rate) FROM "
                      "summary s JOIN builds b ON b.id = s.build_id WHERE "
                      "s.run_id = ? GROUP BY b.targeting", rx))
    check_randomx_published(sec, "local", best)
    m = re.search(r"^  phases, local beside graviton5's: executing the "
                  r"generated program ([\d.]+)% \(90\.6%\); compiling it "
                  r"([\d.]+)% \(1\.8%\); changing JIT page permissions "
                  r"([\d.]+)% \(2\.3%\)$", sec, re.M)
    assert m, sec
    for got, name in zip(m.groups(), ("execute", "compile", "mprotect")):
        (value, ns), = query(db, "SELECT SUM(m.value), SUM(s.ns) FROM "
                             "sample_metrics m JOIN samples s ON s.id = "
                             "m.sample_id WHERE s.run_id = ? AND s.valid = 1 "
                             "AND m.name = ?", rx, "phase_" + name)
        assert abs(float(got) - 100 * value / ns) <= 0.05 + 1e-9, name
    assert out.endswith(
        "\nindicative only: a first look, every sample at most 2 steps "
        "(--steps), where the seeds ran theirs in full\n"
        "a host's `reference` is its owner's word that it is that machine, "
        "or one like it: another CPU, kernel, compiler or library makes "
        "the ratio indicative only\n"), out
    rep = seqorch(tmp_path, "report", "--reproduce", "umbrella")
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout == out


def test_report_says_the_message_length(scratch):
    """A run of --msg-len L (as reproduce ebash makes) says L in the
    report's header in every format, and --reference does not hold its
    rate of L-byte messages against a seed figure of the 32-byte chain;
    a run of the study's own chain is compared as before."""
    for extra in (["--msg-len", "64"], []):
        r = seqorch(scratch, "run", "--study", "sha3", *extra, "--steps",
                    "40", "--hosts", "local", "--samples", "1",
                    "--variants", "c-fused")
        assert r.returncode == 0, r.stderr
    line = "64 bytes a hash (--msg-len 64): the previous digest, then zeros"
    text = seqorch(scratch, "report", "--run", "1").stdout
    assert "  steps     40 per sample, 1 sample per variant\n" \
        f"  message   {line}\n" in text, text
    md = seqorch(scratch, "report", "--run", "1", "--format", "md").stdout
    assert "| message | 64 bytes a hash (`--msg-len 64`): the previous " \
        "digest, then zeros |\n" in md, md
    html = seqorch(scratch, "report", "--run", "1", "--format",
                   "html").stdout
    assert "<dt>message</dt><dd>64 bytes a hash (<code>--msg-len 64</code>)" \
        ": the previous digest, then zeros</dd><dt>seed</dt>" in html
    js = json.loads(seqorch(scratch, "report", "--run", "1", "--format",
                            "json").stdout)
    assert js["runs"][0]["msg_len"] == 64
    r = seqorch(scratch, "export", "--run", "1", "-o", scratch / "s.json")
    assert r.returncode == 0, r.stderr
    assert json.loads((scratch / "s.json").read_text())["run"]["msg_len"] \
        == 64
    note = ("not compared: run 1 hashed 64-byte messages (--msg-len 64), "
            "seed:genoa's sha3 figure the 32-byte digest alone (the "
            "study's own chain)")
    rep = seqorch(scratch, "report", "--run", "1", "--reference",
                  "seed:genoa")
    assert rep.returncode == 0, rep.stderr
    tail = rep.stdout[rep.stdout.index("\npublished reference: "):]
    assert " ".join(tail.split()) == "published reference: " + note, tail
    js = json.loads(seqorch(scratch, "report", "--run", "1", "--reference",
                            "seed:genoa", "--format", "json").stdout)
    assert js["runs"][0]["reference"] == {"note": note}
    # the study's own chain: no message line, null, and compared
    text = seqorch(scratch, "report", "--run", "2", "--reference",
                   "seed:genoa").stdout
    assert "  message" not in text and "not compared" not in text
    assert re.search(r"^  local c-fused \S+ hashes/s is \d+\.\d\dx "
                     r"seed:genoa \(4\.056M hashes/s", text, re.M), text
    js = json.loads(seqorch(scratch, "report", "--run", "2", "--format",
                            "json").stdout)
    assert js["runs"][0]["msg_len"] is None


def test_reproduce_sha3_runs_every_variant(tmp_path, workdir):
    """Seed 000, a first look: every variant this host's architecture
    builds, the openssl-* ones generated from the OpenSSL source too (the
    reproduction fetches it), each sample on hashlib's digest; the local
    best beside the seed's Genoa figure."""
    write_hosts(tmp_path / "hosts.toml", workdir, 'reference = "genoa"\n')
    r = seqorch(tmp_path, "fetch", "--study", "sha3", "--from",
                openssl_fixture())
    assert r.returncode == 0, r.stderr
    r = seqorch(tmp_path, "reproduce", "sha3", "--hosts", "local",
                "--steps", "300")
    assert r.returncode == 0, r.stderr
    manifest = subprocess.run(["sh", "kernels/registry.sh", "manifest"],
                              cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    here = {f[1] for f in (ln.split("\t") for ln in manifest.splitlines())
            if f[0] == "sha3" and f[2] in ("any", "x86_64")}
    db = tmp_path / "results.db"
    status = dict(query(db, "SELECT variant, status FROM variants"))
    assert set(status) == here and status["openssl-scalar"] == "ok"
    got = dict(query(db, "SELECT variant, count(*) FROM samples WHERE "
                     "valid = 1 AND digest = ? GROUP BY variant",
                     chain_hex("sha3", 300)))
    assert got == {v: 3 for v, st in status.items() if st == "ok"}
    assert re.search(r"^    local +\S+ hashes/s  \S+, n 3; genoa's 4\.056M: "
                     r"\d\.\d{3}x$", r.stdout, re.M), r.stdout


def test_reproduce_ebash_cycles_per_byte(tmp_path, workdir):
    """Seed 003, a first look: sha3 and sha512 at eBASH's four message
    lengths, every sample's digest hashlib's chain of L-byte messages,
    samples carrying L, and the cycles-per-byte table in eBACS's layout
    (quartiles per length, "long") with the seed's rows beside."""
    write_hosts(tmp_path / "hosts.toml", workdir)
    # Every sha3 variant, the openssl-* ones too (their source offline).
    r = seqorch(tmp_path, "fetch", "--study", "sha3", "--from",
                openssl_fixture())
    assert r.returncode == 0, r.stderr
    r = seqorch(tmp_path, "reproduce", "ebash", "--hosts", "local",
                "--steps", "40", timeout=1800)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    lens = (64, 576, 1536, 4096)
    runs = query(db, "SELECT rr.part, r.study, r.msg_len, r.steps, r.status "
                 "FROM reproduction_runs rr JOIN runs r ON r.id = rr.run_id "
                 "ORDER BY r.id")
    assert runs == [(f"{s}-{n}", s, n, 40, "ok") for s in ("sha3", "sha512")
                    for n in lens]
    for study in ("sha3", "sha512"):
        for n in lens:
            got = query(db, "SELECT DISTINCT s.digest, s.valid, s.msg_len "
                        "FROM samples s JOIN runs r ON r.id = s.run_id "
                        "WHERE r.study = ? AND r.msg_len = ?", study, n)
            assert got == [(msg_chain_hex(study, 40, n), 1, n)], (study, n)
    out = r.stdout
    assert "cycles per byte by message length (eBACS's layout)" in out
    header = next(ln for ln in out.splitlines()
                  if ln.split()[:5] == ["64", "576", "1536", "4096", "long"])
    assert header
    assert out.count("25%      50%      75%") >= 5
    variants = dict(query(db, "SELECT variant, count(*) FROM samples s JOIN "
                          "runs r ON r.id = s.run_id WHERE r.study = "
                          "'sha512' GROUP BY variant"))
    for v in variants:
        row = re.search(rf"^sha512 +{re.escape(v)} +(.*)$", out, re.M)
        assert row, (v, out)
        nums = re.findall(r"\d+\.\d\d", row.group(1))
        assert len(nums) == 15, row.group(0)
    assert re.search(r"^sha3256 +seed +90\.80 +90\.81 +91\.30 .* 41\.36 "
                     r"+41\.39 +41\.40 *$", out, re.M), out
    assert re.search(r"^local: cycles (counted|from the calibrated clock)",
                     out, re.M), out
    rep = seqorch(tmp_path, "report", "--reproduce", "ebash")
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout == out


def test_a_run_that_cannot_start_is_named_beside_the_table(tmp_path,
                                                           workdir):
    # reproduce finds the inventory as run does ($SEQORCH_CONFIG, not a
    # hosts.toml in the current directory), and a run whose OpenSSL
    # source cannot be fetched is named as not run, not left out silently.
    conf = write_hosts(tmp_path / "elsewhere.toml", workdir)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, SEQORCH_CONFIG=str(conf),
               SEQORCH_URL_OPENSSL="http://127.0.0.1:%d/openssl.tar.gz"
               % dead_port("127.0.0.1"))
    r = seqorch(cwd, "reproduce", "sha3", "--steps", "100", env=env)
    assert r.returncode == 1, r.stderr
    assert f'hosts from "{conf}"' in r.stderr
    assert "seqorch: fetch \"http://127.0.0.1:" in r.stderr
    assert r.stdout.rstrip().endswith(
        "not run, so not in the table: sha3 (chain) (the errors above say "
        "why)"), r.stdout
    assert query(cwd / "results.db", "SELECT count(*) FROM runs") == [(0,)]
