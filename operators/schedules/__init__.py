"""Declared schedules: Schedule, ScheduleSet, the SCHEDULE statement, policy mapping, plan check, notify, waves."""
