"""The SSH transport, through `seqorch hosts`: real sshd instances on
127.0.0.X (tests/sshd.py), strict host keys, key-only authentication,
deadlines, and shell quoting of everything taken from hosts.toml."""
import os
import platform
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import SEQORCH, cpu_flags, cpuinfo_signature, query, sha3_chain
from lib_common import dead_port
from sshd import (fingerprint, free_endpoint, keygen, sshd_factory,  # noqa
                  user_key, write_hosts_toml)


def prebuild(cwd, spec):
    """The check builds the agent for its noise preflight: build it first
    (seqorch deploy), so a test that times the check times the check,
    which then reuses the build."""
    d = subprocess.run([str(SEQORCH), "deploy", "--hosts", spec], cwd=cwd,
                       capture_output=True, text=True, timeout=300,
                       env={"PATH": os.environ["PATH"], "HOME": str(cwd),
                            "LANG": "C"})
    assert d.returncode == 0, d.stderr


def run_hosts(cwd, *args, env=None, timeout=120):
    """./seqorch hosts ARGS in cwd with a clean environment: a HOME with
    no keys and no ssh-agent, unless env says otherwise."""
    base = {"PATH": os.environ["PATH"], "HOME": str(cwd), "LANG": "C"}
    base.update(env or {})
    return subprocess.run([str(SEQORCH), "hosts", *map(str, args)],
                          cwd=cwd, env=base, capture_output=True, text=True,
                          timeout=timeout)


def block(out, name):
    """The lines `hosts check` printed for one host."""
    m = re.search(rf"^{re.escape(name)}: .*?(?=^\S|\Z)", out, re.M | re.S)
    assert m, f"no report for {name} in:\n{out}"
    return m.group(0)


def test_check_three_hosts(tmp_path, sshd_factory):
    servers = [sshd_factory(n) for n in ("genoa", "graviton", "m4")]
    write_hosts_toml(tmp_path / "hosts.toml",
                     {s.name: s.host_entry(cc=["cc", "gcc"])
                      for s in servers})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 0, r.stdout + r.stderr
    for s in servers:
        b = block(r.stdout, s.name)
        assert s.host_fingerprint in b
        assert f"arch      {platform.machine()}" in b
        assert re.search(r"^  cc        gcc: gcc .*; target \S+-linux-gnu; "
                         r"cflags ok; -lcrypto ok$", b, re.M), b
        assert re.search(r"^  openssl   OpenSSL \d", b, re.M), b
        assert re.search(r"^  cpu       .+, \d+ cores$", b, re.M), b
        if platform.machine() == "x86_64":
            # the signature and instruction sets /proc/cpuinfo gives
            assert f"({cpuinfo_signature()}), " in b, b
            want = "avx2 bmi2 avx512f avx512vl avx512dq aes".split()
            has = [w for w in want if w in cpu_flags()]
            lacks = [w for w in want if w not in cpu_flags()]
            line = "  isa       " + " ".join(has) + (
                f"; lacks {' '.join(lacks)}: variants needing them are "
                "skipped" if lacks else "")
            assert line + "\n" in b, b
        assert re.search(rf"^  workdir   {re.escape(str(s.workdir))}, "
                         r"\d+ MiB free$", b, re.M), b
        assert "upload    ok" in b
        assert "missing   nothing" in b
        # The noise preflight ran over ssh with the agent built there.
        assert re.search(r"^  noise     (quiet|noisy: .+)$", b, re.M), b
        assert re.search(r"^  seen      .+$", b, re.M), b
        # The scratch directory of the probes is gone again; what stays is
        # the agent build, content addressed, that a run reuses.
        assert sorted(os.listdir(s.workdir)) == ["build", "src"]


def test_check_selects_hosts_and_reports_missing_compiler(tmp_path,
                                                          sshd_factory):
    a, b = sshd_factory("a"), sshd_factory("b")
    write_hosts_toml(tmp_path / "hosts.toml", {
        "a": a.host_entry(cc=["gcc", "no-such-cc"], groups=["x86"]),
        "b": b.host_entry(),
    })
    r = run_hosts(tmp_path, "check", "--hosts", "@x86")
    assert r.returncode == 1
    assert 'missing   compiler "no-such-cc"' in block(r.stdout, "a")
    assert "b:" not in r.stdout
    assert "1 of 1 host failed the check: a" in r.stderr


