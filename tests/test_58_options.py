"""Options and arguments as the command table declares them (issue 25
item 4): the number of arguments each command takes, checked in one place
with one message, the hosts verbs' own options, and the exit codes the
commands choose for what hostsel and hosts check return."""
import pytest

from conftest import ROOT, seqorch, write_hosts


def test_argument_counts(tmp_path):
    for argv, name in [(("studies", "extra"), "studies"),
                       (("gc", "a", "b"), "gc"),
                       (("hosts", "list", "x"), "hosts list"),
                       (("hosts", "x1"), None),
                       (("report", "7"), "report"),
                       (("compare", "1", "2", "3"), "compare")]:
        r = seqorch(tmp_path, *argv)
        assert r.returncode == 2, (argv, r.stderr)
        if name is not None:
            extra = "3" if argv[0] == "compare" else argv[-1] if \
                argv[0] != "gc" else "a"
            assert r.stderr == (f'seqorch: unexpected argument "{extra}" '
                                f'(see "seqorch {name} --help")\n'), r.stderr
    r = seqorch(tmp_path, "hosts", "x1")
    assert r.stderr == ('seqorch: hosts: unknown verb "x1" (valid: list, '
                        'check, trust)\n')
    for argv, name, args in [(("verify",), "verify", "BUNDLE"),
                             (("import", "--pubkey", "k"), "import",
                              "BUNDLE"),
                             (("hosts", "trust"), "hosts trust", "NAME")]:
        r = seqorch(tmp_path, *argv)
        assert (r.returncode, r.stderr) == (
            2, f'seqorch: {name}: expected {args} (see "seqorch {name} '
               f'--help")\n'), (argv, r.stderr)
    # BUNDLE given, --pubkey missing: the bundle commands' own message.
    r = seqorch(tmp_path, "verify", "b.tar")
    assert r.returncode == 2 and "expected BUNDLE and --pubkey PUB" in \
        r.stderr
    assert list(tmp_path.iterdir()) == []


def test_hosts_verbs_take_their_own_options(tmp_path, workdir):
    write_hosts(tmp_path / "hosts.toml", workdir,
                '\n[hosts.genoa]\naddress = "127.0.0.9"\nport = 2222\n')
    # -v is hosts list's, the default verb's; --verbose is the same.
    short = seqorch(tmp_path, "hosts", "-v")
    long = seqorch(tmp_path, "hosts", "list", "--verbose")
    assert short.returncode == 0 and short.stdout == long.stdout
    assert "\ngenoa:\n  address          127.0.0.9" in long.stdout
    assert "port             2222" in long.stdout
    for verb, opt in [("check", "-v"), ("trust", "--parallel=2"),
                      ("list", "--hosts=all")]:
        r = seqorch(tmp_path, "hosts", verb, opt, "genoa")
        assert r.returncode == 2, r.stderr
        assert r.stderr == (f'seqorch: unknown option "{opt.split("=")[0]}" '
                            f'(see "seqorch hosts {verb} --help")\n')
    # Without a verb, an unknown option points at the overview.
    r = seqorch(tmp_path, "hosts", "--parallel", "2")
    assert r.stderr == ('seqorch: unknown option "--parallel" (see '
                        '"seqorch hosts --help")\n')
    overview = seqorch(tmp_path, "hosts", "--help").stdout
    assert overview == seqorch(tmp_path, "help", "hosts").stdout
    assert overview.startswith("usage: seqorch hosts [list]")
    for verb in ("list", "check", "trust"):
        r = seqorch(tmp_path, "hosts", verb, "--help")
        assert r.returncode == 0 and r.stdout != overview
        assert "  --config FILE" in r.stdout


def test_host_selection_exit_codes(tmp_path, workdir):
    """hostsel_select returns SO_EINVAL for a selection that names no host:
    the commands exit 2 with its message."""
    write_hosts(tmp_path / "hosts.toml", workdir)
    for argv in (("deploy",), ("hosts", "check"),
                 ("run", "--study", "sha3")):
        r = seqorch(tmp_path, *argv, "--hosts", "nosuch")
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stderr.startswith("seqorch: ") and "nosuch" in r.stderr
        assert "\n" not in r.stderr.rstrip("\n"), r.stderr


# A first value each option takes, by what completion offers for it, else
# by name (values a command checks as it reads them).
VALUE = {"run": "1", "study": "sha3", "hosts": "local", "variant": "c-fused"}
VALUE_OF = {"--steps": "1000", "--samples": "2", "--parallel": "2",
            "--seed": "00" * 32, "--max-cv": "5", "--max-samples": "5",
            "--warmup": "1", "--lease-expiry": "60", "--db-wait": "5", "--msg-len": "64",
            "--fail-slower": "5", "--attempts": "2", "--sha256": "0" * 64,
            "--reproduce": "sha3", "--reference": "genoa",
            "--url": "https://127.0.0.1:9/", "--openssl-cap-clear": "AVX2"}


def valued_options():
    """(command words, option, its first value) for every option of every
    command that takes a value, as the command table declares them."""
    table = seqorch(ROOT, "help", "--table").stdout
    for line in table.splitlines():
        if not line.startswith("option\t"):
            continue
        _, cmd, opt, _, arg, value, words = line.split("\t")
        if arg != "-":
            first = words.split()[0] if value == "words" else \
                VALUE.get(value, VALUE_OF.get(opt, "x"))
            yield cmd.split(), opt, first


@pytest.mark.parametrize("cmd, opt, first", list(valued_options()),
                         ids=lambda v: v if isinstance(v, str) else
                         " ".join(v))
def test_an_option_given_twice_is_refused(tmp_path, cmd, opt, first):
    """Every option with a value takes one: a second is refused, naming
    both, exit 2, before anything is done.  Before, the last one was
    taken silently (compare --baseline 11 --baseline 12 compared with
    12)."""
    r = seqorch(tmp_path, *cmd, opt, first, opt, "other")
    assert (r.returncode, r.stderr) == (2, (
        f'seqorch: option "{opt}" is given twice ("{first}" and "other"): '
        "it takes one value\n")), r.stderr
    assert list(tmp_path.iterdir()) == []
