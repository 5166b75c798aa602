"""Tessera's Airflow wiring and its surfaces.

The plugin, the dag policy, the listeners and the macros, plus one package per surface feature:
:mod:`.fleet` (what the page, REST API and CLI show), :mod:`.actions` (refresh, backfill
preview, pause), :mod:`.explainer` (why a DAG did or did not run), :mod:`.cli`, :mod:`.api`
(routes and HTTP only) and the page in ``ui/``.
"""
