# bash completion for seqorch: commands, their options, study names,
# variant names (of the --study given), run ids (from results.db, or --db
# FILE) and host names (from hosts.toml, or --config FILE).
# Everything is asked of seqorch itself, so it never goes stale.
# Installed by `make install` as share/bash-completion/completions/seqorch;
# or: source docs/completion.bash

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

_seqorch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local bin=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} config db list prefix
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		list=$("$bin" --help 2>/dev/null | awk '/^commands:/ { on = 1;
		    next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
		COMPREPLY=($(compgen -W "$list" -- "$cur"))
		return
	fi
	config=$(_seqorch_words --config)
	db=$(_seqorch_words --db)
	case $prev in
	--study)
		list=$("$bin" studies 2>/dev/null | awk -F: '/^[a-z0-9-]+:/ {
		    print $1 }')
		;;
	--variants)
		# The variants of the --study on the line (each of a comma
		# list), else of every study.
		list=$("$bin" studies 2>/dev/null | awk -v s="$(_seqorch_words \
		    --study)" 'BEGIN { n = split(s, w, ","); for (i = 1; i <= n;
		    i++) want[w[i]] = 1 } /^[a-z0-9-]+:/ { on = s == "" ||
		    (substr($1, 1, length($1) - 1) in want); next }
		    on && /^  [a-z0-9-]+ / && $1 != "unit" { print $1 }' |
		    sort -u)
		;;
	--run | --resume | --baseline)
		# The newest run ids, as seqorch names them for an unknown one.
		list=$("$bin" report --run 999999999999 \
		    ${db:+--db "$db"} 2>&1 >/dev/null |
		    sed -n 's/.*(latest: \(.*\))$/\1/p' | tr -d ,)
		;;
	--hosts)
		list="all $("$bin" hosts list ${config:+--config "$config"} \
		    2>/dev/null | awk 'NR > 1 { print $1; n = split($7, g, ",");
		    for (i = 1; i <= n; i++) if (g[i] != "-") print "@" g[i] }' |
		    sort -u)"
		;;
	--format)
		# The command's renderer table, as its unknown --format names it.
		list=$("$bin" "$cmd" --format '' 2>&1 >/dev/null |
		    sed -n 's/.*unknown --format "" (\(.*\))$/\1/p' | tr -d ,)
		;;
	--db | --config | --bundle | --sign | --pubkey | --token-file | \
	    --cacert | -o | --output | --ssh-config | --cache)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	*)
		if [[ $cmd == hosts && COMP_CWORD -eq 2 && $cur != -* ]]; then
			COMPREPLY=($(compgen -W "list check trust" -- "$cur"))
			return
		fi
		if [[ $cmd == hosts && $prev == trust ]]; then
			list=$("$bin" hosts list ${config:+--config "$config"} \
			    2>/dev/null | awk 'NR > 1 { print $1 }')
			COMPREPLY=($(compgen -W "$list" -- "$cur"))
			return
		fi
		if [[ $cur == -* ]]; then
			list=$("$bin" "$cmd" --help 2>/dev/null |
			    grep -o -- '--[a-z][a-z-]*' | sort -u)
			COMPREPLY=($(compgen -W "$list" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
		;;
	esac
	# Comma lists: complete the last element.
	prefix=
	if [[ $cur == *,* ]]; then
		prefix=${cur%,*},
		cur=${cur##*,}
	fi
	COMPREPLY=($(compgen -P "$prefix" -W "$list" -- "$cur"))
}

complete -F _seqorch seqorch
