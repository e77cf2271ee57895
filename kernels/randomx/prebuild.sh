#!/bin/sh
# Builds RandomX on the measured host from the fetched upstream tarball,
# then phased.cpp against that source's VM classes (agent/build.sh runs
# this from the source root, kernels/kernel.h describes the hook):
#
#   sh kernels/randomx/prebuild.sh OUT CC CFLAGS ARTIFACTS TARGETING
#
# TARGETING "native" builds RandomX with its own -DARCH=native (upstream's
# CMake option: -march=native instead of its default -maes /
# -march=armv8-a+crypto), "default" with its default.  Leaves OUT/libs (the
# link flags), OUT/commands (each command, and the flags CMake resolved)
# and OUT/meta (key=value facts recorded with the build).
set -eu
set -f

# Where Homebrew puts cmake (Apple silicon, Intel): a non-interactive SSH
# session's PATH has neither, since only a login shell reads the profile
# that adds them.
CMAKE_DIRS="/opt/homebrew/bin /usr/local/bin"

# cmake on PATH, else Homebrew's; nothing when there is none.
find_cmake() {
	if command -v cmake 2> /dev/null; then
		return 0
	fi
	for d in $CMAKE_DIRS; do
		if [ -x "$d/cmake" ]; then
			echo "$d/cmake"
			return 0
		fi
	done
	return 1
}

# The C++ runtime the C++ compiler $1 links by itself, as its driver says
# (-###): -lc++ for Apple's clang (Xcode 10 dropped libstdc++), -lstdc++
# for g++; by the OS when the driver does not say.
cxx_runtime() {
	lib=$("$1" -### -x c++ /dev/null -o /dev/null 2>&1 | tr ' ' '\n' |
	    tr -d '"' | grep -E '^-l(c\+\+|stdc\+\+)$' | head -n 1) || true
	if [ -z "$lib" ]; then
		case $(uname -s) in
		Darwin) lib=-lc++ ;;
		*) lib=-lstdc++ ;;
		esac
	fi
	echo "$lib"
}

# For tests (tests/test_27_apple.py): the two choices alone.
case ${1:-} in
--cxx-runtime) cxx_runtime "$2"; exit 0 ;;
--cmake) find_cmake || { echo "no cmake on PATH or in $CMAKE_DIRS" >&2; exit 1; }; exit 0 ;;
esac

out=$1
cc=$2
cflags=$3
artifacts=$4
targeting=$5

say() {
	printf '%s\n' "$*" >> "$out/commands"
}
run() {
	say "$*"
	"$@" 3>&-
}
# The steps, as agent/build.sh says them: fd 3 when it is open.
if { true >&3; } 2>/dev/null; then
	step() { echo "@@seqorch:step randomx $*" >&3; }
else
	step() { :; }
fi

# cmake --build, its output passed on whole and each of its progress
# lines ("[ 23%] Building CXX object .../aes_hash.cpp.o" from make,
# "[23/71] ..." from ninja) said as a step ("[ 23%] compiling
# aes_hash.cpp"); its exit status is cmake's.
cmake_build() {
	say "$*"
	{ "$@" 2>&1 3>&-; echo "$?" > "$out/cmake-build.status"; } |
	    while IFS= read -r l; do
		printf '%s\n' "$l"
		case $l in
		"["*"] Building "* | "["*"] Linking "*) ;;
		*) continue ;;
		esac
		for w in $l; do :; done
		w=${w##*/}
		case $l in
		*"] Building "*) what="compiling ${w%.o}" ;;
		*) what="linking $w" ;;
		esac
		step "${l%%]*}] $what"
	done
	return "$(cat "$out/cmake-build.status")"
}

sha=$(awk '$1 == "randomx" { print $2 }' kernels/randomx/artifacts)
tarball=$artifacts/$sha
[ -f "$tarball" ] || {
	echo "randomx: the source tarball $tarball was not uploaded" >&2
	exit 1
}
got=$( (sha256sum "$tarball" 2>/dev/null || shasum -a 256 "$tarball") |
    cut -d ' ' -f 1)
[ "$got" = "$sha" ] || {
	echo "randomx: $tarball has SHA-256 $got, expected $sha" >&2
	exit 1
}
cmake=$(find_cmake) || {
	echo "randomx: cmake not found on PATH or in $CMAKE_DIRS: install" \
	    "cmake (Debian: cmake; macOS: brew install cmake) to build" \
	    "RandomX" >&2
	exit 1
}

# The C++ compiler that goes with CC (its last word: CC may be
# "ccache gcc").
for w in $cc; do c=$w; done
case $c in
*clang*) cxx=$(printf '%s' "$c" | sed 's/clang/clang++/') ;;
*gcc*) cxx=$(printf '%s' "$c" | sed 's/gcc/g++/') ;;
*) cxx=c++ ;;
esac
command -v "$cxx" > /dev/null 2>&1 || {
	echo "randomx: C++ compiler \"$cxx\" (for \"$c\") not found" >&2
	exit 1
}
case $targeting in
native) rxarch=native ;;
*) rxarch=default ;;
esac

mkdir -p "$out/src"
step "unpacking the source"
run tar -xzf "$tarball" -C "$out/src"
src=$out/src/RandomX-1.1.10
step "configuring (cmake)"
run "$cmake" -S "$src" -B "$out/cmake" -DCMAKE_BUILD_TYPE=Release \
    -DARCH="$rxarch" -DCMAKE_C_COMPILER="$c" -DCMAKE_CXX_COMPILER="$cxx"
# Every core of the host (a 16-core host builds RandomX in seconds, not
# minutes); no build runs inside a measurement window (docs/windows.md).
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null) || jobs=1
cmake_build "$cmake" --build "$out/cmake" --target randomx --parallel "$jobs"
# What CMake made of the flags: the resolved compile lines' flags.
for f in "$out/cmake/CMakeFiles/randomx.dir/flags.make"; do
	[ -f "$f" ] && grep '_FLAGS' "$f" >> "$out/commands"
done
step "compiling phased.cpp"
# shellcheck disable=SC2086
run "$cxx" $cflags -std=c++11 -I"$src/src" -Ikernels/randomx \
    -c kernels/randomx/phased.cpp -o "$out/phased.o"
run ar rcs "$out/libseqorch-randomx.a" "$out/phased.o"
# Upstream's JIT .S has no .note.GNU-stack; the agent's stack stays
# non-executable all the same.
nx=
case $(uname -s) in
Linux) nx=-Wl,-z,noexecstack ;;
esac
echo "$out/libseqorch-randomx.a $out/cmake/librandomx.a" \
    "$(cxx_runtime "$cxx") -lpthread -ldl -lm $nx" > "$out/libs"

lib=$( (sha256sum "$out/cmake/librandomx.a" 2>/dev/null ||
    shasum -a 256 "$out/cmake/librandomx.a") | cut -d ' ' -f 1)
# The host's own librandomx (the "system" variant dlopens it).
sys=$(dpkg-query -W -f '${Version}' librandomx0 2>/dev/null || true)
{
	echo "randomx_source_sha256=$sha"
	echo "randomx_arch=$rxarch"
	echo "librandomx_sha256=$lib"
	echo "cmake=$("$cmake" --version | head -n 1)"
	echo "cxx=$("$cxx" --version 2>/dev/null | head -n 1)"
	echo "system_librandomx=${sys:-none (dpkg: librandomx0 not installed)}"
} > "$out/meta"
