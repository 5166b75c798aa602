"""``why`` calls a scheduler down exactly when the scheduler's own decision does (real metadata DB).

The scheduler tells downtime from overlap by ``scheduler_downtime`` (a stretch longer than the
health-check grace with no job heartbeating, from the last heartbeat to the next start); ``why``
reads the jobs around one instant (``records.scheduler_at``). Before they agreed, ``why`` counted
a scheduler alive for a grace after its last heartbeat even when it never came back in time, so
a tick in those first seconds of an outage was put down to something else. Random job tables
(overlapping schedulers, restarts within and past the grace), every instant compared.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.operators.schedules.activity import scheduler_downtime
from tessera.plugin.explainer.records import scheduler_at

T0 = datetime.datetime(2026, 3, 1, 10, 0, tzinfo=datetime.timezone.utc)
GRACE = 30  # seconds: Airflow's default [scheduler] scheduler_health_check_threshold, which both read


def t(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


@pytest.fixture
def session(airflow_db: str) -> Iterator[object]:
    from airflow.jobs.job import Job
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as setup:
        setup.execute(delete(Job).where(Job.job_type == "SchedulerJob"))
    with create_session() as held:
        yield held
        held.rollback()
    with create_session() as cleanup:
        cleanup.execute(delete(Job).where(Job.job_type == "SchedulerJob"))


def _jobs(session, spans: list[tuple[float, float]]) -> None:
    from airflow.jobs.job import Job
    from sqlalchemy import delete

    session.execute(delete(Job).where(Job.job_type == "SchedulerJob"))
    for started, last_beat in spans:
        job = Job()
        job.job_type, job.state = "SchedulerJob", "failed"
        job.start_date, job.latest_heartbeat = t(started), t(last_beat)
        session.add(job)
    session.flush()


def _down_by_the_scheduler(session, moment: datetime.datetime) -> bool:
    spans = scheduler_downtime(session, since=t(-1))
    return any(start < moment < end for start, end in spans)


# A job: started at a whole second of the first 10 minutes, heartbeating for 0-5 minutes.
JOB = st.tuples(st.integers(0, 600), st.integers(0, 300)).map(lambda job: (job[0], job[0] + job[1]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(JOB, min_size=1, max_size=5), moments=st.lists(st.integers(0, 1000), min_size=1, max_size=8))
def test_why_and_the_scheduler_agree_on_every_instant(session, jobs, moments) -> None:
    # The last job heartbeats past every instant asked about: every stretch has ended, as the decision reads them.
    jobs = [*jobs, (max(end for _, end in jobs) + 1, 2000)]
    _jobs(session, jobs)
    # Before the first job the table cannot tell (the decision leaves it to overlap; why names the next job).
    for second in (second for second in moments if second >= min(start for start, _ in jobs)):
        moment = t(second + 0.5)  # between heartbeats, as a tick usually is
        down = scheduler_at(session, moment).alive is None
        assert down == _down_by_the_scheduler(session, moment), (jobs, second)


def test_the_first_seconds_of_an_outage_are_downtime(session) -> None:
    """The case that disagreed: the scheduler stopped at 60 s and came back at 300 s; a tick at 70 s."""
    _jobs(session, [(0, 60), (300, 2000)])
    cover = scheduler_at(session, t(70))
    assert cover.alive is None
    assert (cover.last_before.latest_heartbeat, cover.next_after.start_date) == (t(60), t(300))


def test_a_restart_within_the_grace_is_no_downtime(session) -> None:
    _jobs(session, [(0, 60), (60 + GRACE - 5, 2000)])
    assert scheduler_at(session, t(70)).alive is not None


def test_a_last_heartbeat_less_than_the_grace_ago_is_not_yet_downtime(session) -> None:
    """No job came back, and the last beat is seconds old: the scheduler may beat again (``why`` runs now)."""
    from tessera.plugin._airflow import utcnow

    now = utcnow()
    _jobs_at(session, now - datetime.timedelta(minutes=5), now - datetime.timedelta(seconds=5))
    assert scheduler_at(session, now - datetime.timedelta(seconds=2)).alive is not None
    _jobs_at(session, now - datetime.timedelta(minutes=5), now - datetime.timedelta(seconds=GRACE + 10))
    assert scheduler_at(session, now - datetime.timedelta(seconds=GRACE)).alive is None


def _jobs_at(session, started: datetime.datetime, last_beat: datetime.datetime) -> None:
    _jobs(session, [((started - T0).total_seconds(), (last_beat - T0).total_seconds())])
