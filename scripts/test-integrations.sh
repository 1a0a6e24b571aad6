#!/usr/bin/env bash
# The framework adapters' tests (python/integration_tests): the wheel of python/ (built as
# scripts/test-python.sh builds it), installed with its extras into a fresh virtual environment whose
# PATH has no cargo, with the frameworks' own packages pinned in
# python/integration_tests/requirements.txt (LangGraph, LangMem, langchain-core,
# langchain-tests, the OpenAI Agents SDK). Type-checks the adapters (mypy --strict), runs langchain-tests' standard suites, the
# differential tests against InMemoryStore and SQLiteSession, and the examples. Run by
# scripts/test.sh after test-python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# The wheel of the current sources (cargo has it built already after test-python.sh).
wheels=target/wheels-integrations
rm -rf "$wheels"
bash scripts/maturin.sh build --quiet --locked --profile dev --strip \
    --manifest-path python/Cargo.toml --out "$wheels"
wheel=$(ls "$wheels"/memloop-*.whl)
clean_path=$(python3 -c '
import os
print(os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                      if d and not os.path.exists(os.path.join(d, "cargo"))))')
env=$PWD/target/py-integrations-env
rm -rf "$env"
PATH="$clean_path" python3 -m venv "$env"
PATH="$clean_path" "$env/bin/python" -m pip install -q --disable-pip-version-check \
    -r python/integration_tests/requirements.txt mypy==2.4.1 "$wheel[langgraph,langchain,openai-agents]"
cd python/integration_tests
# Type-checked where their frameworks are installed (the base install's stubtest cannot).
PATH="$env/bin:$clean_path" python -m mypy --strict --no-incremental -p memloop.integrations
PATH="$env/bin:$clean_path" python -m pytest -q -p no:cacheprovider -c pytest.ini --rootdir . . "$@"
