#!/usr/bin/env bash
# The project's test command: the whole suite, then the end-to-end tier again in
# claim-checking mode (TILEJIT_CHECK_ANALYSIS=1: the interpreter checks every fact the
# analysis claims against the values it computes).  Both stages run even when the first
# fails; the exit status is the first failing stage's.  Extra arguments go to both pytest
# runs.  Tests that need torch (or a GPU, or ptxas) skip with a reason when it is absent.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(python -c "import os; print(min(2, os.cpu_count() or 1))")
status=0
python -m pytest -n "$jobs" tests "$@" || status=$?
TILEJIT_CHECK_ANALYSIS=1 python -m pytest -n "$jobs" tests/e2e -k interpreter "$@" || \
    { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
exit "$status"
