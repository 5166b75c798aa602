"""Notifications of a declared schedule: email and webhook notifiers for its pipelines' runs.

Both are Airflow notifiers used as DAG callbacks, so they run where Airflow runs
DAG callbacks (the dag-processor) once per finished pipeline run, not once per
task attempt. They are additive: a schedule with both NOTIFY and WEBHOOK sends
both, next to any callback the DAG declares itself.

A webhook goes only to a public host (:mod:`tessera.operators.outbound`): its
name is resolved and checked right before the POST (the URL is a template, and
DNS may have changed since the DAG was parsed), redirects are not followed, and
every POST has a timeout. A webhook URL often carries its secret (credentials, a
token in the query), so logs and errors show it through
:func:`~tessera.operators.outbound.redact_url`, and a failure is told by its kind,
never by a client's text, which may quote the URL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from airflow.sdk.bases.notifier import BaseNotifier

from tessera.operators import outbound

WEBHOOK_TIMEOUT_SECONDS = 10
"""The deadline of one webhook POST, answer included; the hook's body is not read."""


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
                shown = outbound.redact_url(url)
                self.log.error("Webhook %s for schedule %s failed: %s", shown, self.schedule, problem)
                failed.append(shown)
        if failed:
            raise RuntimeError(f"webhook: {failed} did not accept the {self.event} notice of {self.schedule!r}")

    @staticmethod
    def _post(url: str, body: bytes) -> str | None:
        """POST ``body`` to ``url``; why it failed, or None when the hook answered 2xx.

        The hook's own body is never read: only its status counts, so an endless answer costs nothing.
        """
        try:
            answer = outbound.send(
                "POST",
                url,
                field="webhook",
                private_ok=False,  # a DAG file's URL: public addresses only (resolved now, not at parse time)
                deadline=WEBHOOK_TIMEOUT_SECONDS,
                max_body_bytes=0,
                content=body,
                headers={"Content-Type": "application/json"},
            )
        except (outbound.OutboundRefused, outbound.SendFailed) as error:
            return str(error)
        except outbound.DeadlinePassed:
            return f"no answer within {WEBHOOK_TIMEOUT_SECONDS} s"
        if answer.redirect:
            return f"answered {answer.status} (a redirect; webhooks do not follow redirects)"
        if not 200 <= answer.status < 300:
            return f"answered {answer.status}"
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
