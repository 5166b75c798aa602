// The Schedules page: reads the tessera API with the Airflow UI's own session cookie (same origin).
// Rows are built once per DAG and updated in place on every reload: a cell is rebuilt only when
// what it shows changed, a lane only has its attributes set.
"use strict";

const API = new URL("../api/v1", window.location.href).pathname;
const RELOAD_MS = 30 * 1000;
const BATCH = 100; // rows built or updated between two yields to the browser: no long freeze at 1,000 DAGs
const OUTCOME_KIND = { success: "ok", failed: "bad", upstream_failed: "bad", running: "info", queued: "info" };
const rows = new Map(); // dag_id -> { main, lane, cells, keys }
let loading = 0; // the newest load: an older one still answering stops where it is
let inFlight = 0; // loads not finished: the periodic reload waits for them (a slow answer is never cut short)

function when(iso, withDate = true) {
  if (!iso) return "—";
  const text = new Date(iso).toISOString().replace("T", " ").replace(/\.\d+Z$/, "").replace(/Z$/, "");
  if (!withDate) return text.slice(11);
  return text.slice(0, 4) === String(new Date().getUTCFullYear()) ? text.slice(5) : text;
}

function windowText(run) {
  if (!run) return "—";
  const sameDay = run.window_start.slice(0, 10) === run.window_end.slice(0, 10);
  const key = run.partition_key ? ` · key ${run.partition_key}` : "";
  return `${when(run.window_start)} → ${when(run.window_end, !sameDay)}${key}`;
}

