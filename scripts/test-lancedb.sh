#!/usr/bin/env bash
# A memloop change stream loaded into LanceDB (`lancedb`, `pyarrow`, `numpy` from PyPI,
# pinned): a real store through the `memloop` command, exported to Parquet, searched in
# LanceDB, then kept in step by a --since delta. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pytest-cli.sh engine/tests/lancedb lancedb==0.40.0 pyarrow==26.0.1 numpy==2.4.6 -- "$@"
