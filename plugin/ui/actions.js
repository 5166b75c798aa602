// What a user with the rights may do to a DAG from its row: backfill a range (the runs it will create shown
// first, Airflow's own backfill created on confirm) and pause or unpause it with a note. The page shows a
// button only when the API says the user may (a row's `may`); the routes authorize each action again.
"use strict";

const AIRFLOW_API = `${AIRFLOW_BASE}/api/v2`;
const PREVIEW_SHOWN = 50; // runs listed in the dialog; the count says how many there are in all
let actionDialog = null;
let actionOpener = null;

const utcText = (iso) => new Date(iso).toISOString().slice(0, 19).replace("T", " ");

// Airflow's own API (its backfills), with the same session as the page's own calls.
async function airflowApi(path, body) {
  const response = await fetch(`${AIRFLOW_API}${path}`, { method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  let answer = null;
  try { answer = await response.json(); } catch (_) { /* an empty or non-JSON error body */ }
  if (!response.ok) {
    const detail = answer && answer.detail ? (typeof answer.detail === "string" ? answer.detail : JSON.stringify(answer.detail)) : "";
    const error = new Error(`${response.status} ${response.statusText}${detail ? ": " + detail : ""}`);
    error.status = response.status;
    throw error;
  }
  return answer;
}

function openAction(title, body, opener) {
  if (!actionDialog) {
    actionDialog = el("dialog", { id: "action-dialog", class: "action-dialog", "aria-labelledby": "action-title" });
    actionDialog.addEventListener("close", () => { if (actionOpener && actionOpener.isConnected) actionOpener.focus(); });
    document.body.append(actionDialog);
  }
  actionOpener = opener;
  actionDialog.replaceChildren(
    el("header", {}, el("h2", { id: "action-title" }, title),
      el("button", { type: "button", class: "secondary action-close", "aria-label": "Close", onclick: () => actionDialog.close() }, "✕")),
    ...body);
  actionDialog.showModal();
}

function refused(error, what) {
  return error.status === 403 ? `You may not ${what} this DAG.` : `Could not ${what}: ${error.message}`;
}

// -- backfill ---------------------------------------------------------------------------------------------

function previewTable(preview) {
  const runs = preview.runs;
  const rows = runs.slice(0, PREVIEW_SHOWN).map((run) => el("tr", { "data-run-id": run.run_id },
    el("td", { class: "mono" }, run.run_id),
    el("td", { class: "mono" }, run.window_start ? `${utcText(run.window_start)} → ${utcText(run.window_end)}` : "—"),
    el("td", { class: "mono" }, utcText(run.run_after))));
  return [
    el("p", { class: "preview-count" }, runs.length ? `${numberText(runs.length)} run${runs.length === 1 ? "" : "s"} will be created`
      : "No run would be created: every run of the range exists already, or the range holds none."),
    preview.excluded.length ? el("p", { class: "sub" }, `${preview.excluded.length} occurrence(s) skipped for the schedule's exclusions.`) : null,
    runs.length ? el("table", { class: "preview" },
      el("thead", {}, el("tr", {}, el("th", {}, "Run id"), el("th", {}, "Window (UTC)"), el("th", {}, "May start (UTC)"))),
      el("tbody", {}, rows)) : null,
    runs.length > PREVIEW_SHOWN ? el("p", { class: "sub" }, `… and ${numberText(runs.length - PREVIEW_SHOWN)} more.`) : null,
    el("p", { class: "sub" }, preview.note),
  ];
}

function backfillButton(dagId) {
  const button = el("button", { class: "secondary act backfill", type: "button", "data-dag-id": dagId, "aria-label": `Backfill ${dagId}` }, "Backfill…");
  button.addEventListener("click", () => openBackfill(dagId, button));
  return button;
}

function openBackfill(dagId, opener) {
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  const from = el("input", { type: "text", id: "backfill-from", size: "19", spellcheck: "false", value: utcText(new Date(hour - DAY).toISOString()) });
  const to = el("input", { type: "text", id: "backfill-to", size: "19", spellcheck: "false", value: utcText(new Date(hour).toISOString()) });
  const reprocess = el("select", { id: "backfill-reprocess" },
    el("option", { value: "none" }, "only runs that do not exist"), el("option", { value: "failed" }, "and re-run failed ones"),
    el("option", { value: "completed" }, "and re-run every finished one"));
  const shown = el("div", { class: "backfill-preview", "aria-live": "polite" });
  const result = el("p", { class: "result", "aria-live": "polite" });
  const create = el("button", { type: "button", class: "refresh", id: "backfill-create", disabled: "" }, "Create backfill");
  let previewed = null; // the range the preview shown is of: Create sends exactly that one
  const asked = () => ({ from_date: whyInstant(from.value), to_date: whyInstant(to.value), reprocess_behavior: reprocess.value });
  const stale = () => { previewed = null; create.disabled = true; };
  for (const input of [from, to, reprocess]) input.addEventListener("input", stale);
  const preview = async (event) => {
    event.preventDefault();
    stale();
    result.textContent = "";
    let range;
    try { range = asked(); } catch (error) { shown.replaceChildren(el("p", { class: "error" }, error.message)); return; }
    if (!range.from_date || !range.to_date) { shown.replaceChildren(el("p", { class: "error" }, "Give both ends of the range.")); return; }
    shown.replaceChildren(el("p", { class: "sub" }, "Listing the runs…"));
    try {
      const answer = await api(`/dags/${encodeURIComponent(dagId)}/backfill-preview?${new URLSearchParams(range)}`);
      shown.replaceChildren(...previewTable(answer).filter(Boolean));
      if (answer.runs.length) { previewed = range; create.disabled = false; }
    } catch (error) {
      shown.replaceChildren(el("p", { class: "error" }, refused(error, "preview a backfill of")));
    }
  };
  create.addEventListener("click", async () => {
    if (!previewed) return;
    create.disabled = true;
    result.textContent = "Creating the backfill…";
    try {
      const made = await airflowApi("/backfills", { dag_id: dagId, ...previewed, run_backwards: false, dag_run_conf: {} });
      result.replaceChildren(`Backfill #${made.id} created. `,
        airflowLink(`/dags/${encodeURIComponent(dagId)}/runs`, "See its runs in Airflow"));
      result.dataset.backfillId = String(made.id);
    } catch (error) {
      result.textContent = refused(error, "backfill");
      create.disabled = false;
    }
  });
  const form = el("form", { class: "backfill-ask" },
    el("label", { for: "backfill-from" }, "From (UTC) "), from, " ",
    el("label", { for: "backfill-to" }, "to (UTC) "), to, " ", reprocess, " ",
    el("button", { type: "submit", class: "secondary", id: "backfill-preview" }, "Preview"));
  form.addEventListener("submit", preview);
  openAction(`Backfill ${dagId}`, [
    el("p", { class: "sub" }, "Preview the runs first: Create makes exactly those, with Airflow's own backfill. Times are 24-hour UTC."),
    form, shown, el("div", { class: "actions-row" }, create), result], opener);
}

// -- pause and unpause --------------------------------------------------------------------------------------

function pauseButton(dag) {
  const word = dag.is_paused ? "Unpause" : "Pause";
  const button = el("button", { class: "secondary act pause", type: "button", "data-dag-id": dag.dag_id,
    "aria-label": `${word} ${dag.dag_id}` }, `${word}…`);
  button.addEventListener("click", () => openPause(dag.dag_id, !dag.is_paused, button));
  return button;
}

function openPause(dagId, pausing, opener) {
  const word = pausing ? "pause" : "unpause";
  const note = el("textarea", { id: "pause-note", rows: "3", maxlength: "1024", placeholder: "Why (kept in Airflow's audit log)" });
  const result = el("p", { class: "result", "aria-live": "polite" });
  const confirm = el("button", { type: "submit", class: "refresh", id: "pause-confirm" }, pausing ? "Pause" : "Unpause");
  const form = el("form", { class: "pause-ask" }, el("label", { for: "pause-note" }, "Note "), note, el("div", { class: "actions-row" }, confirm), result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    confirm.disabled = true;
    try {
      const body = note.value.trim() ? { note: note.value } : {};
      await api(`/dags/${encodeURIComponent(dagId)}/${word}`,
        { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      actionDialog.close();
      load();
    } catch (error) {
      result.textContent = refused(error, word);
      confirm.disabled = false;
    }
  });
  openAction(`${pausing ? "Pause" : "Unpause"} ${dagId}`, [form], opener);
}

// The row's action buttons: only those the API says the user may use.
function actionButtons(dag) {
  const may = dag.may || {};
  return [may.backfill ? backfillButton(dag.dag_id) : null, may.pause ? pauseButton(dag) : null];
}
