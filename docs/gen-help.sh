#!/bin/sh
# The command reference, the man page and the bash completion are generated
# from the command table compiled into seqorch (each command's struct
# cmd_entry: its usage, its options and their help, its arguments), so they
# cannot drift from the program:
#
#   sh docs/gen-help.sh ./seqorch markdown > docs/commands.md
#   sh docs/gen-help.sh ./seqorch man > seqorch.1
#   sh docs/gen-help.sh ./seqorch completion > seqorch.bash
#
# `make docs` rewrites docs/commands.md; `make` builds build/seqorch.1 and
# build/seqorch.bash, and `make install` installs them;
# tests/test_23_help.py checks all three are current.
set -eu
bin=$1
what=$2

# `seqorch help --table`: tab-separated command, verb, args and option
# lines (cmd.h, cmd_print_table).
table() {
	"$bin" help --table
}

commands() {
	table | awk -F '\t' '$1 == "command" { print $2 }'
}

# The verbs of command $1, if it has any.
verbs() {
	table | awk -F '\t' -v c="$1" '$1 == "verb" && $2 == c { print $3 }'
}

summary() {
	table | awk -F '\t' -v c="$1" '$1 == "command" && $2 == c {
	    print $3; exit } $1 == "verb" && $2 " " $3 == c { print $4; exit }'
}

# Case patterns joined by " | " folded before 80 columns (tabs of 8), the
# continuation indented four more.
fold_case() {
	awk '{ if (length($0) + 7 <= 80) { print; next }
	    n = split($0, w, / \| /); line = w[1]
	    for (i = 2; i <= n; i++) {
		if (length(line " | " w[i]) + 7 + 2 > 80) { print line " | \\"
		    line = "\t    " w[i] } else line = line " | " w[i] }
	    print line }'
}

# list="..." lines at $1 tabs folded before 80 columns, inside the quotes.
fold_list() {
	awk -v t="$1" '{ if (length($0) + 7 * t <= 80) { print; next }
	    n = split($0, w, / /); line = w[1]; pre = ""
	    for (i = 0; i < t; i++) pre = pre "\t"
	    for (i = 2; i <= n; i++) {
		if (length(line " " w[i]) + 7 * t + 2 > 80) { print line " \\"
		    line = pre "    " w[i] } else line = line " " w[i] }
	    print line }'
}

# Troff treats a leading . or ' as a request and \ as an escape.
man_text() {
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

case $what in
usage-table)
	# docs/usage.md's table of commands, between its markers (make docs).
	echo '| command | what it does |'
	echo '| --- | --- |'
	table | awk -F '\t' '$1 == "command" {
	    printf "| `seqorch %s` | %s |\n", $2, $3 }'
	;;
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
		for v in "" $(verbs "$c"); do
			echo
			echo "## seqorch $c${v:+ $v}"
			echo
			echo "$(summary "$c${v:+ $v}")."
			echo
			echo '```'
			"$bin" "$c" $v --help
			echo '```'
		done
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
		for v in "" $(verbs "$c"); do
			echo ".SS $c${v:+ $v}"
			summary "$c${v:+ $v}" | man_text
			echo ".PP"
			echo ".nf"
			"$bin" "$c" $v --help | man_text
			echo ".fi"
		done
	done
	echo ".SH FILES"
	echo ".TP"
	echo ".I hosts.toml"
	echo "the host inventory (docs/hosts.md): --config FILE, else"
	echo "SEQORCH_CONFIG, else ./hosts.toml, else"
	echo "~/.config/seqorch/hosts.toml (under XDG_CONFIG_HOME when set),"
	echo "which seqorch init writes."
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
	echo ".B SEQORCH_CONFIG"
	echo "the host inventory when --config is not given, before the"
	echo "current directory's hosts.toml (see FILES)."
	echo ".TP"
	echo ".B XDG_CONFIG_HOME"
	echo "an absolute path: the inventory is its seqorch/hosts.toml"
	echo "rather than ~/.config/seqorch/hosts.toml (see FILES)."
	echo ".TP"
	echo ".B HOME"
	echo "where ~ in hosts.toml and ~/.ssh (config, known_hosts, keys) are"
	echo "found; the password database when unset."
	echo ".TP"
	echo ".B SSH_AUTH_SOCK"
	echo "the ssh-agent tried for public-key authentication."
	echo ".TP"
	echo ".B TMPDIR"
	echo "where publish keeps the signed .tar while it sends it (else"
	echo "/tmp), in a file unlinked as soon as it is made."
	echo ".TP"
	echo ".B TERM"
	echo "with stderr a terminal and TERM set and not dumb, run redraws"
	echo "one live line per host and the whole run's progress."
	echo ".TP"
	echo ".B COLUMNS"
	echo "with stdout a terminal, the width text reports fit (else 80);"
	echo "a table wider says so above it."
	echo ".TP"
	echo '.BR OPENSSL_ia32cap ", " OPENSSL_armcap'
	echo "read by the agent's libcrypto; set them with run --openssl-cap"
	echo "(an inherited value is recorded as a warning)."
	echo ".TP"
	echo '.BR SEQORCH_SYSFS_ROOT ", " SEQORCH_TEST_COUNTERS ", " SEQORCH_HANG_FLOOR_MS'
	echo "test seams of the agent (a recorded /sys and /proc tree, software"
	echo "counters, the conductor's hang deadlines in ms); never set them for"
	echo "a real measurement."
	echo ".SH EXIT STATUS"
	echo "0 ok, 1 run failed, partial or invalid samples, 2 usage or"
	echo "config error, 3 database error, 130 interrupted."
	echo ".SH SEE ALSO"
	echo "docs/usage.md and the other files under docs/ in the source tree."
	echo ".PP"
	echo ".BR sqlite3 (1),"
	echo ".BR ssh (1)"
	;;