def test_unknown_host_key_is_refused(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    s.forget()
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    b = block(r.stdout, "genoa")
    assert "FAILED" in b
    assert f"host key for {s.known_name} is not in known_hosts" in b
    assert s.host_fingerprint in b
    assert 'run "seqorch hosts trust genoa"' in b
    # From another directory, the hint repeats the --config it was given.
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = run_hosts(other, "check", "--config", tmp_path / "hosts.toml")
    assert (f'run "seqorch hosts trust genoa --config '
            f"'{tmp_path / 'hosts.toml'}'\"") in block(r.stdout, "genoa")
    assert s.known_hosts.read_text() == ""
    # Refused before authentication: no command ran.
    assert "Accepted publickey" not in s.log.read_text()


def test_trust_records_the_key_then_check_succeeds(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    s.forget()
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stderr
    assert (f'host "genoa": recorded ssh-ed25519 {s.host_fingerprint}'
            in r.stdout)
    line = s.known_hosts.read_text()
    assert line.startswith(f"{s.known_name} ssh-ed25519 AAAA")
    # OpenSSH itself accepts the recorded line.
    ok = subprocess.run(
        ["ssh", "-F", "/dev/null", "-i", str(s.user_key), "-p",
         str(s.port), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=yes",
         "-o", f"UserKnownHostsFile={s.known_hosts}",
         f"{s.user}@{s.address}", "true"], capture_output=True, text=True,
        timeout=30)
    assert ok.returncode == 0, ok.stderr
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0
    assert "already trusted" in r.stdout
    assert s.known_hosts.read_text() == line


def test_trust_creates_a_missing_ssh_directory(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    known = tmp_path / "home" / ".ssh" / "known_hosts"
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"genoa": s.host_entry(known_hosts=str(known))})
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 1
    assert "no such file or directory" in r.stderr
    (tmp_path / "home").mkdir()
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stderr
    assert os.stat(known.parent).st_mode & 0o777 == 0o700
    assert known.read_text().startswith(s.known_name + " ssh-ed25519 ")


def test_trust_keeps_existing_lines(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    other = "[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample"
    s.known_hosts.write_text(other)  # no final newline
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    assert run_hosts(tmp_path, "trust", "genoa").returncode == 0
    lines = s.known_hosts.read_text().splitlines()
    assert lines[0] == other
    assert lines[1].startswith(s.known_name + " ")


def test_changed_host_key_is_always_refused(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    old = s.host_fingerprint
    s.regenerate_host_key()
    s.restart()
    new = s.host_fingerprint
    assert old != new
    known = s.known_hosts.read_text()
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    for verb in ("check", "trust"):
        args = ("trust", "genoa") if verb == "trust" else ("check",)
        r = run_hosts(tmp_path, *args)
        assert r.returncode == 1
        out = r.stdout + r.stderr
        assert f"host key for {s.known_name} has changed" in out
        assert old in out and new in out
        assert s.known_hosts.read_text() == known


def test_key_type_switch_is_refused(tmp_path, sshd_factory):
    """Issue 10, defect 6: a host known by its Ed25519 key that now shows
    only an ECDSA key is not a new host: `hosts trust` refuses to add the
    ECDSA key and names the Ed25519 key it knows, until that key is
    removed by hand (ssh-keygen -R), as OpenSSH does."""
    s = sshd_factory("genoa", key_types=("ecdsa",))
    old = tmp_path / "old_ed25519"
    keygen(old, "host-genoa-before")
    pub = (tmp_path / "old_ed25519.pub").read_text().split()
    s.known_hosts.write_text(f"{s.known_name} {pub[0]} {pub[1]}\n")
    known = s.known_hosts.read_text()
    old_fp = fingerprint(str(old) + ".pub")
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    for args in (("check",), ("trust", "genoa")):
        r = run_hosts(tmp_path, *args)
        assert r.returncode == 1, r.stdout
        out = r.stdout + r.stderr
        assert (f'host "genoa": host key for {s.known_name} changed type: '
                f'known_hosts "{s.known_hosts}":1 has ssh-ed25519 {old_fp}, '
                f'and the server offers no ssh-ed25519 key but '
                f'ecdsa-sha2-nistp256 {s.host_fingerprint}; refusing to '
                f'connect') in out, out
        assert f"ssh-keygen -R '{s.known_name}' -f '{s.known_hosts}'" in out
        assert s.known_hosts.read_text() == known
    # Once the old key is removed explicitly, the new one can be trusted.
    subprocess.run(["ssh-keygen", "-q", "-R", s.known_name, "-f",
                    str(s.known_hosts)], check=True, capture_output=True)
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stderr
    assert f"recorded ecdsa-sha2-nistp256 {s.host_fingerprint}" in r.stdout
    assert run_hosts(tmp_path, "check").returncode == 0


def test_revoked_host_key_is_refused(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    good = s.known_hosts.read_text()
    key = good.split()[1:3]
    s.known_hosts.write_text(f"@revoked * {key[0]} {key[1]}\n" + good)
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    for args in (("check",), ("trust", "genoa")):
        r = run_hosts(tmp_path, *args)
        assert r.returncode == 1
        assert "is marked @revoked" in r.stdout + r.stderr
        assert s.host_fingerprint in r.stdout + r.stderr


def test_hashed_known_hosts(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(s.known_hosts)],
                   check=True, capture_output=True)
    assert s.known_name not in s.known_hosts.read_text()
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 0, r.stdout + r.stderr
    old = s.host_fingerprint
    s.regenerate_host_key()
    s.restart()
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert "has changed" in r.stdout
    assert old in r.stdout and s.host_fingerprint in r.stdout


def test_port_22_entry_does_not_apply_to_other_ports(tmp_path,
                                                     sshd_factory):
    """As OpenSSH looks a host up: a plain "addr" entry is port 22's, and
    a host on another port is known by "[addr]:port" entries only, so a
    wrong plain entry neither blocks it nor does a right one trust it."""
    s = sshd_factory("genoa")
    right = s.known_hosts.read_text().split()[1:3]
    keygen(tmp_path / "other", "another-host")
    wrong = (tmp_path / "other.pub").read_text().split()[:2]
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    s.known_hosts.write_text(f"{s.address} {right[0]} {right[1]}\n")
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert (f"host key for {s.known_name} is not in known_hosts"
            in block(r.stdout, "genoa"))
    s.known_hosts.write_text(f"{s.address} {wrong[0]} {wrong[1]}\n")
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"recorded ssh-ed25519 {s.host_fingerprint}" in r.stdout
    lines = s.known_hosts.read_text().splitlines()
    assert lines[0] == f"{s.address} {wrong[0]} {wrong[1]}"
    assert lines[1].startswith(f"{s.known_name} ssh-ed25519 {right[1]}")


def test_changed_key_names_its_line(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    keygen(tmp_path / "old", "host-genoa-before")
    old = (tmp_path / "old.pub").read_text().split()[:2]
    s.known_hosts.write_text(f"# hosts\n{s.address} {old[0]} {old[1]}\n"
                             f"{s.known_name} {old[0]} {old[1]}\n")
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert (f'host key for {s.known_name} has changed: known_hosts '
            f'"{s.known_hosts}":3 has ssh-ed25519 '
            f'{fingerprint(tmp_path / "old.pub")}, the server presented '
            f'ssh-ed25519 {s.host_fingerprint}') in r.stdout
    assert f"ssh-keygen -R '{s.known_name}' -f '{s.known_hosts}'" in r.stdout


def test_unreadable_known_hosts_lines_are_skipped(tmp_path, sshd_factory):
    """As OpenSSH: a line that cannot be read is skipped, not the file;
    one that names the host is named by its line when the host is then
    unknown, and is no changed key."""
    s = sshd_factory("genoa")
    good = s.known_hosts.read_text()
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    # A pattern of many stars that does not match must not take forever.
    stars = "*" * 40 + "x" + "*" * 40
    s.known_hosts.write_text("not a known_hosts line\n"
                             f"{stars} ssh-ed25519 AAAAC3Nza\n" + good +
                             "127.0.0.9 ssh-ed25519 AAAAC3Nza")
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stderr
    assert "already trusted" in r.stdout
    s.known_hosts.write_text(f"# hosts\n{s.known_name} ssh-ed25519 "
                             "AAAAC3NzaC1lZDI1NTE5AAAAIBroken\n")
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    b = block(r.stdout, "genoa")
    assert "has changed" not in b
    assert (f'host key for {s.known_name} is not in known_hosts '
            f'"{s.known_hosts}" (ssh-ed25519 {s.host_fingerprint}); '
            f'known_hosts "{s.known_hosts}":2 names it but was skipped: '
            "its ssh-ed25519 key is unreadable") in b, b


def test_known_hosts_directory(tmp_path, sshd_factory):
    s = sshd_factory("genoa")
    d = tmp_path / "known.d"
    d.mkdir()
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"genoa": s.host_entry(known_hosts=str(d))})
    for args in (("check",), ("trust", "genoa")):
        r = run_hosts(tmp_path, *args)
        assert r.returncode == 1
        out = r.stdout + r.stderr
        assert f'host "genoa": known_hosts "{d}" is a directory' in out, out
        assert "hosts trust genoa" not in out


def test_known_key_type_is_asked_for_first(tmp_path, sshd_factory):
    # The server has two host keys; known_hosts has only its ECDSA key,
    # which is not the type we would ask for without known_hosts.
    s = sshd_factory("genoa", key_types=("ed25519", "ecdsa"))
    s.trust("ecdsa")
    write_hosts_toml(tmp_path / "hosts.toml", {"genoa": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (f"host key ecdsa-sha2-nistp256 {s.key_fingerprint('ecdsa')}"
            in r.stdout)
    s.forget()
    r = run_hosts(tmp_path, "trust", "genoa")
    assert r.returncode == 0, r.stderr
    assert f"ssh-ed25519 {s.key_fingerprint('ed25519')}" in r.stdout


def test_down_and_stalled_hosts_fail_in_time(tmp_path, sshd_factory):
    up = [sshd_factory("a"), sshd_factory("b")]
    down_addr, _ = free_endpoint()
    down_port = dead_port(down_addr)
    # Each accepts TCP connections (the kernel does) but never speaks SSH.
    stalls = []
    for _ in range(2):
        addr, _ = free_endpoint()
        stalls.append(socket.socket())
        stalls[-1].bind((addr, 0))
        stalls[-1].listen(8)
    hosts = {s.name: s.host_entry() for s in up}
    hosts["down"] = dict(up[0].host_entry(), address=down_addr,
                         port=down_port, connect_timeout=3)
    for name, st in zip(("stall", "stall2"), stalls):
        hosts[name] = dict(up[0].host_entry(), address=st.getsockname()[0],
                           port=st.getsockname()[1], connect_timeout=3)
    write_hosts_toml(tmp_path / "hosts.toml", hosts)
    prebuild(tmp_path, "a,b")
    try:
        r = run_hosts(tmp_path, "check")
        # Timed without the up hosts, whose probes and preflight take
        # what the machine's load makes them: two stalls of 3 s one
        # after the other would take 6 s.
        t = time.monotonic()
        again = run_hosts(tmp_path, "check", "--hosts", "down,stall,stall2")
        elapsed = time.monotonic() - t
    finally:
        for st in stalls:
            st.close()
    assert r.returncode == 1
    assert (f'host "down": connect to {down_addr}:{down_port}: '
            f'connection refused') in block(r.stdout, "down")
    for name in ("stall", "stall2"):
        assert re.search(rf'host "{name}": ssh handshake with [\d.:]+: '
                         r'timed out after 3 s', block(r.stdout, name))
    for s in up:
        assert "missing   nothing" in block(r.stdout, s.name)
    assert "3 of 5 hosts failed the check: down stall stall2" in r.stderr
    assert again.returncode == 1
    assert "3 of 3 hosts failed the check" in again.stderr, again.stderr
    # Hosts are checked at once: the stalls cost 3 s together, not 6.
    assert 3 <= elapsed < 6, elapsed


def test_unroutable_connect_times_out(tmp_path, sshd_factory):
    s = sshd_factory("a")
    # A listener whose backlog is full leaves new connects unanswered.
    addr, _ = free_endpoint()
    full = socket.socket()
    full.bind((addr, 0))
    full.listen(0)
    fillers = []
    try:
        for _ in range(8):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(full.getsockname())
            fillers.append(c)
        write_hosts_toml(tmp_path / "hosts.toml", {
            "a": s.host_entry(),
            "full": dict(s.host_entry(), address=addr,
                         port=full.getsockname()[1], connect_timeout=1)})
        prebuild(tmp_path, "a")
        r = run_hosts(tmp_path, "check")
        # Timed alone: host a's probe (slow under sanitizers and load) is
        # not the connect timeout; 1 s configured against the 10 s default.
        t = time.monotonic()
        alone = run_hosts(tmp_path, "check", "--hosts", "full")
        elapsed = time.monotonic() - t
    finally:
        for c in fillers:
            c.close()
        full.close()
    assert r.returncode == 1
    assert re.search(r'host "full": (connect to|ssh handshake with) '
                     r'[\d.:]+: timed out after 1 s', block(r.stdout, "full"))
    assert "missing   nothing" in block(r.stdout, "a")
    assert alone.returncode == 1
    assert "timed out after 1 s" in block(alone.stdout, "full")
    assert elapsed < 8, elapsed


def test_frozen_host_is_given_up_mid_command(tmp_path, sshd_factory):
    s = sshd_factory("a")
    # The wrapper makes the compiler probe a long, silent command.
    write_hosts_toml(tmp_path / "hosts.toml", {
        "a": s.host_entry(connect_timeout=2, build_wrapper="sleep 30 &&")})
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    t = time.monotonic()
    p = subprocess.Popen([str(SEQORCH), "hosts", "check"], cwd=tmp_path,
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    stopped = []
    try:
        deadline = time.monotonic() + 20
        while not stopped and time.monotonic() < deadline:
            if "sleep" in s.session_commands().values():
                stopped = s.freeze()
            time.sleep(0.1)
        out, err = p.communicate(timeout=60)
    finally:
        s.thaw(stopped)
        if p.poll() is None:
            p.kill()
    elapsed = time.monotonic() - t
    assert stopped
    assert p.returncode == 1
    assert re.search(r'host "a": connection to [\d.:]+ lost \(running a '
                     r'command\): no answer to keepalives for 8 s', out), out
    assert elapsed < 25, elapsed


def test_missing_sftp_is_reported(tmp_path, sshd_factory):
    # A fresh host, without the session's build in its workdir: the check
    # must say that uploading the sources is what it lacks.
    s = sshd_factory("a", sftp=False, prebuilt=False)
    write_hosts_toml(tmp_path / "hosts.toml", {"a": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    b = block(r.stdout, "a")
    assert 'cannot start sftp' in b
    assert 'a "Subsystem sftp" line' in b
    assert "missing   file upload" in b


def test_workdir_that_is_a_file_is_refused(tmp_path, sshd_factory):
    s = sshd_factory("a")
    plain = s.dir / "plain"
    plain.write_text("not a directory\n")
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"a": s.host_entry(workdir=str(plain))})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert f'host "a": workdir "{plain}" is not a directory' in \
        block(r.stdout, "a")
    assert plain.read_text() == "not a directory\n"


def test_password_only_server_is_refused(tmp_path, sshd_factory):
    s = sshd_factory("pw", password_only=True)
    write_hosts_toml(tmp_path / "hosts.toml", {"pw": s.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    b = block(r.stdout, "pw")
    assert 'offers only "password" authentication' in b
    assert "use a key" in b
    assert "Failed password" not in s.log.read_text()


def test_wrong_key_is_refused(tmp_path, sshd_factory):
    s = sshd_factory("a")
    other = tmp_path / "other_ed25519"
    keygen(other)
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"a": s.host_entry(identity=str(other))})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert re.search(rf'authentication as "{s.user}" at [\d.:]+ failed: '
                     rf'no key was accepted \(tried: "{re.escape(str(other))}'
                     r'"\)', block(r.stdout, "a"))


def test_without_home_the_keys_are_looked_for_in_the_passwd_home(
        tmp_path, sshd_factory):
    """With HOME unset, ssh looks in the password database's home; so
    does seqorch, and says where it looked."""
    import pwd
    s = sshd_factory("a")
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"a": s.host_entry(identity=None)})
    r = subprocess.run([str(SEQORCH), "hosts", "check"], cwd=tmp_path,
                       env={"PATH": os.environ["PATH"], "LANG": "C"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert "no key was accepted" in r.stdout, r.stdout
    assert f"{home}/.ssh/" in block(r.stdout, "a")


def test_passphrase_key_needs_the_agent(tmp_path, sshd_factory):
    s = sshd_factory("a")
    locked = tmp_path / "locked_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret",
                    "-f", str(locked)], check=True)
    s.authorize(locked)
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"a": s.host_entry(identity=str(locked))})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert (f'cannot use identity "{locked}"' in r.stdout and
            "load such keys into ssh-agent" in r.stdout), r.stdout


def test_missing_identity_file_is_named(tmp_path, sshd_factory):
    s = sshd_factory("a")
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"a": s.host_entry(identity=str(tmp_path / "nope"))})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert f'cannot read identity "{tmp_path / "nope"}"' in r.stdout


