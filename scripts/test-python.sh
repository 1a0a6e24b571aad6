#!/usr/bin/env bash
# The Python package's tests, against the installed wheel: maturin (pinned, from PyPI:
# scripts/maturin.sh) builds the abi3 wheel of python/ with the dev profile, so it reuses
# `cargo test`'s dependencies (the test profile cannot build an extension: maturin's
# `cargo rustc --profile test` compiles a test harness); the wheel is installed into a fresh virtual environment whose PATH has
# no cargo; there mypy checks the stubs against typed use (python/tests/typed_use.py) and
# stubtest checks them against the extension itself; then pytest runs python/tests. The one
# abi3 wheel is then tested the same way under the oldest and newest CPython this machine has
# besides (3.9 and 3.13, found on PATH or through pyenv; skipped when absent). The release
# wheel for users: scripts/build-wheel.sh. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=target/wheels-test
rm -rf "$wheels"
bash scripts/maturin.sh build --quiet --locked --profile dev --strip \
    --manifest-path python/Cargo.toml --out "$wheels"
wheel=$(ls "$wheels"/memloop-*.whl)
echo "built $(basename "$wheel")"

# A PATH with no directory that holds cargo: the install must not need a Rust toolchain.
clean_path=$(python3 -c '
import os, sys
print(os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                      if d and not os.path.exists(os.path.join(d, "cargo"))))')
# A fresh environment of interpreter $1 named $2 with the wheel and the given packages.
fresh_env() {
    local python=$1 env=$PWD/target/py-wheel-env$2
    shift 2
    rm -rf "$env"
    PATH="$clean_path" "$python" -m venv "$env"
    PATH="$clean_path" "$env/bin/python" -m pip install -q --disable-pip-version-check \
        pytest==8.3.4 "$@" "$wheel"
    if PATH="$env/bin:$clean_path" command -v cargo >/dev/null; then
        echo "cargo is still on the test environment's PATH" >&2
        exit 1
    fi
    echo "$env"
}
env=$(fresh_env python3 "" mypy==2.4.1)
run() { (cd python/tests && PATH="$env/bin:$clean_path" "$@"); }
run python -m mypy --strict --no-incremental typed_use.py
run python -m mypy.stubtest memloop --ignore-missing-stub \
    --mypy-config-file mypy-stubtest.ini --allowlist stubtest-allowlist.txt
run python -m pytest -q -p no:cacheprovider "$@"

for version in 3.9 3.13; do
    python=""
    if "python$version" -c "" 2>/dev/null; then
        python=$(command -v "python$version")
    elif command -v pyenv >/dev/null; then
        python=$(ls -d "$(pyenv root)/versions/$version".*/bin/python"$version" 2>/dev/null | tail -1)
    fi
    if [ -z "$python" ]; then
        echo "no CPython $version here: the wheel is tested on $(python3 --version) only"
        continue
    fi
    echo "the same wheel on $("$python" --version)"
    env=$(fresh_env "$python" "-$version")
    run python -m pytest -q -p no:cacheprovider "$@"
done
