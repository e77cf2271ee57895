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
	echo ".SH EXIT STATUS"
	echo "0 ok, 1 run failed, partial or invalid samples, 2 usage or"
	echo "config error, 3 database error, 130 interrupted."
	echo ".SH SEE ALSO"
	echo ".BR sqlite3 (1),"
	echo ".BR ssh (1)"
	;;
*)
	echo "usage: gen-help.sh SEQORCH markdown|man" >&2
	exit 2
	;;
esac
