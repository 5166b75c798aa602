"""What the tessera API's domain layer refuses, in its own words; the app maps each kind to an HTTP status.

The modules that decide (the plan, the status, the refresh, the request inputs) raise
these and know nothing about HTTP; :mod:`tessera.plugin.api.app` turns every one into a
response with its status code and ``{"detail": <message>}``, the body FastAPI gives its
own errors, in a single exception handler.
"""

from __future__ import annotations


class ApiError(Exception):
    """A request the API refuses; ``detail`` says what was asked and how to fix it."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(ApiError):
    """The DAG (or page asset) asked for is not one the API serves."""


class Conflict(ApiError):
    """The DAG's current state forbids the change (paused, a run vanished meanwhile)."""


class Invalid(ApiError):
    """The DAG cannot do what was asked as it is stored (import errors, no manual runs, unreadable)."""


class UnsupportedMediaType(ApiError):
    """A write's body is not ``application/json``."""


class Unprocessable(ApiError):
    """A body sent as JSON that is not the JSON object the route takes."""


class TooMuchWork(Unprocessable):
    """A request whose work would pass its route's budget; the detail names the parameter and its largest value."""


class ContentTooLarge(ApiError):
    """A body larger than any route reads."""


class Unavailable(ApiError):
    """The database stayed busy; the same request may succeed when retried."""
