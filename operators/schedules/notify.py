"""Notifications of a declared schedule: email and webhook notifiers for its pipelines' runs.

Both are Airflow notifiers used as DAG callbacks, so they run where Airflow runs
DAG callbacks (the dag-processor) once per finished pipeline run, not once per
task attempt. They are additive: a schedule with both NOTIFY and WEBHOOK sends
both, next to any callback the DAG declares itself.

A webhook goes only to a public host (:mod:`tessera.operators.outbound`): its
name is resolved and checked right before the POST (the URL is a template, and
DNS may have changed since the DAG was parsed), redirects are not followed, and
every POST has a timeout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
from airflow.sdk.bases.notifier import BaseNotifier

from tessera.operators import outbound

WEBHOOK_TIMEOUT_SECONDS = 10


def run_notice(context: dict[str, Any], *, schedule: str, event: str) -> dict[str, Any]:
    """The JSON-ready facts of a finished run, from a DAG callback's context."""
    dag = context.get("dag")
    dag_run = context.get("dag_run")
    logical_date = getattr(dag_run, "logical_date", None)
    return {
        "schedule": schedule,
        "event": event,
        "dag_id": getattr(dag, "dag_id", None),
        "run_id": context.get("run_id") or getattr(dag_run, "run_id", None),
        "logical_date": None if logical_date is None else logical_date.isoformat(),
        "reason": context.get("reason"),
    }


class WebhookNotifier(BaseNotifier):
    """POST a JSON notice about a pipeline run to each URL.

    A URL that fails (refused by the outbound policy, unreachable, slow, or answering
    other than 2xx, a redirect included) is logged and the others are still called;
    the failure is then raised so Airflow counts it in ``dag.callback_exceptions``.
    """

    template_fields = ("urls",)

    def __init__(self, urls: Sequence[str], *, schedule: str, event: str = "failure") -> None:
        super().__init__()
        self.urls = list(urls)
        self.schedule = schedule
        self.event = event

    def notify(self, context: dict[str, Any]) -> None:
        body = json.dumps(run_notice(context, schedule=self.schedule, event=self.event)).encode()
        failed = []
        for url in self.urls:
            if problem := self._post(url, body):
                self.log.error("Webhook %s for schedule %s failed: %s", url, self.schedule, problem)
                failed.append(url)
        if failed:
            raise RuntimeError(f"webhook: {failed} did not accept the {self.event} notice of {self.schedule!r}")

    @staticmethod
    def _post(url: str, body: bytes) -> str | None:
        """POST ``body`` to ``url``; why it failed, or None when the hook answered 2xx."""
        try:
            outbound.check_url("webhook", url, resolve=True)
            response = httpx.post(
                url,
                content=body,
                headers={"Content-Type": "application/json"},
                timeout=WEBHOOK_TIMEOUT_SECONDS,
                follow_redirects=False,  # a public hook could redirect to a private address
            )
        except outbound.OutboundRefused as error:
            return str(error)
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            return f"{type(error).__name__}: {error}"
        if response.is_redirect:
            return f"answered {response.status_code} (a redirect; webhooks do not follow redirects)"
        if not response.is_success:
            return f"answered {response.status_code}"
        return None


def email_notifier(to: Sequence[str], *, schedule: str, event: str = "failure") -> BaseNotifier:
    """An SMTP notifier (Airflow's smtp provider, ``smtp_default`` connection) for the schedule's runs."""
    try:
        from airflow.providers.smtp.notifications.smtp import SmtpNotifier
    except ImportError as error:  # pragma: no cover - the provider ships with the distribution
        raise ValueError(
            f"notify: {list(to)!r} needs the smtp provider; install apache-airflow-providers-smtp"
        ) from error
    return SmtpNotifier(
        to=list(to),
        subject=f"[{schedule}] {{{{ dag.dag_id }}}} run {{{{ run_id }}}}: {event}",
        html_content=(
            f"Schedule <b>{schedule}</b>: run {{{{ run_id }}}} of {{{{ dag.dag_id }}}} ended in {event}."
            "<br>Reason: {{ reason }}"
        ),
    )


def notifiers(schedule: str, emails: Sequence[str], urls: Sequence[str], *, event: str) -> list[BaseNotifier]:
    """The notifiers of one event (``"failure"`` or ``"success"``): email first, then webhooks."""
    found: list[BaseNotifier] = []
    if emails:
        found.append(email_notifier(emails, schedule=schedule, event=event))
    if urls:
        found.append(WebhookNotifier(urls, schedule=schedule, event=event))
    return found
