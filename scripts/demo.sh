#!/usr/bin/env bash
# The demo (`make demo`): real Airflow (API server, dag-processor, scheduler, triggerer) on an embedded SQLite
# metadata DB, with dags_examples/ as the DAGs folder and a local stand-in for the HTTP example's service.
# scripts/demo_supervisor.py does the work; see its docstring.
#
#   TESSERA_DEMO_HOME   the demo's AIRFLOW_HOME (default <repo>/.demo). Its airflow.cfg holds every demo setting,
#                       so `scripts/demo-airflow <command>` runs any airflow command against the demo.
#   TESSERA_DEMO_PORT   the UI and API port (default 8080)
#   TESSERA_DEMO_DAGS   the DAGs folder (default <repo>/dags_examples); a file added there shows within 30 s
#   TESSERA_DEMO_VENV   the virtualenv holding Airflow and tessera (default <repo>/.venv, made by `make venv`)
#
# Each component logs to <home>/logs/<component>.log; the terminal keeps the ready banner.
# Stop it with Ctrl-C, or `kill <pid>` (SIGTERM) of the demo or of the make running it: either stops every
# process the demo started, within a minute.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${TESSERA_DEMO_VENV:-$repo/.venv}
if [[ ! -x $venv/bin/airflow ]]; then
    echo "demo.sh: no Airflow in $venv; run 'make demo' (it installs one), or set TESSERA_DEMO_VENV" >&2
    exit 1
fi
# exec: the demo's PID is the supervisor's, so `kill <pid>` reaches the process that stops everything.
exec "$venv/bin/python" "$repo/scripts/demo_supervisor.py" "$repo" "$venv/bin"