def test_ssh_agent_is_used_first(tmp_path, sshd_factory):
    s = sshd_factory("a")
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)],
                             stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        env = {"SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(s.user_key)], env=env,
                       check=True, capture_output=True)
        # No identity file: only the agent holds the key.
        write_hosts_toml(tmp_path / "hosts.toml",
                         {"a": s.host_entry(identity=None)})
        r = run_hosts(tmp_path, "check", env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        # Without the agent there is no key to offer.
        r = run_hosts(tmp_path, "check")
        assert r.returncode == 1
        assert "no key was accepted" in r.stdout
    finally:
        agent.terminate()
        agent.wait()


def test_values_from_hosts_toml_cannot_inject_commands(tmp_path,
                                                       sshd_factory):
    s = sshd_factory("a")
    # Where the host's user could write, had an injection run.
    marks = [s.dir / f"PWNED{i}" for i in range(6)]
    evil_dir = (f"{s.workdir}/w'; touch {marks[0]}; '/$(touch {marks[1]})"
                f"/`touch {marks[2]}`")
    evil_flags = (f"-O2 '; touch {marks[3]}; ' $(touch {marks[4]}) "
                  f'"; touch {marks[5]}" \'; touch /tmp/PWNED; \'')
    if os.path.exists("/tmp/PWNED"):
        os.unlink("/tmp/PWNED")
    write_hosts_toml(tmp_path / "hosts.toml", {
        "a": s.host_entry(workdir=evil_dir, cflags=evil_flags,
                          cc=["gcc", f"gcc; touch {marks[0]}"]),
    })
    r = run_hosts(tmp_path, "check")
    out = r.stdout + r.stderr
    for m in marks:
        assert not m.exists(), out
    assert not os.path.exists("/tmp/PWNED")
    # The strange workdir was created literally and reported as such.
    assert os.path.isdir(evil_dir), out
    assert f"workdir   {evil_dir}, " in out
    # The flags reached the compiler as words, which it rejected.
    assert 'cflags accepted by "gcc"' in out
    assert r.returncode == 1


def test_list_and_usage(tmp_path, sshd_factory):
    s = sshd_factory("a", start=False)
    write_hosts_toml(tmp_path / "hosts.toml", {
        "genoa": s.host_entry(cc=["clang", "gcc"], cflags="-O3 -march=znver4",
                              groups=["x86", "big"], cpu=3)})
    for args in ((), ("list",)):
        r = run_hosts(tmp_path, *args)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == \
            "inventory: hosts.toml (the current directory)"
        row = r.stdout.splitlines()[2].split()
        assert row[:7] == ["genoa", "ssh", f"{s.address}:{s.port}", s.user,
                           "clang,gcc", "3", "x86,big"]
        assert r.stdout.rstrip().endswith("-O3 -march=znver4")
    for verb in ((), ("list",), ("check",), ("trust",)):
        r = run_hosts(tmp_path, *verb, "--help")
        assert r.returncode == 0 and r.stdout.startswith("usage: seqorch hosts")
    assert run_hosts(tmp_path, "frobnicate").returncode == 2
    assert run_hosts(tmp_path, "trust").returncode == 2
    assert run_hosts(tmp_path, "list", "--hosts", "all").returncode == 2
    r = run_hosts(tmp_path, "trust", "nosuch")
    assert r.returncode == 2 and 'no host "nosuch"' in r.stderr
    r = run_hosts(tmp_path, "check", "--hosts", "nosuch")
    assert r.returncode == 2


def tree(root):
    """{relative path: (mode, mtime_ns)} of every file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            st = os.stat(os.path.join(d, f))
            out[os.path.relpath(os.path.join(d, f), root)] = (
                st.st_mode & 0o7777, st.st_mtime_ns)
    return out


def test_run_over_ssh_uploads_builds_and_measures(tmp_path, sshd_factory):
    servers = [sshd_factory("a"), sshd_factory("b")]
    write_hosts_toml(tmp_path / "hosts.toml",
                     {s.name: s.host_entry(cpu=i)
                      for i, s in enumerate(servers)})
    cmd = [str(SEQORCH), "run", "--study", "sha3", "--hosts", "all",
           "--variants", "c-fused", "--steps", "2000", "--samples", "2"]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "results.db"
    rows = query(db, "SELECT host, digest, valid FROM samples")
    assert {h for h, _, _ in rows} == {"a", "b"}
    assert all(d == sha3_chain(2000) and v == 1 for _, d, v in rows)
    assert query(db, "SELECT DISTINCT status FROM builds") == [("ok",)]
    before = {s.name: tree(s.workdir) for s in servers}
    for s in servers:
        files = before[s.name]
        # Uploaded over SFTP: renamed into place, no temporary left.
        assert any(f.startswith("src/") for f in files)
        assert not [f for f in files if ".tmp-" in f]
    # A second run finds everything in place: nothing is written again.
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    for s in servers:
        after = tree(s.workdir)
        assert {f: v for f, v in after.items() if f.startswith("src/")} == \
            {f: v for f, v in before[s.name].items() if f.startswith("src/")}


# A small C program that drives the transport API (conn.h) directly, one
# request per stdin line, so the contracts the runner relies on (exit
# status, signals, timeouts, stderr bounds, aborts, uploads) are checked on
# a real sshd without going through a command.
DRIVER_C = r"""
#include "conn.h"
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int abort_after;

static int
out_cb(void *arg, const char *buf, size_t len)
{
	fwrite(buf, 1, len, arg);
	return abort_after ? 42 : 0;
}

static long long
ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int
main(int argc, char **argv)
{
	struct config *cfg;
	struct so_err err = { 0 };
	struct conn *c;
	char line[4096], *out, *p;
	size_t outlen;
	long long t;

	(void)argc;
	if (config_load(argv[1], NULL, &cfg, &err) != 0 ||
	    conn_open(&cfg->hosts[0], 0, &c, &err) != 0) {
		printf("open failed: %s\n", err.msg);
		return 1;
	}
	printf("ready %s\n", c->workdir);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) != NULL) {
		char op[16], errbuf[4096] = "";
		int a, b, n = 0, status = -1, rc;
		volatile sig_atomic_t stop = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%15s %i %i %n", op, &a, &b, &n) != 3)
			return 2;
		err.msg[0] = '\0';
		t = ms();
		if (strcmp(op, "put") == 0) {
			/* put MODE SIZE PATH: SIZE bytes of a pattern. */
			char *data = malloc((size_t)b + 1);
			int i;

			for (i = 0; i < b; i++)
				data[i] = (char)('a' + i % 26);
			if (asprintf(&p, "%s/%s", c->workdir, line + n) < 0)
				return 2;
			rc = conn_put(c, p, data, (size_t)b, a, &err);
			free(p);
			free(data);
		} else {
			/* exec|abort|stop TIMEOUT_MS ERRLEN COMMAND */
			FILE *f = open_memstream(&out, &outlen);
			struct exec_io io = { .on_stdout = out_cb, .arg = f,
			    .errbuf = errbuf, .errlen = (size_t)b,
			    .timeout_ms = a, .stop = &stop };

			abort_after = strcmp(op, "abort") == 0;
			stop = strcmp(op, "stop") == 0;
			rc = conn_exec(c, line + n, &io, &status, &err);
			fclose(f);
			for (p = out; *p; p++)
				if (*p == '\n')
					*p = '|';
			printf("out=%s\terr=%s\t", out, errbuf);
			free(out);
		}
		printf("rc=%d\tstatus=%d\tms=%lld\tmsg=%s\n", rc, status,
		    ms() - t, err.msg);
		fflush(stdout);
	}
	conn_close(c);
	config_free(cfg);
	return 0;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """The transport driver, linked against the coordinator's objects."""
    root = SEQORCH.parent
    d = tmp_path_factory.mktemp("driver")
    (d / "driver.c").write_text(DRIVER_C)
    # The coordinator's modules as make built them (libseqorch.a), with
    # the flags they were built with when those matter to the link (make
    # sanitize's).
    subprocess.run(["cc", *os.environ.get("SEQORCH_TEST_CFLAGS", "").split(),
                    "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror",
                    f"-I{root / 'orchestrator'}", f"-I{root / 'kernels'}",
                    "-o", str(d / "driver"), str(d / "driver.c"),
                    str(root / "build/libseqorch.a"), "-lsqlite3", "-lcjson",
                    "-lcrypto", "-lssh2", "-lcurl", "-lpthread", "-lstdc++"],
                   check=True)
    return d / "driver"