completion)
	cat <<'EOF'
# bash completion for seqorch: commands, their options, study names,
# variant names (of the --study given), run ids (from results.db, or --db
# FILE) and host names (from hosts.toml, or --config FILE).
# Generated by docs/gen-help.sh from seqorch's command table (`make docs`):
# the commands, options and what each value is come from the struct
# cmd_entry of orchestrator/cmd-*.c, so edit them there, not here.  The
# names themselves are asked of seqorch when completing.
# Installed by `make install` as share/bash-completion/completions/seqorch;
# or: source build/seqorch.bash

_seqorch_words() {
	# The value of an option already on the line, e.g. --config.
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == "$1" ]]; then
			printf '%s\n' "${COMP_WORDS[i + 1]}"
			return
		fi
	done
}

_seqorch_names() {
	# The names a value of kind $1 can be (enum cmd_value in cmd.h).
	local bin=${COMP_WORDS[0]} config db
	config=$(_seqorch_words --config)
	db=$(_seqorch_words --db)
	case $1 in
	study)
		"$bin" studies 2>/dev/null | awk -F: '/^[a-z0-9-]+:/ {
		    print $1 }'
		;;
	variant)
		# The variants of the --study on the line (each of a comma
		# list), else of every study.
		"$bin" studies 2>/dev/null | awk -v s="$(_seqorch_words \
		    --study)" 'BEGIN { n = split(s, w, ","); for (i = 1; i <= n;
		    i++) want[w[i]] = 1 } /^[a-z0-9-]+:/ { on = s == "" ||
		    (substr($1, 1, length($1) - 1) in want); next }
		    on && /^  [a-z0-9-]+ / && $1 != "unit" { print $1 }' |
		    sort -u
		;;
	run)
		# The newest run ids, as seqorch names them for an unknown one.
		"$bin" report --run 999999999999 ${db:+--db "$db"} 2>&1 \
		    >/dev/null | sed -n 's/.*(latest: \(.*\))$/\1/p' | tr -d ,
		;;
	hosts)
		echo all
		"$bin" hosts list ${config:+--config "$config"} 2>/dev/null |
		    awk 'NR > 2 { print $1; n = split($7, g, ",");
		    for (i = 1; i <= n; i++) if (g[i] != "-") print "@" g[i] }' |
		    sort -u
		;;
	host)
		"$bin" hosts list ${config:+--config "$config"} 2>/dev/null |
		    awk 'NR > 2 { print $1 }'
		;;
	esac
}

_seqorch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd=${COMP_WORDS[1]} kind= list prefix
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
EOF
	printf '\t\tlist="%s"\n' "$(commands | tr '\n' ' ' | sed 's/ $//')" |
	    fold_list 2
	cat <<'EOF'
		COMPREPLY=($(compgen -W "$list" -- "$cur"))
		return
	fi
	# help COMMAND [VERB]: the commands, then a command's verbs.
	if [[ $cmd == help ]]; then
		case $COMP_CWORD in
