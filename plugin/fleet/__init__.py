"""The fleet the Schedules page shows: which DAGs it lists, in which order, and what it reads of each."""
