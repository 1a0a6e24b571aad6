#!/usr/bin/env bash
# The full kill -9 soak of erasures and key rotations (cli/tests/erasure_crash.rs) at 1,000
# rounds (CI runs 24): every round a real `memloop` child ingests, erases a user or rotates the
# key of an encrypted store and is killed with SIGKILL at a random moment; the store is then
# reopened and checked (no acknowledged write lost, every started erasure completed, the
# receipt log one verifiable chain). Takes about half an hour on two cores.
# Usage: bash scripts/soak-erasure.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
MEMLOOP_SOAK_ROUNDS="${1:-1000}" cargo test --locked -p memloop-cli --test erasure_crash -- --nocapture