EOF
	printf '\t\t2) list="%s" ;;\n' "$(commands | tr '\n' ' ' | sed 's/ $//')" |
	    fold_list 2
	table | awk -F '\t' '
	    $1 == "verb" { if (!($2 in v)) { order[n++] = $2; v[$2] = $3 }
		else v[$2] = v[$2] " " $3 }
	    END { printf "\t\t3)\n\t\t\tcase ${COMP_WORDS[2]} in\n"
		for (i = 0; i < n; i++)
			printf "\t\t\t%s) list=\"%s\" ;;\n", order[i], v[order[i]]
		printf "\t\t\tesac\n\t\t\t;;\n" }'
	cat <<'EOF'
		esac
		COMPREPLY=($(compgen -W "$list" -- "$cur"))
		return
	fi
	# A command of verbs: complete the verb, then it is the command.
	case $cmd in
EOF
	table | awk -F '\t' '
	    $1 == "verb" { if (!($2 in v)) { order[n++] = $2; v[$2] = $3 }
		else v[$2] = v[$2] " " $3 }
	    END { for (i = 0; i < n; i++) { c = order[i]; split(v[c], w, " ")
		printf "\t%s)\n", c
		printf "\t\tif ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then\n"
		printf "\t\t\tCOMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n", v[c]
		printf "\t\t\treturn\n\t\tfi\n"
		printf "\t\tcase ${COMP_WORDS[2]} in\n"
		gsub(/ /, " | ", v[c])
		printf "\t\t%s) cmd=\"%s ${COMP_WORDS[2]}\" ;;\n", v[c], c
		printf "\t\t*) cmd=\"%s %s\" ;;\n\t\tesac\n\t\t;;\n", c, w[1] } }'
	cat <<'EOF'
	esac
	# The value of an option.
	case "$cmd $prev" in
EOF
	table | awk -F '\t' '
	    BEGIN { nk = 0; nw = 0 }
	    function add(k, p) {
		if (k in pat) pat[k] = pat[k] " | " p
		else { pat[k] = p; keys[nk++] = k } }
	    $1 == "option" && $5 != "-" {
		p = "\"" $2 " " $3 "\""
		if ($4 != "-") p = p " | \"" $2 " " $4 "\""
		if ($6 == "words") { words[nw] = $7; wpat[nw++] = p }
		else add($6, p) }
	    END {
		for (i = 0; i < nk; i++) if (keys[i] != "any")
			printf "\t%s)\n\t\tkind=%s\n\t\t;;\n", pat[keys[i]], keys[i]
		for (i = 0; i < nw; i++)
			printf "\t%s)\n\t\tlist=\"%s\"\n\t\t;;\n", wpat[i], words[i]
		printf "\t%s)\n", pat["any"]
		printf "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
		printf "\t\treturn\n\t\t;;\n" }' | fold_case
	cat <<'EOF'
	*)
		if [[ $cur == -* ]]; then
			# The command's options.
			case $cmd in
EOF
	table | awk -F '\t' '
	    $1 == "args" { order[n++] = $2; o[$2] = "" }
	    $1 == "option" { o[$2] = o[$2] $3 " " }
	    END { for (i = 0; i < n; i++) {
		printf "\t\t\t\"%s\")\n", order[i]
		printf "\t\t\t\tlist=\"%s--help\"\n\t\t\t\t;;\n", o[order[i]] } }' |
	    fold_list 4
	cat <<'EOF'
			esac
			COMPREPLY=($(compgen -W "$list" -- "$cur"))
			return
		fi
		# The command's arguments.
		case $cmd in
EOF
	table | awk -F '\t' '$1 == "args" && $6 != "any" {
	    printf "\t\t\"%s\")\n\t\t\tkind=%s\n\t\t\t;;\n", $2, $6 }'
	cat <<'EOF'
		*)
			COMPREPLY=($(compgen -f -- "$cur"))
			return
			;;
		esac
		;;
	esac
	[[ -n $kind ]] && list=$(_seqorch_names "$kind")
	# Comma lists: complete the last element.
	prefix=
	if [[ $cur == *,* ]]; then
		prefix=${cur%,*},
		cur=${cur##*,}
	fi
	COMPREPLY=($(compgen -P "$prefix" -W "$list" -- "$cur"))
}

complete -F _seqorch seqorch
EOF
	;;
*)
	echo "usage: gen-help.sh SEQORCH markdown|man|completion|usage-table" >&2
	exit 2
	;;
esac
