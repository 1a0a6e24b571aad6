#!/usr/bin/env bash
# Debian's arm64 Python and Node, unpacked into target/arm64-root for running under
# qemu-aarch64 (`qemu-aarch64 -L target/arm64-root target/arm64-root/usr/bin/node`): the
# packages of Debian 13 (trixie, whose node is 20, the version the npm package needs) and
# every library they depend on, downloaded with a private apt state (the machine's own apt
# configuration and packages are untouched; no root needed) and unpacked with dpkg-deb.
# Idempotent: an existing root is kept. Prints the root's path.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/target/arm64-root
if [ -x "$root/usr/bin/node" ] && [ -x "$root/usr/bin/python3.13" ]; then
    echo "$root"
    exit 0
fi
state=$PWD/target/arm64-apt
rm -rf "$state" "$root"
mkdir -p "$state"/etc/apt/{sources.list.d,preferences.d,apt.conf.d} \
    "$state"/var/lib/apt/lists/partial "$state"/var/cache/apt/archives/partial \
    "$state"/var/lib/dpkg "$state/debs" "$root"
touch "$state/var/lib/dpkg/status"
echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$state/etc/apt/sources.list"
apt=(-o "Dir=$state" -o "Dir::State::status=$state/var/lib/dpkg/status"
    -o APT::Architecture=arm64 -o APT::Architectures=arm64)
apt-get "${apt[@]}" -q update >/dev/null
packages=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances nodejs python3.13 \
    | grep '^[a-z0-9]' | sort -u)
real=()
for p in $packages; do
    apt-cache "${apt[@]}" show "$p" >/dev/null 2>&1 && real+=("$p")
done
(cd "$state/debs" && apt-get "${apt[@]}" -q download "${real[@]}" >/dev/null 2>&1)
for deb in "$state"/debs/*.deb; do
    dpkg-deb -x "$deb" "$root"
done
# Debian 13 keeps everything under /usr (its base-files makes these links on a real system).
for d in lib bin sbin; do
    [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done
qemu-aarch64 -L "$root" "$root/usr/bin/node" -e 'process.arch === "arm64" || process.exit(1)'
qemu-aarch64 -L "$root" "$root/usr/bin/python3.13" -c 'import platform; assert platform.machine() == "aarch64"'
echo "$root"
