"""How tessera names itself where Airflow keeps its records: the audit log's owner and the config section.

A person filters Browse > Audit Log by owner to see what tessera did, and sets tessera's options
in ``airflow.cfg`` under one section; both must read the same everywhere, so they are written here
once (a test fails on the literal anywhere else in those roles).
"""

from __future__ import annotations

AUDIT_OWNER = "tessera"
"""The ``owner`` of every audit-log entry tessera writes (Airflow's ``log`` table)."""

CONFIG_SECTION = "tessera"
"""The ``airflow.cfg`` section of tessera's options (``[tessera]``, ``AIRFLOW__TESSERA__...``)."""
