"""The command reference (docs/commands.md), the man page and the bash
completion all come from seqorch itself: the committed reference must be
what docs/gen-help.sh writes now, the man page must render, and completion
must offer commands, options, studies, variants and hosts from hosts.toml."""
import subprocess

from conftest import ROOT, SEQORCH, write_hosts


def gen(what):
    return subprocess.run(["sh", str(ROOT / "docs" / "gen-help.sh"),
                           str(SEQORCH), what], check=True,
                          capture_output=True, text=True).stdout


def test_command_reference_is_current():
    assert (ROOT / "docs" / "commands.md").read_text() == gen("markdown"), \
        "docs/commands.md is stale: run `make docs`"


def test_every_command_is_in_the_reference_and_the_man_page():
    out = subprocess.run([str(SEQORCH), "--help"], capture_output=True,
                         text=True).stdout
    names = [line.split()[0] for line in out.split("commands:")[1]
             .split("\n\n")[0].splitlines() if line.strip()]
    assert "run" in names and "report" in names
    md, man = gen("markdown"), gen("man")
    for n in names:
        assert f"## seqorch {n}\n" in md
        assert f".SS {n}\n" in man
    r = subprocess.run(["man", "--warnings", "-l", "-"], input=man,
                       capture_output=True, text=True,
                       env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and "seqorch - measure strictly" in r.stdout
    assert r.stderr == "", r.stderr


def complete(cwd, *words):
    line = " ".join(words)
    script = (f"source {ROOT / 'docs' / 'completion.bash'}\n"
              f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
              "_seqorch; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                       cwd=cwd, capture_output=True, text=True,
                       env={"PATH": f"{ROOT}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return sorted(filter(None, r.stdout.splitlines()))


def test_bash_completion(tmp_path):
    write_hosts(tmp_path / "hosts.toml", tmp_path / "wd",
                '\n[hosts.genoa]\naddress = "127.0.0.9"\n'
                'groups = ["cloud"]\n')
    assert "run" in complete(tmp_path, "seqorch", "r")
    assert complete(tmp_path, "seqorch", "rep") == ["report"]
    assert "--steps" in complete(tmp_path, "seqorch", "run", "--st")
    assert "sha3" in complete(tmp_path, "seqorch", "run", "--study", "sh")
    assert complete(tmp_path, "seqorch", "run", "--study", "sha3,sh") == \
        sorted(f"sha3,{s}" for s in complete(tmp_path, "seqorch", "run",
                                             "--study", "sh"))
    assert "c-fused" in complete(tmp_path, "seqorch", "run", "--variants",
                                 "c-")
    hosts = complete(tmp_path, "seqorch", "run", "--hosts", "")
    assert {"all", "local", "genoa", "@cloud"} <= set(hosts), hosts
    assert complete(tmp_path, "seqorch", "hosts", "tr") == ["trust"]
    assert complete(tmp_path, "seqorch", "hosts", "trust", "ge") == ["genoa"]
    assert complete(tmp_path, "seqorch", "report", "--format", "h") == \
        ["html"]


def command_names():
    out = subprocess.run([str(SEQORCH), "--help"], capture_output=True,
                         text=True).stdout
    return [line.split()[0] for line in out.split("commands:")[1]
            .split("\n\n")[0].splitlines() if line.strip()]


def test_every_command_parses_options_alike(tmp_path):
    """One option parser: --help, an unknown option, a flag given a value
    and an option without its value get the same handling and message in
    every command, and nothing is created on the way."""
    names = command_names()
    assert len(names) >= 14
    for n in names:
        r = subprocess.run([str(SEQORCH), n, "--help"], cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith(
            f"usage: seqorch {n}"), (n, r.stdout, r.stderr)
        r = subprocess.run([str(SEQORCH), n, "--bogus=1\x1b[2J"],
                           cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 2, (n, r.stderr)
        assert r.stderr == (f'seqorch: unknown option "--bogus" (see '
                            f'"seqorch {n} --help")\n'), (n, r.stderr)
        r = subprocess.run([str(SEQORCH), n, "--help=yes"], cwd=tmp_path,
                           capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (
            2, 'seqorch: option "--help" takes no value\n'), n
    for n, opt in [("run", "--steps"), ("report", "--db"), ("export", "-o"),
                   ("gc", "--db"), ("hosts", "--config"),
                   ("deploy", "--parallel"), ("fetch", "--study")]:
        r = subprocess.run([str(SEQORCH), n, opt], cwd=tmp_path,
                           capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (
            2, f'seqorch: option "{opt}" needs a value\n'), (n, r.stderr)
    assert list(tmp_path.iterdir()) == []
