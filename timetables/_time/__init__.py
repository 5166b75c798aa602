"""Pure time arithmetic under the tessera timetables.

Nothing here imports Airflow or reads the clock: every function takes the
instants it needs ("now" included) as integer microseconds since the Unix
epoch and returns plain values, so the scheduling rules can be tested,
property-checked and benchmarked without a scheduler.
"""
