"""The load a fleet puts on the scheduler: which DAGs count, their run starts per minute, and the answer's bodies."""
