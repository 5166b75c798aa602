"""Keeps SQLAlchemy's ``InstanceState`` out of a CPython 3.11 use-after-free that killed the API server.

``GET /api/v2/dags?limit=3000`` repeated killed ``airflow api-server`` (SIGSEGV, or glibc's
``free(): invalid size``). The cause is CPython 3.11's, reached through SQLAlchemy:

* CPython 3.11 keeps a plain object's attributes in an inline array indexed by keys shared by all
  instances of its class. The shared keys take new names only while the class is young (30 at
  most, and every new instance lowers the room left), so in a long-running process a name first
  stored late is not among them, and storing it on an instance turns the array into a dict.
* Allocating that dict can run the cycle collector. If the collector then calls a weakref callback
  that stores a name outside the shared keys on the *same* object, the callback converts the same
  array into a dict of its own and frees the array; the interrupted store then builds its dict on
  the freed array (a 30-line script crashes 3.11.2 and 3.11.7; 3.10.13, 3.12.1 and 3.13.0 survive it).
* SQLAlchemy's ``InstanceState`` has such a callback: ``_cleanup``, called when its mapped object
  dies, sets ``session_id`` and ``_strong_obj``; ``Session.close`` sets ``_strong_obj`` on every
  state it detaches. In an API server that had answered three such pages, ``_strong_obj`` was not
  a shared key. Airflow's DAG list makes the cyclic garbage by the thousand (a ``DagModel`` and its
  ``DagTag`` rows point at each other), so each close of a 3,000-DAG page was thousands of chances
  for the collector to run inside such a store.

:func:`reserve_state_names` stores every name SQLAlchemy's ORM stores on a state (:data:`STATE_NAMES`)
on one state before any other exists, which makes them all shared keys: no attribute store on a
state then allocates, so the collector cannot run inside one, and the callback's own stores write
in place. (The one other allocation, a state's ``__dict__`` made on the first read of a memoized
property, happens while the ORM is using the object, when its callback cannot run.)
:mod:`tessera.plugin.policy` calls it when Airflow loads it, which Airflow does first thing in every
one of its processes, before it configures the ORM.
``tests/plugin/test_orm_state_keys.py`` fails when a SQLAlchemy upgrade stores a name this list lacks.
"""

from __future__ import annotations

import gc
import logging
import sys

log = logging.getLogger(__name__)

AFFECTED = (3, 11)
"""The CPython minor version with the bug."""

STATE_NAMES = (
    "_deleted",
    "_instance_dict",
    "_last_known_values",
    "_load_pending",
    "_orphaned_outside_of_session",
    "_pending_mutations",
    "_strong_obj",
    "callables",
    "expired",
    "identity_token",
    "insert_order",
    "key",
    "load_options",
    "load_path",
    "modified",
    "parents",
    "runid",
    "session_id",
)
"""Every attribute name SQLAlchemy's ORM stores on an ``InstanceState`` outside its ``__slots__``."""


def reserve_state_names() -> bool:
    """Make :data:`STATE_NAMES` shared keys of ``InstanceState``; False if one no longer fits (logged).

    Stores the names on one new state, a bare one that belongs to no session and is then dropped;
    a name that does not fit gives that state a dict of its own, which is how a miss is seen.
    """
    if sys.version_info[:2] != AFFECTED:
        return True
    from sqlalchemy.orm.state import InstanceState

    state = InstanceState.__new__(InstanceState)
    for name in STATE_NAMES:
        setattr(state, name, None)
    if any(isinstance(referent, dict) for referent in gc.get_referents(state)):
        # Too late in this process (states were made first): the crash stays possible here.
        log.warning(
            "tessera: SQLAlchemy's InstanceState names could not be reserved in this process; "
            "CPython 3.11 may crash it when the cycle collector runs inside a session close "
            "(use Python 3.12 or later, or import tessera.plugin.policy before any ORM use)"
        )
        return False
    return True
