#!/bin/sh
# The one place that turns kernels/ folders into a build.  A study is the
# folder kernels/<study>/ (study.c, reference.c, one folder per variant) and
# its line in kernels/studies.txt; everything below is derived from that
# (kernels/kernel.h documents the layout).  POSIX sh: it also runs on every
# measured host, from agent/build.sh.  Run from the source root:
#
#   sh kernels/registry.sh studies
#       the registered studies, one a line
#   sh kernels/registry.sh manifest [ARCH [nolibs]]
#       one line per variant: study, variant, arch ("any"), flags, libs,
#       tab-separated ("-" for none); only those that build on ARCH if
#       given, and with nolibs only those that need no extra library
#   sh kernels/registry.sh files ARCH [nolibs]
#       the agent's kernel sources for ARCH: study.c, then kernel.c/.S
#       (none of a variant that needs a library SEQORCH_NOLIBS names)
#   sh kernels/registry.sh libs CC CFLAGS DIR
#       whether CC with CFLAGS (split into words) compiles and links each
#       library a variant's libs file names, by its probe: -lNAME's is
#       kernels/libs/NAME.c, built in DIR.  One line per library: the word
#       and "ok", or the word and why not (the compiler's first error),
#       tab-separated.  The lines that are not "ok" are what agent/build.sh
#       passes on as SEQORCH_NOLIBS
#   sh kernels/registry.sh cflags FILE
#       the compiler flags of a kernels/ file: the -D naming its one
#       definition, and for a variant's files its `flags`
#   sh kernels/registry.sh agent ARCH [nolibs]
#       C source of the agent's table of studies and variants; a variant
#       that needs a library SEQORCH_NOLIBS names is in it without its
#       kernel, with the reason it is skipped
#   sh kernels/registry.sh coordinator
#       C source of the coordinator's table of studies, references and
#       every variant of every architecture, and of the studies' artifacts
#   sh kernels/registry.sh arch TARGET
#       the architecture of a `cc -dumpmachine` target, as variants' `arch`
#       files name it: Apple clang's "arm64-apple-darwin24.1.0" is aarch64
#       (ARCH_ALIASES; the coordinator's table arch_aliases comes from it)
#   sh kernels/registry.sh groups
#       the study groups (kernels/groups.txt), one a line: the group's
#       name, then its studies, space-separated
#   sh kernels/registry.sh artifacts STUDY
#       the study's upstream artifacts, one a line: name, SHA-256, size,
#       URL, "generate" or "-", and the pinned version or "-",
#       tab-separated (kernels/<study>/artifacts)
#
# A study with a kernels/<study>/prebuild.sh builds something on the host
# before its variants (agent/build.sh runs it); its variants are listed for
# an ARCH only when the study is named in the environment variable
# SEQORCH_PREBUILT (space-separated), that is, when that build happened.
# A variant folder with a `needs` file (one line, the name of an artifact
# marked "generate": sources the coordinator generates from it) is listed
# for an ARCH only when $SEQORCH_GENERATED/NAME exists, and its files are
# compiled with -I$SEQORCH_GENERATED/NAME (agent/build.sh sets it).
#
# SEQORCH_NOLIBS holds the libraries this build cannot link, one a line:
# the word (-lcrypto) and why, tab-separated (the libs command's lines).
set -eu
set -f

# The one place that names architectures: OTHER:NAME pairs, the first
# field of a target some compiler prints mapped to the name kernels/ use.
ARCH_ALIASES="arm64:aarch64 arm64e:aarch64 amd64:x86_64"

die() {
	echo "kernels/registry.sh: $*" >&2
	exit 1
}

# Names become C identifiers and paths: keep them plain.
check_name() {
	case $2 in
	'' | *[!a-z0-9-]* | -* | *-)
		die "$1 \"$2\": expected lowercase letters, digits and inner dashes";;
	esac
}

# A name's C identifier: "-" becomes "_" (in the shell: a tr each name
# made the agent's table seconds to write).
ident() {
	i= x=$1
	while :; do
		case $x in
		*-*) i=$i${x%%-*}_; x=${x#*-} ;;
		*) break ;;
		esac
	done
	printf '%s' "$i$x"
}

studies() {
	[ -f kernels/studies.txt ] || die "kernels/studies.txt is missing"
	sed -e 's/#.*//' -e 's/[[:space:]]//g' kernels/studies.txt |
	    grep -v '^$' || true
}

