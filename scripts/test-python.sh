#!/usr/bin/env bash
# The Python binding's tests: a virtual environment in target/py-venv (pinned pytest,
# setuptools, wheel from PyPI), `pip install ./ffi/python` (which builds the C library with
# cargo, here with the test profile so it reuses `cargo test`'s build), then pytest.
# Idempotent; run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    pytest==8.3.4 setuptools==75.8.0 wheel==0.45.1
MEMLOOP_CARGO_PROFILE=test "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps ./ffi/python
"$venv/bin/python" -m pytest -q ffi/python/tests "$@"
