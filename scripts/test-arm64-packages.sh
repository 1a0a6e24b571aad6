#!/usr/bin/env bash
# The aarch64 packages `scripts/build-linux.sh aarch64` made, installed and tested under qemu-aarch64
# in Debian's own arm64 interpreters (scripts/arm64-sysroot.sh: Debian 13's Python 3.13 and
# Node 20), with no cargo on PATH:
#   - the wheel, in a fresh virtual environment of the arm64 Python: the Python suite's core
#     (the API, async, errors and hostile input, scopes and listing, conversations,
#     encryption, callbacks; the default model where a test needs it);
#   - the npm packages (the main one and memloop-linux-arm64-gnu, packed), installed into a
#     clean project for arm64: `node --test` of the API, hostile-input, encryption and model
#     suites under the arm64 node.
# Run by scripts/test-arm64.sh (full run); needs `bash scripts/build-linux.sh aarch64` first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=aarch64-unknown-linux-gnu
dist=$root/dist/$target
arm=$(bash scripts/arm64-sysroot.sh)
export QEMU_LD_PREFIX=$arm
qemu=(qemu-aarch64 -L "$arm")
clean_path=$(python3 -c '
import os
print(os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                      if d and not os.path.exists(os.path.join(d, "cargo"))))')

echo "== the aarch64 wheel in Debian's arm64 Python $("${qemu[@]}" "$arm/usr/bin/python3.13" -V)"
wheel=$(ls "$dist"/memloop-*-manylinux*_aarch64.whl)
env=$root/target/arm64-py
rm -rf "$env"
"${qemu[@]}" "$arm/usr/bin/python3.13" -m venv --without-pip "$env"
# The host's pip installs for the arm64 interpreter (its site-packages, its tags): the wheel
# and pytest's pure-Python wheels, all pinned.
python3 -m pip install -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_aarch64 --python-version 3.13 --implementation cp \
    --target "$env/lib/python3.13/site-packages" \
    "$wheel" pytest==8.3.4 iniconfig==2.0.0 packaging==24.2 pluggy==1.5.0
(cd python/tests && PATH="$clean_path" "${qemu[@]}" "$env/bin/python" -m pytest -q \
    -p no:cacheprovider test_api.py test_async.py test_errors.py test_hostile.py \
    test_list_and_embedder.py test_conversations.py test_encryption.py test_callbacks.py)

echo "== the arm64 npm package under Debian's arm64 node $("${qemu[@]}" "$arm/usr/bin/node" -v)"
# The main package as a release packs it (its loader, native.js, is the same on every
# platform), naming the arm64 platform package as its optional dependency.
main_tarball=$(bash scripts/pack-node.sh linux-arm64-gnu)
platform=$(ls "$dist"/memloop-linux-arm64-gnu-*.tgz)
project=$root/target/node-clean-arm64
rm -rf "$project"
mkdir -p "$project"
cp -r node/test "$project/"
cd "$project"
npm init -y >/dev/null
npm pkg set type=module
# The tarballs are installed for an arm64 machine: npm checks a package named on its command
# line against this machine's cpu even with --cpu=arm64 (EBADPLATFORM), so --force, which
# skips that check and nothing else that matters here (the project is new and empty).
PATH="$clean_path" npm install --no-audit --no-fund --loglevel=error --cpu=arm64 --os=linux \
    --force "$main_tarball" "$platform"
PATH="$clean_path" "${qemu[@]}" "$arm/usr/bin/node" --test --test-concurrency=1 \
    test/api.test.mjs test/hostile.test.mjs test/encryption.test.mjs test/model.test.mjs
echo "aarch64 packages: the wheel and the npm package passed under qemu"
