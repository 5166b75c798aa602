"""The reservation of SQLAlchemy's ``InstanceState`` names (:mod:`tessera.plugin.orm_state_keys`).

The crash itself is repeated on PostgreSQL by ``tests/e2e/test_postgres_dag_list.py``. Here: the list
holds every name SQLAlchemy's ORM stores on a state (a SQLAlchemy upgrade that adds one fails), the
reservation keeps a late name from giving a state a dict of its own (the store that could run the
cycle collector), and Airflow makes it before its ORM exists, in every process, through the policy module.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy.orm
from sqlalchemy.orm.state import InstanceState

from tessera.plugin.orm_state_keys import AFFECTED, STATE_NAMES

only_affected = pytest.mark.skipif(sys.version_info[:2] != AFFECTED, reason="the bug and the reservation are 3.11's")

STORES = (r"\bstate\.(\w+)\s*=(?!=)", r"\bst\.(\w+)\s*=(?!=)", r"\bdel\s+state\.(\w+)")
"""A store on a state in the ORM's modules (its states are named ``state`` or ``st`` there)."""
OWN_STORES = (r"\bself\.(\w+)\s*=(?!=)", r"\bdel\s+self\.(\w+)")
"""A store inside ``InstanceState`` itself."""

PROBE = """
import gc, sys
{prelude}
from sqlalchemy.orm.state import InstanceState

# A long-lived process: many states exist, and each new one lowered the room left in the shared keys.
states = [InstanceState.__new__(InstanceState) for _ in range(40)]
for state in states:
    state.session_id = state.key = state.runid = None
late = InstanceState.__new__(InstanceState)
late._strong_obj = None  # what Session.close and the weakref callback store on every state
print(any(isinstance(referent, dict) for referent in gc.get_referents(late)))
"""


def _stored_names() -> set[str]:
    """Every attribute name the ORM's source stores on an ``InstanceState``, its ``__slots__`` left out."""
    found: set[str] = set()
    for module in Path(sqlalchemy.orm.__file__).parent.glob("*.py"):
        source = module.read_text()
        found |= {name for pattern in STORES for name in re.findall(pattern, source)}
    own = inspect.getsource(InstanceState)
    found |= {name for pattern in OWN_STORES for name in re.findall(pattern, own)}
    return found - set(InstanceState.__slots__)


def _late_name_gets_a_dict(prelude: str) -> bool:
    script = PROBE.format(prelude=prelude)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1] == "True"


def test_every_name_the_orm_stores_on_a_state_is_reserved() -> None:
    missing = _stored_names() - set(STATE_NAMES)
    assert not missing, (
        f"SQLAlchemy {sqlalchemy.__version__} stores {sorted(missing)} on InstanceState; "
        "add them to tessera.plugin.orm_state_keys.STATE_NAMES"
    )


@only_affected
def test_without_the_reservation_a_late_name_gives_the_state_a_dict() -> None:
    """The precondition of the crash, on SQLAlchemy's own class: a store that allocates a dict."""
    assert _late_name_gets_a_dict(prelude="")


@only_affected
def test_the_reservation_keeps_the_late_name_in_the_shared_keys() -> None:
    prelude = "from tessera.plugin.orm_state_keys import reserve_state_names\nassert reserve_state_names()"
    assert not _late_name_gets_a_dict(prelude)


@only_affected
def test_airflow_reserves_them_before_its_orm_exists() -> None:
    """Importing Airflow loads tessera's policy entry point, which reserves the names: every Airflow process."""
    assert not _late_name_gets_a_dict(prelude="import airflow.settings")


@only_affected
def test_a_reservation_made_too_late_says_so() -> None:
    prelude = (
        "from sqlalchemy.orm.state import InstanceState\n"
        "for _ in range(40):\n"
        "    s = InstanceState.__new__(InstanceState); s.session_id = None\n"
        "from tessera.plugin.orm_state_keys import reserve_state_names\n"
        "assert not reserve_state_names()"
    )
    assert _late_name_gets_a_dict(prelude)
