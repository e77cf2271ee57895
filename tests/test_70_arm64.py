"""seqorch against an x86-64 and an aarch64 Linux host at once (make
test-arm64; tests/arm64.py builds the emulated host).

One `seqorch run` of every study but randomx (which needs cmake and a C++
compiler, removed from the arm host's overlay) on this machine ("local")
and on the emulated Graviton-like host ("arm", qemu-aarch64 -cpu max
behind a chrooted sshd), small --steps, then results.db is checked: every
sample valid on both hosts, one final digest per study across the two
architectures (equal to the Python chain of tests/refs.py), every ARM
variant built, run and valid on arm and none of them on x86-64; the arm
host's facts are its hwcaps, not the x86 /proc/cpuinfo qemu-user shows,
and its counters error names the call that failed.  A second run, beside
the first, on the same emulated host ("m4name") builds with a compiler
that answers -dumpmachine as Apple clang does (arm64-apple-darwin...):
every ARM variant must still be built and measured.  The rootfs has no
cJSON (the agent needs none, issue 33); a third host ("nossl", in the
second run) is an overlay of it without libssl-dev's files either, built
with -mcpu=native, which gcc 12 under qemu resolves to generic armv8-a as
on a part it does not know: every study runs there with the Python
chain's digests, the OpenSSL variants skipped with the reason, and the
run warns that native resolved to generic.  With SEQORCH_ARM64_UMBRELLA=1,
seed 001 (`reproduce umbrella`, RandomX in light mode) runs on local and a
fourth host ("rx", with cmake and g++).  Rates under an emulator mean
nothing and are not looked at.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

import refs
from arm64 import arm_sshd, rootfs
from conftest import ROOT, SEQORCH
from lib_common import check_randomx_published
from sshd import keygen, write_hosts_toml

OPENSSL_TARBALL = ROOT.parent / "shared" / "fixtures" / "openssl" / \
    "openssl-3.5.7.tar.gz"
if not OPENSSL_TARBALL.exists():
    OPENSSL_TARBALL = Path("/work/shared/fixtures/openssl/"
                           "openssl-3.5.7.tar.gz")
STUDIES = ("sha3", "sha512", "mul", "mul-wide", "mul32", "div32", "div64",
           "bitperm")
STEPS = 2000
SAMPLES = 2
# What randomx builds with (kernels/randomx/prebuild.sh), which the arm
# host's overlay removes: hosts check must say what it misses.
NO_RANDOMX = ("cmake", "g++", "g++-12")
UMBRELLA_SKIP = ("seed 001 on the emulated host builds RandomX twice under "
                 "qemu: SEQORCH_ARM64_UMBRELLA=1 runs it")

# A compiler on the arm host that names its target as Apple clang does on
# an M4 (`arm64-apple-darwin...`), gcc underneath: the arm64 spelling must
# still select every ARM variant (issue 21, item 5).
APPLE_CC = "/usr/local/bin/apple-cc"
APPLE_TARGET = "arm64-apple-darwin24.1.0"
APPLE_CC_TEXT = f"""#!/bin/sh
for a; do
  [ "$a" = -dumpmachine ] && {{ echo {APPLE_TARGET}; exit 0; }}
done
exec gcc "$@"
"""


def arm_variants(study):
    """The variants of study that build only for aarch64 (their arch file)."""
    out = []
    for d in sorted((ROOT / "kernels" / study).iterdir()):
        arch = d / "arch"
        if arch.is_file() and "aarch64" in arch.read_text().split():
            out.append(d.name)
    return out


def rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def run_logged(cmd, cwd, env, log):
    """cmd started with its stdout and stderr in the file log (two at
    once must not fill each other's pipes)."""
    with open(log, "w") as f:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=f,
                                stderr=subprocess.STDOUT, text=True)


