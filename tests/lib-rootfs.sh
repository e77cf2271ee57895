# Sourced by tests/arm64/build-host.sh and tests/first-hour/time-make-run.sh:
# the cached Debian rootfs each builds once with mmdebstrap, from the
# mirrors apt is configured with here (deb822 files are passed as they are).

# rootfs_build CACHE PACKAGES NAME CMD...: unless CACHE/rootfs was built
# with PACKAGES (CACHE/rootfs.stamp says so), runs CMD..., an mmdebstrap
# line whose target is CACHE/rootfs.tmp, with apt's sources appended, then
# puts the result in place and stamps it.  NAME heads the messages.
# Returns non-zero, having said why, when CMD fails or apt has no sources.
rootfs_build() {
	_rf_cache=$1 _rf_stamp="packages=$2" _rf_name=$3
	shift 3
	if [ -f "$_rf_cache/rootfs.stamp" ] && [ -d "$_rf_cache/rootfs" ] &&
	    [ "$(cat "$_rf_cache/rootfs.stamp")" = "$_rf_stamp" ]; then
		return 0
	fi
	_rf_srcs=
	for _rf_f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	    /etc/apt/sources.list.d/*.sources; do
		[ -s "$_rf_f" ] && _rf_srcs="$_rf_srcs $_rf_f"
	done
	if [ -z "$_rf_srcs" ]; then
		echo "$_rf_name: no apt sources in /etc/apt" >&2
		return 1
	fi
	rm -rf "$_rf_cache/rootfs" "$_rf_cache/rootfs.tmp" \
	    "$_rf_cache/rootfs.stamp"
	echo "$_rf_name: building the rootfs in $_rf_cache (some minutes)" >&2
	# The paths have no spaces: split on purpose.
	# shellcheck disable=SC2086
	"$@" $_rf_srcs >&2 || return 1
	mv "$_rf_cache/rootfs.tmp" "$_rf_cache/rootfs" &&
	    echo "$_rf_stamp" > "$_rf_cache/rootfs.stamp"
}
