"""A user's first day after `make install` (issue 32): the inventory found
from any directory ($SEQORCH_CONFIG, ./hosts.toml, the XDG config
directory), `seqorch init` writing a starter one, and hints that carry the
--config and --db given so that they work when pasted."""
import os
import shlex
import subprocess

from conftest import SEQORCH, query, write_hosts


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


def test_run_elsewhere_and_pasted_hints(tmp_path, workdir):
    """A run from a directory without hosts.toml, its inventory and
    database named by options; the printed hints, pasted into a shell in
    yet another directory, work."""
    (tmp_path / "home").mkdir()
    inv = tmp_path / "my hosts.toml"
    write_hosts(inv, workdir)
    db = tmp_path / "my results.db"
    work = tmp_path / "work"
    work.mkdir()
    r = run(work, "run", "--study", "sha3", "--steps", "1000", "--samples",
            "1", "--config", inv, "--db", db)
    assert r.returncode == 0, r.stderr
    assert query(db, "select count(*) from runs") == [(1,)]
    hint = [ln for ln in r.stderr.splitlines() if ln.startswith("next: ")]
    assert hint == [f"next: seqorch report --run 1 --db {shlex.quote(str(db))}"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cmd = hint[0][len("next: "):].replace("seqorch", shlex.quote(str(SEQORCH)),
                                         1)
    r = subprocess.run(cmd, shell=True, cwd=elsewhere, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "sha3" in r.stdout
    # Finished: resuming says so, with a hint that carries --db.
    r = run(elsewhere, "run", "--resume", "1", "--db", db)
    assert r.returncode == 0, r.stderr
    assert f"next: seqorch report --run 1 --db {shlex.quote(str(db))}" in \
        r.stderr
