"""Everything tessera sends over the network goes through :func:`send`: one client, one set of bounds.

Webhook URLs come from DAG files and SCHEDULE statements, an HTTP function's target from a connection;
the request leaves from the dag-processor or a worker, inside the deployment's network. A target on
loopback, link-local (the cloud metadata service at 169.254.169.254, which hands out credentials), a
private or shared range, multicast, unspecified or reserved space would let whoever writes that URL make
Airflow call services only the deployment can reach. So those are refused, as literal addresses when the
DAG is parsed and as resolved addresses when the request is sent, unless ``[tessera] allow_private_outbound``.

The CLI's ``--api`` is the operator's own, usually their API server on loopback: :func:`send`'s
``private_ok`` says which kind a caller holds. The rest holds for both: ``http``/``https`` only (never
``file://``), no redirect followed (it would carry the request's token or basic auth to whatever origin
it names, and a public URL could redirect to a private one), one deadline for the whole exchange, and a
body read only up to a cap: the far end is not trusted to stop talking. URLs reach logs and errors only
through :func:`redact_url`. ``tests/test_outbound_guard.py`` fails if another module opens a connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import ipaddress
import math
import os
import socket
import urllib.parse
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import httpx

from .tessera_names import CONFIG_SECTION

SCHEMES = ("http", "https")
ALLOW_OPTION = "allow_private_outbound"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix: its addresses reach the IPv4 address in their last 32 bits."""
_PROTOCOL_ASSIGNMENTS = ipaddress.ip_network("192.0.0.0/24")
"""IETF protocol assignments: not globally reachable, though Python 3.11 calls most of it global."""


class OutboundRefused(ValueError):
    """A request target the policy refuses; the message names the field, the target and the way out."""


class DeadlinePassed(Exception):
    """The exchange did not finish within its deadline; what was under way was dropped."""


class SendFailed(Exception):
    """No answer (refused, reset, not HTTP): its kind and the system's reason, never the client's text (the URL)."""


_LOCATION_CHARS = 2048  # of a redirect's Location: enough for any origin, not all a hostile server pads it with


@dataclass(frozen=True)
class Answer:
    """What came back: the status, and the body unless it was over the cap (``None``: not read further)."""

    status: int
    redirect: bool
    body: bytes | None
    size: int
    """Bytes of body read (at least this many were sent); the declared length when it alone was over the cap."""
    location: str | None = None
    """A redirect's ``Location`` (not followed), as sent: relative or absolute."""


def private_allowed() -> bool:
    """``[tessera] allow_private_outbound`` from airflow.cfg or ``AIRFLOW__TESSERA__ALLOW_PRIVATE_OUTBOUND``."""
    from airflow.configuration import conf

    raw = conf.get(CONFIG_SECTION, ALLOW_OPTION, fallback="False")
    value = str(raw).strip().lower()
    if value not in ("true", "false", "1", "0", "t", "f"):
        raise ValueError(f"[{CONFIG_SECTION}] {ALLOW_OPTION}: {raw!r}; give True or False")
    return value in ("true", "1", "t")


def address_problem(address: Address) -> str | None:
    """What kind of non-public address this is (``"a link-local address"``), or None if it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 form that reaches an IPv4 address is judged by that address.
        embedded = (
            address.ipv4_mapped
            or address.sixtofour
            or (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else None)
        )
        if embedded is not None:
            return address_problem(embedded)
    for test, kind in (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address (where cloud metadata services answer)"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved or address in _PROTOCOL_ASSIGNMENTS, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "an address that is not publicly routable"),
    ):
        if test:
            return kind
    return None


def literal_address(host: str) -> Address | None:
    """The address ``host`` spells without DNS, in any form a resolver accepts (``2852039166``, ``0xa9.254.1``)."""
    text = host.strip("[]").split("%")[0].rstrip(".")  # brackets, an IPv6 zone, a trailing root dot
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    try:
        # inet_aton takes the legacy forms (decimal, octal, hex, fewer than four parts) that
        # ip_address refuses but getaddrinfo, and so every HTTP client, resolves.
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def host_problem(host: str) -> str | None:
    """Why ``host`` is refused without resolving it (a non-public literal address, a localhost name), or None."""
    address = literal_address(host)
    if address is not None:
        problem = address_problem(address)
        return None if problem is None else f"is {problem}"
    name = host.rstrip(".").lower()
    if not name:
        return "is empty"
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        return "is a loopback name"
    return None


def resolved_problem(host: str, port: int | None) -> str | None:
    """Why ``host`` is refused once resolved (any of its addresses non-public), or None if all are public."""
    if literal_address(host) is not None or not host:
        return host_problem(host)
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        return f"does not resolve ({type(error).__name__})"
    for *_, sockaddr in answers:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if problem := address_problem(address):
            return f"resolves to {problem} ({address})"
    return None


def check_url(field: str, url: str, *, resolve: bool) -> None:
    """Refuse ``url`` unless its host is public; ``resolve`` looks the name up (at send time, not parse time).

    The message names the host, never the whole URL: a webhook's path often holds its token.

    :raises OutboundRefused: naming ``field``, the host and how to allow it.
    """
    if private_allowed():
        return
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        raise OutboundRefused(f"{field}: {redact_url(url)}; give an http(s) URL with a host name or address") from None
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        port = None
    problem = resolved_problem(host, port) if resolve else host_problem(host)
    if problem:
        raise OutboundRefused(
            f"{field}: host {host!r} {problem}; tessera sends requests only to public addresses. Use a public "
            f"host, or set [{CONFIG_SECTION}] {ALLOW_OPTION} = True in airflow.cfg "
            f"(AIRFLOW__{CONFIG_SECTION.upper()}__{ALLOW_OPTION.upper()}=True) if this deployment must call "
            "its own network"
        )


def check_scheme(field: str, url: str) -> None:
    """Refuse ``url`` unless it is ``http://`` or ``https://`` with a host (``file://`` would read a local file).

    :raises OutboundRefused: naming ``field`` and the URL, redacted.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or out of range
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in SCHEMES or not parts.hostname:
        raise OutboundRefused(
            f"{field}: {ascii(redact_url(url)[:200])}; tessera sends requests only to http:// or https:// URLs "
            "with a host"
        )


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: where a request goes, without its path, query or credentials."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = "" if parts.port is None else f":{parts.port}"
    except ValueError:
        return "<a URL that cannot be parsed>"
    host = parts.hostname or ""
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}"


