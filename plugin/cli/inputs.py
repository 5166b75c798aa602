"""What ``tessera plan`` and ``tessera why`` accept, checked before any work: the same bounds and words as the REST API.

Every option is checked here and a bad one is a :class:`Refused` whose message names the
option, shows the value safely and says how to fix it; the command prints it after
``tessera plan: `` (or ``tessera why: ``) and exits 2, never with a traceback.

* instants (``--after``, ``--from``, ``--to``): ISO 8601 with a timezone, in tessera's supported
  range (the REST API's :func:`~tessera.plugin.api.inputs.supported_instant`); a naive instant is
  refused everywhere rather than guessed;
* ``--count``: 1 to :data:`~tessera.plugin.api.inputs.MAX_COUNT`, as the API's ``count``;
* a DAG id: Unicode text (a shell can pass bytes that are not UTF-8);
* ``--api``, ``--token``, ``--timeout``: a :class:`RemoteApi`, read through tessera's one outbound
  client (:mod:`tessera.operators.outbound`): http(s) only, no redirect followed (the token would
  go along to wherever it points), the whole exchange within ``--timeout``, the answer at most
  :data:`MAX_RESPONSE_BYTES` (one DAG's :data:`MAX_DAG_RESPONSE_BYTES`) of JSON in the shape of the
  route's response model;
* a DAG path: a folder, or a regular ``.py`` (or ``.zip``) file, which is imported even if it does
  not mention ``airflow`` and ``dag`` (Airflow's safe mode would silently skip it).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import stat
import sys
import urllib.parse
from dataclasses import dataclass
from typing import Any

from tessera.operators import outbound
from tessera.timetables.rules import not_unicode

from .._airflow import dag_bag_class
from ..api.inputs import MAX_COUNT, supported_instant

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The most a fleet's ``--api`` answer may hold (the plan of thousands of DAGs is tens of MB)."""
MAX_DAG_RESPONSE_BYTES = 16 * 1024 * 1024
"""The most one DAG's ``--api`` answer may hold: its plan (at most 1000 runs), a backfill preview (at most
1000 runs) or a why answer are a few hundred kB at most."""
DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 3600.0
EXCERPT_CHARS = 200
"""The most of an error answer's body a message quotes."""
DAG_FILE_SUFFIXES = (".py", ".zip")


class Refused(ValueError):
    """An option or path ``tessera plan`` will not work with; the message says which and why."""


def _shown(text: str, limit: int = 80) -> str:
    return ascii(text if len(text) <= limit else text[:limit] + "...")


def instant(option: str, text: str) -> datetime.datetime:
    """``text`` as an aware instant in the supported range, or :class:`Refused` naming ``option``."""
    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise Refused(
            f"`{option}`: {_shown(text)} is not an ISO 8601 instant; give one such as 2026-01-01T00:00:00Z"
        ) from None
    try:
        return supported_instant(option, moment)
    except ValueError as error:
        raise Refused(str(error)) from None


def count(value: int) -> int:
    if not 1 <= value <= MAX_COUNT:
        raise Refused(f"`--count`: {value}; give 1 to {MAX_COUNT} (the most runs per DAG a plan lists)")
    return value


def dag_id(option: str, text: str) -> str:
    """``text`` if it is Unicode text; a shell passes bytes that are not UTF-8 as lone surrogates."""
    if not_unicode(option, text) is not None:
        raise Refused(
            f"{option}: {ascii(text[:80])} is not UTF-8 text (the shell passed bytes no DAG id holds); give the "
            "DAG's id as Airflow shows it"
        )
    return text


def token(text: str | None) -> str | None:
    """A bearer token is sent in a header: refuse one that a header cannot carry, without showing it."""
    if text is not None and (not text.isascii() or not text.isprintable() or " " in text):
        raise Refused("`--token`: holds spaces, line breaks or non-ASCII characters; give the token as issued")
    return text


def timeout(value: float) -> float:
    if not 0 < value <= MAX_TIMEOUT_SECONDS:  # also refuses NaN, whose comparisons are all false
        raise Refused(
            f"`--timeout`: {value:g}; give the seconds the whole --api exchange may take, above 0 and at most "
            f"{MAX_TIMEOUT_SECONDS:g} (default {DEFAULT_TIMEOUT_SECONDS:g})"
        )
    return value


