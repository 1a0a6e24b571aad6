#!/usr/bin/env bash
# Prints the newest glibc symbol version each ELF file references (readelf reads either
# architecture's files) and fails when one needs more than glibc 2.17, the floor the Linux
# release artifacts keep (scripts/build-linux.sh; CI's aarch64 smoke build, scripts/test-arm64.sh).
#
#   bash scripts/glibc-floor.sh FILE...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bash scripts/glibc-floor.sh FILE..." >&2; exit 2; }
status=0
for f in "$@"; do
    newest=$(readelf --dyn-syms --wide "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    echo "$(basename "$f"): ${newest:-no glibc symbol}"
    if [ -n "$newest" ] && [ "$(printf '%s\n' GLIBC_2.17 "$newest" | sort -V | tail -1)" != GLIBC_2.17 ]; then
        echo "$f needs a glibc newer than 2.17" >&2
        status=1
    fi
done
exit "$status"
