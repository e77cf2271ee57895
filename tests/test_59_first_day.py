"""A user's first day after `make install` (issue 32): the inventory found
from any directory ($SEQORCH_CONFIG, ./hosts.toml, the XDG config
directory), `seqorch init` writing a starter one, and hints that carry the
--config and --db given so that they work when pasted."""
import json
import os
import shlex
import signal
import sqlite3
import statistics
import subprocess

import pytest

from conftest import ROOT, SEQORCH, cpu_lacks, locked, query, write_hosts


def run(cwd, *args, env=None, timeout=600):
    """seqorch in cwd with HOME at cwd/home and no XDG_CONFIG_HOME nor
    SEQORCH_CONFIG unless env gives them."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("XDG_CONFIG_HOME", "SEQORCH_CONFIG")}
    base["HOME"] = str(cwd / "home")
    base.update(env or {})
    return subprocess.run([str(SEQORCH), *map(str, args)], cwd=cwd, env=base,
                          capture_output=True, text=True, timeout=timeout)


def test_config_search_and_init(tmp_path):
    (tmp_path / "home").mkdir()
    ssh = tmp_path / "ssh_config"
    ssh.write_text("Host genoa\n  HostName 127.0.0.9\n  User bench\n"
                   "Host *.corp m4 !bad\n  Port 2222\nHost local\n")
    r = run(tmp_path, "hosts", "list")
    assert r.returncode == 2
    assert "no host inventory" in r.stderr and "seqorch init" in r.stderr

    user = tmp_path / "home" / ".config" / "seqorch" / "hosts.toml"
    r = run(tmp_path, "init", "--ssh-config", ssh)
    assert r.returncode == 0, r.stderr
    assert f'wrote "{user}"' in r.stdout and "2 ssh_config aliases" in r.stdout
    text = user.read_text()
    assert '[hosts.local]\ntransport = "local"\n' in text
    # Aliases are commented out; patterns and our own names are not there.
    assert '# [hosts.genoa]\n# ssh = "genoa"\n' in text
    assert '# [hosts.m4]\n# ssh = "m4"\n' in text
    assert "corp" not in text and "bad" not in text
    assert "[hosts.local]" in text and text.count("hosts.local") == 1
    # Never over an existing file.
    r = run(tmp_path, "init")
    assert r.returncode == 1 and "File exists" in r.stderr
    assert user.read_text() == text
    # A directory that cannot be made is named.
    (tmp_path / "plain").write_text("")
    r = run(tmp_path, "init", "--config", tmp_path / "plain" / "d" / "h.toml")
    assert r.returncode == 1
    assert (f'init: cannot create "{tmp_path}/plain/d": Not a directory'
            in r.stderr), r.stderr
    # A directory given as --config: the file to write is asked for.
    r = run(tmp_path, "init", "--config", tmp_path)
    assert r.returncode == 1
    assert (f'init: "{tmp_path}" is a directory: --config names the file '
            f'to write, such as "{tmp_path}/hosts.toml"' in r.stderr), \
        r.stderr

    r = run(tmp_path, "hosts", "list")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"inventory: {user} (~/.config)"
    assert f'hosts from "{user}"' in r.stderr
    # Uncommented, an alias entry resolves through ssh_config.
    user.write_text(text.replace("# [hosts.genoa]\n# ssh", "[hosts.genoa]\n"
                                 "ssh"))
    r = run(tmp_path, "hosts", "list", "--ssh-config", ssh)
    assert r.returncode == 0, r.stderr
    assert "genoa        ssh       127.0.0.9:22" in r.stdout

    # $XDG_CONFIG_HOME replaces ~/.config; init writes there too.
    xdg = tmp_path / "xdg"
    r = run(tmp_path, "init", "--ssh-config", ssh,
            env={"XDG_CONFIG_HOME": str(xdg)})
    assert r.returncode == 0, r.stderr
    r = run(tmp_path, "hosts", "list", env={"XDG_CONFIG_HOME": str(xdg)})
    assert r.stdout.splitlines()[0] == \
        f"inventory: {xdg}/seqorch/hosts.toml ($XDG_CONFIG_HOME)"

    # ./hosts.toml beats the user's file, $SEQORCH_CONFIG beats both and
    # --config beats everything.
    (tmp_path / "hosts.toml").write_text('[hosts.here]\ntransport = "local"\n')
    other = tmp_path / "other.toml"
    other.write_text('[hosts.env]\ntransport = "local"\n')
    r = run(tmp_path, "hosts", "list")
    assert r.stdout.splitlines()[0] == \
        "inventory: hosts.toml (the current directory)"
    assert r.stderr == ""
    r = run(tmp_path, "hosts", "list", env={"SEQORCH_CONFIG": str(other)})
    assert r.stdout.splitlines()[0] == \
        f"inventory: {other} ($SEQORCH_CONFIG)"
    assert "\nenv " in r.stdout
    r = run(tmp_path, "hosts", "list", "--config", user,
            env={"SEQORCH_CONFIG": str(other)})
    assert r.stdout.splitlines()[0] == f"inventory: {user} (--config)"
    r = run(tmp_path, "hosts", "list",
            env={"SEQORCH_CONFIG": str(tmp_path / "nosuch.toml")})
    assert r.returncode == 2
    assert "nosuch.toml" in r.stderr and "$SEQORCH_CONFIG" in r.stderr


@pytest.fixture(scope="module")
def measured(tmp_path_factory, workdir):
    """A run from a directory without hosts.toml, its inventory and
    database named by options (paths with a space): (root, db, stderr)."""
    root = tmp_path_factory.mktemp("firstday")
    (root / "home").mkdir()
    inv = root / "my hosts.toml"
    write_hosts(inv, workdir)
    db = root / "my results.db"
    work = root / "work"
    work.mkdir()
    r = run(work, "run", "--study", "sha3", "--steps", "1000", "--samples",
            "3", "--config", inv, "--db", db)
    assert r.returncode == 0, r.stderr
    return root, db, r.stderr


def test_run_elsewhere_and_pasted_hints(measured):
    """The hints a run prints, pasted into a shell in yet another
    directory, work."""
    root, db, stderr = measured
    assert query(db, "select count(*) from runs") == [(1,)]
    hint = [ln for ln in stderr.splitlines() if ln.startswith("next: ")]
    assert hint == [f"next: seqorch report --run 1 --db '{db}'"]
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    cmd = hint[0][len("next: "):].replace("seqorch", shlex.quote(str(SEQORCH)),
                                         1)
    r = subprocess.run(cmd, shell=True, cwd=elsewhere, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "sha3" in r.stdout
    # The variants built from OpenSSL's generated sources are skipped
    # (nothing fetched), and the fetch named fills the cache beside --db.
    # Others are skipped only where /proc/cpuinfo lacks their features.
    cache = f"'{root}/seqorch-cache'"
    skipped = query(db, "select variant, reason from variants where status ="
                    " 'skipped'")
    assert {why for _, why in skipped if not why.startswith("cpu lacks ")} \
        == {f'source "openssl" not fetched (seqorch fetch --study sha3 '
            f'--cache {cache})'}
    assert all(cpu_lacks("sha3", v) for v, why in skipped
               if why.startswith("cpu lacks ")), skipped
    # Finished: resuming says so, with a hint that carries --db.
    r = run(elsewhere, "run", "--resume", "1", "--db", db)
    assert r.returncode == 0, r.stderr
    assert f"next: seqorch report --run 1 --db '{db}'" in r.stderr


def test_failed_and_interrupted_runs_hints(tmp_path, workdir):
    """When every host failed, and when Ctrl-C stopped the run, the hints
    carry --config and --db; `hosts trust` names `hosts list` with
    --config."""
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    inv, db = tmp_path / "my hosts.toml", tmp_path / "my results.db"
    opts = f"--config '{inv}' --db '{db}'"
    # A workdir that cannot be made fails the one host.
    (tmp_path / "plain").write_text("")
    write_hosts(inv, tmp_path / "plain" / "wd")
    r = run(work, "run", "--study", "sha3", "--variants", "c-fused",
            "--steps", "1000", "--samples", "1", "--config", inv, "--db", db)
    assert r.returncode == 1, r.stderr
    assert r.stderr.endswith(
        f"\nnext: seqorch hosts check --config '{inv}'\n"
        f"then: seqorch report --run 1 --db '{db}'\n"), r.stderr
    r = run(work, "hosts", "trust", "nosuch", "--config", inv)
    assert r.returncode == 2
    assert f"(see `seqorch hosts list --config '{inv}'`)" in r.stderr, \
        r.stderr

    write_hosts(inv, workdir)
    env = {k: v for k, v in os.environ.items() if k != "SEQORCH_CONFIG"}
    env["HOME"] = str(tmp_path / "home")
    p = subprocess.Popen([str(SEQORCH), "run", "--study", "sha3",
                          "--variants", "c-fused", "--steps", "300000",
                          "--samples", "50", "--config", str(inv), "--db",
                          str(db)], cwd=work, env=env,
                         stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "sample 1/50 of c-fused" in line:
            p.send_signal(signal.SIGINT)
            break
    rest = p.stderr.read()
    assert p.wait(timeout=120) == 130, rest
    assert f"\nresume: seqorch run --resume 2 {opts}\n" in rest, rest


def test_unsigned_import_and_compare_across_files(measured, tmp_path):
    """A bundle imported without a signature is marked so in imports and
    in every report format; compare reads RUN_A from --baseline-db."""
    root, a_db, _ = measured
    (tmp_path / "home").mkdir()
    r = run(tmp_path, "export", "--run", "1", "--db", a_db, "--bundle",
            "b.tar")
    assert r.returncode == 0, r.stderr
    r = run(tmp_path, "import", "b.tar", "--db", "b.db")
    assert r.returncode == 2 and "--pubkey" in r.stderr
    r = run(tmp_path, "import", "b.tar", "--unsigned", "--pubkey", "k.pub")
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = run(tmp_path, "import", "b.tar", "--unsigned", "--db", "b.db")
    assert r.returncode == 0, r.stderr
    assert "as run 1, unsigned" in r.stdout
    b_db = tmp_path / "b.db"
    assert query(b_db, "select origin_run_id, key_fingerprint, signed "
                 "from imports") == [(1, None, 0)]
    for fmt, mark in (("text", "UNSIGNED"), ("markdown", "**unsigned**"),
                      ("html", "<strong>unsigned</strong>")):
        r = run(tmp_path, "report", "--run", "1", "--db", b_db, "--format",
                fmt)
        assert r.returncode == 0, r.stderr
        assert mark in r.stdout, (fmt, r.stdout[:2000])
    r = run(tmp_path, "report", "--run", "1", "--db", b_db, "--format", "json")
    (rep,) = json.loads(r.stdout)["runs"]
    assert rep["imported"]["signed"] is False
    assert rep["imported"]["origin_run"] == 1
    # Both CSVs end in a column that says so.
    for per in ((), ("--per", "cell")):
        r = run(tmp_path, "report", "--run", "1", "--db", b_db, "--format",
                "csv", *per)
        assert r.returncode == 0, r.stderr
        head, *rows = r.stdout.splitlines()
        assert head.endswith(",imported") and rows
        assert all(row.endswith(",unsigned") for row in rows), rows[0]
    # The run measured here has no such mark.
    r = run(tmp_path, "report", "--run", "1", "--db", a_db, "--format", "json")
    assert "imported" not in json.loads(r.stdout)["runs"][0]
    r = run(tmp_path, "report", "--run", "1", "--db", a_db, "--format", "csv")
    assert r.stdout.splitlines()[1].endswith(",")

    # The same samples in two files: every cell compared, no change.
    r = run(tmp_path, "compare", "--baseline-db", a_db, "--db", b_db, "1",
            "1", "--format", "json")
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    assert (cmp["baseline_db"], cmp["new_db"]) == (str(a_db), str(b_db))
    assert cmp["cells"] and all(c["ratio"] == 1 for c in cmp["cells"])
    # Without RUN_B: the newest run of the study measured in --db.
    r = run(tmp_path, "compare", "--baseline-db", b_db, "--db", a_db, "1")
    assert r.returncode == 0, r.stderr
    assert f'files     baseline "{b_db}", new "{a_db}"' in r.stdout
    # The unsigned run is marked in the header, the one measured here not.
    assert ("  baseline  run 1: ok, " in r.stdout and "; UNSIGNED import: "
            "nothing checked who measured it\n  new       run 1: ok, "
            in r.stdout), r.stdout
    assert r.stdout.count("UNSIGNED") == 1
    r = run(tmp_path, "compare", "--baseline-db", b_db, "--db", a_db, "1",
            "1", "--format", "md")
    assert "; UNSIGNED import: nothing checked who measured it." in r.stdout
    # RUN_A is looked up in --baseline-db, not in --db.
    r = run(tmp_path, "compare", "--baseline-db", b_db, "--db", a_db, "2",
            "1")
    assert r.returncode == 2 and f'no run with id 2 in "{b_db}"' in r.stderr
    # --baseline-db and --db one file (here through a link): a run is not
    # compared with itself and passed.
    (tmp_path / "same.db").symlink_to(a_db)
    r = run(tmp_path, "compare", "--baseline-db", tmp_path / "same.db",
            "--db", a_db, "1", "1", "--fail-slower", "5")
    assert r.returncode == 2 and "compare needs two different runs " \
        "(--baseline-db and --db are one file)" in r.stderr, r.stderr


def test_warmup(tmp_path, workdir):
    """run --warmup K (issue 32 item 6): K samples of each cell first, in
    the window, stored marked warmup (indices -K..-1, no place in the
    host's order) and in no figure: made a thousand times slower, they
    change neither the report's n and rates nor the hyperfine export."""
    (tmp_path / "home").mkdir()
    inv = write_hosts(tmp_path / "hosts.toml", workdir)
    db = tmp_path / "results.db"
    r = run(tmp_path, "run", "--study", "sha3", "--steps", "1000",
            "--samples", "3", "--warmup", "2", "--variants",
            "c-fused,openssl-evp", "--config", inv, "--db", db)
    assert r.returncode == 0, r.stderr
    assert query(db, "select warmup from runs") == [(2,)]
    assert query(db, "select variant, sample_index, host_position, valid"
                 " from samples where warmup = 1 order by 1, 2") == [
        (v, i, None, 1) for v in ("c-fused", "openssl-evp") for i in (-2, -1)]
    assert query(db, "select count(*), min(sample_index) from samples"
                 " where warmup = 0") == [(6, 0)]
    with sqlite3.connect(db) as con:
        con.execute("update samples set ns = ns * 1000 where warmup = 1")
    con.close()
    timed = {}
    for v, ns in query(db, "select variant, ns from samples where"
                       " warmup = 0 order by sample_index"):
        timed.setdefault(v, []).append(ns)
    doc = json.loads(run(tmp_path, "report", "--db", db, "--format",
                         "json").stdout)
    cells = doc["runs"][0]["cells"]
    assert sorted(c["variant"] for c in cells) == sorted(timed)
    for c in cells:
        t = timed[c["variant"]]
        assert c["n"] == 3
        assert c["min_rate"] == pytest.approx(1000 * 1e9 / max(t), rel=1e-9)
        assert c["median_rate"] == pytest.approx(
            1000 * 1e9 / statistics.median(t), rel=1e-9)
    assert query(db, "select variant, n from summary order by 1") == [
        ("c-fused", 3), ("openssl-evp", 3)]
    hf = json.loads(run(tmp_path, "export", "--run", 1, "--db", db,
                        "--format", "hyperfine", "-o", "-").stdout)
    for res in hf["results"]:
        assert res["times"] == [ns / 1e9 for ns in
                                timed[res["parameters"]["variant"]]]
    rows = run(tmp_path, "report", "--db", db, "--format", "csv").stdout
    assert len(rows.strip().splitlines()) == 1 + 6


def test_installed_first_day(tmp_path, workdir):
    """Done-when of issue 32: `make install PREFIX=...`, then the installed
    `seqorch init` and a run from another directory with no --config, the
    inventory found in $XDG_CONFIG_HOME and results.db left where it ran."""
    prefix = tmp_path / "prefix"
    with locked(ROOT / "build" / "pytest-make.lock"):
        subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"],
                       cwd=ROOT, check=True, capture_output=True)
    installed = prefix / "bin" / "seqorch"
    assert (prefix / "share" / "man" / "man1" / "seqorch.1").exists()
    env = {k: v for k, v in os.environ.items() if k != "SEQORCH_CONFIG"}
    env.update(HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    (tmp_path / "home").mkdir()

    def sq(cwd, *args):
        return subprocess.run([str(installed), *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600)

    r = sq(tmp_path, "init")
    inv = tmp_path / "xdg" / "seqorch" / "hosts.toml"
    assert r.returncode == 0 and f'wrote "{inv}"' in r.stdout, r.stderr
    # The agent build the other tests share, so that the run is cheap.
    inv.write_text(inv.read_text().replace(
        'transport = "local"\n',
        f'transport = "local"\nworkdir = "{workdir}"\n'))
    work = tmp_path / "work"
    work.mkdir()
    r = sq(work, "hosts", "list")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == \
        f"inventory: {inv} ($XDG_CONFIG_HOME)"
    assert "\nlocal " in r.stdout
    r = sq(work, "run", "--study", "sha3", "--hosts", "local", "--steps",
           "2000", "--samples", "1")
    assert r.returncode == 0, r.stderr
    assert f'hosts from "{inv}"' in r.stderr
    assert query(work / "results.db", "select study, steps from runs") == \
        [("sha3", 2000)]