@dataclass(frozen=True)
class RemoteApi:
    """A running deployment's tessera REST API, as ``--api``, ``--token`` and ``--timeout`` name it.

    The operator's own API server is usually on loopback, so the public-address policy of URLs
    from DAG files does not apply (``private_ok``); every other bound of the outbound client does.
    """

    url: str
    token: str | None
    deadline: float

    @classmethod
    def checked(cls, url: str, bearer: str | None, seconds: float) -> RemoteApi:
        """The three options, each refused naming it before anything is sent."""
        try:
            outbound.check_scheme("`--api`", url)
        except outbound.OutboundRefused as error:
            raise Refused(f"{error}, e.g. http://localhost:8080") from None
        return cls(url.rstrip("/"), token(bearer), timeout(seconds))

    def get(self, path: str, query: dict[str, str], *, shape: Any, what: str, max_bytes: int) -> Any:
        """``GET {api}/tessera/api/v1/{path}?{query}``: its JSON, checked against the route's ``shape``.

        ``shape`` is the route's response model (pydantic), so the answer has every field the
        command prints, or a :class:`Refused` names the first it lacks; ``what`` names the answer;
        a body over ``max_bytes`` is not read further.
        """
        url = f"{self.url}/tessera/api/v1/{path}" + ("?" + urllib.parse.urlencode(query) if query else "")
        shown = outbound.redact_url(self.url)
        try:
            answer = outbound.send(
                "GET",
                url,
                field="`--api`",
                private_ok=True,  # the operator's own API server, on loopback or their network
                deadline=self.deadline,
                max_body_bytes=max_bytes,
                headers={"Authorization": f"Bearer {self.token}"} if self.token else {},
            )
        except outbound.OutboundRefused as error:
            raise Refused(str(error)) from None
        except outbound.DeadlinePassed:
            raise Refused(
                f"`--api`: {shown} did not finish answering within {self.deadline:g} s; check that it is the API "
                "server and that it is up, or give a longer --timeout"
            ) from None
        except outbound.SendFailed as error:
            raise Refused(
                f"`--api`: cannot reach {shown} ({error}); check the address and that the API server runs"
            ) from None
        if answer.redirect:
            target = outbound.origin(urllib.parse.urljoin(url, answer.location or ""))
            raise Refused(
                f"`--api`: {shown} answered {answer.status}, a redirect to {target}; tessera follows no redirects, "
                "so the token goes only where --api points: give the address the API server answers on"
            )
        if answer.body is None:
            raise Refused(
                f"`--api`: {shown} answered {answer.status} with more than {max_bytes} bytes, not read further; "
                "ask for less (--count, --dag-id)"
            )
        if answer.status != 200:
            raise Refused(f"`--api`: {shown} answered {answer.status}: {_excerpt(answer.body)}")
        try:
            body = json.loads(answer.body)
        except (ValueError, RecursionError):
            raise Refused(
                f"`--api`: {shown} did not answer JSON ({_excerpt(answer.body[:80])}); "
                "give the address of an Airflow API server with tessera installed"
            ) from None
        return _shaped(body, shape, f"`--api`: {shown} did not answer a tessera {what}")


def _shaped(body: Any, shape: Any, refusal: str) -> Any:
    """``body`` itself if ``shape`` validates it (its extra fields are kept); else the first problem, named."""
    from pydantic import ValidationError

    try:
        shape.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise Refused(
            f"{refusal} ({where}: {first['msg']}); give the address of an Airflow API server with this tessera "
            "version installed"
        ) from None
    return body


def _excerpt(body: bytes) -> str:
    """The start of a body as one printable line (a terminal shows no control characters from it)."""
    text = " ".join(body[: EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    text = "".join(c if c.isprintable() else "?" for c in text)
    return ascii(text[:EXCERPT_CHARS] + ("..." if len(text) > EXCERPT_CHARS else "")) if text else "an empty body"


def _more_files_than(folder: str, most: int) -> bool:
    """True when ``folder`` holds more than ``most`` DAG files (links to folders are not followed: no loop)."""
    seen = 0
    for _, _, names in os.walk(folder):
        seen += sum(name.endswith(DAG_FILE_SUFFIXES) for name in names)
        if seen > most:
            return True
    return False


def load_dags(path: str, *, max_files: int | None = None) -> Any:
    """Airflow's ``DagBag`` of the DAG files at ``path``, or :class:`Refused` if it is not DAG files.

    With ``max_files``, a folder holding more DAG files than that is refused before any is imported.
    """
    DagBag = dag_bag_class()

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        raise Refused(f"{_shown(path)} does not exist; give a DAG file or a folder of them") from None
    single_file = not stat.S_ISDIR(mode)
    if single_file and not stat.S_ISREG(mode):
        raise Refused(f"{_shown(path)} is not a regular file or a folder; give a DAG file (.py) or a folder")
    if single_file and not path.endswith(DAG_FILE_SUFFIXES):
        raise Refused(f"{_shown(path)} is not a Python file; give a DAG file (.py or .zip) or a folder of them")
    if max_files is not None and not single_file and _more_files_than(path, max_files):
        raise Refused(
            f"{_shown(path)}: holds more than {max_files:,} DAG files (.py, .zip); give a folder of at most "
            f"{max_files:,}, e.g. one of its sub-folders"
        )
    # Airflow logs to stdout while it loads the files; keep stdout for the answer itself.
    with contextlib.redirect_stdout(sys.stderr):
        # A file named on the command line is imported whatever it mentions; in a folder Airflow's
        # safe mode skips files that never say "airflow" and "dag", as the dag-processor does.
        try:
            bag = DagBag(path, safe_mode=not single_file)
        except RuntimeError as error:  # Airflow refuses a folder whose symlinks lead back into it
            if "recursive loop" not in str(error):
                raise
            raise Refused(
                f"{_shown(path)}: a symbolic link leads back into the folder ({_shown(str(error), 200)}); "
                "Airflow's dag-processor refuses such a folder too: remove the link or give a folder without it"
            ) from None
    if not bag.dags and not bag.import_errors:
        raise Refused(f"{_shown(path)}: no DAG found; a DAG file creates a DAG when it is imported")
    return bag