class Transport:
    """One connection through the driver; ask() sends one request."""

    def __init__(self, driver, config, env=None):
        self.p = subprocess.Popen([str(driver), str(config)],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        first = self.p.stdout.readline().split()
        assert first[0] == "ready", first
        self.workdir = Path(first[1])

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        reply = self.p.stdout.readline().rstrip("\n")
        fields = dict(f.split("=", 1) for f in reply.split("\t"))
        fields["rc"] = int(fields["rc"])
        fields["status"] = int(fields["status"])
        fields["ms"] = int(fields["ms"])
        return fields

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=30) == 0


SO_EIO, SO_EINVAL, SO_ESSH, SO_ETIMEOUT, SO_EINTR = -2, -4, -6, -8, -11


def test_transport_exec_contract(tmp_path, sshd_factory, driver):
    s = sshd_factory("a")
    write_hosts_toml(tmp_path / "hosts.toml", {"a": s.host_entry()})
    t = Transport(driver, tmp_path / "hosts.toml")
    r = t.ask("exec 0 16 echo out; echo 0123456789abcdefXYZ >&2; exit 7")
    assert (r["rc"], r["status"], r["out"]) == (0, 7, "out|")
    assert r["err"] == "0123456789abcde"     # bounded to errlen - 1
    assert t.ask("exec 0 64 kill -TERM $$")["status"] == 128 + 15
    # Standard input is empty, so this cannot wait for input.
    r = t.ask("exec 5000 64 cat; echo done")
    assert (r["rc"], r["out"]) == (0, "done|")
    # A timeout cuts the command off but keeps the connection.
    r = t.ask("exec 1000 64 sleep 5")
    assert r["rc"] == SO_ETIMEOUT and 900 <= r["ms"] < 3000, r
    assert "timed out after 1000 ms" in r["msg"]
    assert t.ask("exec 0 64 echo again")["out"] == "again|"
    # The output callback can stop a command that floods.
    r = t.ask("abort 0 64 yes")
    assert r["rc"] == 42 and r["out"].startswith("y|y|")
    r = t.ask("stop 0 64 sleep 5")
    assert r["rc"] == SO_EINTR and r["ms"] < 2000
    assert t.ask("exec 0 64 echo still")["out"] == "still|"
    # Arguments are one shell word each; /bin/sh runs the line.
    r = t.ask("exec 0 64 printf '%s|' \"$0\" 'a b' \"c'd\"")
    assert r["out"] == "/bin/sh|a b|c'd|"
    t.close()


