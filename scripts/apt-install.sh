#!/usr/bin/env bash
# Installs Debian packages (as root or through sudo), one apt at a time: the scripts that run
# side by side in scripts/test.sh (the aarch64 and Windows cross toolchains, Chromium) wait for
# each other on one lock instead of failing on dpkg's, and for any other apt up to 10 minutes.
#
#   bash scripts/apt-install.sh PACKAGE...
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
exec 9>>/tmp/memloop-apt.lock
flock 9
export DEBIAN_FRONTEND=noninteractive
wait_lock=(-o DPkg::Lock::Timeout=600)
$sudo apt-get "${wait_lock[@]}" install -y -q "$@" >/dev/null \
    || { $sudo apt-get "${wait_lock[@]}" update -q >/dev/null \
        && $sudo apt-get "${wait_lock[@]}" install -y -q "$@" >/dev/null; }
