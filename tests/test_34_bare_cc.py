"""A host with a compiler and little else (issue 33 items 1-3, issue 29
item 18): the agent builds with a C compiler and libc, libcrypto is
optional, and `hosts check` probes with the host's own cc and cflags.

The compiler is this machine's gcc with a sysroot that holds every header
but OpenSSL's (a host without libssl-dev), run through a script that
refuses any argument naming cjson (a host without libcjson-dev); the
OpenSSL headers are reachable only through -I in the host's cflags."""
import hashlib
import os
import re
import subprocess

import pytest

from conftest import cpu_lacks, query, seqorch

GNU = "x86_64-linux-gnu"


def make_sysroot(root):
    """root/sys: /usr/include without openssl, the libraries as they are;
    root/inc: only OpenSSL's headers, for cflags' -I."""
    sysroot, inc = root / "sys", root / "inc"
    (sysroot / "usr/include" / GNU).mkdir(parents=True)
    (inc / GNU).mkdir(parents=True)
    for d, skip in (("/usr/include", {"openssl", GNU}),
                    (f"/usr/include/{GNU}", {"openssl"})):
        for name in os.listdir(d):
            if name not in skip:
                (sysroot / d.lstrip("/") / name).symlink_to(f"{d}/{name}")
    for d in ("usr/lib", "lib", "lib64"):
        (sysroot / d).symlink_to(f"/{d}")
    (inc / "openssl").symlink_to("/usr/include/openssl")
    (inc / GNU / "openssl").symlink_to(f"/usr/include/{GNU}/openssl")
    cc = root / "bare-cc"
    cc.write_text("#!/bin/sh\n"
                  "for a; do case $a in *cjson*|*cJSON*)\n"
                  '  echo "bare-cc: error: no cJSON here ($a)" >&2; exit 1;;'
                  "\nesac; done\n"
                  f'exec gcc --sysroot="{sysroot}" "$@"\n')
    cc.chmod(0o755)
    return cc, f"-O2 -I{inc} -I{inc / GNU}"


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """One sysroot and bare-cc for the module, and the workdir of its -O2
    host: the measuring test's host and hosts check's noinc have the same
    build key (compiler, flags, sources), so the second finds the agent
    the first built instead of building it again."""
    root = tmp_path_factory.mktemp("bare")
    cc, cflags = make_sysroot(root)
    return cc, cflags, root / "wd-O2"


def hosts(path, entries, workdirs=None):
    wd = workdirs or {}
    path.write_text("".join(
        f'[hosts.{name}]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{wd.get(name, path.parent / ("wd-" + name))}"\n'
        f'cc = "{cc}"\ncflags = "{cflags}"\n' for name, cc, cflags in entries))


def sha512_chain(steps):
    x = bytes(64)
    for _ in range(steps):
        x = hashlib.sha512(x).digest()
    return x.hex()


def test_an_agent_built_by_a_bare_compiler_measures(tmp_path, bare):
    """Every variant that does not need OpenSSL is built and measured
    with hashlib's digests; the OpenSSL variants are skipped with the
    reason, and the agent links neither cJSON nor libcrypto."""
    cc, _, wd = bare
    hosts(tmp_path / "hosts.toml", [("bare", cc, "-O2")], {"bare": wd})
    r = seqorch(tmp_path, "run", "--study", "sha512", "--hosts", "bare",
                "--steps", "2000", "--samples", "2", timeout=1200)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    skipped = dict(query(db, "SELECT variant, reason FROM variants "
                         "WHERE status = 'skipped'"))
    for v in ("openssl-api", "openssl-transform"):
        assert re.fullmatch(r"the compiler cannot build against -lcrypto "
                            r"here: openssl/\S+\.h: No such file or "
                            r"directory", skipped[v]), skipped
    rows = query(db, "SELECT variant, digest, valid FROM samples")
    measured = {v for v, _, _ in rows}
    assert {"c-fused", "x86-rorx-avx"} <= measured
    assert ("x86-rorx" in measured) == (not cpu_lacks("sha512", "x86-rorx"))
    assert not any(v.startswith("openssl") for v in measured)
    want = sha512_chain(2000)
    assert all(d == want and ok == 1 for _, d, ok in rows), rows
    (openssl,), = query(db, "SELECT openssl FROM builds")
    assert openssl == "none (the agent was built without libcrypto)"
    agent = next((wd / "build").glob("*/seqorch-agent"))
    libs = subprocess.run(["ldd", agent], capture_output=True,
                          text=True).stdout
    assert "libcjson" not in libs and "libcrypto" not in libs, libs
    # sha512's capability control: skipped with the reason, the host not
    # failed, its other variants measured as without it.
    r = seqorch(tmp_path, "run", "--study", "sha512", "--hosts", "bare",
                "--openssl-cap-clear", "AVX2", "--steps", "2000",
                "--samples", "1", timeout=1200)
    assert r.returncode == 0, r.stderr
    note = ("--openssl-cap-clear AVX2 skipped: the agent was built without "
            "libcrypto, so nothing it measures reads OpenSSL's capability "
            "bits")
    (run,), = query(db, "SELECT max(id) FROM runs")
    assert query(db, "SELECT host, level, message FROM events WHERE "
                 "run_id = ? AND message LIKE '--openssl-cap-clear %'",
                 run) == [("bare", "warning", note)]
    rows = query(db, "SELECT variant, digest, valid, openssl_cap_cleared "
                 "FROM samples WHERE run_id = ?", run)
    assert {"c-fused", "x86-rorx-avx"} <= {v for v, _, _, _ in rows}
    assert all(d == want and ok == 1 and c is None
               for _, d, ok, c in rows), rows


