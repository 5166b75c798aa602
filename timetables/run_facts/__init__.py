"""What a run knows about its schedule: the facts recorded in its run id, and how a task reads them."""
