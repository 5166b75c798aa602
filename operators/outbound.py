"""Where tessera may send requests: public addresses only, unless the deployment allows its own network.

Webhook URLs come from DAG files and SCHEDULE statements, an HTTP function's
target from a connection; the request leaves from the dag-processor or a worker,
inside the deployment's network. A target on loopback, link-local (the cloud
metadata service at 169.254.169.254, which hands out credentials), a private or
shared range, multicast, unspecified or reserved space would let whoever writes
that URL make Airflow call services only the deployment can reach. So those are
refused, as literal addresses when the DAG is parsed and as resolved addresses
when the request is sent, unless ``[tessera] allow_private_outbound = True``.

Requests made under this policy follow no redirects (a public URL could redirect
to a private one) and always carry a timeout.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse

CONFIG_SECTION = "tessera"
ALLOW_OPTION = "allow_private_outbound"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix: its addresses reach the IPv4 address in their last 32 bits."""
_PROTOCOL_ASSIGNMENTS = ipaddress.ip_network("192.0.0.0/24")
"""IETF protocol assignments: not globally reachable, though Python 3.11 calls most of it global."""


class OutboundRefused(ValueError):
    """A request target the policy refuses; the message names the field, the target and the way out."""


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
    parts = urllib.parse.urlsplit(url)
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
