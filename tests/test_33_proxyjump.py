"""ProxyJump over real loopback sshd jump hosts.  Each test makes a network
namespace (`ip netns`, we are root) and starts the target's sshd inside
it, on a 127.0.0.X address that does not exist for the coordinator: only
a jump host reaches it.  The jump host is a bridge: it listens on
127.0.0.Y in the test's own namespace and serves each connection with
`sshd -i` inside the namespace (tests/sshd.py).  All traffic stays on
loopback addresses."""
import os
import re
import signal
import subprocess
import uuid

import pytest

from conftest import SEQORCH, agent_pids
from sshd import sshd_factory, user_key, write_hosts_toml  # noqa: F401
from lib_ssh_runs import (VARIANTS, LONG_STEPS, check_samples, finish,
                          integrity_ok, nsamples, q, start, wait_for)


def clean_env(tmp_path):
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C"}


def seqorch(tmp_path, *args, timeout=300):
    return subprocess.run([str(SEQORCH), *map(str, args)], cwd=tmp_path,
                          env=clean_env(tmp_path), capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def netns():
    """A fresh network namespace with only its loopback up."""
    name = f"so-test-{uuid.uuid4().hex[:10]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set",
                        "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=False)


@pytest.fixture
def net(netns, sshd_factory):  # noqa: F811
    """make(jumps=1) -> (jump Sshd list, target Sshd): the target inside
    the namespace, the last jump a bridge into it, any others plain
    forwarding sshds in front.  Agents left running are killed first."""
    made = []

    def make(jumps=1):
        target = sshd_factory("target", netns=netns)
        hops = [sshd_factory(f"j{i}", forwarding=True)
                for i in range(1, jumps)]
        hops.append(sshd_factory(f"j{jumps}", forwarding=True, netns=netns,
                                 bridge=True))
        made.append(target)
        return hops, target

    yield make
    for t in made:
        for pid in agent_pids(t.workdir):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def inventory(tmp_path, hops, target, **extra):
    """hosts.toml: each jump as a host, the target behind them all, and
    the target once more without a jump ("direct")."""
    hosts = {h.name: h.host_entry() for h in hops}
    hosts["target"] = target.host_entry(
        proxy_jump=",".join(h.name for h in hops), cpu=0, **extra)
    hosts["direct"] = target.host_entry()
    write_hosts_toml(tmp_path / "hosts.toml", hosts)


def test_target_is_reached_only_through_the_jump_host(tmp_path, net):
    (jump,), target = net(1)
    inventory(tmp_path, [jump], target)
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "direct")
    assert r.returncode == 1
    assert re.search(rf'host "direct": connect to {target.address}:'
                     rf'{target.port}: connection refused', r.stdout), \
        r.stdout
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "target")
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.host_fingerprint in r.stdout
    assert f"  via       j1: {jump.user}@{jump.address} port {jump.port}, " \
        f"host key ssh-ed25519 {jump.host_fingerprint}" in r.stdout
    assert "missing   nothing" in r.stdout
    # The jump host's sshd forwarded to the target's address.
    assert re.search(rf"server_request_direct_tcpip: originator \S+ port "
                     rf"\d+, target {re.escape(target.address)} port "
                     rf"{target.port}", jump.log.read_text())
    # Nothing listens behind the jump host on another port: the hop says so.
    inventory(tmp_path, [jump], target, port=target.port + 1 if
              target.port < 65535 else target.port - 1)
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "target")
    assert r.returncode == 1
    assert re.search(rf'host "target": jump host "j1" \({jump.address}:'
                     rf'{jump.port}\): cannot reach {target.address}:\d+: '
                     r'channel open failure', r.stdout), r.stdout


def test_target_via_ssh_config_alias(tmp_path, net):
    (jump,), target = net(1)
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host bastion\n  HostName {jump.address}\n  Port {jump.port}\n"
        f"  UserKnownHostsFile {jump.known_hosts}\n"
        f"Host genoa\n  HostName {target.address}\n  Port {target.port}\n"
        f"  User {target.user}\n  IdentityFile {target.user_key}\n"
        f"  UserKnownHostsFile {target.known_hosts}\n"
        f"  ProxyJump bastion\n")
    write_hosts_toml(tmp_path / "hosts.toml", {
        "genoa": {"ssh": "genoa", "workdir": str(target.workdir)}})
    r = seqorch(tmp_path, "hosts", "list", "-v", "--ssh-config", cfg)
    assert r.returncode == 0, r.stderr
    assert re.search(rf"^  proxy_jump +bastion   \(from ssh_config "
                     rf"{cfg}:11\)$", r.stdout, re.M), r.stdout
    assert re.search(rf"^    address +{jump.address}   \(from ssh_config "
                     rf"{cfg}:2\)$", r.stdout, re.M), r.stdout
    r = seqorch(tmp_path, "hosts", "check", "--ssh-config", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.host_fingerprint in r.stdout


def test_chain_of_two_jump_hosts(tmp_path, net):
    (j1, j2), target = net(2)
    inventory(tmp_path, [j1, j2], target)
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "target")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "missing   nothing" in r.stdout
    # j1 carried the session to j2, and j2 the one to the target.
    assert re.search(rf"target {re.escape(j2.address)} port {j2.port}",
                     j1.log.read_text())
    assert re.search(rf"target {re.escape(target.address)} port "
                     rf"{target.port}", j2.log.read_text())
    # A chain missing its first hop cannot reach the target.
    j1.stop()
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "target")
    assert r.returncode == 1
    assert f'host "target": jump host "j1": connect to {j1.address}:' \
        f'{j1.port}: connection refused' in r.stdout + r.stderr


