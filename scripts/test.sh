#!/usr/bin/env bash
# The project's test command: the whole suite, then the end-to-end tier again in
# claim-checking mode (TILEJIT_CHECK_ANALYSIS=1: the interpreter checks every fact the
# analysis claims against the values it computes).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(python -c "import os; print(min(2, os.cpu_count() or 1))")
python -m pytest -n "$jobs" tests "$@"
TILEJIT_CHECK_ANALYSIS=1 python -m pytest -n "$jobs" tests/e2e -k interpreter "$@"
