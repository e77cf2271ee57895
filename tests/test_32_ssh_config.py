"""ssh_config aliases ("ssh" in hosts.toml) against OpenSSH itself: for a
set of config files, every value that `seqorch hosts list -v` says came
from ssh_config must equal what `ssh -G ALIAS` prints, and the identity
files what `ssh -v` says it will try (ssh -G shows them unexpanded).
Nothing connects: ssh -v runs with a ProxyCommand that exits at once."""
import getpass
import os
import re
import subprocess

import pytest

from conftest import SEQORCH

CONFIGS = {
    "basic": """
# comment line
Host genoa
  HostName 10.0.0.%h
  User bob
  Port 2200
  IdentityFile ~/.ssh/id_%h_%p_%r
  IdentityFile /keys/%n-%u
  UserKnownHostsFile /kh/%h-%p "/kh two/%r"
  ConnectTimeout 1m5s
  ProxyJump alice@bastion:2222,gw
  IdentitiesOnly yes
Host *
  User carol
  IdentityFile /keys/all-%h
  ConnectTimeout 7
""",
    "patterns": """
Host *.lab !gw.lab
  User lab
  Port 2022
Host node?? "quoted pattern"
  User node
  HostName %h.Cluster.Example
Host GENOA
  HostName Upper.Example
Host *
  HostName fallback-%h.example
  User rest
""",
    "syntax": """
host=genoa
  HOSTNAME = Mixed.Case.Example
  user="spaced user"
  pOrT=2201
  ProxyJump none
  ProxyJump never-used
Host other
  ProxyCommand ssh -W %h:%p gw
  ProxyJump not-taken
Host v6
  HostName FE80::1%%Eth0
  ControlMaster auto
""",
    "include": """
Host genoa node*
  Include {dir}/conf.d/*.conf
  IdentityFile /keys/after-include
Host *
  Port 2999
""",
}

INCLUDED = {
    "10-first.conf": "User first\nHost genoa\n  Port 2300\nHost node*\n"
                     "  HostName %h.inc\n",
    "20-second.conf": "Host *\n  HostName second\n  ConnectTimeout 3\n",
}

ALIASES = ["genoa", "GENOA", "node12", "node123", "a.lab", "gw.lab",
           "other", "v6"]


def ssh_G(cfg, alias):
    """ssh -G's resolved values: {key: [values of each line]}."""
    out = subprocess.run(["ssh", "-G", "-F", str(cfg), alias],
                         capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL).stdout
    vals = {}
    for line in out.splitlines():
        k, _, v = line.partition(" ")
        vals.setdefault(k, []).append(v)
    return vals


