"""What the surfaces show about the fleet, read alike for the page, the REST API and the CLI.

Each DAG's schedule, plan, status and lane, its broken file, and the load the fleet puts on the scheduler.
"""
