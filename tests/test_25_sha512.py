"""The sha512 study end to end, and `seqorch run --openssl-cap`.

A local `seqorch run --study sha512` builds every variant of this machine,
self-tests them, and stores samples that all end in the chain Python's
hashlib computes; the report shows the libcrypto the agent ran with.
--openssl-cap puts OPENSSL_ia32cap (x86-64) or OPENSSL_armcap (aarch64)
in the agent's environment, locally and over SSH: the agent's facts show
the value arrived, the run and every sample store it, the report shows it,
and with libcrypto's AVX, AVX2, BMI2 and SHA paths hidden the digests
still match."""
import json
import os
import subprocess

from conftest import ROOT, SEQORCH, query, runs_here, seqorch
from refs import chain_hex
from sshd import sshd_factory, user_key, write_hosts_toml  # noqa: F401

# x86-64: hide AVX (CPUID 1 ECX bit 28, bit 60 of the first word), and
# AVX2, BMI2 and the SHA extensions (CPUID 7 EBX bits 5, 8, 29, the second
# word) from libcrypto.  aarch64: clear every capability bit.
CAP = "~0x1000000000000000:~0x20000120"
ARMCAP = "0"


def arch():
    return subprocess.run(["cc", "-dumpmachine"], capture_output=True,
                          text=True, check=True).stdout.split("-")[0]


def this_machines_variants():
    out = subprocess.run(["sh", "kernels/registry.sh", "manifest", arch()],
                         cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return sorted(line.split("\t")[1] for line in out.splitlines()
                  if line.startswith("sha512\t"))


def cap_for_this_machine():
    return (CAP, "openssl_ia32cap") if arch() == "x86_64" else \
        (ARMCAP, "openssl_armcap")


def test_sha512_run_end_to_end(scratch):
    steps = 2000
    r = seqorch(scratch, "run", "--study", "sha512", "--hosts", "local",
                "--steps", steps, "--samples", 2)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    want = chain_hex("sha512", steps)
    built = this_machines_variants()
    # measured where this CPU has the features, skipped with them named
    variants = runs_here("sha512", built)
    assert {"openssl-transform", "openssl-api", "c-fused"} <= set(variants)
    rows = query(db, "SELECT variant, digest, valid, steps, openssl_cap "
                 "FROM samples ORDER BY variant, sample_index")
    assert rows == [(v, want, 1, steps, None) for v in variants
                    for _ in range(2)]
    status = query(db, "SELECT variant, status, reason FROM variants "
                   "WHERE study = 'sha512' ORDER BY variant")
    assert [(v, st) for v, st, _ in status] == \
        [(v, "ok" if v in variants else "skipped") for v in built]
    assert all(why.startswith("cpu lacks ") for _, st, why in status
               if st == "skipped"), status
    (method,), = query(db, "SELECT method FROM refs WHERE steps = ?", steps)
    assert method.startswith("OpenSSL EVP_sha512")
    assert query(db, "SELECT openssl_cap FROM runs") == [(None,)]
    (ssl,), = query(db, "SELECT openssl FROM run_hosts")
    assert ssl.startswith("OpenSSL ")
    # Each variant with declared instructions has them in its function.
    checked = query(db, "SELECT variant, status FROM disasm "
                    "WHERE study = 'sha512'")
    assert all(st == "ok" for _, st in checked), checked
    if arch() == "x86_64":
        assert ("x86-rorx", "ok") in checked
        assert ("x86-rorx-avx", "ok") in checked

    rep = seqorch(scratch, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    assert "ns/hash" in rep.stdout and "libcrypto" in rep.stdout
    assert ssl in rep.stdout
    assert "openssl   capabilities" not in rep.stdout


def test_openssl_cap_reaches_the_agent_and_is_stored(scratch):
    cap, key = cap_for_this_machine()
    steps = 1500
    r = seqorch(scratch, "run", "--study", "sha512", "--hosts", "local",
                "--steps", steps, "--samples", 2, "--variants",
                "openssl-transform,openssl-api,c-fused", "--openssl-cap",
                cap)
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    want = chain_hex("sha512", steps)
    rows = query(db, "SELECT variant, digest, valid, openssl_cap "
                 "FROM samples")
    assert len(rows) == 6
    assert all(row[1:] == (want, 1, cap) for row in rows), rows
    assert query(db, "SELECT openssl_cap FROM runs") == [(cap,)]
    (seen,), = query(db, f"SELECT json_extract(facts, '$.{key}') "
                     "FROM run_hosts")
    assert seen == cap
    rep = seqorch(scratch, "report", "--latest")
    assert rep.returncode == 0, rep.stderr
    assert f'openssl   capabilities "{cap}"' in rep.stdout
    js = seqorch(scratch, "report", "--latest", "--format", "json")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["runs"][0]["openssl_cap"] == cap


def test_inherited_openssl_cap_is_a_warning(scratch):
    """Without --openssl-cap, a mask the local agent inherits from the
    coordinator's environment is recorded as a warning, not hidden."""
    cap, key = cap_for_this_machine()
    var = "OPENSSL_ia32cap" if key == "openssl_ia32cap" else "OPENSSL_armcap"
    r = seqorch(scratch, "run", "--study", "sha512", "--hosts", "local",
                "--steps", 100, "--samples", 1, "--variants", "c-fused",
                env={**os.environ, var: cap})
    assert r.returncode == 0, r.stderr
    db = scratch / "results.db"
    assert query(db, "SELECT openssl_cap, valid FROM samples") == \
        [(None, 1)]
    warn = [m for (m,) in query(db, "SELECT message FROM events "
                                "WHERE level = 'warning'")
            if var in m]
    assert warn == [f'agent ran with {var}="{cap}" from its environment, '
                    "not from --openssl-cap: libcrypto's code paths were "
                    "restricted"], warn


def test_openssl_cap_bad_value_is_refused(scratch):
    for bad in ("", "0x10; touch pwned", "~0x1 0x2", "9" * 201):
        r = seqorch(scratch, "run", "--study", "sha512", "--hosts",
                    "local", "--openssl-cap", bad)
        assert r.returncode == 2, (bad, r.stderr)
        assert f'invalid --openssl-cap "{bad}": expected an OpenSSL ' \
            'capability value' in r.stderr
    assert not (scratch / "results.db").exists()
    assert not (scratch / "pwned").exists()


def test_openssl_cap_is_refused_with_resume(scratch):
    r = seqorch(scratch, "run", "--resume", 1, "--openssl-cap", "0x1")
    assert r.returncode == 2
    assert "--openssl-cap cannot be given with --resume" in r.stderr


def test_openssl_cap_over_ssh(tmp_path, sshd_factory):  # noqa: F811
    server = sshd_factory("capped")
    write_hosts_toml(tmp_path / "hosts.toml",
                     {server.name: server.host_entry(cpu=1)})
    cap, key = cap_for_this_machine()
    steps = 1200
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C"}
    r = subprocess.run([str(SEQORCH), "run", "--study", "sha512", "--hosts",
                        "all", "--steps", str(steps), "--samples", "1",
                        "--variants", "openssl-transform,c-fused",
                        "--openssl-cap", cap], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    want = chain_hex("sha512", steps)
    assert sorted(query(db, "SELECT variant, digest, valid, openssl_cap "
                        "FROM samples")) == \
        [(v, want, 1, cap) for v in ("c-fused", "openssl-transform")]
    (seen,), = query(db, f"SELECT json_extract(facts, '$.{key}') "
                     "FROM run_hosts")
    assert seen == cap