# Each group's line, checked: its name is no study's, its studies are.
groups() {
	[ -f kernels/groups.txt ] || return 0
	all=" $(studies | tr '\n' ' ') "
	sed -e 's/#.*//' kernels/groups.txt | while read -r g members; do
		[ -n "$g" ] || continue
		check_name group "$g"
		case $all in *" $g "*)
			die "group \"$g\" (kernels/groups.txt) is a study's name";;
		esac
		[ -n "$members" ] || die "group \"$g\" (kernels/groups.txt) names no study"
		for m in $members; do
			case $all in *" $m "*) ;; *)
				die "group \"$g\" (kernels/groups.txt): \"$m\" is no study in kernels/studies.txt";;
			esac
		done
		echo "$g" $members
	done
}

# The architecture of target (`cc -dumpmachine`): its first field, by
# ARCH_ALIASES.
arch_of() {
	a=${1%%-*}
	for p in $ARCH_ALIASES; do
		if [ "${p%%:*}" = "$a" ]; then
			a=${p#*:}
			break
		fi
	done
	printf '%s\n' "$a"
}

# Sets line to the first line of a folder's one-line file, or "-".  The
# shell's own read, not a sed a file: a manifest reads four files a
# variant, and a process each made every agent build wait seconds.
first() {
	line=-
	if [ -f "$1" ]; then
		IFS= read -r line < "$1" || :
		[ -n "$line" ] || line=-
	fi
}

# The same, printed.
oneline() {
	first "$1"
	printf '%s' "$line"
}

# Was kernels/<study>/prebuild.sh run for this build?
prebuilt() {
	for p in ${SEQORCH_PREBUILT:-}; do
		[ "$p" = "$1" ] && return 0
	done
	return 1
}

# Why the variant whose libs are $1 cannot be built here, or nothing.
nolib() {
	[ "$1" != - ] && [ -n "${SEQORCH_NOLIBS:-}" ] || return 0
	for w in $1; do
		printf '%s\n' "$SEQORCH_NOLIBS" | awk -F '\t' -v w="$w" \
		    -v m="the compiler cannot build against" \
		    '$1 == w { printf "%s %s here: %s\n", m, w, $2; exit }'
	done | sed -n 1p
}

# The libraries variants name, each probed with the build's compiler.
libs() {
	cc=$1 flags=$2 dir=$3
	mkdir -p "$dir" || die "cannot create \"$dir\""
	m=$(manifest)
	for w in $(variants | cut -f 5 | tr ' ' '\n' | grep -v '^-$' |
	    LC_ALL=C sort -u); do
		case $w in
		-l?*) ;;
		*) die "libs word \"$w\": expected -lNAME" ;;
		esac
		src=kernels/libs/${w#-l}.c
		[ -f "$src" ] || die "library \"$w\" has no probe $src"
		# shellcheck disable=SC2086
		if $cc $flags -o "$dir/probe" "$src" "$w" > "$dir/probe.log" \
		    2>&1; then
			printf '%s\tok\n' "$w"
		else
			why=$(grep -m 1 -i 'error' "$dir/probe.log" |
			    sed -e 's/^.*[Ee]rror: *//' | tr -d '\t' | cut -c 1-160)
			printf '%s\t%s\n' "$w" "${why:-its probe $src does not build}"
		fi
	done
}

# Are the generated sources a variant folder needs (its `needs` file: the
# name of a study's artifact the coordinator generates sources from) in
# $SEQORCH_GENERATED/NAME?  A variant that needs none always is.
generated() {
	first "$1/needs"
	[ "$line" = - ] && return 0
	[ -n "${SEQORCH_GENERATED:-}" ] && [ -d "$SEQORCH_GENERATED/$line" ]
}

# kernels/<study>/artifacts without comments, checked: name, 64 hex
# digits, a size, a URL, then optionally "generate" and "version=V" (the
# version pinned, which the URL names: another one is fetched from the
# URL with V replaced, fetch.h).
artifacts() {
	f=kernels/$1/artifacts
	[ -f "$f" ] || return 0
	sed -e 's/#.*//' "$f" | awk -v f="$f" 'NF == 0 { next }
	    {
		g = "-"; v = "-"; ok = NF >= 4 && NF <= 6
		for (i = 5; i <= NF; i++)
			if ($i == "generate" && g == "-")
				g = $i
			else if ($i ~ /^version=[0-9A-Za-z.-]+$/ && v == "-")
				v = substr($i, 9)
			else
				ok = 0
		if (v != "-" && index($4, v) == 0)
			ok = 0
	    }
	    !ok || $1 !~ /^[a-z0-9-]+$/ ||
	    $2 !~ /^[0-9a-f]+$/ || length($2) != 64 || $3 !~ /^[0-9]+$/ ||
	    $4 !~ /^[a-z]+:\/\// {
		printf "kernels/registry.sh: %s:%d: expected name, SHA-256 " \
		    "(64 hex digits), size, URL and optionally " \
		    "\"generate\" and \"version=V\" (V in the URL)\n", f, \
		    NR > "/dev/stderr"
		bad = 1; exit 1
	    }
	    { printf "%s\t%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, $4, g, v }
	    END { exit bad }'
}

