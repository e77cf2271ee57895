#!/bin/sh
# make bench's RandomX part: seqorch builds both targetings of the study on
# this host from the fixture's source (fetch --from, no network), takes an
# interleaved light-mode run, then tests/bench.py --randomx times upstream's
# own randomx-benchmark beside each build's agent, in alternating rounds.
# Usage: tests/bench_randomx.sh TARBALL [ROUNDS]
set -eu
tarball=$1
rounds=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$tarball" ]; then
	echo "bench_randomx: no RandomX tarball \"$tarball\": skipped" \
	    "(RANDOMX_TARBALL=...)" >&2
	exit 0
fi
# The run works in a directory of its own: the tarball by its full name.
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
dir=$(mktemp -d "${TMPDIR:-/tmp}/seqorch-bench-randomx.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/work"
cat >"$dir/hosts.toml" <<EOF
[hosts.local]
transport = "local"
cpu = 1
workdir = "$dir/work"
EOF
cd "$dir"
"$top/seqorch" fetch --study randomx --from "$tarball"
"$top/seqorch" run --study randomx --hosts local --variants light,system \
    --steps 5 --samples 4
"$top/seqorch" report --latest
"${PYTHON:-/usr/bin/python3}" "$top/tests/bench.py" --randomx "$dir/work" \
    --randomx-modes light --rounds "$rounds"
