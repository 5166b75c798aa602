"""A function behind an HTTP endpoint: an Airflow connection plus a path.

A fire POSTs the input (cursor spliced in) as JSON and takes the JSON body of an
HTTP 200 as the output; any other status is a failed fire, so the cursor stays.
The connection is read when the fire runs, through the Task SDK, so it may live
in the metadata DB, an environment variable or a secrets backend, and the DAG
parses without it. No HTTP provider is needed: the request goes through tessera's one
outbound client.

The request leaves from a worker, so it obeys :mod:`tessera.operators.outbound`:
the host must resolve to public addresses (unless the deployment allows its own
network) and redirects are not followed. The endpoint is not trusted either: its
body is read up to ``max_response_bytes`` and no further, and ``timeout`` is one
deadline for the whole exchange, so neither an endless body nor a byte-a-second
drip can hold the worker. What a failure records names the status and the body's
size, never the body (an endpoint may echo the input, cursor included, into its
error page), and shows the URL with its credentials and query values redacted.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
from typing import Any

from tessera.operators import outbound
from tessera.timetables.rules import excerpt, not_unicode, parse_duration

from .fire import FireFailed, OutputInvalid

_METHODS = frozenset({"POST", "PUT", "PATCH"})
MAX_TIMEOUT_SECONDS = 3600
"""An answer slower than an hour is an outage, not a function; the task's execution_timeout can be shorter."""
DEFAULT_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The largest cap one may set: the body is held in memory, then decoded and validated there."""


class HttpFunctionError(FireFailed):
    """The endpoint answered something other than 200, or could not (or may not) be reached in time."""

    reason = "FunctionError"


class HttpFunction:
    """Call ``<connection base URL>/<path>`` with the input as a JSON body.

    The base URL is the connection's host (with its scheme, or ``schema`` as the
    scheme, ``http`` by default) and port. ``login``/``password`` become basic
    auth; a ``headers`` object in the connection's extra is sent as headers.

    :param conn_id: the Airflow connection that names the service.
    :param path: appended to the base URL (``"/functions/digest"``).
    :param method: ``POST`` (default), ``PUT`` or ``PATCH``.
    :param timeout: the deadline of the whole exchange (connecting, sending, the answer and its
        whole body), above 0 and at most 3600 s: seconds, or a duration (``"90s"``, a ``timedelta``).
        Past it the fire fails.
    :param max_response_bytes: the longest body read, 1 to 268,435,456 (256 MiB), default
        16,777,216 (16 MiB); a longer one fails the fire as an invalid output, unread past the cap.
    """

    def __init__(
        self,
        conn_id: str,
        path: str = "",
        *,
        method: str = "POST",
        timeout: float | str | datetime.timedelta = 300.0,
        max_response_bytes: int = DEFAULT_RESPONSE_BYTES,
    ) -> None:
        if not isinstance(conn_id, str) or not conn_id.strip():
            raise ValueError(
                f"conn_id: {excerpt(conn_id)}; give the id of an Airflow connection to the function's service"
            )
        if not isinstance(path, str):
            raise ValueError(f"path: {excerpt(path)}; give the endpoint path as a string, e.g. '/functions/digest'")
        for field, text in (("conn_id", conn_id), ("path", path)):
            if problem := not_unicode(field, text):
                raise ValueError(problem)
        verb = method.upper() if isinstance(method, str) else None  # a list or a dict is not even hashable
        if verb not in _METHODS:
            raise ValueError(
                f"method: {excerpt(method)}; the input travels as a JSON body: use one of {sorted(_METHODS)}"
            )
        whole = isinstance(max_response_bytes, int) and not isinstance(max_response_bytes, bool)
        if not whole or not 1 <= max_response_bytes <= MAX_RESPONSE_BYTES:
            raise ValueError(
                f"max_response_bytes: {excerpt(max_response_bytes)}; give a whole number of bytes from 1 to "
                f"{MAX_RESPONSE_BYTES} (256 MiB), e.g. 16777216 (16 MiB, the default)"
            )
        self.conn_id = conn_id
        self.path = path
        self.method = verb
        self.timeout = _seconds(timeout)
        self.max_response_bytes = max_response_bytes

    def url(self, connection: Any) -> str:
        """The endpoint URL for an Airflow ``Connection``: its host, the connection's port unless the host has one."""
        raw = (connection.host or "").strip().rstrip("/")
        if not raw:
            raise HttpFunctionError(f"connection {self.conn_id!r} has no host; set it to the function's service")
        scheme, _, rest = raw.partition("://") if "://" in raw else (connection.schema or "http", "", raw)
        authority, slash, base_path = rest.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if _bare_ipv6(host):
            host = f"[{host}]"
        has_port = host.rpartition("]")[2].startswith(":") if host.startswith("[") else ":" in host
        if connection.port and not has_port:
            host = f"{host}:{int(connection.port)}"
        path = self.path if not self.path or self.path.startswith("/") else "/" + self.path
        return f"{scheme}://{userinfo}{at}{host}{slash}{base_path}{path}"

    def __call__(self, payload: Any) -> Any:
        from airflow.sdk import Connection

        return self.call(Connection.get(self.conn_id), payload)

    def call(self, connection: Any, payload: Any) -> Any:
        """One request to the endpoint ``connection`` names; the output, or a :class:`FireFailed`."""
        url = self.url(connection)
        shown = f"{self.method} {outbound.redact_url(url)}"
        headers = connection.extra_dejson.get("headers") or {}
        auth = (connection.login, connection.password or "") if connection.login else None
        try:
            answer = outbound.send(
                self.method,
                url,
                field=f"connection {self.conn_id!r}",
                private_ok=False,  # the connection's host is checked against the public-address policy
                deadline=self.timeout,
                max_body_bytes=self.max_response_bytes,
                json=payload,
                headers=headers,
                auth=auth,
            )
        except outbound.OutboundRefused as error:
            raise HttpFunctionError(str(error)) from None
        except outbound.DeadlinePassed:
            raise HttpFunctionError(
                f"{shown} did not finish within its timeout of {self.timeout:g} s (connecting, sending, the answer "
                "and its whole body together)"
            ) from None
        except outbound.SendFailed as error:
            # The kind says enough (ConnectError, RemoteProtocolError); a client's text may quote the answer or the URL.
            raise HttpFunctionError(f"{shown} failed: {error}") from None
        cap = self.max_response_bytes
        size = f"{answer.size} bytes, not recorded" if answer.body is not None else f"over {cap} bytes, not read"
        if answer.status != 200:
            redirect = "; redirects are not followed" if answer.redirect else ""
            raise HttpFunctionError(f"{shown} answered {answer.status} (body: {size}){redirect}")
        if answer.body is None:
            raise OutputInvalid(
                f"{shown} answered 200 with a body over max_response_bytes ({self.max_response_bytes} bytes); it was "
                f"not read further (raise max_response_bytes, at most {MAX_RESPONSE_BYTES}, if the answer is really "
                "this large)"
            )
        return decode_output(shown, answer.body)

    def __repr__(self) -> str:
        return f"HttpFunction({self.conn_id!r}, {self.path!r}, method={self.method!r})"


def decode_output(shown: str, body: bytes) -> Any:
    """The JSON of a 200's body; ``OutputInvalid`` (naming its size, never its text) if it is not JSON."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as error:
        # A 200 whose body is not JSON is an invalid output, not an unreachable function.
        why = ": it nests too deeply" if isinstance(error, RecursionError) else ""
        raise OutputInvalid(
            f"{shown} answered 200 with a body that is not JSON ({len(body)} bytes, not recorded{why})"
        ) from None


def _seconds(timeout: object) -> float:
    """The deadline in seconds: a number, or a duration as the timetables read one."""
    if isinstance(timeout, str | datetime.timedelta):
        seconds: object = parse_duration("timeout", timeout) / 1_000_000
    else:
        seconds = timeout
    # `not 0 < t <= max` also refuses NaN, whose comparisons are all false.
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds <= MAX_TIMEOUT_SECONDS:
        raise ValueError(
            f"timeout: {excerpt(timeout)}; give a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS} "
            "(or a duration such as '90s' or a timedelta), e.g. 300"
        )
    return float(seconds)


def _bare_ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False
