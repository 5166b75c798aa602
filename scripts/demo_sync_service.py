"""The demo's stand-in for the sync service that ``tessera_cursor_http`` (dags_examples/cursor_http.py) calls.

``POST /functions/sync`` with ``{"source": <string>, "page_token": <string or null>}`` answers
``200 {"synced": <count>, "next_page": <token or null>, "records": [...]}``: three pages of fake
CRM records per pass. The last page answers ``next_page: null``, so the fire after it starts a
new pass from the first page, as a real source would be re-read from the top. An input the
DAG's input schema would refuse, or a token this service never issued, answers 400, which
fails the fire and leaves the cursor where it was.

Usage: ``demo_sync_service.py <port file>``. It listens on 127.0.0.1 only, on a port the
kernel picks (a fixed one could be taken), and writes that port into ``<port file>`` once it
listens, so the demo can point the connection at it. Stdlib only: it runs beside Airflow,
not inside it.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PATH = "/functions/sync"
PAGES = 3
RECORDS_PER_PAGE = 4
MAX_BODY_BYTES = 64 * 1024
"""The cursor-function input limit; a larger body is not a fire of the example DAG."""


def page_number(token: str | None) -> int | None:
    """The page a token names (1 for null, the first page), or None for a token never issued."""
    if token is None:
        return 1
    prefix, _, number = token.partition("-")
    if prefix == "page" and number.isascii() and number.isdigit() and 2 <= int(number) <= PAGES:
        return int(number)
    return None


def answer(request: Any) -> tuple[int, dict[str, Any]]:
    """The status and JSON body for one request body (already parsed)."""
    if not isinstance(request, dict) or not isinstance(request.get("source"), str):
        return 400, {"error": "give a JSON object with a string `source`"}
    token = request.get("page_token")
    number = page_number(token) if token is None or isinstance(token, str) else None
    if number is None:
        return 400, {"error": f"page_token: {token!r}; give null (the first page) or a token this service issued"}
    first = (number - 1) * RECORDS_PER_PAGE
    records = [
        {"id": f"{request['source']}-{first + offset + 1}", "name": f"Customer {first + offset + 1}"}
        for offset in range(RECORDS_PER_PAGE)
    ]
    next_page = f"page-{number + 1}" if number < PAGES else None
    return 200, {"synced": len(records), "next_page": next_page, "records": records}


class Handler(BaseHTTPRequestHandler):
    """One request: only ``POST /functions/sync`` exists."""

    def do_POST(self) -> None:
        if self.path != PATH:
            self._send(404, {"error": f"only POST {PATH} exists here"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 <= length <= MAX_BODY_BYTES:
            self._send(413, {"error": f"the body is limited to {MAX_BODY_BYTES} bytes"})
            return
        try:
            request = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            self._send(400, {"error": "the body is not JSON"})
            return
        self._send(*answer(request))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        # One line per request, without the client address and date the base class adds.
        print(format % args, file=sys.stderr, flush=True)


def main(port_file: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # Written whole, then renamed: the demo never reads half a number.
    partial = port_file.with_name(port_file.name + ".partial")
    partial.write_text(str(server.server_address[1]))
    os.replace(partial, port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: demo_sync_service.py <port file>")
    main(Path(sys.argv[1]))
