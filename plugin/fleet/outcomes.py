"""One vocabulary for how a run ended, across the REST API, the Schedules page and the README: Airflow's.

A DAG run's state is Airflow's own word (``success``, ``failed``, ``running``, ``queued``).
A cursor function records its fires in its own words (``Succeeded``, ``Failed``, ``Unknown``,
kept in its stored records and metrics); the API says them in Airflow's, so a page or a
script never has to know two words for one outcome.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

AIRFLOW_WORDS = {"Succeeded": "success", "Failed": "failed", "Unknown": "unknown"}
"""A cursor function's outcome -> Airflow's word (``unknown``: the result was never observed)."""


def airflow_word(outcome: str | None) -> str | None:
    return None if outcome is None else AIRFLOW_WORDS.get(outcome, outcome)


RunOutcome = Annotated[str | None, AfterValidator(airflow_word)]
"""How the newest finished run or fire ended, in Airflow's words: success, failed, unknown."""
