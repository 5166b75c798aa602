"""What ``tessera plan`` accepts, checked before any work: the same bounds and words as the REST API.

Every option is checked here and a bad one is a :class:`Refused` whose message names the
option, shows the value safely and says how to fix it; ``tessera plan`` prints it after
``tessera plan: `` and exits 2, never with a traceback.

* instants (``--after``, ``--from``, ``--to``): ISO 8601 with a timezone, in tessera's supported
  range (the REST API's :func:`~tessera.plugin.api.inputs.supported_instant`); a naive instant is
  refused everywhere rather than guessed;
* ``--count``: 1 to :data:`~tessera.plugin.api.inputs.MAX_COUNT`, as the API's ``count``;
* ``--api``: an ``http://`` or ``https://`` URL (``urllib`` would also read ``file://``), read with
  redirects to other schemes refused and at most :data:`MAX_RESPONSE_BYTES` of JSON;
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
import urllib.request
from typing import Any

from .api.inputs import MAX_COUNT, supported_instant

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The most a ``--api`` answer may hold (a plan of thousands of DAGs is tens of MB)."""
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


def api_url(text: str) -> str:
    """``text`` if it is an http(s) URL with a host; anything else (``file://``, no scheme) is refused."""
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise Refused(
            f"`--api`: {_shown(text)}; give the API server's http:// or https:// URL, e.g. http://localhost:8080"
        )
    return text


def token(text: str | None) -> str | None:
    """A bearer token is sent in a header: refuse one that a header cannot carry, without showing it."""
    if text is not None and (not text.isascii() or not text.isprintable() or " " in text):
        raise Refused("`--token`: holds spaces, line breaks or non-ASCII characters; give the token as issued")
    return text


class _SameSchemeRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to another http(s) URL (urllib also follows ``ftp://``)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        api_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def get_json(api: str, bearer: str | None, path: str, query: dict[str, str]) -> Any:
    """``GET {api}/tessera/api/v1/{path}?{query}`` as JSON (HTTP errors raise ``urllib.error.HTTPError``)."""
    url = f"{api_url(api).rstrip('/')}/tessera/api/v1/{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    request = urllib.request.Request(url)
    if token(bearer):
        request.add_header("Authorization", f"Bearer {bearer}")
    opener = urllib.request.build_opener(_SameSchemeRedirects)
    with opener.open(request, timeout=120) as response:
        body = response.read(MAX_RESPONSE_BYTES + 1)
    if len(body) > MAX_RESPONSE_BYTES:
        raise Refused(f"`--api`: {api} answered more than {MAX_RESPONSE_BYTES} bytes; ask for fewer runs (--count)")
    try:
        return json.loads(body)
    except ValueError:
        raise Refused(
            f"`--api`: {api} did not answer JSON ({_shown(body[:80].decode('utf-8', 'replace'))}); "
            "give the address of an Airflow API server with tessera installed"
        ) from None


def load_dags(path: str) -> Any:
    """Airflow's ``DagBag`` of the DAG files at ``path``, or :class:`Refused` if it is not DAG files."""
    from airflow.dag_processing.dagbag import DagBag

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        raise Refused(f"{_shown(path)} does not exist; give a DAG file or a folder of them") from None
    single_file = not stat.S_ISDIR(mode)
    if single_file and not stat.S_ISREG(mode):
        raise Refused(f"{_shown(path)} is not a regular file or a folder; give a DAG file (.py) or a folder")
    if single_file and not path.endswith(DAG_FILE_SUFFIXES):
        raise Refused(f"{_shown(path)} is not a Python file; give a DAG file (.py or .zip) or a folder of them")
    # Airflow logs to stdout while it loads the files; keep stdout for the answer itself.
    with contextlib.redirect_stdout(sys.stderr):
        # A file named on the command line is imported whatever it mentions; in a folder Airflow's
        # safe mode skips files that never say "airflow" and "dag", as the dag-processor does.
        bag = DagBag(path, safe_mode=not single_file)
    if not bag.dags and not bag.import_errors:
        raise Refused(f"{_shown(path)}: no DAG found; a DAG file creates a DAG when it is imported")
    return bag
