#!/usr/bin/env bash
# The compatibility tier for one older Airflow release: `scripts/compat.sh 3.1.8` builds the wheel, installs it
# beside that Airflow in a fresh virtualenv outside the checkout, runs the fast tier's feature files and the
# shipped-product story against it, and checks the support table (docs/reference/support.json) says what ran.
# tests/compat/tier.py does the work; see its docstring. Needs the project's venv (make venv).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${TESSERA_COMPAT_VENV:-$repo/.venv}
[[ -x $venv/bin/uv ]] || { echo "compat.sh: no uv in $venv; run 'make venv' first" >&2; exit 1; }
cd "$repo"
exec "$venv/bin/python" -m tests.compat.tier "$@"
