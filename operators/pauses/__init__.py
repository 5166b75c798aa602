"""Pausing a tessera DAG: by a person with a note, after failed runs in a row, and the history both leave.

:mod:`.notes` pauses and unpauses with a note kept in Airflow's audit log; :mod:`.after_failures` pauses
a DAG after ``pause_after_failures`` failed runs; :mod:`.history` reads back when a DAG was paused, from
tessera's records and Airflow's own, for the schedules, the cursor functions and the explainer.
"""