def test_transport_put_contract(tmp_path, sshd_factory, driver):
    # An empty workdir: the test lists what the puts left there.
    s = sshd_factory("a", prebuilt=False)
    write_hosts_toml(tmp_path / "hosts.toml", {"a": s.host_entry()})
    t = Transport(driver, tmp_path / "hosts.toml")
    big = 3 * 1024 * 1024 + 17
    r = t.ask(f"put 0751 {big} f.bin")
    assert r["rc"] == 0, r
    f = s.workdir / "f.bin"
    assert f.stat().st_size == big and f.stat().st_mode & 0o7777 == 0o751
    assert f.read_bytes()[:28] == b"abcdefghijklmnopqrstuvwxyzab"
    # Replacing an existing file, with another mode.
    assert t.ask("put 0640 5 f.bin")["rc"] == 0
    assert f.read_bytes() == b"abcde" and f.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(s.workdir)) == ["f.bin"]
    r = t.ask("put 0644 1 nodir/f")
    assert r["rc"] == SO_EIO
    assert f'cannot create "{s.workdir}/nodir/f": no such file' in r["msg"]
    r = t.ask("put 0644 1 ../escape")
    assert r["rc"] == SO_EINVAL and "outside workdir" in r["msg"]
    assert not (s.workdir.parent / "escape").exists()
    assert sorted(os.listdir(s.workdir)) == ["f.bin"]
    t.close()