def test_hosts_check_probes_with_the_hosts_cflags(tmp_path, bare):
    """The host whose OpenSSL headers come only through its cflags is
    ready with libcrypto; without them, hosts check names the variants
    the build will skip and why, and the host is still ready."""
    cc, cflags, wd = bare
    hosts(tmp_path / "hosts.toml", [("withinc", cc, cflags),
                                    ("noinc", cc, "-O2")], {"noinc": wd})
    r = seqorch(tmp_path, "hosts", "check", timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    withinc, noinc = (re.search(rf"^{n}: .*?(?=^\S|\Z)", r.stdout,
                                re.M | re.S).group(0)
                      for n in ("withinc", "noinc"))
    assert re.search(rf"^  cc        {re.escape(str(cc))}: gcc .*; target "
                     rf"{GNU}; cflags ok; -lcrypto ok$", withinc, re.M), \
        withinc
    assert not re.search(r"^  variants  ", withinc, re.M), withinc
    assert "missing   nothing" in withinc
    assert "; -lcrypto no\n" in noinc, noinc
    assert re.search(rf"^  variants  with {re.escape(str(cc))}: without "
                     r"-lcrypto, skipped: sha3/openssl-evp, "
                     r"sha512/openssl-api, sha512/openssl-transform "
                     r"\(openssl/\S+\.h: No such file or directory\)$",
                     noinc, re.M), noinc
    assert f"\n  control   with {cc}: without -lcrypto, --openssl-cap-clear " \
        "(sha512's capability control) skipped: the agent has no OpenSSL " \
        "capability bits to clear\n" in noinc, noinc
    assert "\n  control " not in withinc
    assert "missing   nothing" in noinc


@pytest.mark.parametrize("in_entry", [False, True],
                         ids=["in-cflags", "in-cc-entry"])
def test_a_native_the_compiler_does_not_know_is_recorded_and_warned(
        tmp_path, in_entry):
    """A gcc that does not know the cpu ignores -march=native (gcc 12 and
    -mcpu=native on a Neoverse V2), emulated by a script that drops it:
    compiled_for says what the compiler built for, not "native", and the
    run warns that native resolved to generic, in its events and its
    report (item 5).  The flag is the build's wherever it is written: in
    cflags, or in the cc entry ("gcc -O2 -march=native", cflags = "");
    there, native and compiled_for were left empty.  A variant of two
    files (kernel.c and kernel.S) has one compiled_for line, not two."""
    script = tmp_path / "forgetful-cc"
    script.write_text("#!/bin/sh\n"
                      "for a; do shift; [ \"$a\" = -march=native ] || "
                      "set -- \"$@\" \"$a\"; done\n"
                      "exec gcc \"$@\"\n")
    script.chmod(0o755)
    cc, cflags = (f"{script} -O2 -march=native", "") if in_entry else \
        (script, "-O2 -march=native")
    hosts(tmp_path / "hosts.toml", [("old", cc, cflags)])
    r = seqorch(tmp_path, "run", "--study", "mul32", "--hosts", "old",
                "--steps", "2000", "--samples", "1", timeout=1200)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    (bid, native, extra), = query(db, "SELECT id, native, extra FROM "
                                  "builds")
    # what gcc -Q --help=target says the build was compiled for
    assert native == "-march=x86-64 -mtune=generic"
    keys = [ln.split("=", 1)[0] for ln in extra.splitlines()
            if ln.startswith("compiled_for.")]
    assert len(keys) == len(set(keys)), sorted(keys)
    compiled = dict(ln.split("=", 1) for ln in extra.splitlines()
                    if ln.startswith("compiled_for."))
    assert compiled["compiled_for.mul32/c"] == "-march=x86-64", compiled
    assert set(compiled.values()) == {"-march=x86-64"}, compiled
    want = (f'build {bid}: native resolved to generic (-march=x86-64 '
            f'-mtune=generic): compiler "{cc}" does not know this cpu, so '
            'the build is not tuned for it')
    assert query(db, "SELECT host, level, message FROM events WHERE "
                 "message LIKE 'build %: native %'") == \
        [("old", "warning", want)]
    assert f'seqorch: host "old": {want}\n' in r.stderr
    rep = seqorch(tmp_path, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    # the report wraps the events' messages at spaces
    assert want in " ".join(rep.stdout.split()), rep.stdout


def test_commands_keep_a_backslash_in_cflags(tmp_path):
    """builds.commands is every command as run: a backslash in the flags
    stays one (echo in dash, Debian's /bin/sh, and in macOS's /bin/sh
    turned "\\t" into a tab).  The compiler fails at the first compile, so
    the build stops there, its commands recorded."""
    cc = tmp_path / "failing-cc"
    cc.write_text("#!/bin/sh\ncase $1 in -dumpmachine|--version) "
                  'exec gcc "$@";; esac\nexit 1\n')
    cc.chmod(0o755)
    (tmp_path / "hosts.toml").write_text(
        '[hosts.local]\ntransport = "local"\ncpu = 0\n'
        f'workdir = "{tmp_path / "wd"}"\ncc = ["{cc}"]\n'
        'cflags = "-O2 -DSEP=a\\\\tb"\n')
    r = seqorch(tmp_path, "run", "--study", "mul", "--hosts", "local",
                "--steps", "1000", "--samples", "1")
    assert r.returncode != 0
    (commands,), = query(tmp_path / "results.db",
                         "SELECT commands FROM builds")
    lines = commands.splitlines()
    assert lines[0].startswith("sh kernels/registry.sh libs "), lines
    assert all("-O2 -DSEP=a\\tb " in x for x in lines[:2]), lines
    assert "\t" not in commands
