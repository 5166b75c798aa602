"""A function behind an HTTP endpoint: an Airflow connection plus a path.

A fire POSTs the input (cursor spliced in) as JSON and takes the JSON body of an
HTTP 200 as the output; any other status is a failed fire, so the cursor stays.
The connection is read when the fire runs, through the Task SDK, so it may live
in the metadata DB, an environment variable or a secrets backend, and the DAG
parses without it. No HTTP provider is needed: the request goes through ``httpx``,
which Airflow itself depends on.

The request leaves from a worker, so it obeys :mod:`tessera.operators.outbound`:
the host must resolve to public addresses (unless the deployment allows its own
network), redirects are not followed, and the timeout is bounded. What a failure
records names the status and the body's size, never the body: an endpoint may
echo the input, cursor included, into its error page.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx

from tessera.operators import outbound

from .fire import FireFailed, OutputInvalid

_METHODS = frozenset({"POST", "PUT", "PATCH"})
MAX_TIMEOUT_SECONDS = 3600
"""An answer slower than an hour is an outage, not a function; the task's execution_timeout can be shorter."""


class HttpFunctionError(FireFailed):
    """The endpoint answered something other than 200, or could not (or may not) be reached."""

    reason = "FunctionError"


class HttpFunction:
    """Call ``<connection base URL>/<path>`` with the input as a JSON body.

    The base URL is the connection's host (with its scheme, or ``schema`` as the
    scheme, ``http`` by default) and port. ``login``/``password`` become basic
    auth; a ``headers`` object in the connection's extra is sent as headers.

    :param conn_id: the Airflow connection that names the service.
    :param path: appended to the base URL (``"/functions/digest"``).
    :param method: ``POST`` (default), ``PUT`` or ``PATCH``.
    :param timeout: seconds to wait for the answer, in (0, 3600]; a timeout fails the fire.
    """

    def __init__(self, conn_id: str, path: str = "", *, method: str = "POST", timeout: float = 300.0) -> None:
        if not isinstance(conn_id, str) or not conn_id.strip():
            raise ValueError(f"conn_id: {conn_id!r}; give the id of an Airflow connection to the function's service")
        if not isinstance(path, str):
            raise ValueError(f"path: {path!r}; give the endpoint path as a string, e.g. '/functions/digest'")
        verb = method.upper() if isinstance(method, str) else method
        if verb not in _METHODS:
            raise ValueError(f"method: {method!r}; the input travels as a JSON body: use one of {sorted(_METHODS)}")
        # `not 0 < t <= max` also refuses NaN, whose comparisons are all false.
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_SECONDS:
            raise ValueError(
                f"timeout: {timeout!r}; give a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS}, e.g. 300"
            )
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

        return self.call(Connection.get(self.conn_id), payload)

    def call(self, connection: Any, payload: Any) -> Any:
        """One request to the endpoint ``connection`` names; the output, or a :class:`FireFailed`."""
        url = self.url(connection)
        shown = _without_userinfo(url)
        try:
            outbound.check_url(f"connection {self.conn_id!r}", url, resolve=True)
        except outbound.OutboundRefused as error:
            raise HttpFunctionError(str(error)) from None
        headers = connection.extra_dejson.get("headers") or {}
        auth = (connection.login, connection.password or "") if connection.login else None
        try:
            response = httpx.request(
                self.method,
                url,
                json=payload,
                headers=headers,
                auth=auth,
                timeout=self.timeout,
                follow_redirects=False,  # a public endpoint could redirect to a private address
            )
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            # The type says enough (ConnectError, ReadTimeout); a protocol error's text may quote the answer.
            raise HttpFunctionError(f"{self.method} {shown} failed: {type(error).__name__}") from None
        size = f"{len(response.content)} bytes, not recorded"
        if response.status_code != 200:
            redirect = "; redirects are not followed" if response.is_redirect else ""
            raise HttpFunctionError(f"{self.method} {shown} answered {response.status_code} (body: {size}){redirect}")
        try:
            return response.json()
        except ValueError:
            # A 200 whose body is not JSON is an invalid output, not an unreachable function.
            raise OutputInvalid(f"{self.method} {shown} answered 200 with a body that is not JSON ({size})") from None

    def __repr__(self) -> str:
        return f"HttpFunction({self.conn_id!r}, {self.path!r}, method={self.method!r})"


def _without_userinfo(url: str) -> str:
    """The URL as messages show it: credentials written into the connection's host are dropped."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
