// "Why?": did this DAG run at or around an instant, and why (or why not)? One dialog for the whole page.
// Opened from a row's "Why?" button (the instant: now) or by clicking a lane of the timeline (the instant
// under the pointer). The verdict comes first; the evidence is folded below it, one <details> per part.
// A native <dialog>: it traps focus, Escape closes it, and focus returns to what opened it.
"use strict";

const WHY_PARTS = [["schedule", "What the schedule decided"], ["airflow", "What Airflow did"], ["next", "What happens next"]];
let whyDialog = null;
let whyOpener = null;

function whyPath(dagId, at) {
  return `/dags/${encodeURIComponent(dagId)}/why${at ? `?at=${encodeURIComponent(at)}` : ""}`;
}

// The instant is typed as the page shows every time: UTC, 24-hour, "2026-03-29 02:30:00" (a "T" for the
// space, no seconds, or a trailing "Z" are taken too). Not a datetime-local input: the browser shows that
// in its own locale (a 12-hour "02:30 AM" under a "UTC" label on an American one).
const WHY_INSTANT = /^\s*(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(?:\.\d+)?Z?\s*$/;

// The ISO instant the field names, null for empty (now); a text it cannot read is an Error naming the format.
function whyInstant(value) {
  if (!value.trim()) return null;
  const parts = WHY_INSTANT.exec(value);
  const instant = parts ? new Date(`${parts[1]}T${parts[2]}${parts[3] || ":00"}Z`) : null;
  if (!instant || Number.isNaN(instant.getTime())) throw new Error(`"${value}" is not an instant: write it as 2026-03-29 02:30:00 (UTC)`);
  return instant.toISOString();
}

function whyShown(iso) {
  return new Date(iso).toISOString().slice(0, 19).replace("T", " ");
}

function buildWhyDialog() {
  const at = el("input", { type: "text", id: "why-at", inputmode: "numeric", size: "19", spellcheck: "false",
    autocomplete: "off", placeholder: "YYYY-MM-DD HH:MM:SS", "aria-describedby": "why-at-help" });
  const form = el("form", { class: "why-ask", method: "dialog" },
    el("label", { for: "why-at" }, "Instant (UTC) "), at,
    el("button", { type: "submit", class: "secondary", value: "ask" }, "Ask"),
    el("span", { id: "why-at-help", class: "sub" }, " 24-hour UTC, any instant from 1900 to 2999; empty means now"));
  const dialog = el("dialog", { id: "why-dialog", "aria-labelledby": "why-title" },
    el("div", { class: "why-head" },
      el("h2", { id: "why-title" }, "Why?"),
      el("button", { type: "button", class: "why-close", "aria-label": "Close" }, "×")),
    form,
    el("div", { class: "why-body", "aria-live": "polite" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let instant;
    try { instant = whyInstant(at.value); } catch (error) {
      dialog.querySelector(".why-body").replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
      return;
    }
    askWhy(dialog.dataset.dagId, instant);
  });
  dialog.querySelector(".why-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => { if (whyOpener && whyOpener.isConnected) whyOpener.focus(); });
  document.body.append(dialog);
  return dialog;
}

function whyEvidence(answer) {
  const parts = WHY_PARTS.map(([section, title]) => {
    const items = answer.evidence.filter((item) => item.section === section);
    if (!items.length) return null;
    return el("details", { class: "why-part", "data-section": section },
      el("summary", {}, `${title} (${items.length})`),
      el("ul", {}, items.map((item) => el("li", { "data-fact": item.fact }, item.text,
        item.record ? el("span", { class: "why-record sub" }, ` — ${item.record}`) : null))));
  });
  if (answer.missing.length) {
    parts.push(el("details", { class: "why-part", "data-section": "missing", open: "" },
      el("summary", {}, `Records not found (${answer.missing.length})`),
      el("ul", {}, answer.missing.map((text) => el("li", {}, text)))));
  }
  return parts;
}

// The run of the lane segment asked about, in Airflow's UI. Its whole id is shown here: Airflow's run
// list cuts a long id (tessera's run record rides in its suffix, "…~phase:0…"); the run's own page has it too.
function whyRunLink(dagId, run) {
  const path = `/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(run.run_id)}`;
  return el("p", { class: "why-run" }, "Its run in Airflow: ",
    airflowLink(path, run.run_id, { class: "dag-link mono", "data-run-id": run.run_id }),
    el("span", { class: "sub" }, ` (${run.state || "no state"}). Airflow's run list cuts long run ids;`
      + " the whole id and its record are here and on the run's own page (Details)."));
}

async function askWhy(dagId, at) {
  const dialog = whyDialog;
  const body = dialog.querySelector(".why-body");
  body.replaceChildren(el("p", { class: "sub" }, "Reading the records…"));
  try {
    const answer = await api(whyPath(dagId, at)); // schedules.js's reader: same origin, Airflow's session
    if (dialog.dataset.dagId !== dagId) return; // another DAG was asked meanwhile
    dialog.querySelector("#why-at").value = whyShown(answer.at);
    body.replaceChildren(
      el("p", { class: "why-verdict", "data-cause": answer.cause }, answer.verdict),
      answer.run ? whyRunLink(dagId, answer.run) : null,
      el("p", { class: "sub" }, `Schedule in force then: ${answer.schedule_in_force}`,
        answer.schedule_now !== answer.schedule_in_force ? ` · now: ${answer.schedule_now}` : ""),
      ...whyEvidence(answer).filter(Boolean));
  } catch (error) {
    body.replaceChildren(el("p", { class: "error", role: "alert" },
      error.status === 403 ? "You may not read this DAG's runs and audit log." : `Could not answer: ${error.message}`));
  }
}

function openWhy(dagId, at, opener) {
  whyDialog = whyDialog || buildWhyDialog();
  whyOpener = opener || document.activeElement;
  whyDialog.dataset.dagId = dagId;
  whyDialog.querySelector("#why-title").textContent = `Why? ${dagId}`;
  whyDialog.querySelector("#why-at").value = at ? whyShown(at) : "";
  if (!whyDialog.open) whyDialog.showModal();
  askWhy(dagId, at);
}

// The row's action: the answer for now.
function whyButton(dagId) {
  const button = el("button", { class: "why secondary", type: "button", "data-dag-id": dagId,
    "aria-haspopup": "dialog", "aria-label": `Why? ${dagId}` }, "Why?");
  button.addEventListener("click", () => openWhy(dagId, null, button));
  return button;
}

// A click on a lane asks about the instant under the pointer (the lane's span is set when it is drawn).
document.addEventListener("click", (event) => {
  const lane = event.target.closest && event.target.closest("tr.timeline svg.lane");
  if (!lane || !lane.dataset.span) return;
  const [start, end] = lane.dataset.span.split(",").map(Number);
  const box = lane.getBoundingClientRect();
  const at = new Date(start + ((event.clientX - box.left) / box.width) * (end - start)).toISOString();
  const dagId = lane.closest("tr.timeline").dataset.dagId;
  openWhy(dagId, at, document.querySelector(`button.why[data-dag-id="${CSS.escape(dagId)}"]`));
});