manifest() {
	want=${1:-}
	nolibs=${2:-}
	for s in $(studies); do
		check_name study "$s"
		[ -f "kernels/$s/study.c" ] ||
		    die "study \"$s\" (kernels/studies.txt) has no kernels/$s/study.c"
		# Every folder of a study is a variant: one without its kernel
		# file (a misspelt name) is refused, not skipped.  Python keeps
		# __pycache__ beside the generators.
		set +f
		for d in kernels/"$s"/*/; do
			[ -d "$d" ] && [ "${d%/__pycache__/}" = "$d" ] || continue
			[ -f "$d/kernel.c" ] || [ -f "$d/kernel.S" ] ||
			    die "variant folder \"${d%/}\" has no kernel.c or" \
			    "kernel.S (it holds: $(ls -A "$d" | tr '\n' ' '| \
			    sed 's/ $//'))"
		done
		dirs=$(for d in kernels/"$s"/*/; do
			if [ -f "$d/kernel.c" ] || [ -f "$d/kernel.S" ]; then
				printf '%s\n' "$d"
			fi
		done | LC_ALL=C sort)
		set -f
		for d in $dirs; do
			d=${d%/}
			v=${d##*/}
			check_name "variant of study \"$s\"" "$v"
			first "$d/arch"
			a=$line
			first "$d/libs"
			l=$line
			if [ -n "$want" ] && [ "$a" != - ] &&
			    [ "$a" != "$want" ]; then
				continue
			fi
			if [ -n "$nolibs" ] && [ "$l" != - ]; then
				continue
			fi
			if [ -n "$want" ] && [ -f "kernels/$s/prebuild.sh" ] &&
			    ! prebuilt "$s"; then
				continue
			fi
			if [ -n "$want" ] && ! generated "$d"; then
				continue
			fi
			[ "$a" != - ] || a=any
			first "$d/flags"
			printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$v" "$a" "$line" "$l"
		done
	done
	# A study folder nobody registered is a mistake, not a silent skip.
	set +f
	for f in kernels/*/study.c; do
		[ -f "$f" ] || continue
		s=${f#kernels/}
		s=${s%/study.c}
		studies | grep -qx "$s" ||
		    die "kernels/$s has a study.c but no line in kernels/studies.txt"
	done
	set -f
}

# The manifest's lines, from $m: the callers read it into m first, since
# a pipe would hide its failure (the last command's status is the pipe's).
variants() {
	[ -z "$m" ] || printf '%s\n' "$m"
}

files() {
	m=$(manifest "$1" "${2:-}")
	for s in $(studies); do
		echo "kernels/$s/study.c"
	done
	variants | while IFS="$(printf '\t')" read -r s v a f l; do
		[ -z "$(nolib "$l")" ] || continue
		for f in "kernels/$s/$v/kernel.c" "kernels/$s/$v/kernel.S"; do
			if [ -f "$f" ]; then echo "$f"; fi
		done
	done
}

cflags() {
	f=$1
	rel=${f#kernels/}
	[ "$rel" != "$f" ] || die "\"$f\" is not under kernels/"
	case $rel in
	*/*/kernel.c | */*/kernel.S)
		s=${rel%%/*}
		v=${rel#*/}
		v=${v%%/*}
		printf -- '-DSEQORCH_KERNEL_SYM=kernel_%s_%s' "$(ident "$s")" \
		    "$(ident "$v")"
		first "kernels/$s/$v/flags"
		if [ "$line" != - ]; then printf ' %s' "$line"; fi
		first "kernels/$s/$v/needs"
		if [ "$line" != - ]; then
			printf ' -I%s/%s' "${SEQORCH_GENERATED:-}" "$line"
		fi
		echo
		;;
	*/study.c | */reference.c)
		s=${rel%%/*}
		printf -- '-DSEQORCH_STUDY_SYM=study_%s ' "$(ident "$s")"
		printf -- '-DSEQORCH_REFERENCE_SYM=reference_%s\n' "$(ident "$s")"
		;;
	*)
		echo
		;;
	esac
}

agent() {
	m=$(manifest "$1" "${2:-}")
	echo "/* Generated by kernels/registry.sh for $1; do not edit. */"
	echo '#include "registry.h"'
	echo
	for s in $(studies); do
		echo "extern const struct study study_$(ident "$s");"
	done
	variants | while IFS="$(printf '\t')" read -r s v a f l; do
		[ -n "$(nolib "$l")" ] ||
		    echo "extern const struct kernel kernel_$(ident "$s")_$(ident "$v");"
	done
	echo
	echo 'const struct registry_study registry_studies[] = {'
	for s in $(studies); do
		echo "	{ \"$s\", &study_$(ident "$s") },"
	done
	echo '	{ NULL, NULL },'
	echo '};'
	echo
	echo 'const struct registry_kernel registry_kernels[] = {'
	variants | while IFS="$(printf '\t')" read -r s v a f l; do
		why=$(nolib "$l")
		if [ -n "$why" ]; then
			echo "	{ \"$s\", \"$v\", NULL, $(cstr "$why") },"
		else
			echo "	{ \"$s\", \"$v\", &kernel_$(ident "$s")_$(ident "$v"), NULL },"
		fi
	done
	echo '	{ NULL, NULL, NULL, NULL },'
	echo '};'
}

