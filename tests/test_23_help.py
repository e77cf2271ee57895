"""The command reference (docs/commands.md), the man page and the bash
completion (build/seqorch.bash) all come from seqorch's command table: the
committed reference and the built page and completion must be what
docs/gen-help.sh writes now, the man page must render, and completion
must offer commands, options, studies, variants and hosts from hosts.toml."""
import re
import subprocess

from conftest import ROOT, SEQORCH, write_hosts
from lib_common import complete


def gen(what):
    return subprocess.run(["sh", str(ROOT / "docs" / "gen-help.sh"),
                           str(SEQORCH), what], check=True,
                          capture_output=True, text=True).stdout


def test_command_reference_is_current():
    assert (ROOT / "docs" / "commands.md").read_text() == gen("markdown"), \
        "docs/commands.md is stale: run `make docs`"


def test_usage_table_is_generated():
    """docs/usage.md's table listed 11 of 14 commands (issue 32 item 19):
    it is the command table's, between two markers."""
    usage = (ROOT / "docs" / "usage.md").read_text()
    block = usage.split("<!-- generated from the command table by "
                        "docs/gen-help.sh (make docs) -->\n")[1] \
        .split("<!-- end of the generated table -->")[0]
    assert block == gen("usage-table"), \
        "docs/usage.md's table is stale: run `make docs`"
    for name in command_names():
        assert f"| `seqorch {name}` |" in block, name


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


def test_bash_completion(tmp_path):
    write_hosts(tmp_path / "hosts.toml", tmp_path / "wd",
                '\n[hosts.genoa]\naddress = "127.0.0.9"\n'
                'groups = ["cloud"]\n')
    assert "run" in complete(tmp_path, "seqorch", "r")
    assert complete(tmp_path, "seqorch", "rep") == ["report", "reproduce"]
    assert complete(tmp_path, "seqorch", "repo") == ["report"]
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
    # help COMMAND, then the command's verb (issue 32 item 18).
    assert complete(tmp_path, "seqorch", "help", "") == \
        sorted(command_names())
    assert complete(tmp_path, "seqorch", "help", "rep") == \
        ["report", "reproduce"]
    assert complete(tmp_path, "seqorch", "help", "hosts", "t") == ["trust"]
    assert complete(tmp_path, "seqorch", "help", "run", "") == []
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


# --- options declared once (issue 25 item 4) -----------------------------

def table():
    """`seqorch help --table`: the command table gen-help.sh reads."""
    out = subprocess.run([str(SEQORCH), "help", "--table"], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def leaves():
    """{command or "hosts VERB": [(long, short, arg, kind, words)]}."""
    got = {}
    for row in table():
        if row[0] == "args":
            got[row[1]] = []
        elif row[0] == "option":
            got[row[1]].append(tuple(row[2:]))
    return got


def test_man_page_and_completion_are_current():
    assert (ROOT / "build" / "seqorch.1").read_text() == gen("man"), \
        "build/seqorch.1 is stale: run `make`"
    assert (ROOT / "build" / "seqorch.bash").read_text() == \
        gen("completion"), "build/seqorch.bash is stale: run `make`"


def test_verbs_have_their_own_help_in_the_reference():
    """hosts check and hosts trust were missing from docs/commands.md and
    hosts list --verbose was undocumented."""
    md, man = gen("markdown"), gen("man")
    for verb in ("list", "check", "trust"):
        assert f"\n## seqorch hosts {verb}\n" in md
        assert f"\n.SS hosts {verb}\n" in man
    assert "\n  -v, --verbose  " in md
    assert "\n  --parallel N   hosts checked at once (default 16)\n" in md


def option_lines(text):
    """The option lines of a usage: their heads and help, by head."""
    lines = {}
    for line in text.splitlines():
        m = re.match(r"  ((?:-\w, )?--[a-z][a-z0-9-]*(?: \S+)?)  +(\S.*)$", line)
        if m:
            lines[m.group(1)] = m.group(2)
    return lines


def test_every_option_has_a_help_line(tmp_path):
    """Every option cmd_getopt accepts is declared in its command's entry,
    and every declared option has a help line in `seqorch CMD --help`; an
    option line in the help is a declared option, not hand-written text.
    Adding an option without a help line fails here."""
    # The one getopt table is cmd.c's, built from the entries.
    for src in sorted((ROOT / "orchestrator").glob("*.c")):
        if src.name != "cmd.c":
            text = src.read_text()
            assert "getopt_long" not in text and "struct option" not in \
                text, f"{src.name}: options belong in its struct cmd_entry"
    found = leaves()
    assert {"run", "report", "hosts list", "hosts check",
            "hosts trust"} <= set(found)
    for path, opts in found.items():
        assert len(opts) <= 31, path     # cmd.c's MAX_OPTS
        assert len({o[0] for o in opts}) == len(opts), path
        r = subprocess.run([str(SEQORCH), *path.split(), "--help"],
                           cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, (path, r.stderr)
        lines = option_lines(r.stdout)
        heads = set()
        for long, short, arg, kind, words in opts:
            head = (f"{short}, " if short != "-" else "") + long + \
                (f" {arg}" if arg != "-" else "")
            heads.add(head)
            assert lines.get(head, "").strip(), (path, head, r.stdout)
            # Accepted: a value it may refuse, but never as unknown.
            argv = [str(SEQORCH), *path.split(), long] + \
                (["1"] if arg != "-" else []) + ["--help"]
            r2 = subprocess.run(argv, cwd=tmp_path, capture_output=True,
                                text=True)
            assert "unknown option" not in r2.stderr, (argv, r2.stderr)
            assert r2.returncode in (0, 2), (argv, r2.stderr)
        assert set(lines) == heads, (path, set(lines) ^ heads)
    assert list(tmp_path.iterdir()) == []


def test_completion_follows_the_table(tmp_path):
    """Each command's options, and only its own, are offered, as the
    table declares them; --format offers the values its entry lists."""
    for path, opts in leaves().items():
        words = ["seqorch", *path.split(), "--"]
        if path == "hosts list":
            words = ["seqorch", "hosts", "--"]      # the default verb
        assert complete(tmp_path, *words) == sorted(
            [o[0] for o in opts] + ["--help"]), path
    assert complete(tmp_path, "seqorch", "compare", "--format", "") == \
        ["csv", "json", "markdown", "text"]
    assert complete(tmp_path, "seqorch", "hosts", "check", "--p") == \
        ["--parallel"]
    assert complete(tmp_path, "seqorch", "hosts", "trust", "--p") == []