def test_transport_dropped_connection(tmp_path, sshd_factory, driver):
    s = sshd_factory("a")
    write_hosts_toml(tmp_path / "hosts.toml", {"a": s.host_entry()})
    t = Transport(driver, tmp_path / "hosts.toml")
    threading.Timer(1, s.kill_sessions).start()
    r = t.ask("exec 0 64 sleep 10")
    assert r["rc"] == SO_ESSH and r["ms"] < 5000, r
    assert f"connection to {s.address}:{s.port} lost" in r["msg"]
    r = t.ask("exec 0 64 echo x")
    assert r["rc"] == SO_ESSH and "reconnect" in r["msg"]
    t.close()


def chatty_login(s, first, sftp_too=True):
    """Make s's login shell run shell code `first` before every command,
    as a .zshenv or .bashrc that prints would (sshd's ForceCommand runs it
    through the login shell, then the command).  sftp_too: the SFTP
    server is started by that shell too, as an external sftp-server is."""
    sftp = ('case "$SSH_ORIGINAL_COMMAND" in internal-sftp) '
            "exec /usr/lib/openssh/sftp-server;; esac")
    with open(s.dir / "sshd_config", "a") as f:
        f.write("ForceCommand " + (f"{first}; {sftp}" if sftp_too else
                                   f"{sftp}; {first}") +
                '; eval "$SSH_ORIGINAL_COMMAND"\n')
    return s.start()