def redact_url(url: str) -> str:
    """``url`` as logs and messages may show it: credentials and query values replaced by ``***``.

    ``https://user:pass@hooks.example.com/x?token=abc#frag`` reads
    ``https://***@hooks.example.com/x?token=***#***``: the host, path and query names stay so the
    target can be found; a password or a token in the query never reaches a log line.
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket: nothing of it can be shown safely
        return "<a URL that cannot be parsed>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(
        name + ("=***" if sep else "") for name, sep, _ in (item.partition("=") for item in parts.query.split("&"))
    )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query, fragment="***" if parts.fragment else ""))


def send(
    method: str, url: str, *, field: str, private_ok: bool, deadline: float, max_body_bytes: int, **request: Any
) -> Answer:
    """One request, finished within ``deadline`` seconds (connecting, sending, the answer and its body).

    ``url`` must be http(s) (:func:`check_scheme`). ``private_ok=False``: a URL a DAG file, a connection or
    a template gives, whose host must resolve to public addresses (:func:`check_url`); ``True``: one the
    operator gave the CLI (``--api``), which may name their own network. A redirect is never followed: the
    3xx is the answer, with its ``location``. The body is read up to ``max_body_bytes`` (0: not at all), the
    connection dropped past it. ``request`` goes to ``httpx`` (``json``, ``content``, ``headers``, ``auth``).

    :raises OutboundRefused: the URL's scheme, or its host under the public-address policy; nothing was sent.
    :raises DeadlinePassed: past the deadline, however the far end paced its bytes.
    :raises SendFailed: the request failed (unreachable, reset, not HTTP).
    """
    if not 0 < deadline < math.inf:
        raise ValueError(f"deadline: {deadline!r}; give the seconds the whole exchange may take, above 0")
    check_scheme(field, url)
    if not private_ok:
        check_url(field, url, resolve=True)
    exchange = _exchange(method, url, deadline, max_body_bytes, request)
    try:
        return _run(asyncio.wait_for(exchange, deadline))
    except asyncio.TimeoutError:
        raise DeadlinePassed(f"no answer within {deadline:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise SendFailed(_failure(error)) from error


def _failure(error: BaseException) -> str:
    """A client error as its type and the system's reason for the socket error under it (``ConnectError: ...``)."""
    cause: BaseException | None = error
    while cause is not None:
        # The errno's own words (asyncio's text quotes the address); a resolver's error has a negative errno
        # and its own words; a wrapper's OSError ("All connection attempts failed") has neither.
        if isinstance(cause, OSError) and (cause.errno or 0) > 0:
            return f"{type(error).__name__}: {os.strerror(cause.errno)}"
        if isinstance(cause, OSError) and cause.errno and cause.strerror:
            return f"{type(error).__name__}: {cause.strerror}"
        cause = cause.__cause__ or cause.__context__
    return type(error).__name__


async def _exchange(method: str, url: str, deadline: float, cap: int, request: dict[str, Any]) -> Answer:
    # A per-read timeout cannot stop a byte-a-second drip; wait_for around all of this does.
    async with httpx.AsyncClient(timeout=deadline, follow_redirects=False) as client:
        async with client.stream(method, url, **request) as response:
            status, redirect = response.status_code, response.is_redirect
            location = response.headers.get("location") if redirect else None
            answer = functools.partial(Answer, status, redirect, location=location and location[:_LOCATION_CHARS])
            declared = response.headers.get("content-length", "")
            if cap == 0:
                return answer(None, 0)
            if declared.isdigit() and len(declared) <= 20 and int(declared) > cap:  # refused unread
                return answer(None, int(declared))
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > cap:  # hang up: the rest is never read
                    return answer(None, len(body))
            return answer(bytes(body), len(body))


def _run(exchange: Coroutine[Any, Any, Answer]) -> Answer:
    """Run the exchange on an event loop of its own (in a thread when this one already runs a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(exchange)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, exchange).result()
