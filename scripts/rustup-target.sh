#!/usr/bin/env bash
# Installs rustup targets for the active toolchain, one rustup at a time, and repairs a target
# whose files are on disk but which rustup does not list as installed.
#
#   bash scripts/rustup-target.sh TARGET...
#
# rustup's record of a toolchain's installed components (lib/rustlib/components and its
# manifest-* files) is not safe for two `rustup target add` at once: run side by side, one of
# them can write its files while the other rewrites the record without it. The target is then
# unlisted with its files present, and every later `rustup target add` fails on them ("detected
# conflict"). So every script here installs its targets through this one: a lock held across
# the check and the install, and for an unlisted target whose folder exists, the folder and its
# manifest removed first so that rustup installs it whole again.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bash scripts/rustup-target.sh TARGET..." >&2; exit 2; }
exec 8>>/tmp/memloop-rustup.lock
flock 8
sysroot=$(rustc --print sysroot)
installed=$(rustup target list --installed)
for target in "$@"; do
    if grep -qx "$target" <<<"$installed"; then
        continue
    fi
    if [ -e "$sysroot/lib/rustlib/$target" ]; then
        echo "rustup-target: $target is on disk but not listed as installed; reinstalling it" >&2
        rm -rf "$sysroot/lib/rustlib/$target" "$sysroot/lib/rustlib/manifest-rust-std-$target"
        # The component's line in rustup's record, if one is left without its files.
        if [ -f "$sysroot/lib/rustlib/components" ]; then
            sed -i "/^rust-std-$target\$/d" "$sysroot/lib/rustlib/components"
        fi
    fi
    rustup target add "$target"
    rustup target list --installed | grep -qx "$target" \
        || { echo "rustup-target: $target is still not listed after rustup target add" >&2; exit 1; }
done