def ssh_identities(cfg, alias):
    """The identity files ssh -v says it loads, expanded by OpenSSH.
    ssh prints them once its (proxy) connection is up; a run that printed
    none (seen once in CI, under load) is run again, and three such runs
    fail with what ssh said. A CI run once lost the first file: its line
    could not be matched whole. So the proxy prints nothing (it shares
    ssh's stderr; "exec true" made bash say "exec: exec: not found"), and
    the pattern is unanchored and stops at a blank, so a line run into its
    neighbour still gives both (no path in CONFIGS has a blank)."""
    env = dict(os.environ, SHELL="/bin/sh")
    for _ in range(3):
        r = subprocess.run(["ssh", "-v", "-F", str(cfg), "-o",
                            "ProxyCommand=true", "-o", "BatchMode=yes",
                            alias, "true"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30, env=env)
        files = re.findall(r"identity file (\S+) type -?\d+", r.stderr)
        if files:
            return [f for f in files if not f.endswith("-cert")]
    pytest.fail(f"ssh -v {alias}: no identity file line (exit "
                f"{r.returncode}):\n{r.stderr}")


def seqorch_sources(tmp_path, cfg, aliases):
    """`hosts list -v`: {host: {key: [(value, origin)]}} and stderr."""
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("".join(
        f'[hosts.h{i}]\nssh = "{a}"\n' for i, a in enumerate(aliases)))
    r = subprocess.run([str(SEQORCH), "hosts", "list", "-v", "--config",
                        str(hosts), "--ssh-config", str(cfg)],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    out, cur = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"^(h\d+) \(ssh_config alias", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        m = re.match(r"^  (\w+) +(.*?)   \(from (.*)\)$", line)
        if m and cur is not None:
            cur.setdefault(m.group(1), []).append((m.group(2), m.group(3)))
    return out, r.stderr


@pytest.fixture
def configs(tmp_path):
    (tmp_path / "conf.d").mkdir()
    for name, text in INCLUDED.items():
        (tmp_path / "conf.d" / name).write_text(text)
    paths = {}
    for name, text in CONFIGS.items():
        p = tmp_path / f"{name}.conf"
        p.write_text(text.replace("{dir}", str(tmp_path)))
        paths[name] = p
    return paths


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_resolution_equals_ssh_G(tmp_path, configs, name):
    cfg = configs[name]
    got, _ = seqorch_sources(tmp_path, cfg, ALIASES)
    checked = 0
    for i, alias in enumerate(ALIASES):
        mine, ssh = got[f"h{i}"], ssh_G(cfg, alias)
        where = f"{name}: {alias}: seqorch {mine} vs ssh -G {ssh}"
        assert mine["address"][0][0] == ssh["hostname"][0], where
        assert mine["port"][0][0] == ssh["port"][0], where
        checked += mine["address"][0][1].startswith("ssh_config ")
        user, origin = mine["user"][0]
        if origin.startswith("ssh_config"):
            assert user == ssh["user"][0], where
            checked += 1
        else:
            assert origin == "default" and ssh["user"][0] == \
                getpass.getuser(), where
        if mine["identity"][0][1].startswith("ssh_config"):
            assert [v for v, _ in mine["identity"]] == \
                ssh_identities(cfg, alias), where
            checked += 1
        kh, origin = mine["known_hosts"][0]
        if origin.startswith("ssh_config"):
            # ssh records new keys in the first file; so does seqorch.
            first = ssh["userknownhostsfile"][0]
            assert first == kh or first.startswith(kh + " "), where
            checked += 1
        ct, origin = mine["connect_timeout"][0]
        if origin.startswith("ssh_config"):
            assert ct == ssh["connecttimeout"][0], where
            checked += 1
        else:
            assert ssh["connecttimeout"][0] == "none", where
        if "proxy_jump" in mine:
            assert mine["proxy_jump"][0][0] == ssh["proxyjump"][0], where
            checked += 1
        else:
            assert "proxyjump" not in ssh, where
        only = "identities_only" in mine
        assert ssh["identitiesonly"][0] == ("yes" if only else "no"), where
    assert checked > 0


def test_warnings_name_unsupported_directives(tmp_path, configs):
    _, err = seqorch_sources(tmp_path, configs["syntax"], ["other", "v6"])
    assert (f'seqorch: warning: host "h0": {configs["syntax"]}:9: '
            '"ProxyCommand" is not supported: seqorch connects directly or '
            'through ProxyJump hosts, never through a command') in err
    assert (f'seqorch: warning: host "h1": {configs["syntax"]}:13: '
            '"ControlMaster" is not supported') in err
    cfg = tmp_path / "match.conf"
    cfg.write_text("Match host genoa\n  User m\nHost *\n  User u\n")
    got, err = seqorch_sources(tmp_path, cfg, ["genoa"])
    assert (f'seqorch: warning: host "h0": {cfg}:1: "Match" is not '
            'supported: the settings of its block are ignored') in err
    assert got["h0"]["user"] == [("u", f"ssh_config {cfg}:4")]


def test_hosts_toml_wins_and_sources_shown(tmp_path, configs):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[defaults]\nconnect_timeout = 30\nport = 2400\n'
                     '[hosts.genoa]\nssh = "genoa"\nuser = "own"\n'
                     'known_hosts = "/kh/own"\n')
    r = subprocess.run([str(SEQORCH), "hosts", "list", "-v", "--ssh-config",
                        str(configs["basic"])], capture_output=True,
                       text=True, cwd=tmp_path,
                       env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    cfg = configs["basic"]
    # The host's own keys win; ssh_config comes next, [defaults] last.
    assert re.search(r"^  user +own   \(from hosts.toml:6\)$", r.stdout, re.M)
    assert re.search(rf"^  port +2200   \(from ssh_config {cfg}:6\)$",
                     r.stdout, re.M), r.stdout
    assert re.search(rf"^  connect_timeout +65   \(from ssh_config "
                     rf"{cfg}:10\)$", r.stdout, re.M), r.stdout
    assert re.search(r"^  known_hosts +/kh/own   \(from hosts.toml:7\)$",
                     r.stdout, re.M)
    # %r in IdentityFile is the user that won, as with ssh -l.
    assert re.search(rf"^  identity +/root/.ssh/id_10.0.0.genoa_2200_own|"
                     rf"^  identity +{re.escape(os.path.expanduser('~'))}"
                     r"/.ssh/id_10.0.0.genoa_2200_own", r.stdout, re.M), \
        r.stdout
    # The jump hosts, each resolved in ssh_config too.
    assert 'jump 1: "bastion"' in r.stdout
    assert re.search(r"^    user +alice   \(from jump host "
                     r"\"alice@bastion:2222\"\)$", r.stdout, re.M), r.stdout
    assert 'jump 2: "gw"' in r.stdout
    # Without an alias nothing is read from ssh_config.
    hosts.write_text('[hosts.plain]\naddress = "10.9.9.9"\n')
    r = subprocess.run([str(SEQORCH), "hosts", "list", "-v", "--ssh-config",
                        str(tmp_path / "absent")], capture_output=True,
                       text=True, cwd=tmp_path,
                       env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  address +10.9.9.9   \(from hosts.toml:2\)$",
                     r.stdout, re.M)


def test_bad_ssh_config_is_named(tmp_path):
    cfg = tmp_path / "bad.conf"
    cfg.write_text("Host genoa\n  Port twenty\n")
    (tmp_path / "hosts.toml").write_text('[hosts.g]\nssh = "genoa"\n')
    r = subprocess.run([str(SEQORCH), "hosts", "list", "--ssh-config",
                        str(cfg)], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == (f'seqorch: hosts.toml:2:7: host "g": {cfg}:2: '
                        '"Port" must be a number from 1 to 65535, got '
                        '"twenty"\n')