def test_login_shell_output_before_the_command(tmp_path, sshd_factory,
                                               driver):
    """A banner printed by the login shell's startup files is not the
    command's output; where it breaks SFTP, or the shell never runs the
    command, the check says so."""
    quiet_sftp = chatty_login(sshd_factory("a", start=False),
                              "echo Welcome to a", sftp_too=False)
    write_hosts_toml(tmp_path / "a.toml", {"a": quiet_sftp.host_entry()})
    t = Transport(driver, tmp_path / "a.toml")
    assert t.ask("exec 0 64 echo out")["out"] == "out|"
    t.close()
    b = chatty_login(sshd_factory("b", start=False), "echo Welcome to b")
    c = chatty_login(sshd_factory("c", start=False),
                     "echo This account is not available; exit 1")
    write_hosts_toml(tmp_path / "hosts.toml",
                     {"b": b.host_entry(), "c": c.host_entry()})
    r = run_hosts(tmp_path, "check")
    assert r.returncode == 1
    assert ('host "b": cannot start sftp: the login shell prints "Welcome '
            'to b" before every command, which corrupts the sftp stream'
            in block(r.stdout, "b")), r.stdout
    assert ('host "c": the command did not start: the login shell exited '
            'with status 1 before running it (it printed "This account is '
            'not available")' in block(r.stdout, "c")), r.stdout


