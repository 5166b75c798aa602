// The Schedules page: reads the tessera API with the Airflow UI's own session cookie (same origin).
"use strict";

const API = "../api/v1";
const HOUR = 3600 * 1000;
const BEFORE = 3 * HOUR; // the timeline starts a little before now, so current windows show
const AHEAD = 24 * HOUR;
const RELOAD_MS = 30 * 1000;
// The Airflow UI's own address: this page is served at <base>/tessera/ui/.
const AIRFLOW_BASE = window.location.pathname.replace(/\/tessera\/ui\/.*$/, "");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "title") node.title = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

// UTC, to the second; the year only when it is not this year's.
function when(iso, withDate = true) {
  if (!iso) return "—";
  const text = new Date(iso).toISOString().replace("T", " ").replace(/\.\d+Z$/, "").replace(/Z$/, "");
  if (!withDate) return text.slice(11);
  return text.slice(0, 4) === String(new Date().getUTCFullYear()) ? text.slice(5) : text;
}

function sameDay(a, b) {
  return a && b && a.slice(0, 10) === b.slice(0, 10);
}

function windowText(run) {
  if (!run) return "—";
  const key = run.partition_key ? ` · key ${run.partition_key}` : "";
  return `${when(run.window_start)} → ${when(run.window_end, !sameDay(run.window_start, run.window_end))}${key}`;
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

// Open an Airflow page in the surrounding UI: this page runs in a same-origin iframe whose
// sandbox forbids top navigation, so drive the UI's router through its history instead.
function openInAirflow(path) {
  const target = `${AIRFLOW_BASE}${path}`;
  try {
    window.parent.history.pushState({}, "", target);
    window.parent.dispatchEvent(new PopStateEvent("popstate"));
  } catch (_) {
    window.location.href = target;
  }
}

function chip(kind, text, title) {
  return el("span", { class: `chip ${kind}`, title: title || "" }, text);
}

function health(status) {
  if (!status) return [chip("idle", "unknown")];
  const chips = status.conditions.map((c) => {
    const kind = c.status === "True" ? "ok" : c.status === "False" ? "bad" : "idle";
    return chip(kind, `${c.type}: ${c.status}`, [c.reason, c.message].filter(Boolean).join(" — "));
  });
  const late = status.lateness;
  if (late.state === "late") {
    const minutes = Math.round(late.late_by_seconds / 60);
    chips.push(chip("bad", `late ${minutes} min`, `${late.reason}. Rule: ${late.rule}`));
  } else if (late.state === "on_time") {
    chips.push(chip("ok", "on time", `Rule: ${late.rule}`));
  } else {
    chips.push(chip("idle", late.state.replace("_", " "), late.reason));
  }
  if (status.consecutive_failures > 1) chips.push(chip("bad", `${status.consecutive_failures} failures in a row`));
  return chips;
}

function outcome(status) {
  if (!status) return "—";
  const parts = [];
  const kind = status.last_outcome === "success" || status.last_outcome === "Succeeded" ? "ok"
    : status.last_outcome === "failed" || status.last_outcome === "Failed" ? "bad" : "idle";
  parts.push(chip(kind, status.last_outcome || "no run yet"));
  if (status.skip_reason) parts.push(el("div", { class: "sub" }, `skipped: ${status.skip_reason}`));
  if (status.last_run) parts.push(el("div", { class: "sub" }, `${status.last_run.run_type} · ${when(status.last_run.run_after)}`));
  return parts;
}

function refreshMessage(answer) {
  const run = answer.run;
  if (answer.outcome === "started") return `Started ${run.run_id}`;
  if (answer.outcome === "joined") return `Joined ${run.run_type} run ${run.run_id} (${run.state})`;
  return `Returned ${run.run_id}: it succeeded at ${when(run.end_date, false)}, under a minute ago`;
}

function refreshButton(dag, rendered) {
  const button = el("button", { class: "refresh", type: "button", "data-dag-id": dag.dag_id }, "Refresh");
  // The table re-renders every few seconds and keeps the last answer's element, so look the
  // row's answer element up when writing to it rather than holding the one rendered with the button.
  const target = () =>
    document.querySelector(`#schedules tr.dag[data-dag-id="${CSS.escape(dag.dag_id)}"] .result`) || rendered;
  button.addEventListener("click", async () => {
    button.disabled = true;
    target().textContent = "Refreshing…";
    try {
      // A JSON body is required: it is what a form on another site cannot send (the API's CSRF guard).
      const answer = await api(`/dags/${encodeURIComponent(dag.dag_id)}/refresh`,
        { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      const result = target();
      result.replaceChildren(
        el("a", { href: "#", class: "dag-link", onclick: (event) => { event.preventDefault();
          openInAirflow(`/dags/${encodeURIComponent(dag.dag_id)}/runs/${encodeURIComponent(answer.run.run_id)}`); } },
        refreshMessage(answer)),
      );
      result.dataset.outcome = answer.outcome;
      result.dataset.runId = answer.run.run_id;
      load();
    } catch (error) {
      target().textContent = error.status === 403 ? "You may view this DAG but not start its runs." : `Refresh failed: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function timeline(dag, now) {
  const width = 1000, top = 14, height = 18, start = now - BEFORE, end = now + AHEAD;
  const x = (t) => ((t - start) / (end - start)) * width;
  const lane = svg("svg", { class: "lane", viewBox: `0 0 ${width} 46`, preserveAspectRatio: "none",
    role: "img", "aria-label": `next 24 hours of ${dag.dag_id}` });
  for (let hour = Math.ceil(start / HOUR) * HOUR; hour <= end; hour += 3 * HOUR) {
    lane.append(svg("g", { class: "tick" },
      svg("line", { x1: x(hour), x2: x(hour), y1: 10, y2: 34 }),
      svg("text", { x: x(hour) + 2, y: 44 }, document.createTextNode(new Date(hour).toISOString().slice(11, 16)))));
  }
  lane.append(svg("line", { class: "axis", x1: 0, x2: width, y1: top + height, y2: top + height }));
  const marked = dag.occurrences.length <= 96; // denser start markers would merge into a solid line
  dag.occurrences.forEach((run, index) => {
    const from = Math.max(Date.parse(run.window_start), start), to = Math.min(Date.parse(run.window_end), end);
    const title = `window ${when(run.window_start)} → ${when(run.window_end)}; occurrence ${when(run.occurrence)}; runs at ${when(run.run_after)}`;
    if (to > from) {
      lane.append(svg("rect", { class: `w${index % 2}`, x: x(from), y: top, height,
        width: Math.max(x(to) - x(from) - 0.5, 0.5) }, svg("title", {}, document.createTextNode(title))));
    }
    const at = Date.parse(run.run_after);
    if (marked && at <= end) {
      lane.append(svg("path", { class: "run", d: `M${x(at)},${top - 1} l-4,-7 h8 z` },
        svg("title", {}, document.createTextNode(`runs at ${when(run.run_after)}`))));
    }
  });
  lane.append(svg("line", { class: "now", x1: x(now), x2: x(now), y1: 4, y2: top + height + 2 }));
  return lane;
}

// Why this DAG's plan or status could not be computed (the API lists it with the error, not a 500).
function rowError(dag, status) {
  const errors = [dag.error, status && status.error].filter(Boolean);
  return [...new Set(errors)].join(" · ");
}

function row(dag, next, status, now) {
  const result = el("div", { class: "result", "aria-live": "polite" });
  const error = rowError(dag, status);
  const link = el("a", { href: "#", class: "dag-link", onclick: (event) => { event.preventDefault();
    openInAirflow(`/dags/${encodeURIComponent(dag.dag_id)}`); } }, dag.dag_id);
  const schedule = [el("div", {}, dag.summary)];
  if (dag.timezone !== "UTC") schedule.push(el("div", { class: "sub" }, dag.timezone));
  if (dag.is_paused) schedule.push(chip("idle", "paused"));
  if (error) schedule.push(chip("bad", "error", error));
  const main = el("tr", { class: error ? "dag broken" : "dag", "data-dag-id": dag.dag_id },
    el("td", {}, link),
    el("td", {}, schedule),
    el("td", { class: "mono next", title: next ? `in ${dag.timezone}: ${next.occurrence_local}` : "" },
      next ? [el("div", {}, when(next.occurrence)), el("div", { class: "at" }, `may start ${when(next.run_after)}`)] : "—"),
    el("td", { class: "mono window" }, next ? windowText(next) : dag.cadence_kind === "after" ? "after its parents" : "—"),
    el("td", { class: "mono" }, dag.phase || "—"),
    el("td", {}, outcome(status)),
    el("td", {}, health(status)),
    el("td", {}, refreshButton(dag, result), result));
  const lane = el("tr", { class: "timeline" }, el("td", {}), el("td", { colspan: "7" },
    error ? el("div", { class: "row-error error" }, `Could not compute this DAG's schedule: ${error}`)
      : dag.occurrences.length ? timeline(dag, now)
        : el("span", { class: "sub" }, "No clock-driven runs in the next 24 hours.")));
  return [main, lane];
}

async function load() {
  const now = Date.now();
  const until = new Date(now + AHEAD).toISOString();
  try {
    // The table shows each DAG's next run however far away; the timelines only the next 24 hours.
    const [plan, day, statuses] = await Promise.all(
      [api("/plan?count=1"), api(`/plan?count=400&until=${encodeURIComponent(until)}`), api("/status")]);
    const byId = new Map(statuses.dags.map((s) => [s.dag_id, s]));
    const nextById = new Map(plan.dags.map((d) => [d.dag_id, d.occurrences[0]]));
    const body = document.querySelector("#schedules tbody");
    const kept = new Map([...body.querySelectorAll(".result")].map((r) => [r.closest("tr").dataset.dagId, r]));
    body.replaceChildren(...day.dags.flatMap((dag) => row(dag, nextById.get(dag.dag_id), byId.get(dag.dag_id), now)));
    for (const [dagId, old] of kept) {  // keep the last refresh answer across reloads
      const fresh = body.querySelector(`tr.dag[data-dag-id="${CSS.escape(dagId)}"] .result`);
      if (fresh && old.childNodes.length) { fresh.replaceWith(old); }
    }
    document.getElementById("empty").hidden = plan.dags.length > 0;
    const late = statuses.dags.filter((s) => s.lateness.late).length;
    const unhealthy = statuses.dags.filter((s) => s.conditions.some((c) => c.status === "False")).length;
    document.getElementById("summary").replaceChildren(
      el("span", {}, `${plan.dags.length} DAGs`), el("span", {}, `${late} late`), el("span", {}, `${unhealthy} not ready`),
      el("span", { class: "sub" }, `updated ${when(new Date(now).toISOString(), false)} UTC`));
    const problems = document.getElementById("problems");
    problems.hidden = plan.contradictions.length === 0 && plan.plan_check === "ok";
    problems.querySelector("ul").replaceChildren(
      ...plan.contradictions.map((c) => el("li", {}, chip(c.severity === "error" ? "bad" : "warn", c.kind), c.message)),
      ...(plan.plan_check === "ok" ? [] : [el("li", { class: "sub" }, `Declared-schedule check ${plan.plan_check}`)]));
    document.getElementById("error").hidden = true;
  } catch (error) {
    const box = document.getElementById("error");
    box.hidden = false;
    box.textContent = error.status === 401 ? "Your Airflow session has expired: log in again." : `Could not load the schedules: ${error.message}`;
  }
}

if (localStorage.getItem("chakra-ui-color-mode") === "dark") document.documentElement.classList.add("dark");
load();
setInterval(load, RELOAD_MS);