async function api(path, options = {}) {
  const response = await fetch(`${API}${path}`, { credentials: "same-origin", ...options });
  let body = null;
  try { body = await response.json(); } catch (_) { /* an empty or non-JSON error body */ }
  if (!response.ok) {
    const detail = body && body.detail ? (typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail)) : "";
    const error = new Error(`${response.status} ${response.statusText}${detail ? ": " + detail : ""}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

function chip(kind, text, title) {
  return el("span", { class: `chip ${kind}`, title: title || undefined }, text);
}

const CONDITION_WORDS = { SpecValid: ["spec valid", "spec invalid"], Ready: ["ready", "not ready"] };

function health(dag) {
  if (!dag) return [chip("idle", "unknown")];
  const chips = dag.conditions.map((c) => {
    const [yes, no] = CONDITION_WORDS[c.type] || [c.type, `not ${c.type}`];
    const kind = c.status === "True" ? "ok" : c.status === "False" ? "bad" : "idle";
    const text = c.status === "True" ? yes : c.status === "False" ? no : `${yes}?`;
    return chip(kind, text, [`${c.type}: ${c.status}`, c.reason, c.message].filter(Boolean).join(" — "));
  });
  const late = dag.lateness;
  if (late.state === "late") chips.push(chip("bad", `late ${spoken(late.late_by_seconds)}`, `${late.reason}. Rule: ${late.rule}`));
  else if (late.state === "on_time") chips.push(chip("ok", "on time", `Rule: ${late.rule}`));
  else chips.push(chip("idle", late.state.replace("_", " "), late.reason));
  if (dag.consecutive_failures > 1) chips.push(chip("bad", `${dag.consecutive_failures} failed in a row`));
  return chips;
}

// A span of time in its two largest units, as a person says it: "45 s", "12 min", "3 h 5 min",
// "19 d 11 h" (never "28005 min"). Rounded down: a run 59 s late is not yet "1 min" late.
function spoken(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 120) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return hours % 24 ? `${Math.floor(hours / 24)} d ${hours % 24} h` : `${Math.floor(hours / 24)} d`;
}

// AFTER parents with no completed fire within PARENT_FRESHNESS: named on the row (the fire proceeds anyway).
function staleParents(dag) {
  return ((dag && dag.stale_parents) || []).map((p) => {
    const age = p.age_seconds === null ? "never completed a fire" : `last fire ${spoken(p.age_seconds)} ago`;
    return el("div", { class: "stale", "data-parent": p.schedule,
      title: `No completed fire within ${p.bound_hours} h${p.last_completed ? `; last ${when(p.last_completed)} UTC` : ""}` },
    // A long schedule name wraps after "_", "-" or "." rather than being cut.
    chip("warn", ["stale parent ", ...breakable(p.schedule)]), " ", el("span", { class: "sub" }, `${age} (bound ${p.bound_hours} h)`));
  });
}

// The next occurrence the schedule's exclusions skip, named before its gap reaches the lane:
// "skips 2026-12-25 (Christmas Day (holidays US-NY))", the local date as the schedule's zone reads it.
function exclusionLine(excluded) {
  if (!excluded) return null;
  const reasons = excluded.reasons.join("; ");
  return el("div", { class: "sub exclusion", "data-excluded": excluded.occurrence,
    title: `no run at ${excluded.occurrence_local} (${when(excluded.occurrence)} UTC)` },
  `skips ${excluded.occurrence_local.slice(0, 10)}`, reasons ? ` (${reasons})` : "");
}

function outcome(dag) {
  if (!dag) return "—";
  const word = dag.last_outcome;
  const parts = [chip(OUTCOME_KIND[word] || "idle", word || "no run yet")];
  if (dag.skip_reason) parts.push(el("div", { class: "sub" }, `skipped: ${dag.skip_reason}`));
  // The fires it did not run: the newest drop, and (dropped="owe") the windows still owed to a backfill.
  const drop = dag.latest_drop;
  if (drop) parts.push(el("div", { class: "sub drop", title: `${drop.message} (${drop.record})` },
    `dropped ${drop.at_least ? "≥ " : ""}${drop.count} fire(s) due ${when(drop.first)}${drop.count > 1 ? ` to ${when(drop.last)}` : ""}`));
  if (dag.owed_windows) parts.push(chip("warn", `owes ${dag.owed_windows} window(s)`,
    "dropped=\"owe\": windows of dropped fires no run has evaluated yet; backfill them"));
  if (dag.last_run) parts.push(el("div", { class: "sub" }, `${dag.last_run.run_type} · ${when(dag.last_run.run_after)}`));
  return parts;
}

// A run as people say it: "refresh 14:03:12", "scheduled run 14:00:00"; the raw id stays in the tooltip.
function runLabel(run) {
  const at = run.queued_at || run.start_date;
  const time = at ? when(at, false) : "";
  const kind = run.run_id.startsWith("tessera_refresh") ? "refresh" : `${run.run_type} run`;
  return `${kind} ${time}`.trim();
}

function refreshMessage(answer) {
  const run = answer.run;
  if (answer.outcome === "started") return `Started ${runLabel(run)}`;
  if (answer.outcome === "joined") return `Joined ${runLabel(run)} (${run.state})`;
  return `Returned ${runLabel(run)}: ${run.state} at ${when(run.end_date, false)}`;
}

function refreshButton(dagId, result) {
  const button = el("button", { class: "refresh", type: "button", "data-dag-id": dagId, "aria-label": `Refresh ${dagId}` }, "Refresh");
  button.addEventListener("click", async () => {
    button.disabled = true;
    result.textContent = "Refreshing…";
    try {
      // A JSON body is required: it is what a form on another site cannot send (the API's CSRF guard).
      const answer = await api(`/dags/${encodeURIComponent(dagId)}/refresh`,
        { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      const path = `/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(answer.run.run_id)}`;
      result.replaceChildren(airflowLink(path, refreshMessage(answer), { title: `run id: ${answer.run.run_id}` }));
      result.dataset.outcome = answer.outcome;
      result.dataset.runId = answer.run.run_id;
      load();
    } catch (error) {
      result.textContent = error.status === 403 ? "You may view this DAG but not start its runs." : `Refresh failed: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function rowError(dag) {
  return dag.error || "";
}

function newRow(dagId) {
  const cells = { dag: el("td", { class: "dag" }), next: el("td", { class: "next" }), outcome: el("td", { class: "outcome" }),
    health: el("td", { class: "health" }), action: el("td", { class: "action" }) };
  const result = el("div", { class: "result", "aria-live": "polite" });
  const acts = el("span", { class: "acts" }); // backfill, pause: only those the user may use (actions.js)
  cells.action.append(refreshButton(dagId, result), whyButton(dagId), acts, result); // whyButton: why.js
  const main = el("tr", { class: "dag", "data-dag-id": dagId }, Object.values(cells));
  const lane = newLane();
  const note = el("span", { class: "lane-note" });
  const laneRow = el("tr", { class: "timeline", "data-dag-id": dagId }, el("td", { colspan: "5" }, el("div", { class: "lane-box" }, lane, note)));
  return { main, laneRow, lane, note, cells, acts, keys: {} };
}

// A line of user text cut to fit a row: its first line, at most `max` characters (the whole is in the tooltip).
function excerpt(text, max = 80) {
  const line = text.split("\n", 1)[0];
  return line.length > max || line !== text ? `${line.slice(0, max).trimEnd()}…` : line;
}

// Why a paused DAG is paused: the reason in the chip, the note (user text: always a text node) below it.
function pauseChips(dag) {
  const p = dag.pause;
  if (!p) return [chip("idle", "paused", "Paused in Airflow (its UI, REST API or CLI): no note recorded")];
  const failures = p.reason === "pause_after_failures";
  const text = failures ? `paused after ${p.failed_run_count} failures` : `paused by ${excerpt(p.by || "someone", 24)}`;
  const runs = p.failed_runs.length ? `: ${p.failed_runs.join(", ")}${p.failed_run_count > p.failed_runs.length ? ", …" : ""}` : "";
  const title = [
    failures ? `Paused by tessera after ${p.failed_run_count} failed runs in a row (pause_after_failures)${runs}`
      : `Paused by hand by ${p.by || "someone"}`,
    `at ${when(p.at)} UTC`,
    p.note ? `Note: ${p.note}` : "No note"].join(" · ");
  return [chip("idle", text, title),
    p.note ? el("div", { class: "sub pause-note", title: p.note }, `Note: ${excerpt(p.note)}`) : null];
}

// A DAG id may break only after "_", "-" or ".": never inside a word of it.
// Where a long id may wrap: after "_", "-" or ".", and between the words of camelCase ("loadOrders").
function breakable(text) {
  return text.split(/(?<=[_.-])|(?<=[a-z0-9])(?=[A-Z])/).flatMap((part, i) => (i ? [el("wbr", {}), part] : [part]));
}

// Rebuild one cell only when what it shows changed.
function setCell(row, name, key, build) {
  if (row.keys[name] === key) return;
  row.keys[name] = key;
  row.cells[name].replaceChildren(...[build()].flat().filter((child) => child !== null && child !== undefined));
}

// One row of GET /api/v1/page: the DAG and its schedule, its next run, its last outcome, its health.
function updateRow(row, dag) {
  const error = rowError(dag);
  const next = dag.next;
  const schedule = dag.trigger || dag.summary;
  row.main.classList.toggle("broken", Boolean(error));
  setCell(row, "dag", JSON.stringify([schedule, dag.timezone, dag.is_paused, dag.pause, error]), () => [
    airflowLink(`/dags/${encodeURIComponent(dag.dag_id)}`, breakable(dag.dag_id)),
    el("div", { class: "schedule" }, schedule),
    // The zone once: a calendar or cron summary already names it.
    dag.timezone !== "UTC" && !schedule.includes(dag.timezone) ? el("span", { class: "sub" }, dag.timezone, " ") : null,
    ...(dag.is_paused ? pauseChips(dag) : []),
    error ? chip("bad", "error", error) : null]);
  setCell(row, "next", JSON.stringify([next, dag.phase, dag.trigger, dag.next_exclusion]), () => {
    if (!next) return el("span", { class: "sub" }, dag.trigger || (dag.cadence_kind === "after" ? "after its parents" : "—"));
    return [
      el("div", { class: "mono", title: `in ${dag.timezone}: ${next.occurrence_local}` }, when(next.occurrence),
        el("span", { class: "at" }, ` · may start ${when(next.run_after, false)}`)),
      el("div", { class: "mono window", title: "the window this run evaluates (its data interval)" }, windowText(next)),
      dag.phase && dag.phase !== "0s" ? el("div", { class: "sub" }, `phase ${dag.phase}`) : null,
      exclusionLine(dag.next_exclusion)];
  });
  setCell(row, "outcome", JSON.stringify([dag.last_outcome, dag.skip_reason, dag.last_run, dag.latest_drop, dag.owed_windows]),
    () => outcome(dag));
  const acts = JSON.stringify([dag.may, dag.is_paused]);
  if (row.keys.acts !== acts) { row.keys.acts = acts; row.acts.replaceChildren(...actionButtons(dag).filter(Boolean)); }
  setCell(row, "health", JSON.stringify([dag.conditions, dag.lateness, dag.consecutive_failures, dag.stale_parents]),
    () => [...health(dag), ...staleParents(dag)]);
}

function updateLane(row, dag, view, ownScale = false) {
  const error = rowError(dag);
  const lane = error ? null : dag.lane;
  const next = dag.next;
  // Unchanged lane, same span: only "now" moved (the span's start moves on the hour).
  const key = [view.range, view.start, ownScale, error, dag.trigger, next && next.occurrence,
    lane && lane.through, lane && JSON.stringify(lane.segments)].join("|");
  if (row.laneKey === key) { moveNow(row.lane, view); placeNote(row.note, view); return; }
  row.laneKey = key;
  row.lane.dataset.span = `${view.start},${view.end}`; // why.js turns a click on the lane into an instant
  const shapes = laneShapes(lane, view);
  const drawn = Boolean(shapes.even || shapes.band);
  let note = shapes.note;
  if (error) note = `Could not compute this DAG's schedule: ${error}`;
  else if (dag.trigger && !drawn) note = `Runs ${dag.trigger}, not on a clock of its own.`;
  // Its current window may fill the view while its run starts after it: say when.
  else if (!shapes.starts && !shapes.band && next) note = `Next run ${when(next.occurrence)}, beyond the ${RANGE_NAMES[view.range]}.`;
  else if (!drawn) note = dag.cadence_kind === "after" ? "Runs after its parents." : "No clock-driven runs ahead.";
  // A lane on a scale of its own says so first: its grid and widths are not the axis above.
  if (ownScale && !error) note = `own scale: ${RANGE_NAMES[view.range]}${note ? " · " + note : ""}`;
  row.laneRow.classList.toggle("own-scale", ownScale);
  row.lane.dataset.range = view.range;
  drawLane(row.lane, shapes, view, `${RANGE_NAMES[view.range]} of ${dag.dag_id}${note ? ": " + note : ""}`);
  if (row.note.textContent !== note) row.note.textContent = note;
  placeNote(row.note, view);
  row.note.classList.toggle("error", Boolean(error));
  row.note.classList.toggle("row-error", Boolean(error));
  row.note.classList.toggle("over", Boolean(shapes.band));
}

const yieldToBrowser = () => new Promise((resolve) => setTimeout(resolve, 0));

// Put the rows in the API's order, creating the missing ones and dropping the gone ones, and fill each
// as it is placed, so the first rows read before the last ones are built.
async function placeRows(dags, seq, fill) {
  const body = document.querySelector("#schedules tbody");
  const wanted = new Set(dags.map((d) => d.dag_id));
  for (const [dagId, row] of rows) {
    if (!wanted.has(dagId)) { row.main.remove(); row.laneRow.remove(); rows.delete(dagId); }
  }
  let before = body.firstChild;
  for (let i = 0; i < dags.length; i++) {
    if (i && i % BATCH === 0) { await yieldToBrowser(); if (seq !== loading) return false; }
    let row = rows.get(dags[i].dag_id);
    if (!row) { row = newRow(dags[i].dag_id); rows.set(dags[i].dag_id, row); }
    if (before !== row.main) body.insertBefore(row.main, before);
    if (row.main.nextSibling !== row.laneRow) body.insertBefore(row.laneRow, row.main.nextSibling);
    before = row.laneRow.nextSibling;
    fill(row, dags[i]);
  }
  return true;
}

function chosenRange() {
  const picked = document.querySelector('#range input[name="range"]:checked');
  return picked ? picked.value : "auto";
}

// One request for everything the page shows (GET /api/v1/page): per DAG its next run and lane, its
// status, and what an asset-driven DAG runs after.
async function load() {
  const seq = ++loading;
  const now = Date.now();
  inFlight++;
  try {
    const query = findQuery();
    const page = await api(`/page?offset=${pager.offset}&limit=${PAGE_ROWS}${query ? `&${query}` : ""}`);
    if (seq !== loading) return;
    // The fleet shrank below the page shown: show its last page instead.
    if (!page.dags.length && pager.offset > 0) { pager.offset = lastPage(page.total); return load(); }
    const chosen = chosenRange();
    const range = chosen === "auto" ? autoRange(page.dags.map((dag) => dag.next), now) : chosen;
    const view = span(range, now);
    const auto = chosen === "auto";
    let own = 0; // rows on a scale of their own
    const fill = (row, dag) => {
      const rowView = rowSpan(dag.next, view, auto, now);
      if (rowView !== view) own++;
      updateRow(row, dag);
      updateLane(row, dag, rowView, rowView !== view);
    };
    if (!(await placeRows(page.dags, seq, fill))) return;
    summarize(page, range, chosen, now, own);
    drawAxis(document.getElementById("axis"), view);
    document.getElementById("error").hidden = true;
    document.body.dataset.loaded = String(seq); // every row and lane drawn (tests and benchmarks wait for it)
  } catch (error) {
    const box = document.getElementById("error");
    box.hidden = false;
    box.textContent = error.status === 401 ? "Your Airflow session has expired: log in again." : `Could not load the schedules: ${error.message}`;
  } finally {
    inFlight--;
  }
}

// The counts are the server's, over every DAG that matches the search and filters (never one page's).
function summarize(page, range, chosen, now, own = 0) {
  const narrowed = page.total !== page.fleet_total;
  document.getElementById("empty").hidden = page.fleet_total > 0;
  document.getElementById("none-found").hidden = page.total > 0 || page.fleet_total === 0;
  showPager(page);
  const counts = page.counts;
  document.getElementById("summary").replaceChildren(
    el("span", { "data-count": "total" }, narrowed ? `${numberText(page.total)} of ${numberText(page.fleet_total)} DAGs` : `${numberText(page.total)} DAGs`),
    el("span", { "data-count": "late" }, `${numberText(counts.late)} late`),
    el("span", { "data-count": "not_ready" }, `${numberText(counts.not_ready)} not ready`),
    el("span", { "data-count": "failed_last" }, `${numberText(counts.failed_last)} failed last`),
    el("span", { "data-count": "paused" }, `${numberText(counts.paused)} paused`),
    el("span", { class: "sub" }, `updated ${when(new Date(now).toISOString(), false)} UTC`));
  document.getElementById("range-used").textContent =
    `${RANGE_NAMES[range]}${chosen !== "auto" ? "" : own ? ` (auto: most DAGs' current windows end in it; ${own} on a scale of their own, marked)`
      : " (auto: every DAG's current window ends in it)"}`;
  const problems = document.getElementById("problems");
  problems.hidden = page.contradictions.length === 0 && page.plan_check === "ok";
  problems.querySelector("ul").replaceChildren(
    ...page.contradictions.map((c) => el("li", {}, chip(c.severity === "error" ? "bad" : "warn", c.kind), " ", c.message)),
    ...(page.plan_check === "ok" ? [] : [el("li", { class: "sub" }, `Declared-schedule check ${page.plan_check}`)]));
}

function rememberRange() {
  let saved = null;
  try { saved = localStorage.getItem("tessera-schedules-range"); } catch (_) { /* storage disabled */ }
  const input = saved && document.querySelector(`#range input[value="${CSS.escape(saved)}"]`);
  if (input) input.checked = true;
  document.getElementById("range").addEventListener("change", () => {
    try { localStorage.setItem("tessera-schedules-range", chosenRange()); } catch (_) { /* storage disabled */ }
    load();
  });
}

rememberRange();
showFind();
watchFind(load);
turnPages(load);
load();
setInterval(() => { if (!inFlight) load(); }, RELOAD_MS);
