#!/usr/bin/env bash
# The x86-64 release artifacts on an old Linux: a Debian 11 root (bullseye: glibc 2.31,
# Python 3.9), made here by debootstrap from Debian's packages into target/bullseye-root, where
#   - the wheel (manylinux_2_17) installs with pip into a virtual environment of Debian 11's
#     Python, with no cargo on PATH, and the Python suite's core passes (pytest pinned, from PyPI);
#   - the static command (musl) recalls, on a store the glibc build made outside, the same
#     memories in the same order with the same scores as that build, for the demo's queries.
# Needs root (chroot; through sudo otherwise), dist/x86_64-unknown-linux-gnu/ from
# `bash scripts/build-linux.sh x86_64`, the memloop command of the test build (MEMLOOP_BIN, or
# target/<host>/debug/memloop) and the demo's corpus in the cache (`memloop demo` fetches it).
#
#   bash scripts/test-old-glibc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
dist=$root/dist/x86_64-unknown-linux-gnu
host=$(rustc -vV | sed -n 's/^host: //p')
host_bin=${MEMLOOP_BIN:-$root/target/$host/debug/memloop}
jail=$root/target/bullseye-root
if [ ! -x "$jail/usr/bin/python3" ]; then
    command -v debootstrap >/dev/null || bash scripts/apt-install.sh debootstrap
    $sudo rm -rf "$jail"
    $sudo debootstrap --variant=minbase --include=python3,python3-venv,python3-pip bullseye \
        "$jail" http://deb.debian.org/debian >/dev/null
fi
as_root() { if [ -n "$sudo" ]; then sudo -E "$@"; else "$@"; fi; }
in_jail() { $sudo chroot "$jail" env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin "$@"; }
echo "== Debian 11: $(in_jail /usr/bin/ldd --version | head -1), $(in_jail python3 -V)"
work=$jail/root/memloop-check
$sudo rm -rf "$work"
$sudo mkdir -p "$work"
model=$(MEMLOOP_BIN=$host_bin bash scripts/fetch-model.sh | tail -1)
# The model under its own folder's name (the store's model fingerprint carries it); the
# Python suite where it finds the repository's test data (ROOT: two folders up).
$sudo cp -r "$model" "$work/"
jail_model=/root/memloop-check/$(basename "$model")
$sudo mkdir -p "$work/python" "$work/ffi/tests"
$sudo cp -r python/tests "$work/python/tests"
$sudo cp -r ffi/tests/data "$work/ffi/tests/data"
$sudo cp "$dist"/memloop-*-manylinux*_x86_64.whl "$dist/memloop" "$work/"
wheel=$(basename "$(ls "$dist"/memloop-*-manylinux*_x86_64.whl)")

echo "== the wheel in Debian 11's Python"
in_jail sh -c "command -v cargo && exit 1; python3 -m venv --without-pip /root/memloop-check/env"
# This machine's pip installs for Debian 11's interpreter (its site-packages, its tags; the root
# has no network of its own): the wheel and pytest's pure-Python wheels, all pinned.
site=$(ls -d "$work"/env/lib/python3.*/site-packages)
as_root python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --python-version 3.9 --implementation cp --target "$site" \
    "$work/$wheel" pytest==8.3.4 iniconfig==2.0.0 packaging==24.2 pluggy==1.5.0 \
    exceptiongroup==1.2.2 tomli==2.2.1
in_jail sh -c "cd /root/memloop-check/python/tests && MEMLOOP_MODEL_DIR=$jail_model \
    /root/memloop-check/env/bin/python -m pytest -q -p no:cacheprovider test_api.py test_async.py \
    test_errors.py test_hostile.py test_list_and_embedder.py test_conversations.py \
    test_encryption.py test_callbacks.py"

echo "== the static command on a store the glibc build made"
corpus=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/memloop/corpora/sotu-*/ | tail -1)
store=$work/store
$sudo mkdir -p "$work/corpus"
for year in 1790 1830 1862 1901 1934 1962 1983 2009; do
    $sudo cp "$corpus/$year"_*.txt "$work/corpus/"
done
MEMLOOP_MODEL_DIR=$model as_root "$host_bin" ingest --store "$store" "$work/corpus" >/dev/null
queries=("relations with the Indian tribes on the frontier" "paying off the public debt"
    "unemployment and relief in hard times" "the threat of nuclear weapons"
    "jobs and health care for working families")
for q in "${queries[@]}"; do
    MEMLOOP_MODEL_DIR=$model as_root "$host_bin" recall --store "$store" --k 3 --kind chunk --json "$q"
done >"$root/target/old-glibc-recall-host.jsonl"
for q in "${queries[@]}"; do
    in_jail env MEMLOOP_MODEL_DIR="$jail_model" /root/memloop-check/memloop recall \
        --store /root/memloop-check/store --k 3 --kind chunk --json "$q"
done >"$root/target/old-glibc-recall-musl.jsonl"
python3 - "$root/target/old-glibc-recall-host.jsonl" "$root/target/old-glibc-recall-musl.jsonl" <<'EOF'
import json, sys

host, musl = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
assert len(host) == len(musl) == 5, (len(host), len(musl))
for a, b in zip(host, musl):
    ids = [h["id"] for h in a["hits"]]
    assert ids and ids == [h["id"] for h in b["hits"]], (a, b)
    for x, y in zip(a["hits"], b["hits"]):
        assert abs(x["score"] - y["score"]) < 1e-5, (x["score"], y["score"])
print("the static command recalled the glibc build's store: 5 queries, same ids, same order, scores within 1e-5")
EOF
echo "Debian 11: the wheel's suite passed and the static command read the store"
