#!/bin/sh
# Times a fresh-clone `make run` on a fresh Debian machine (issue 23's
# target: under 2 minutes on 2 cores), as docs/hacking.md says:
#
#   sh tests/first-hour/time-make-run.sh [CACHE] [ROUNDS]
#
# CACHE (default /var/cache/seqorch-fresh) keeps CACHE/rootfs, a minimal
# Debian bookworm amd64 root (mmdebstrap --variant=minbase from the mirrors
# apt is configured with here) with git, make and ca-certificates added:
# what a user needs to clone and type `make run`, nothing of ours.  It is
# built once and reused.  Each round then runs in a copy of it (an overlay
# whose upper layer is discarded), so every round starts with no package
# of DEBS_RUN installed and no apt lists: it `git clone`s this checkout's
# HEAD (through a bundle) and runs `make run` as root, which installs its
# own packages from the Debian mirror (deps-run), builds and measures.
#
# Prints, per round, the machine's load (uptime) before and after, and the
# total (with the CPU time it used: on a busy machine the wall time says
# more about the others' load) with its breakdown: apt (deps-run: apt-get update and install),
# build (make seqorch), the run (./seqorch run: the agent's build on the
# host and the samples) and the report.  The phases are read from the
# times of make's own output lines (the recipe lines it echoes).
#
# Runs in a private mount namespace (unshare -m): /proc, /sys and /dev are
# bind-mounted into the copy and unmounted at the end; the host's own are
# never touched otherwise.  Needs root, mmdebstrap, unshare and
# /usr/bin/time (Debian: time).
set -eu

cache=${1:-/var/cache/seqorch-fresh}
rounds=${2:-1}
here=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$here/tests/lib-rootfs.sh"
packages=git,make,ca-certificates

die() {
	echo "time-make-run.sh: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, chroot, mounts)"
command -v mmdebstrap >/dev/null || die "no mmdebstrap (install mmdebstrap)"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
exec 9> "$cache/lock"
flock 9

# A fresh machine has no apt lists and no downloaded packages: mmdebstrap's
# minbase leaves both empty.
rootfs_build "$cache" "$packages" time-make-run.sh \
    mmdebstrap --quiet --mode=root --arch=amd64 --variant=minbase \
    --include="$packages" bookworm "$cache/rootfs.tmp" ||
    die "cannot build the rootfs in $cache"

git -C "$here" bundle create "$cache/seqorch.bundle" HEAD 2>/dev/null ||
    die "cannot bundle $here's HEAD"

# One round: in a new mount namespace, an overlay of the rootfs, the
# bundle copied in, clone and make run; make's output lines each get the
# time they arrived (ns), which the summary below reads.
round() {
	work=$cache/round
	rm -rf "$work"
	mkdir -p "$work/upper" "$work/work" "$work/root"
	/usr/bin/time -f '%U %S' -o "$work/cpu" \
	    unshare -m --propagation private sh -eu -c '
		w=$1
		r=$w/root
		mount -t overlay overlay \
		    -o lowerdir=$2,upperdir=$w/upper,workdir=$w/work "$r"
		mount --bind /proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		cp /etc/resolv.conf "$r/etc/resolv.conf"
		cp "$3" "$r/root/seqorch.bundle"
		rc=0
		chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
		    PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c "
			cd /root && git -c advice.detachedHead=false clone -q seqorch.bundle seqorch &&
			cd seqorch && echo @@make-run && make run" 2>&1 || rc=$?
		umount -R "$r/dev" "$r/sys"
		umount "$r/proc" "$r"
		exit $rc' sh "$work" "$cache/rootfs" "$cache/seqorch.bundle" |
	    while IFS= read -r line; do
		printf '%s %s\n' "$(date +%s%N)" "$line"
	done > "$work/log"
	rc=0
	grep -q 'samples' "$work/log" || rc=1
	echo "$rc"
}

i=1
while [ "$i" -le "$rounds" ]; do
	load0=$(uptime | sed 's/.*load average/load average/')
	rc=$(round)
	load1=$(uptime | sed 's/.*load average/load average/')
	log=$cache/round/log
	cp "$log" "$cache/round-$i.log"
	# Phase boundaries: make run starts (@@make-run), the build's first
	# recipe line ($(MAKE) -j seqorch), ./seqorch run, ./seqorch report,
	# the last line.
	cpu=$(awk 'END { printf "%.1f", $1 + $2 }' "$cache/round/cpu")
	awk -v load0="$load0" -v load1="$load1" -v round="$i" -v rc="$rc" \
	    -v cpu="$cpu" -v cores="$(nproc)" '
		{ t = $1 }
		/ @@make-run$/ { t0 = t }
		t0 && !tb && / make -j.* seqorch$/ { tb = t }
		t0 && !tr && / \.\/seqorch run / { tr = t }
		t0 && !tp && / \.\/seqorch report / { tp = t }
		{ te = t }
		END {
			printf "round %d%s: %s before, %s after\n", round,
			    rc ? " FAILED" : "", load0, load1
			printf "  make run  %6.1f s  (cpu %s s in all, %d cores)\n",
			    (te - t0) / 1e9, cpu, cores
			printf "    apt     %6.1f s  (deps-run)\n", (tb - t0) / 1e9
			printf "    build   %6.1f s  (make seqorch)\n", (tr - tb) / 1e9
			printf "    run     %6.1f s  (./seqorch run: agent build, samples)\n", (tp - tr) / 1e9
			printf "    report  %6.1f s\n", (te - tp) / 1e9
		}' "$log"
	[ "$rc" = 0 ] || { tail -20 "$log" >&2; die "round $i failed (log: $cache/round-$i.log)"; }
	i=$((i + 1))
done
rm -rf "$cache/round"
