#!/bin/sh
# The command reference and the man page are generated from the help texts
# compiled into seqorch (each command's struct cmd_entry), so they cannot
# drift from the program:
#
#   sh docs/gen-help.sh ./seqorch markdown > docs/commands.md
#   sh docs/gen-help.sh ./seqorch man > seqorch.1
#
# `make docs` rewrites docs/commands.md; `make` builds build/seqorch.1 and
# `make install` installs it; tests/test_23_help.py checks both are current.
set -eu
bin=$1
what=$2

commands() {
	"$bin" --help | awk '/^commands:/ { on = 1; next }
	    on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

summary() {
	"$bin" --help | awk -v c="$1" '$1 == c { $1 = ""; sub(/^ +/, ""); print;
	    exit }'
}

# Troff treats a leading . or ' as a request and \ as an escape.
man_text() {
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

case $what in
markdown)
	echo "# seqorch commands"
	echo
	echo "Generated from \`seqorch COMMAND --help\` by docs/gen-help.sh"
	echo "(\`make docs\`); edit the help text in orchestrator/cmd-*.c, not"
	echo "this file."
	echo
	echo '```'
	"$bin" --help
	echo '```'
	for c in $(commands); do
		echo
		echo "## seqorch $c"
		echo
		echo "$(summary "$c")."
		echo
		echo '```'
		"$bin" "$c" --help
		echo '```'
	done
	;;
man)
	version=$("$bin" --version 2>/dev/null | awk '{ print $NF; exit }')
	echo ".TH SEQORCH 1 \"\" \"seqorch ${version:-}\" \"User Commands\""
	echo ".SH NAME"
	printf '%s\n' 'seqorch \- measure strictly sequential work on many hosts'
	echo ".SH SYNOPSIS"
	echo ".B seqorch"
	echo ".I COMMAND"
	printf '%s\n' '[\fIOPTIONS\fR]'
	echo ".SH DESCRIPTION"
	echo "seqorch connects to the hosts of hosts.toml over SSH, builds its"
	echo "agent there, runs sequential-work studies in serialized"
	echo "measurement windows and keeps every sample, digest, compiler and"
	echo "host fact in results.db."
	echo ".SH COMMANDS"
	for c in $(commands); do
		echo ".SS $c"
		summary "$c" | man_text
		echo ".PP"
		echo ".nf"
		"$bin" "$c" --help | man_text
		echo ".fi"
	done
	echo ".SH FILES"
	echo ".TP"
	echo ".I hosts.toml"
	echo "the host inventory (docs/hosts.md)"
	echo ".TP"
	echo ".I results.db"
	echo "every run, sample and host fact (docs/results-db.md)"
	echo ".TP"
	echo ".I artifacts/"
	echo "beside results.db: binaries, raw output, logs (docs/provenance.md)"
	echo ".SH ENVIRONMENT"
	echo ".TP"
	echo ".B SEQORCH_TRACE"
	echo "1 prints every operation on every host (connect, remote command,"
	echo "upload, read) with its time and outcome to stderr; an absolute"
	echo "path appends the lines to that file instead (docs/usage.md)."
	echo ".TP"
	echo ".BI SEQORCH_URL_ NAME"
	echo "replaces the download URL of the upstream artifact NAME, upper"
	echo "case with - as _ (SEQORCH_URL_RANDOMX): a mirror or a local"
	echo "server; the pinned SHA-256 is checked all the same."
	echo ".TP"
	echo ".B HOME"
	echo "where ~ in hosts.toml and ~/.ssh (config, known_hosts, keys) are"
	echo "found; the password database when unset."
	echo ".TP"
	echo ".B SSH_AUTH_SOCK"
	echo "the ssh-agent tried for public-key authentication."
	echo ".TP"
	echo ".B TERM"
	echo "with stderr a terminal and TERM set and not dumb, run redraws"
	echo "one live line per host and the whole run's progress."
	echo ".TP"
	echo '.BR OPENSSL_ia32cap ", " OPENSSL_armcap'
	echo "read by the agent's libcrypto; set them with run --openssl-cap"
	echo "(an inherited value is recorded as a warning)."
	echo ".TP"
	echo '.BR SEQORCH_SYSFS_ROOT ", " SEQORCH_TEST_COUNTERS'
	echo "test seams of the agent (a recorded /sys and /proc tree, software"
	echo "counters); never set them for a real measurement."
	echo ".SH EXIT STATUS"
	echo "0 ok, 1 run failed, partial or invalid samples, 2 usage or"
	echo "config error, 3 database error, 130 interrupted."
	echo ".SH SEE ALSO"
	echo "docs/usage.md and the other files under docs/ in the source tree."
	echo ".PP"
	echo ".BR sqlite3 (1),"
	echo ".BR ssh (1)"
	;;
*)
	echo "usage: gen-help.sh SEQORCH markdown|man" >&2
	exit 2
	;;
esac
