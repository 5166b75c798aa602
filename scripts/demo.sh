#!/usr/bin/env bash
# The demo: real Airflow (scheduler, dag-processor, API server, triggerer) via `airflow standalone`,
# on an embedded SQLite metadata DB, with dags_examples/ as the DAGs folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export AIRFLOW_HOME="${AIRFLOW_HOME:-$repo/.demo}"
export AIRFLOW__CORE__DAGS_FOLDER="$repo/dags_examples"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__API__PORT="${TESSERA_DEMO_PORT:-8080}"
# Example DAGs start unpaused so the UI shows real tessera runs within minutes.
export AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION=False
# SQLite has one writer: every process waits up to a minute for the write lock instead of sqlite3's 5 s,
# after which an unpause in the UI answered 500 while the scheduler and dag-processor were writing.
sqlite_settings=tessera.plugin.sqlite_settings
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS="${AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS:-$sqlite_settings.CONNECT_ARGS}"
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC="${AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC:-$sqlite_settings.ASYNC_CONNECT_ARGS}"
# The refresh example re-runs its SQL against this SQLite file.
export AIRFLOW_CONN_TESSERA_DEMO_SQLITE="{\"conn_type\": \"sqlite\", \"host\": \"$AIRFLOW_HOME/dashboard.db\"}"
mkdir -p "$AIRFLOW_HOME"
cat <<MSG
tessera demo
  AIRFLOW_HOME  $AIRFLOW_HOME
  UI            http://localhost:${AIRFLOW__API__PORT}
  login         admin, password printed below by Airflow (also in $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated)
  stop          Ctrl-C
MSG
exec airflow standalone