def test_each_hop_key_is_checked_and_trusted(tmp_path, net):
    (j1, j2), target = net(2)
    j2.forget()
    inventory(tmp_path, [j1, j2], target)
    r = seqorch(tmp_path, "hosts", "check", "--hosts", "target")
    assert r.returncode == 1
    assert (f'host "target": jump host "j2": host key for '
            f'{j2.known_name} is not in known_hosts "{j2.known_hosts}" '
            f'(ssh-ed25519 {j2.host_fingerprint}); if that fingerprint is '
            f'right, run "seqorch hosts trust target"') in r.stdout
    # The target itself was never contacted.
    assert "Accepted publickey" not in target.log.read_text()
    r = seqorch(tmp_path, "hosts", "trust", "target")
    assert r.returncode == 0, r.stderr
    assert (f'host "target": jump host "j2": recorded ssh-ed25519 '
            f'{j2.host_fingerprint} in "{j2.known_hosts}"') in r.stdout
    assert (f'host "target": jump host "j1": already trusted: ssh-ed25519 '
            f'{j1.host_fingerprint}') in r.stdout
    assert (f'host "target": already trusted: ssh-ed25519 '
            f'{target.host_fingerprint}') in r.stdout
    assert j2.host_fingerprint.split(":")[1] not in j1.known_hosts.read_text()
    assert seqorch(tmp_path, "hosts", "check", "--hosts",
                   "target").returncode == 0
    # A changed key of a jump host is refused, whatever trust is asked.
    j1.regenerate_host_key()
    j1.restart()
    for args in (("check", "--hosts", "target"), ("trust", "target")):
        r = seqorch(tmp_path, "hosts", *args)
        assert r.returncode == 1
        assert f'host "target": jump host "j1": host key for ' \
            f'{j1.known_name} has changed' in r.stdout + r.stderr


def test_jump_host_drop_mid_window_is_collected(tmp_path, net):
    (jump,), target = net(1)
    inventory(tmp_path, [jump], target)
    # Only the host behind the jump is measured.
    text = (tmp_path / "hosts.toml").read_text()
    (tmp_path / "hosts.toml").write_text(
        text.split("[hosts.direct]")[0])
    steps, samples = LONG_STEPS, 6
    total = samples * len(VARIANTS)
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples, "--hosts", "target")
    try:
        wait_for(lambda: nsamples(db, "target") > 0,
                 "samples from target", p, tmp_path)
        before = len(jump.sessions())
        jump.kill_sessions()   # the bridge listens on: reconnecting works
        at_drop = nsamples(db, "target")
        rc, err = finish(p, tmp_path)
    finally:
        if p.poll() is None:
            p.kill()
    assert before > 0
    assert at_drop < total, "the run finished before the jump host dropped"
    assert rc == 0, err
    integrity_ok(db)
    rows = check_samples(db, "target", steps, samples)
    assert len(rows) == total
    ev = q(db, "SELECT level, message FROM events WHERE host = 'target'")
    assert any(lvl == "warning" and "reconnect" in m for lvl, m in ev), ev
    assert not [m for lvl, m in ev if lvl == "error"], ev
    # The agent went on detached; the target's sshd saw a second login.
    assert target.log.read_text().count("Accepted publickey") >= 2
    assert jump.log.read_text().count("Accepted publickey") >= 2


def test_frozen_jump_host_mid_window_is_collected(tmp_path, net):
    # The jump host's sshd stops answering but its kernel still does TCP:
    # the target's keepalives cross it and go unanswered, so the target
    # is given up, and the coordinator reconnects through a new session
    # of the jump host and collects the rest.
    (jump,), target = net(1)
    inventory(tmp_path, [jump], target, connect_timeout=2)
    text = (tmp_path / "hosts.toml").read_text()
    (tmp_path / "hosts.toml").write_text(text.split("[hosts.direct]")[0])
    steps, samples = LONG_STEPS, 6
    total = samples * len(VARIANTS)
    db = tmp_path / "results.db"
    p = start(tmp_path, steps, samples, "--hosts", "target")
    stopped = []
    try:
        wait_for(lambda: nsamples(db, "target") > 0,
                 "samples from target", p, tmp_path)
        stopped = jump.freeze()
        at_freeze = nsamples(db, "target")
        rc, err = finish(p, tmp_path)
    finally:
        jump.thaw(stopped)
        if p.poll() is None:
            p.kill()
    assert stopped
    assert at_freeze < total, "the run finished before the freeze"
    assert rc == 0, err
    rows = check_samples(db, "target", steps, samples)
    assert len(rows) == total
    ev = q(db, "SELECT level, message FROM events WHERE host = 'target'")
    assert any(lvl == "warning" and "reconnect" in m for lvl, m in ev), ev
    # Reconnected through a new session of the jump host.
    assert jump.log.read_text().count("Accepted publickey") >= 2