# C string literal of a manifest field ("-" becomes NULL).
cstr() {
	if [ "$1" = - ]; then
		printf NULL
	else
		printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"
	fi
}

coordinator() {
	m=$(manifest)
	echo '/* Generated by kernels/registry.sh; do not edit. */'
	echo '#include "study.h"'
	echo
	for s in $(studies); do
		[ -f "kernels/$s/reference.c" ] ||
		    die "study \"$s\" has no kernels/$s/reference.c"
		echo "extern const struct study study_$(ident "$s");"
		echo "extern const struct study_reference reference_$(ident "$s");"
	done
	echo
	echo 'const struct study_entry study_table[] = {'
	for s in $(studies); do
		t=$(oneline "kernels/$s/targetings")
		pb=0
		if [ -f "kernels/$s/prebuild.sh" ]; then pb=1; fi
		echo "	{ \"$s\", &study_$(ident "$s"), &reference_$(ident "$s"), $(cstr "$t"), $pb },"
	done
	echo '	{ NULL, NULL, NULL, NULL, 0 },'
	echo '};'
	echo
	echo 'const struct artifact_entry artifact_table[] = {'
	for s in $(studies); do
		artifacts "$s" > /dev/null || exit 1
		artifacts "$s" | while IFS="$(printf '\t')" read -r n h z u g v; do
			echo "	{ \"$s\", \"$n\", \"$h\", ${z}ULL, $(cstr "$u"), $( [ "$g" = generate ] && echo 1 || echo 0), $(cstr "$v") },"
		done
	done
	echo '	{ NULL, NULL, NULL, 0, NULL, 0, NULL },'
	echo '};'
	echo
	echo 'const struct study_group study_groups[] = {'
	groups > /dev/null || exit 1
	groups | while read -r g members; do
		echo "	{ \"$g\", \"$(printf '%s' "$members" | tr ' ' ,)\" },"
	done
	echo '	{ NULL, NULL },'
	echo '};'
	echo
	echo 'const struct arch_alias arch_aliases[] = {'
	for p in $ARCH_ALIASES; do
		echo "	{ \"${p%%:*}\", \"${p#*:}\" },"
	done
	echo '	{ NULL, NULL },'
	echo '};'
	echo
	echo 'const struct variant_entry variant_table[] = {'
	variants | while IFS="$(printf '\t')" read -r s v a f l; do
		echo "	{ \"$s\", \"$v\", $(cstr "$a"), $(cstr "$f"), $(cstr "$l"), $(cstr "$(oneline "kernels/$s/$v/needs")"), $(cstr "$(oneline "kernels/$s/$v/compiler")") },"
	done
	echo '	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL },'
	echo '};'
}

case ${1:-} in
studies) studies ;;
manifest) shift; manifest "$@" ;;
files) [ $# -ge 2 ] || die "usage: files ARCH [nolibs]"; shift; files "$@" ;;
cflags) [ $# -eq 2 ] || die "usage: cflags FILE"; cflags "$2" ;;
agent) [ $# -ge 2 ] || die "usage: agent ARCH [nolibs]"; shift; agent "$@" ;;
coordinator) coordinator ;;
artifacts) [ $# -eq 2 ] || die "usage: artifacts STUDY"; artifacts "$2" ;;
libs) [ $# -eq 4 ] || die "usage: libs CC CFLAGS DIR"; libs "$2" "$3" "$4" ;;
groups) groups ;;
arch) [ $# -eq 2 ] || die "usage: arch TARGET"; arch_of "$2" ;;
*) die "usage: registry.sh studies|groups|manifest|files|libs|cflags|agent|coordinator|arch ..." ;;
esac