# A German user's locale, as PAM (/etc/default/locale), the ssh client's
# SendEnv or a .zshenv gives it to every login.
GERMAN = {"LANG": "de_DE.UTF-8", "LANGUAGE": "de:en",
          "LC_MESSAGES": "de_DE.UTF-8", "LC_NUMERIC": "de_DE.UTF-8"}


def test_commands_run_in_the_c_locale(tmp_path, sshd_factory, driver):
    """Whatever locale the login gives, a command runs under LC_ALL=C and
    no other locale variable, on an ssh host (sshd's SetEnv here) as on
    the local one (the coordinator's own environment): the compilers,
    lscpu and tr then print what the coordinator parses.  Paths that are
    not ASCII still work."""
    s = sshd_factory("a", start=False)
    with open(s.dir / "sshd_config", "a") as f:
        f.write("SetEnv " + " ".join(f"{k}={v}" for k, v in GERMAN.items())
                + "\n")
    s.start()
    write_hosts_toml(tmp_path / "ssh.toml", {"a": s.host_entry()})
    write_hosts_toml(tmp_path / "local.toml", {"l": {
        "transport": "local", "workdir": str(tmp_path / "wörk")}})
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("LC_") and k not in GERMAN}
    env.update(GERMAN)
    for config in ("ssh.toml", "local.toml"):
        t = Transport(driver, tmp_path / config, env=env)
        r = t.ask("exec 0 64 env | grep -E '^(LANG|LANGUAGE|LC_[A-Z]+)=' "
                  "| sort")
        assert r["out"] == "LC_ALL=C|", (config, r)
        r = t.ask(f"exec 0 64 cd '{t.workdir}' && mkdir -p 'ü' && cd 'ü' "
                  "&& pwd -P")
        assert r["out"] == f"{t.workdir}/ü|", (config, r)
        t.close()
