#!/usr/bin/env bash
# The Python package's tests, against the installed wheel: maturin (pinned, from PyPI, in
# target/py-build) builds the abi3 wheel of python/ with the dev profile, so it reuses
# `cargo test`'s dependencies (the test profile cannot build an extension: maturin's
# `cargo rustc --profile test` compiles a test harness); the wheel is installed into a fresh virtual environment whose PATH has
# no cargo; there mypy checks the stubs against typed use (python/tests/typed_use.py) and
# stubtest checks them against the extension itself; then pytest runs python/tests. The
# release wheel for users: scripts/build-wheel.sh. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=target/py-build
if [ ! -x "$build/bin/maturin" ]; then
    python3 -m venv "$build"
    "$build/bin/python" -m pip install -q --disable-pip-version-check maturin==1.16.0
fi
wheels=target/wheels-test
rm -rf "$wheels"
"$build/bin/maturin" build --quiet --locked --profile dev --strip \
    --manifest-path python/Cargo.toml --out "$wheels"
wheel=$(ls "$wheels"/memloop-*.whl)
echo "built $(basename "$wheel")"

# A PATH with no directory that holds cargo: the install must not need a Rust toolchain.
clean_path=$(python3 -c '
import os, sys
print(os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                      if d and not os.path.exists(os.path.join(d, "cargo"))))')
env=$PWD/target/py-wheel-env
rm -rf "$env"
PATH="$clean_path" python3 -m venv "$env"
PATH="$clean_path" "$env/bin/python" -m pip install -q --disable-pip-version-check \
    pytest==8.3.4 mypy==2.4.1 "$wheel"
if PATH="$env/bin:$clean_path" command -v cargo >/dev/null; then
    echo "cargo is still on the test environment's PATH" >&2
    exit 1
fi
run() { (cd python/tests && PATH="$env/bin:$clean_path" "$@"); }
run python -m mypy --strict --no-incremental typed_use.py
run python -m mypy.stubtest memloop --ignore-missing-stub
run python -m pytest -q -p no:cacheprovider "$@"
