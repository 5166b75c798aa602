"""A function's status shows the next fire as its nominal instant, with no phase baked in (seed 002).

"The 'Next refresh' the web app shows you is the nominal instant, exactly 09:00, with no jitter
baked in." The phase only moves when the run may start; that instant is a field of its own.
"""

from __future__ import annotations

import datetime

from tessera.operators.functions.status import function_status


def test_next_fire_time_is_the_nominal_occurrence_and_the_phased_start_is_its_own_field(cursor_dags):
    dag_id = "cursor_t_nominal_next"
    cursor_dags.add(dag_id, prelude="from tessera.timetables import Fixed", schedule='Every("1h", phase=Fixed("7m"))')
    status = function_status(dag_id)
    assert status.next_fire_time is not None
    assert (status.next_fire_time.minute, status.next_fire_time.second) == (0, 0)  # the hour, not 7 past
    assert status.next_start_time == status.next_fire_time + datetime.timedelta(minutes=7)
    shown = status.to_dict()
    assert shown["nextFireTime"] == status.next_fire_time.isoformat()
    assert shown["nextStartTime"] == status.next_start_time.isoformat()
