"""A declared schedule's overlap and inactive-period rules, against the reported cases and a brute-force model.

The model is the policy as Temporal's schedules define it: a trigger that finds the slot
free starts; one that finds it taken is dropped (``skip``), buffered if nothing is buffered
yet (``buffer_one``) or always buffered (``buffer_all``); a run that ends starts the oldest
buffered trigger. The model keeps that queue in memory; the scheduler under test keeps none,
sees only what the metadata database holds (its runs' ends), and must run exactly the same
occurrences.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.timetables._time.durations import US_PER_MINUTE, US_PER_SECOND
from tessera.timetables._time.grid import EpochGrid
from tessera.timetables._time.owed import (
    BUFFER_FULL,
    DUE,
    FORBIDDEN,
    MISSED,
    QUEUE_LIMIT,
    QUEUED,
    REPLAYED,
    SUPERSEDED,
    SUSPENDED,
    Activity,
    Owed,
    slot_freed,
)

MINUTE = EpochGrid(US_PER_MINUTE)
T0 = 1_000 * US_PER_MINUTE  # a whole minute: 16:40 in the cases below
S = US_PER_SECOND


def at(minute: int, second: float = 0) -> int:
    """``T0`` plus minutes and seconds: ``at(1, 5)`` is 16:41:05 in the reported case."""
    return T0 + minute * US_PER_MINUTE + int(second * S)


def owed(activity: Activity, now: int, overlap: str = "buffer_one", replay: bool = False) -> Owed:
    return Owed(MINUTE, phase=0, activity=activity, now=now, overlap=overlap, replay_paused=replay)


# -- the reported case: every 60 s, an 80 s task, runs at 16:41, 16:43, 16:44 (16:42 never created) ----------


def test_the_trigger_that_found_the_slot_taken_runs_when_it_frees():
    # 16:41's run took its slot at 16:41:00 and ended at 16:43:05; 16:42 and 16:43 came due meanwhile.
    after_41 = Activity(last=at(1), freed_before=at(0, 50), freed_after=at(3, 5))
    decision = owed(after_41, now=at(3, 6))
    assert decision.next() == at(2), "the first trigger that found the slot taken runs first"
    assert [decision.treatment(o) for o in (at(2), at(3))] == [QUEUED, BUFFER_FULL]


def test_the_queued_run_is_followed_by_the_trigger_that_came_while_it_ran():
    # 16:42's run was created at 16:43:06 (its slot freed at 16:43:05) and ended at 16:44:40.
    after_42 = Activity(last=at(2), freed_before=at(3, 5), freed_after=at(4, 40))
    decision = owed(after_42, now=at(4, 41))
    assert decision.next() == at(4)
    assert decision.treatment(at(3)) == BUFFER_FULL, "16:43 came while 16:42 was already queued"


@pytest.mark.parametrize(
    ("overlap", "expected", "dropped"),
    [
        pytest.param("skip", at(4), [FORBIDDEN, FORBIDDEN], id="skip-runs-the-next-trigger"),
        pytest.param("buffer_one", at(2), [QUEUED, BUFFER_FULL], id="buffer-one-runs-the-first"),
        pytest.param("buffer_all", at(2), [QUEUED, QUEUED], id="buffer-all-runs-every-one"),
        pytest.param("allow_all", at(2), [QUEUED, QUEUED], id="allow-all-at-the-cap-runs-every-one"),
        pytest.param("cancel_other", at(4), [SUPERSEDED, SUPERSEDED], id="cancel-other-runs-the-next"),
    ],
)
def test_each_overlap_policy(overlap, expected, dropped):
    after_41 = Activity(last=at(1), freed_before=at(0, 50), freed_after=at(3, 5))
    decision = owed(after_41, now=at(3, 6), overlap=overlap)
    assert decision.next() == expected
    assert [decision.treatment(o) for o in (at(2), at(3))] == dropped


def test_downtime_after_the_slot_freed_runs_the_newest_not_a_stale_queued_one():
    # The run ended at 16:43:05 and the scheduler was down until 16:50:30.
    decision = owed(Activity(last=at(1), freed_before=at(0, 50), freed_after=at(3, 5)), now=at(10, 30))
    assert decision.next() == at(10)
    assert decision.treatment(at(2)) == MISSED and decision.treatment(at(10)) == DUE


def test_a_run_that_kept_up_is_followed_by_the_next_occurrence():
    decision = owed(Activity(last=at(1), freed_before=at(0, 10), freed_after=at(1, 20)), now=at(2, 1))
    assert decision.next() == at(2) and decision.treatment(at(2)) == DUE


def test_nothing_due_gives_the_first_occurrence_not_yet_due():
    decision = owed(Activity(last=at(1), freed_after=at(1, 20)), now=at(1, 30), overlap="skip")
    assert decision.next() == at(2) and decision.treatment(at(2)) == DUE


# -- inactive periods (CATCHUP) -------------------------------------------------------------------------


PAUSED = ((at(2, 30), at(6, 30)),)  # paused 16:42:30, unpaused 16:46:30: 16:43 .. 16:46 came due meanwhile


def test_catchup_true_replays_exactly_the_inactive_period_oldest_first_one_at_a_time():
    runs, activity, now = [], Activity(last=at(2), freed_after=at(2, 20), paused=PAUSED), at(6, 31)
    for _ in range(5):
        following = owed(activity, now, replay=True).next()
        runs.append(following)
        now += 20 * S  # each run takes 20 s
        activity = Activity(last=following, freed_before=now - 20 * S, freed_after=now, paused=PAUSED)
    assert runs[:4] == [at(3), at(4), at(5), at(6)]
    assert runs[4] == at(7), "then 16:47, which came due during the replay (16:47:51) and waited behind it"


def test_catchup_false_runs_none_of_the_inactive_period():
    decision = owed(Activity(last=at(2), freed_after=at(2, 20), paused=PAUSED), now=at(6, 31))
    assert decision.next() == at(7), "16:43 .. 16:46 came due while inactive: none of them runs"
    assert {decision.treatment(o) for o in (at(3), at(4), at(5), at(6))} == {SUSPENDED}


def test_a_live_trigger_during_the_replay_waits_behind_it():
    # The third replayed run (16:45) was created 16:47:05; 16:47 came due during the replay.
    activity = Activity(last=at(5), freed_before=at(7, 4), freed_after=at(7, 40), paused=PAUSED)
    decision = owed(activity, now=at(7, 41), replay=True)
    assert decision.next() == at(6), "the replay continues, oldest first"
    after_replay = Activity(last=at(6), freed_before=at(7, 40), freed_after=at(8, 10), paused=PAUSED)
    decision = owed(after_replay, now=at(8, 11), replay=True)
    assert decision.next() == at(7) and decision.treatment(at(7)) == QUEUED
    assert decision.treatment(at(8)) == BUFFER_FULL


def test_a_schedule_created_inactive_replays_from_its_creation_or_runs_nothing_of_it():
    created_inactive = Activity(last=None, paused=((at(0, 10), at(3, 30)),))
    assert owed(created_inactive, now=at(3, 31), replay=True).next() == at(1)
    assert owed(created_inactive, now=at(3, 31)).next() == at(4)
    assert owed(created_inactive, now=at(3, 31)).treatment(at(2)) == SUSPENDED
    assert owed(created_inactive, now=at(3, 31), replay=True).treatment(at(2)) == REPLAYED


def test_a_first_run_owes_only_its_newest_occurrence():
    assert owed(Activity(last=None), now=at(3, 1)).next() == at(3)


# -- against the brute-force model ------------------------------------------------------------------------


def model(policy: str, interval: int, durations: list[int], horizon: int) -> list[int]:
    """Occurrences run, as ``policy`` says, by a scheduler that reacts at its next loop (once a second).

    At each loop: runs that ended free the slot, the oldest buffered trigger starts, then each
    trigger that came due since the last loop starts if the slot is free, else is dropped
    (``skip``), buffered if nothing is (``buffer_one``), or buffered anyway (``buffer_all``, and
    ``allow_all`` at its cap, here one run).
    """
    started: list[int] = []
    buffer: list[int] = []
    busy_until = None
    for now in range(S, horizon + 1, S):
        if busy_until is not None and busy_until <= now:
            busy_until = None
        if busy_until is None and buffer:
            started.append(buffer.pop(0))
            busy_until = now + durations[len(started) - 1]
        for trigger in range(max(interval, (now - S) // interval * interval + interval), now + 1, interval):
            if busy_until is None:
                started.append(trigger)
                busy_until = now + durations[len(started) - 1]
            elif policy in ("buffer_all", "allow_all") or (policy == "buffer_one" and not buffer):
                buffer.append(trigger)
    return started


def scheduler(policy: str, interval: int, durations: list[int], horizon: int) -> list[int]:
    """What the scheduler does, a loop every second that reads only the stored runs."""
    grid, runs = EpochGrid(interval), []  # (occurrence, created, end)
    for now in range(S, horizon + 1, S):
        ended = [end for _, _, end in runs if end <= now]
        if len(ended) < len(runs) or not runs and now < interval:
            continue  # a run is in flight (MAX_CONCURRENT 1), or nothing is due yet
        last, created = (runs[-1][0], runs[-1][1]) if runs else (None, None)
        in_flight = [
            end if end <= now else None for _, made, end in runs if created is not None and made <= created < end
        ]
        activity = Activity(
            last=last,
            freed_before=max((e for e in ended if created is not None and e <= created), default=None),
            freed_after=None if created is None else slot_freed(created, in_flight, 1),
        )
        if last is not None and grid.following(last) > now:
            continue  # the stored next run is not due: the scheduler does not look
        occurrence = Owed(grid, phase=0, activity=activity, now=now, overlap=policy, replay_paused=False).next()
        if occurrence > horizon:
            break
        runs.append((occurrence, now, max(now, occurrence) + durations[len(runs)]))
    return [occurrence for occurrence, _, _ in runs]


@settings(max_examples=300, deadline=None)
@given(
    policy=st.sampled_from(["skip", "buffer_one", "buffer_all", "allow_all"]),
    interval_s=st.integers(10, 120),
    # Runs from a fifth of an interval to three intervals long, never ending on a whole second.
    shares=st.lists(st.integers(20, 300), min_size=60, max_size=60),
)
def test_the_scheduler_runs_what_the_policy_promises(policy, interval_s, shares):
    interval = interval_s * S
    durations = [interval * share // 100 + S // 3 for share in shares]
    horizon = 40 * interval
    expected = model(policy, interval, durations, horizon)
    got = scheduler(policy, interval, durations, horizon)
    assert got == expected, "the same runs, in the same order"


def replaced(interval: int, durations: list[int], horizon: int) -> tuple[list[int], list[int]]:
    """``cancel_other`` as the scheduler runs it: two slots, and a run that starts fails every other one.

    Returns the occurrences run and, for each, when it ended (cut short by the next, or on its own).
    """
    grid, runs = EpochGrid(interval), []  # [occurrence, created, end]
    for now in range(S, horizon + 1, S):
        active = [run for run in runs if run[2] > now]
        last, created = (runs[-1][0], runs[-1][1]) if runs else (None, None)
        if len(active) >= 2 or (last is not None and grid.following(last) > now) or (not runs and now < interval):
            continue
        in_flight = [
            run[2] if run[2] <= now else None for run in runs if created is not None and run[1] <= created < run[2]
        ]
        activity = Activity(
            last=last,
            freed_before=max((run[2] for run in runs if run[2] <= (created or 0)), default=None),
            freed_after=None if created is None else slot_freed(created, in_flight, 2),
        )
        occurrence = Owed(grid, phase=0, activity=activity, now=now, overlap="cancel_other", replay_paused=False).next()
        if occurrence > horizon:
            break
        start = max(now, occurrence)
        for run in active:  # the listener fails the run it replaces when the new one starts
            run[2] = min(run[2], start)
        runs.append([occurrence, now, start + durations[len(runs)]])
    return [run[0] for run in runs], [run[2] for run in runs]


@settings(max_examples=200, deadline=None)
@given(
    interval_s=st.integers(10, 120),
    shares=st.lists(st.integers(20, 300), min_size=60, max_size=60),
)
def test_cancel_other_runs_every_trigger_and_never_two_at_once_for_long(interval_s, shares):
    interval = interval_s * S
    durations = [interval * share // 100 + S // 3 for share in shares]
    horizon = 40 * interval
    ran, ends = replaced(interval, durations, horizon)
    assert ran == list(range(ran[0], ran[-1] + 1, interval)), "every trigger starts, none is queued or dropped"
    for end, following in zip(ends, ran[1:], strict=False):
        assert end <= following + S, "each run is over once the one after it starts (a loop later at most)"


# -- several slots (max_active_runs), the catch-up after downtime, the queue's bound ---------------------------


@pytest.mark.parametrize(
    ("ends", "slots", "freed"),
    [
        pytest.param([None], 1, None, id="one-slot-still-held"),
        pytest.param([at(3, 5)], 1, at(3, 5), id="one-slot-freed-when-the-run-ended"),
        pytest.param([None, at(2)], 3, at(1), id="a-slot-was-free-at-creation"),
        pytest.param([at(4), None, at(2, 30)], 3, at(2, 30), id="three-slots-the-first-to-end-freed-one"),
        pytest.param([at(4), None, at(2, 30), None], 3, at(4), id="one-over-the-cap-the-second-to-end-freed-one"),
    ],
)
def test_when_a_slot_freed(ends, slots, freed):
    assert slot_freed(at(1), ends, slots) == freed


def test_a_tick_that_found_a_free_slot_is_never_held_whatever_the_policy():
    # 16 slots, one taken at 16:41's creation: 16:42 found a slot free and is on time.
    activity = Activity(last=at(1), freed_before=at(0, 50), freed_after=slot_freed(at(1), [None], 16))
    for overlap in ("skip", "buffer_one", "buffer_all", "allow_all"):
        decision = owed(activity, now=at(2, 1), overlap=overlap)
        assert decision.next() == at(2) and decision.treatment(at(2)) == DUE, overlap


def test_after_downtime_the_catch_up_backlog_and_deadline_decide_and_held_ticks_still_queue():
    # The slot freed at 16:43:05 (16:42 and 16:43 held), then the scheduler was down until 16:50:30.
    activity = Activity(last=at(1), freed_before=at(0, 50), freed_after=at(3, 5))
    backfill = owed(activity, now=at(10, 30), overlap="allow_all")
    assert backfill.next() == at(2), "the held ticks first, oldest first"
    assert [backfill.treatment(at(m)) for m in (2, 3, 4, 9, 10)] == [QUEUED, QUEUED, MISSED, MISSED, DUE]
    three = Owed(MINUTE, phase=0, activity=activity, now=at(10, 30), overlap="skip", replay_paused=False, backlog=3)
    assert three.next() == at(8), "Backfill(limit=2): the newest and the two missed before it"
    assert [three.treatment(at(m)) for m in (7, 8, 9, 10)] == [MISSED, DUE, DUE, DUE]
    late = Owed(
        MINUTE,
        phase=0,
        activity=activity,
        now=at(10, 30),
        overlap="allow_all",
        replay_paused=False,
        deadline=4 * US_PER_MINUTE,
    )
    assert late.next() == at(7), "nothing due longer ago than the deadline runs, held or not"
    assert late.treatment(at(2)) == MISSED


def test_the_queue_keeps_the_newest_thousand_held_ticks():
    # A run held the only slot for two days of a one-minute cadence.
    activity = Activity(last=at(0), freed_before=at(-1), freed_after=at(2880, 5))
    decision = owed(activity, now=at(2880, 6), overlap="buffer_all")
    oldest = at(2880 - QUEUE_LIMIT + 1)
    assert decision.next() == oldest
    assert decision.treatment(oldest - US_PER_MINUTE) == BUFFER_FULL
    assert decision.treatment(oldest) == QUEUED


# -- scheduler downtime: the catch-up's, whatever was in flight when the scheduler died ------------------------

# 16:41's run (an 80 s task) was in flight when the scheduler died (last heartbeat 16:41:30); it
# restarted at 16:48:30, and Airflow ran 16:41's task again, to 16:50:00.
DOWN = ((at(1, 30), at(8, 30)),)
RERUN_END = at(10)


def in_flight_at_the_kill(down: tuple[tuple[int, int], ...] = DOWN) -> Activity:
    return Activity(last=at(1), freed_before=at(0, 50), freed_after=slot_freed(at(1), [RERUN_END], 1, down), down=down)


@pytest.mark.parametrize(
    ("ends", "down", "freed"),
    [
        pytest.param([None], DOWN, at(1, 30), id="still-in-flight-died-with-the-scheduler"),
        pytest.param([RERUN_END], DOWN, at(1, 30), id="rerun-after-the-restart-is-not-the-slot"),
        pytest.param([at(1, 20)], DOWN, at(1, 20), id="ended-before-the-scheduler-died"),
        pytest.param([RERUN_END], ((at(0, 30), at(0, 50)),), RERUN_END, id="downtime-before-the-run-was-created"),
        pytest.param([None, None], DOWN, at(1, 30), id="two-slots-both-died"),
    ],
)
def test_a_run_in_flight_when_the_scheduler_died_freed_its_slot_then(ends, down, freed):
    assert slot_freed(at(1), ends, len(ends), down) == freed


@pytest.mark.parametrize("overlap", ["buffer_one", "skip", "buffer_all", "allow_all", "cancel_other"])
def test_ticks_due_while_no_scheduler_ran_are_the_catch_ups_whatever_was_in_flight(overlap):
    decision = owed(in_flight_at_the_kill(), now=RERUN_END + S, overlap=overlap)
    assert decision.next() == at(10), "the newest window runs (Latest)"
    assert {decision.treatment(at(m)) for m in range(2, 10)} == {MISSED}, "no BufferFull, Forbidden or Queued"
    assert decision.treatment(at(10)) == DUE


def test_backfill_after_downtime_runs_the_newest_and_the_limit_before_it_none_queued():
    for overlap in ("buffer_one", "skip", "allow_all"):
        three = Owed(
            MINUTE,
            phase=0,
            activity=in_flight_at_the_kill(),
            now=RERUN_END + S,
            overlap=overlap,
            replay_paused=False,
            backlog=4,
        )
        assert three.next() == at(7), overlap
        assert [three.treatment(at(m)) for m in (6, 7, 8, 9, 10)] == [MISSED, DUE, DUE, DUE, DUE], overlap


def test_a_catch_up_run_created_after_the_restart_carries_no_queue_record():
    # Backfill(limit=3), 16 slots: after the restart at 16:48:30 the scheduler created 16:45 at
    # 16:48:31, then 16:46 a moment later. 16:46 came due after 16:45 and before its creation: a
    # slot was free all along, so it was not held (it read as "Queued" behind a run in flight).
    created = at(8, 31)
    for down in (((at(1, 30), at(8, 30)),), ()):  # known from the job rows, or not (cleaned)
        freed = slot_freed(created, [None], 16, down, came_due=at(5))
        after_45 = Activity(last=at(5), freed_before=at(1, 5), freed_after=freed, down=down)
        caught_up = Owed(
            MINUTE, phase=0, activity=after_45, now=at(8, 32), overlap="allow_all", replay_paused=False, backlog=4
        )
        assert caught_up.next() == at(6), down
        assert [caught_up.treatment(at(m)) for m in (6, 7, 8)] == [DUE, DUE, DUE], down


def test_a_tick_due_before_a_late_run_was_created_with_a_slot_free_was_not_held():
    # 16:45 came due at 16:45 and was created at 16:46:10 (a slow loop, a restart), a slot free.
    assert slot_freed(at(6, 10), [None], 16, came_due=at(5)) == at(5)
    activity = Activity(last=at(5), freed_before=at(1, 5), freed_after=at(5))
    decision = owed(activity, now=at(6, 11), overlap="allow_all")
    assert decision.next() == at(6) and decision.treatment(at(6)) == DUE


def test_without_downtime_spans_a_run_held_across_the_restart_is_taken_for_overlap():
    # ``airflow db clean --tables job`` removed the rows: the documented fallback.
    decision = owed(in_flight_at_the_kill(down=()), now=RERUN_END + S)
    assert decision.next() == at(2)
    assert decision.treatment(at(3)) == BUFFER_FULL


def test_ticks_held_before_the_scheduler_died_keep_their_treatment():
    # 16:41 ran to 16:43:05 and 16:42 queued behind it; the scheduler died at 16:42:30 with 16:41 in flight.
    down = ((at(2, 30), at(8, 30)),)
    activity = Activity(last=at(1), freed_before=at(0, 50), freed_after=slot_freed(at(1), [at(9)], 1, down), down=down)
    decision = owed(activity, now=at(9, 1), overlap="buffer_all")
    assert decision.treatment(at(2)) == QUEUED, "16:42 came due while 16:41 held the slot, the scheduler alive"
    assert decision.treatment(at(3)) == MISSED and decision.treatment(at(9)) == DUE
    assert decision.next() == at(2), "the held tick first, then the catch-up's newest"


@settings(max_examples=200, deadline=None)
@given(
    overlap=st.sampled_from(["skip", "buffer_one", "buffer_all", "allow_all", "cancel_other"]),
    died_s=st.integers(1, 600),
    down_s=st.integers(31, 3600),
    rerun_s=st.integers(0, 600),
    backlog=st.integers(1, 5),
)
def test_every_tick_due_in_or_after_a_downtime_is_the_catch_ups(overlap, died_s, down_s, rerun_s, backlog):
    # The last run (16:41) was in flight when the scheduler died, at any moment after it was created.
    died = at(1) + died_s * S
    restarted = died + down_s * S
    down = ((died, restarted),)
    activity = Activity(
        last=at(1), freed_before=at(0, 50), freed_after=slot_freed(at(1), [restarted + rerun_s * S], 1, down), down=down
    )
    now = restarted + rerun_s * S + S
    decision = Owed(MINUTE, phase=0, activity=activity, now=now, overlap=overlap, replay_paused=False, backlog=backlog)
    newest = MINUTE.at_or_before(now)
    owed_ones = {newest - k * US_PER_MINUTE for k in range(backlog)}
    for occurrence in range(MINUTE.at_or_after(died), newest + 1, US_PER_MINUTE):
        treated = decision.treatment(occurrence)
        assert treated == (DUE if occurrence in owed_ones else MISSED), (occurrence, treated)
