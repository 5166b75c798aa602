"""A function behind an HTTP endpoint: an Airflow connection plus a path.

A fire POSTs the input (cursor spliced in) as JSON and takes the JSON body of an
HTTP 200 as the output; any other status is a failed fire, so the cursor stays.
The connection is read when the fire runs, through the Task SDK, so it may live
in the metadata DB, an environment variable or a secrets backend, and the DAG
parses without it. No HTTP provider is needed: the request goes through ``httpx``,
which Airflow itself depends on.
"""

from __future__ import annotations

from typing import Any

import httpx

from .cursor_fire import OutputInvalid

_METHODS = frozenset({"POST", "PUT", "PATCH"})


class HttpFunctionError(Exception):
    """The endpoint answered something other than 200, or could not be reached."""


class HttpFunction:
    """Call ``<connection base URL>/<path>`` with the input as a JSON body.

    The base URL is the connection's host (with its scheme, or ``schema`` as the
    scheme, ``http`` by default) and port. ``login``/``password`` become basic
    auth; a ``headers`` object in the connection's extra is sent as headers.

    :param conn_id: the Airflow connection that names the service.
    :param path: appended to the base URL (``"/functions/digest"``).
    :param method: ``POST`` (default), ``PUT`` or ``PATCH``.
    :param timeout: seconds to wait for the answer; a timeout fails the fire.
    """

    def __init__(self, conn_id: str, path: str = "", *, method: str = "POST", timeout: float = 300.0) -> None:
        if not isinstance(conn_id, str) or not conn_id.strip():
            raise ValueError(f"conn_id: {conn_id!r}; give the id of an Airflow connection to the function's service")
        if not isinstance(path, str):
            raise ValueError(f"path: {path!r}; give the endpoint path as a string, e.g. '/functions/digest'")
        verb = method.upper() if isinstance(method, str) else method
        if verb not in _METHODS:
            raise ValueError(f"method: {method!r}; the input travels as a JSON body: use one of {sorted(_METHODS)}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"timeout: {timeout!r}; give a positive number of seconds")
        self.conn_id = conn_id
        self.path = path
        self.method = verb
        self.timeout = float(timeout)

    def url(self, connection: Any) -> str:
        """The endpoint URL for an Airflow ``Connection``."""
        host = (connection.host or "").rstrip("/")
        if not host:
            raise HttpFunctionError(f"connection {self.conn_id!r} has no host; set it to the function's service")
        if "://" not in host:
            host = f"{connection.schema or 'http'}://{host}"
        if connection.port and host.count(":") < 2:
            host = f"{host}:{connection.port}"
        path = self.path if not self.path or self.path.startswith("/") else "/" + self.path
        return host + path

    def __call__(self, payload: Any) -> Any:
        from airflow.sdk import Connection

        connection = Connection.get(self.conn_id)
        url = self.url(connection)
        headers = connection.extra_dejson.get("headers") or {}
        auth = (connection.login, connection.password or "") if connection.login else None
        try:
            response = httpx.request(self.method, url, json=payload, headers=headers, auth=auth, timeout=self.timeout)
        except httpx.HTTPError as error:
            raise HttpFunctionError(f"{self.method} {url} failed: {error!r}") from error
        if response.status_code != 200:
            raise HttpFunctionError(f"{self.method} {url} answered {response.status_code}: {response.text[:500]!r}")
        try:
            return response.json()
        except ValueError as error:
            # A 200 whose body is not JSON is an invalid output, not an unreachable function.
            raise OutputInvalid(f"{self.method} {url} answered 200 with a body that is not JSON: {error}") from None

    def __repr__(self) -> str:
        return f"HttpFunction({self.conn_id!r}, {self.path!r}, method={self.method!r})"