def finished(proc, log, sshd, timeout=2400):
    """proc's exit status asserted 0, naming its output and sshd's log;
    its output."""
    assert proc.wait(timeout=timeout) == 0, log.read_text() + \
        sshd.log.read_text()[-4000:]
    return log.read_text()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(directory, user key, base, the arm sshd, the nossl sshd): the
    emulated hosts of the fleet, stopped at the end."""
    tmp = tmp_path_factory.mktemp("arm64")
    base = Path(tempfile.mkdtemp(prefix="seqorch-arm64-"))
    base.chmod(0o755)
    key = tmp / "id_ed25519"
    keygen(key, "seqorch-user")
    started = []
    try:
        # arm is the host hosts check finds without what randomx builds
        # with: the rootfs has cmake and g++ (the umbrella's host needs
        # them), arm's overlay does not.
        arm = arm_sshd(base, "arm", key, files={APPLE_CC: APPLE_CC_TEXT},
                       without=NO_RANDOMX)
        started.append(arm)
        nossl = arm_sshd(base, "nossl", key, without=("libssl-dev",))
        started.append(nossl)
        yield tmp, key, base, arm, nossl
    finally:
        for s in started:
            s.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def fleet(servers):
    """(directory, results.db, the run's output) of one run of STUDIES on
    local and arm, one on m4name and nossl beside it, and arm's sha512
    capability control."""
    tmp, key, base, arm, nossl = servers
    local = tmp / "local-work"
    local.mkdir(exist_ok=True)
    write_hosts_toml(tmp / "hosts.toml", {
        "local": {"transport": "local", "cpu": 0,
                  "workdir": str(local), "reference": "genoa"},
        "arm": dict(arm.host_entry(), reference="graviton5"),
        "m4name": arm.host_entry(cc=[APPLE_CC],
                                 workdir=arm.host_entry()["workdir"]
                                 + "-apple"),
        "nossl": nossl.host_entry(cflags="-O2 -mcpu=native"),
    })
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
    # OpenSSL's release into the cache beside results.db: the sha3
    # runs build the openssl-* variants on both architectures.
    f = subprocess.run(
        [str(SEQORCH), "fetch", "--study", "sha3", "--from",
         str(OPENSSL_TARBALL)], cwd=tmp, env=env, capture_output=True,
        text=True, timeout=600)
    assert f.returncode == 0, f.stderr
    run = [str(SEQORCH), "run", "--study", ",".join(STUDIES), "--steps",
           str(STEPS)]
    # Each emulated host's configuration is built cold, as it is what its
    # tests are about: arm's cc, m4name's Apple-named compiler (its own
    # workdir), nossl's -mcpu=native without libssl-dev.  Two coordinators
    # on one results.db, as docs/windows.md allows: their builds, outside
    # any window, run at once, so the three hosts' builds under qemu share
    # the machine's cores; the measure lease serializes their windows.
    main = run_logged(run + ["--hosts", "local,arm", "--samples",
                             str(SAMPLES)], tmp, env, tmp / "run.log")
    # The same emulated host through the Apple-named compiler, and the
    # host without OpenSSL's headers, where a native gcc resolves to
    # generic.
    other = run_logged(run + ["--hosts", "m4name,nossl", "--samples", "1"],
                       tmp, env, tmp / "run-other.log")
    try:
        out = finished(main, tmp / "run.log", arm)
        # Seed 002's control: only ARMV8_SHA512 cleared on the arm host.
        c = subprocess.run(
            [str(SEQORCH), "run", "--study", "sha512", "--hosts", "arm",
             "--variants", "openssl-api", "--steps", str(STEPS),
             "--samples", "1", "--openssl-cap-clear", "ARMV8_SHA512"],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
        assert c.returncode == 0, c.stdout + c.stderr + \
            arm.log.read_text()[-4000:]
        finished(other, tmp / "run-other.log", nossl)
    finally:
        for p in (main, other):
            if p.poll() is None:
                p.kill()
                p.wait()
    return tmp, tmp / "results.db", out


def test_every_sample_valid_on_both(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        got = dict(rows(db, "SELECT host, count(*) FROM samples WHERE "
                        "study = ? AND valid = 1 GROUP BY host", study))
        bad = rows(db, "SELECT host, variant, invalid_reason FROM samples "
                   "WHERE study = ? AND valid = 0", study)
        assert not bad, (study, bad)
        assert got.get("local", 0) > 0 and got.get("arm", 0) > 0, \
            (study, got)


def test_one_digest_per_study_across_architectures(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        digests = rows(db, "SELECT DISTINCT digest FROM samples WHERE "
                       "study = ?", study)
        assert digests == [(refs.chain_hex(study, STEPS),)], study
        hosts = rows(db, "SELECT DISTINCT host FROM samples WHERE study = ? "
                     "ORDER BY host", study)
        assert hosts == [("arm",), ("local",), ("m4name",), ("nossl",)], \
            study


def test_arm_variants_run_on_arm_only(fleet):
    _, db, _ = fleet
    for study in STUDIES:
        want = arm_variants(study)
        for v in want:
            st = rows(db, "SELECT status, reason FROM variants WHERE "
                      "host = 'arm' AND study = ? AND variant = ?", study, v)
            assert st == [("ok", None)], (study, v, st)
            n = rows(db, "SELECT count(*) FROM samples WHERE host = 'arm' "
                     "AND study = ? AND variant = ? AND valid = 1", study, v)
            assert n == [(SAMPLES,)], (study, v)
        on_local = rows(db, "SELECT DISTINCT variant FROM samples WHERE "
                        "host = 'local' AND study = ?", study)
        assert not set(want) & {v for (v,) in on_local}, study


def test_arm_host_is_aarch64(fleet):
    _, db, _ = fleet
    for (text,) in rows(db, "SELECT facts FROM run_hosts WHERE host = 'arm'"):
        facts = json.loads(text)
        assert facts["arch"] == "aarch64"
        assert facts["os"] == "Linux"
    assert rows(db, "SELECT name, arch FROM hosts ORDER BY name") == \
        [("arm", "aarch64"), ("local", "x86_64"), ("m4name", "aarch64"),
         ("nossl", "aarch64")]


def host_facts(db, host):
    return [json.loads(t) for (t,) in rows(
        db, "SELECT facts FROM run_hosts WHERE host = ?", host)]


def test_arm_facts_are_its_hwcaps_not_the_machines_cpuinfo(fleet):
    """qemu-user shows the x86 machine's /proc/cpuinfo: the aarch64 host
    records the hwcaps its variants were picked by, no x86 model or flags,
    and a warning that says so (issue 21, item 1)."""
    _, db, _ = fleet
    for facts in host_facts(db, "arm"):
        hw = facts["hwcaps"].split()
        # what -cpu max gives, and the ARM variants rely on
        assert {"asimd", "aes", "sha3", "sha512", "sve", "sve2",
                "svebitperm"} <= set(hw), hw
        assert facts["cpu_flags"] == facts["hwcaps"]
        assert facts["cpu_model"] is None
        assert "cpu_signature" not in facts     # cpuid is x86's
        assert facts["facts_warning"].startswith(
            '/proc/cpuinfo has no aarch64 "Features" line but an x86 '
            '"flags" line')
    assert rows(db, "SELECT cpu_model FROM hosts WHERE name = 'arm'") == \
        [(None,)]
    warned = rows(db, "SELECT count(*) FROM events WHERE host = 'arm' AND "
                  "level = 'warning' AND message LIKE 'host facts: "
                  "/proc/cpuinfo has no aarch64%'")
    # one per study's run, and the --openssl-cap-clear control's
    assert warned == [(len(STUDIES) + 1,)]
    for facts in host_facts(db, "local"):
        assert facts["hwcaps"] is None and facts["facts_warning"] is None
        assert "avx2" in facts["cpu_flags"].split()


def test_arm_counters_error_says_what_failed(fleet):
    """qemu-user lacks perf_event_open: the error names the call and its
    errno, and does not blame the kernel (item 4)."""
    _, db, _ = fleet
    for facts in host_facts(db, "arm"):
        assert facts["counters"] == "none"
        assert facts["counters_error"] == (
            "perf_event_open (cycles) failed: ENOSYS (Function not "
            "implemented); /proc/sys/kernel/perf_event_paranoid exists, so "
            "this kernel has perf events"), facts["counters_error"]


def test_reproduce_sha512_on_both(fleet):
    """Seed 002 on local and arm, a first look (the fleet's builds reused):
    the tight chain and the API control valid on both architectures with
    the Python chain's digest, the ARM control run on arm alone with
    ARMV8_SHA512 cleared (bit 6 of OPENSSL_armcap) and the same digest,
    and the seed's Graviton5 / Genoa ratio beside the arm / local one,
    indicative only."""
    tmp, db, _ = fleet
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
    r = subprocess.run([str(SEQORCH), "reproduce", "sha512", "--hosts",
                        "local,arm", "--steps", str(STEPS)], cwd=tmp,
                       env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    (rid,), = rows(db, "SELECT MAX(id) FROM reproductions")
    parts = rows(db, "SELECT rr.part, r.status FROM reproduction_runs rr "
                 "JOIN runs r ON r.id = rr.run_id WHERE rr.reproduction_id "
                 "= ? ORDER BY r.id", rid)
    assert parts == [("tight", "ok"), ("api", "ok"), ("armcap", "ok")]
    want = refs.chain_hex("sha512", STEPS)
    got = rows(db, "SELECT s.host, s.digest, s.valid FROM samples s JOIN "
               "reproduction_runs rr ON rr.run_id = s.run_id WHERE "
               "rr.reproduction_id = ? GROUP BY s.host, s.digest, s.valid",
               rid)
    assert sorted(got) == [("arm", want, 1), ("local", want, 1)]
    armcap = rows(db, "SELECT DISTINCT r.openssl_cap_clear, s.host, "
                  "s.openssl_cap_cleared FROM samples s JOIN "
                  "reproduction_runs rr ON rr.run_id = s.run_id JOIN runs r "
                  "ON r.id = s.run_id WHERE rr.reproduction_id = ? AND "
                  "rr.part = 'armcap'", rid)
    assert [(c, h) for c, h, _ in armcap] == [("ARMV8_SHA512", "arm")]
    assert int(armcap[0][2], 16) == 1 << 6, armcap
    assert "not run" not in r.stderr, r.stderr
    assert "ratio graviton5 / genoa: published 1.37x, here arm / local " \
        in r.stdout, r.stdout
    assert "indicative only: a first look" in r.stdout


def test_hosts_check_reports_what_an_optional_study_misses(fleet):
    """The arm host has no cmake or C++ compiler: randomx cannot build
    there, and hosts check says exactly that, per study, and passes the
    host, which runs every other study (item 3)."""
    tmp, _, _ = fleet
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
    r = subprocess.run([str(SEQORCH), "hosts", "check", "--hosts", "arm"],
                       cwd=tmp, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "  arch      aarch64\n" in r.stdout
    # not the x86 model of the /proc/cpuinfo qemu-user shows
    assert "  cpu       unknown (/proc/cpuinfo has no aarch64 Features " \
        "line: not this cpu's), " in r.stdout, r.stdout
    assert "  isa " not in r.stdout     # nor the x86 machine's flags
    assert "  study     randomx with cc: cannot build, missing cmake " \
        "(Debian: cmake); a C++ compiler, c++ (Debian: g++)\n" in r.stdout
    assert "GiB" not in r.stdout and "librandomx0" not in r.stdout
    assert "  missing   nothing\n" in r.stdout


def test_a_variants_march_keeps_the_hosts_cpu(tmp_path):
    """gcc lets a variant's -march=armv8.2-a+sha3 replace the
    architecture of the build's -mcpu (it warns "conflicts"): build.sh
    compiles it for -mcpu=CPU+sha3 instead, and records per variant what
    it was compiled for (item 14).  The arm64 rootfs is the sysroot
    of this machine's aarch64 gcc, so the agent links as on the host."""
    cc = f"aarch64-linux-gnu-gcc --sysroot={rootfs()}"
    out = tmp_path / "build"
    r = subprocess.run(["sh", "agent/build.sh", str(out), cc,
                        "-O2 -mcpu=neoverse-v1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    log = (out / "build.log").read_text()
    assert r.returncode == 0 and (out / "seqorch-agent").exists(), log
    assert "conflicts with" not in log, log
    commands = (out / "commands").read_text().splitlines()
    fused = [c for c in commands if "kernels/sha3/arm-sha3-fused/" in c]
    assert fused and all("-mcpu=neoverse-v1+sha3" in c and "-march="
                         not in c for c in fused), fused
    extra = dict(ln.split("=", 1) for ln in
                 (out / "extra").read_text().splitlines())
    assert extra["compiled_for.sha3/arm-sha3-fused"] == \
        "-mcpu=neoverse-v1+sha3"
    assert extra["compiled_for.bitperm/sve2-bitperm"] == \
        "-mcpu=neoverse-v1+sve2-bitperm"
    assert extra["compiled_for.sha3/c-fused"] == "-mcpu=neoverse-v1"


def test_an_apple_named_compiler_still_runs_every_arm_variant(fleet):
    """`cc -dumpmachine` saying arm64-apple-darwin (Apple clang on an M4)
    is aarch64: every ARM variant is built, self-tested and measured,
    each sample valid with the Python chain's digest (item 5)."""
    _, db, _ = fleet
    assert rows(db, "SELECT DISTINCT target FROM builds WHERE "
                "host = 'm4name'") == [(APPLE_TARGET,)]
    for study in STUDIES:
        for v in arm_variants(study):
            st = rows(db, "SELECT status, reason FROM variants WHERE "
                      "host = 'm4name' AND study = ? AND variant = ?",
                      study, v)
            assert st == [("ok", None)], (study, v, st)
            got = rows(db, "SELECT valid, digest FROM samples WHERE "
                       "host = 'm4name' AND study = ? AND variant = ?",
                       study, v)
            assert got == [(1, refs.chain_hex(study, STEPS))], (study, v)


def test_openssl_variants_on_both_architectures(fleet):
    """OpenSSL's perlasm, generated on the coordinator from the fetched
    release: the portable openssl-* variants on both hosts, openssl-sha3
    on arm, every digest the Python chain's."""
    _, db, _ = fleet
    for host, want in (("arm", ["openssl-scalar", "openssl-sha3",
                                "openssl-fused", "openssl-unrolled"]),
                       ("local", ["openssl-scalar", "openssl-avx2"])):
        for v in want:
            n = rows(db, "SELECT count(*) FROM samples WHERE host = ? AND "
                     "study = 'sha3' AND variant = ? AND valid = 1", host, v)
            assert n[0][0] > 0, (host, v)
    (extra,), = rows(db, "SELECT b.extra FROM builds b JOIN runs r ON "
                     "r.id = b.run_id WHERE b.host = 'arm' AND r.study = "
                     "'sha3' LIMIT 1")
    assert "openssl.version=3.5.7" in extra.splitlines()


def test_cap_clear_keeps_every_other_arm_bit(fleet):
    """--openssl-cap-clear ARMV8_SHA512 on arm: the same digest, bit 6
    cleared from the mask libcrypto detected, the other bits kept."""
    _, db, _ = fleet
    got = rows(db, "SELECT s.digest, s.openssl_cap_detected, "
               "s.openssl_cap_cleared, s.openssl_cap FROM samples s JOIN "
               "runs r ON r.id = s.run_id WHERE r.openssl_cap_clear = "
               "'ARMV8_SHA512'")
    assert got, "no sample of the control run"
    for digest, detected, cleared, applied in got:
        assert digest == refs.chain_hex("sha512", STEPS)
        assert int(cleared, 16) == 1 << 6
        assert int(detected, 16) & (1 << 6), detected
        assert int(applied, 16) == int(detected, 16) & ~(1 << 6)


def report(tmp, *args):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
    r = subprocess.run([str(SEQORCH), "report", *args], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_a_host_without_cjson_or_openssl_headers(fleet):
    """The rootfs has no cJSON, and nossl's overlay no libssl-dev either:
    every study runs there with the Python chain's digests, the portable
    OpenSSL perlasm variants included; only the variants that link
    libcrypto are skipped, with the compiler's reason (issue 33)."""
    _, db, _ = fleet
    assert not (rootfs() / "usr/include/cjson").exists()
    for study in STUDIES:
        got = rows(db, "SELECT DISTINCT valid, digest FROM samples WHERE "
                   "host = 'nossl' AND study = ?", study)
        assert got == [(1, refs.chain_hex(study, STEPS))], (study, got)
    skipped = rows(db, "SELECT study, variant, reason FROM variants WHERE "
                   "host = 'nossl' AND status = 'skipped' ORDER BY study, "
                   "variant")
    assert [(s, v) for s, v, _ in skipped] == [
        ("sha3", "openssl-evp"), ("sha512", "openssl-api"),
        ("sha512", "openssl-transform")], skipped
    for _, _, why in skipped:
        assert re.fullmatch(r"the compiler cannot build against -lcrypto "
                            r"here: openssl/\S+\.h: No such file or "
                            r"directory", why), why
    measured = {v for (v,) in rows(db, "SELECT DISTINCT variant FROM "
                                   "samples WHERE host = 'nossl' AND "
                                   "study = 'sha3'")}
    assert {"openssl-scalar", "openssl-sha3", "arm-scalar"} <= measured
    assert rows(db, "SELECT DISTINCT openssl FROM builds WHERE host = "
                "'nossl'") == [("none (the agent was built without "
                                "libcrypto)",)]


def test_native_resolved_to_generic_is_recorded_and_warned(fleet):
    """gcc 12 under qemu does not know the cpu (as on a Neoverse V2):
    -mcpu=native resolves to generic armv8-a.  builds.native and every
    variant's compiled_for say what was built, the ARM variants keeping
    their own -march, and each build warns, in events and the report
    (item 5)."""
    tmp, db, _ = fleet
    got = rows(db, "SELECT id, native, extra FROM builds WHERE host = "
               "'nossl' ORDER BY id")
    assert len(got) == len(STUDIES)
    for bid, native, extra in got:
        assert native == "-march=armv8-a -mcpu=generic -mtune=generic"
        compiled = dict(ln.split("=", 1) for ln in extra.splitlines()
                        if ln.startswith("compiled_for."))
        assert compiled["compiled_for.sha3/arm-sha3-fused"] == \
            "-march=armv8.2-a+sha3 -mcpu=generic"
        assert compiled["compiled_for.sha3/c-fused"] == "-mcpu=generic"
        assert "native" not in " ".join(compiled.values()), compiled
    want = [(f"build {bid}: native resolved to generic (-march=armv8-a "
             "-mcpu=generic -mtune=generic): compiler \"cc\" does not know "
             "this cpu, so the build is not tuned for it",)
            for bid, _, _ in got]
    assert rows(db, "SELECT message FROM events WHERE host = 'nossl' AND "
                "level = 'warning' AND message LIKE 'build %: native %' ORDER BY "
                "id") == want
    (run,), = rows(db, "SELECT DISTINCT run_id FROM samples WHERE host = "
                   "'nossl' AND study = 'sha3'")
    out = report(tmp, "--run", str(run))
    assert want[0][0].split(": ", 1)[1] in " ".join(out.split()), out


def test_arm_scalar_built_by_gcc_says_whose_baseline_it_is(fleet):
    """docs/studies.md: build arm-scalar with clang on ARM.  Built with
    the host's cc (gcc 12, whose version line names it "cc"), the
    report's text and HTML say beside the variant that its rate is the
    compiler's baseline, not the code's (item 6)."""
    tmp, db, _ = fleet
    (run,), = rows(db, "SELECT DISTINCT run_id FROM samples WHERE host = "
                   "'arm' AND study = 'sha3'")
    note = ("built with gcc, not clang: the rate is the compiler's "
            "baseline, not the code's")
    text = report(tmp, "--run", str(run))
    assert re.search(r"^\s*arm-scalar \*\s+arm\s", text, re.M), text
    # the note is wrapped at spaces, never cut
    flat = " ".join(text.split())
    assert f"* arm-scalar on arm: {note} (docs/studies.md)" in flat, text
    assert flat.count(note) == 1, text
    html = report(tmp, "--run", str(run), "--format", "html")
    assert f"arm-scalar ({note})" in html


def test_cap_clear_on_a_host_without_libcrypto_is_skipped(fleet):
    """sha512's capability control on nossl, whose agent has no
    libcrypto: the run does not fail the host, it says the control was
    skipped and why, and the variants it can build are measured."""
    tmp, db, _ = fleet
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
    r = subprocess.run(
        [str(SEQORCH), "run", "--study", "sha512", "--hosts", "nossl",
         "--steps", str(STEPS), "--samples", "1", "--openssl-cap-clear",
         "ARMV8_SHA512"],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    (run,), = rows(db, "SELECT max(id) FROM runs")
    assert rows(db, "SELECT host, level, message FROM events WHERE run_id = "
                "? AND message LIKE '--openssl-cap-clear %'", run) == [
        ("nossl", "warning", "--openssl-cap-clear ARMV8_SHA512 skipped: the "
         "agent was built without libcrypto, so nothing it measures reads "
         "OpenSSL's capability bits")]
    got = rows(db, "SELECT DISTINCT variant, valid, digest, "
               "openssl_cap_cleared FROM samples WHERE run_id = ? ORDER BY "
               "variant", run)
    assert got == [(v, 1, refs.chain_hex("sha512", STEPS), None)
                   for v in ("arm-sha512", "c-fused")], got


RANDOMX_TARBALL = OPENSSL_TARBALL.parents[1] / "randomx" / \
    "RandomX-1.1.10.tar.gz"
UMBRELLA_STEPS = 2


@pytest.mark.skipif(os.environ.get("SEQORCH_ARM64_UMBRELLA") != "1",
                    reason=UMBRELLA_SKIP)
def test_reproduce_umbrella_on_both(servers):
    """Seed 001 on local and an emulated arm64 host ("rx", the rootfs
    with cmake and g++), a first look: its windows in its order on both
    hosts (mul, sha3, div32, div64, randomx), every sample on the digest
    this machine computes (hashlib; librandomx through ctypes), RandomX
    in light mode, its default and native builds on aarch64, and the
    published table beside the measured one (issue 31)."""
    tmp, key, base, arm, _ = servers
    # rx builds with arm's compiler and flags: it takes arm's agent
    # builds and compiler cache (mul, sha3, div32, div64: built cold on
    # arm when the fleet ran first, as in make test-arm64), so that what
    # it builds cold under qemu is what this test is about, RandomX's two
    # targetings.
    rx = arm_sshd(base, "rx", key, builds=arm)
    try:
        d = tmp / "umbrella"
        d.mkdir()
        # the fleet's local workdir and builds, when it ran
        (tmp / "local-work").mkdir(exist_ok=True)
        write_hosts_toml(d / "hosts.toml", {
            "local": {"transport": "local", "cpu": 0,
                      "workdir": str(tmp / "local-work"),
                      "reference": "genoa"},
            "rx": dict(rx.host_entry(), reference="graviton5"),
        })
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LANG": "C"}
        for study, tarball in (("sha3", OPENSSL_TARBALL),
                               ("randomx", RANDOMX_TARBALL)):
            f = subprocess.run([str(SEQORCH), "fetch", "--study", study,
                                "--from", str(tarball)], cwd=d, env=env,
                               capture_output=True, text=True, timeout=600)
            assert f.returncode == 0, f.stderr
        r = subprocess.run([str(SEQORCH), "reproduce", "umbrella", "--hosts",
                            "local,rx", "--steps", str(UMBRELLA_STEPS)],
                           cwd=d, env=env, capture_output=True, text=True,
                           timeout=5400)
        # the table as printed, for whoever reads the test's directory
        (d / "reproduce.out").write_text(r.stdout + r.stderr)
        assert r.returncode == 0, r.stdout + r.stderr + \
            rx.log.read_text()[-4000:]
    finally:
        rx.stop()
    db = d / "results.db"
    runs = rows(db, "SELECT rr.part, r.study, r.status, r.id FROM "
                "reproduction_runs rr JOIN runs r ON r.id = rr.run_id "
                "ORDER BY r.id")
    assert [x[:3] for x in runs] == [
        ("mul", "mul", "ok"), ("sha3", "sha3", "ok"),
        ("div", "div32", "ok"), ("div", "div64", "ok"),
        ("randomx", "randomx", "ok")]
    order = [study for _, study, _, _ in runs]
    for host in ("local", "rx"):
        got = [s for (s,) in rows(db, "SELECT study FROM windows WHERE "
                                  "host = ? ORDER BY started_at, id", host)]
        assert got == order, (host, got)
    for _, study, _, run_id in runs:
        got = rows(db, "SELECT host, digest, valid FROM samples WHERE "
                   "run_id = ? GROUP BY host, digest, valid ORDER BY host",
                   run_id)
        want = refs.chain_hex(study, UMBRELLA_STEPS)
        assert got == [("local", want, 1), ("rx", want, 1)], study
    rx_run = runs[-1][3]
    assert rows(db, "SELECT s.host, b.targeting, s.variant, count(*) FROM "
                "samples s JOIN builds b ON b.id = s.build_id WHERE "
                "s.run_id = ? GROUP BY s.host, b.targeting, s.variant "
                "ORDER BY s.host, b.targeting", rx_run) == [
        ("local", "default", "light", 10), ("local", "native", "light", 10),
        ("rx", "default", "light", 10), ("rx", "native", "light", 10)]
    assert rows(db, "SELECT DISTINCT target FROM builds WHERE host = 'rx' "
                "AND run_id = ?", rx_run) == [("aarch64-linux-gnu",)]
    out = r.stdout
    assert "seqorch: a first look: every sample at most " \
        f"{UMBRELLA_STEPS} steps" in r.stderr
    assert "ratio graviton5 / genoa: published 1.82x, here rx / local " \
        in out, out
    sec = out[out.index("\nrandomx (run "):out.index("\nindicative only: "
                                                     "a first look")]
    best = dict(rows(db, "SELECT b.targeting, MAX(s.median_rate) FROM "
                     "summary s JOIN builds b ON b.id = s.build_id WHERE "
                     "s.run_id = ? AND s.host = 'rx' GROUP BY b.targeting",
                     rx_run))
    check_randomx_published(sec, "rx", best)
    assert re.search(r"^  phases, rx beside graviton5's: executing the "
                     r"generated program [\d.]+% \(90\.6%\); compiling it "
                     r"[\d.]+% \(1\.8%\); changing JIT page permissions "
                     r"[\d.]+% \(2\.3%\)$", sec, re.M), sec
