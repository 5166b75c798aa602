// The timeline: one shared axis and, per DAG, one lane of a constant handful of SVG elements,
// updated in place on every reload (attributes only), however many runs the range holds.
"use strict";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const RANGES = { "24h": DAY, "7d": 7 * DAY, "35d": 35 * DAY };
const RANGE_NAMES = { "24h": "next 24 hours", "7d": "next 7 days", "35d": "next 35 days" };
const LANE_WIDTH = 1000;
const DENSE_RUNS = 48; // more runs than this in the range: one band with a count, not one shape per window
const US = 1000; // microseconds (a lane's unit) per millisecond (the view's)
const TICKS = { "24h": 3 * HOUR, "7d": DAY, "35d": 7 * DAY };

const AUTO_SHARE = 0.9; // "Auto" picks the range that serves this share of the rows shown; the rest get their own

// The smallest range that shows where a DAG's current window ends and its next one starts (null: no next run).
function rangeFor(run, now) {
  if (!run) return null;
  const end = Date.parse(run.window_end);
  return ["24h", "7d"].find((name) => end <= now + RANGES[name]) || "35d";
}

// "Auto": the smallest range that serves most of the rows shown (one weekly DAG among a hundred 5-minute
// ones no longer turns every lane into a band); a row it cannot serve is drawn on a scale of its own.
function autoRange(nextRuns, now) {
  const needs = nextRuns.map((run) => rangeFor(run, now)).filter(Boolean);
  return ["24h", "7d"].find((name) => needs.filter((need) => RANGES[need] <= RANGES[name]).length >= AUTO_SHARE * needs.length)
    || "35d";
}

// The span a row's lane is drawn over: the shared one, or under "Auto" its own when the shared is too short.
function rowSpan(run, shared, auto, now) {
  const own = auto ? rangeFor(run, now) : null;
  return own && RANGES[own] > RANGES[shared.range] ? span(own, now) : shared;
}

// The visible span: a little before now (current windows show), then the range ahead. The start
// moves on the hour only, so between reloads a lane's shapes stay put and only "now" moves.
function span(range, now) {
  const ahead = RANGES[range];
  const before = ahead / 8;
  const start = Math.floor((now - before) / HOUR) * HOUR;
  return { range, start, end: start + before + ahead + HOUR, now };
}

function xOf(view, t) {
  return ((t - view.start) / (view.end - view.start)) * LANE_WIDTH;
}

function tickLabel(range, t) {
  const d = new Date(t);
  if (range === "24h") return d.toISOString().slice(11, 16);
  const day = d.toLocaleDateString("en-GB", { timeZone: "UTC", weekday: range === "7d" ? "short" : undefined, day: "2-digit", month: "short" });
  return day;
}

function ticks(view) {
  const step = TICKS[view.range];
  const first = Math.ceil(view.start / step) * step;
  const out = [];
  for (let t = first; t < view.end; t += step) out.push(t);
  return out;
}

// The axis above the lanes: labels placed in percent, so they never stretch with the lanes.
function drawAxis(box, view) {
  // A tick label within a label's width of "now" would be printed through it: "now" wins.
  const clear = (t) => Math.abs(xOf(view, t) - xOf(view, view.now)) > LANE_WIDTH * 0.06;
  box.replaceChildren(...ticks(view).filter(clear).map((t) =>
    el("span", { class: "tick", style: `left:${(xOf(view, t) / LANE_WIDTH) * 100}%` }, tickLabel(view.range, t))),
  el("span", { class: "tick now", style: `left:${(xOf(view, view.now) / LANE_WIDTH) * 100}%`, title: "now" }, "now"));
}

function cadenceText(seconds) {
  if (!seconds) return "";
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

// What a lane draws, as plain data: two paths of alternating windows (or one band), the starts, a
// note. Drawn from the DAG's lane (lane.js): only the runs in view are ever enumerated, and a lane
// with more than DENSE_RUNS of them in view is one band, its runs counted, never listed.
function laneShapes(lane, view) {
  const top = 6, bottom = 20;
  const shapes = { even: "", odd: "", band: "", starts: "", note: "" };
  if (!lane || !lane.segments.length) return shapes;
  const start = view.start * US, end = view.end * US;
  const x = (t) => xOf(view, Math.min(Math.max(t, start), end) / US);
  const box = (from, to) => {
    const a = x(from), b = x(to);
    return b - a > 0 ? `M${a.toFixed(1)},${top}H${Math.max(b - 0.6, a + 0.6).toFixed(1)}V${bottom}H${a.toFixed(1)}Z` : "";
  };
  // From the first run whose window ends, or that starts, in view to the last whose window starts in it.
  const from = Math.min(start + lane.delay + 1, start - lane.phase);
  const to = end + lane.delay + (lane.lookback === null ? 0 : lane.lookback);
  const started = laneCount(lane, start - lane.phase, end - lane.phase);
  let visible = null;
  if (laneCount(lane, from, to) <= DENSE_RUNS + 1) {
    visible = laneRuns(lane, from, to).filter((run) => run.window_end > start && run.window_start < end);
  }
  if (visible && !visible.length) return shapes;
  if (visible && visible.length <= DENSE_RUNS) {
    visible.forEach((run, i) => {
      const d = box(run.window_start, run.window_end);
      if (i % 2) shapes.odd += d; else shapes.even += d;
    });
    shapes.starts = laneRuns(lane, start - lane.phase, end - lane.phase)
      .filter((run) => run.run_after >= start && run.run_after < end)
      .map((run) => `M${x(run.run_after).toFixed(1)},1V${top + 3}`).join("");
    return shapes;
  }
  const first = laneRuns(lane, start + lane.delay + 1, Infinity, 1)[0];
  const last = laneLast(lane) - lane.delay;
  shapes.band = box(first ? first.window_start : start, Math.min(last, end));
  const short = lane.through !== null && lane.through + lane.phase < end; // the lane stops short: a floor
  const every = cadenceText(laneSpacing(lane, start - lane.phase, end - lane.phase) / 1e6);
  shapes.note = `${short ? "at least " : ""}${started.toLocaleString("en")} runs${every ? `, every ${every}` : ""}`;
  return shapes;
}

function setIf(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

// One lane: <svg> with a <title>, grid, even windows, odd windows, band, starts and now (7 elements).
function newLane() {
  const lane = svg("svg", { class: "lane", viewBox: `0 0 ${LANE_WIDTH} 24`, preserveAspectRatio: "none", role: "img" });
  const parts = {};
  for (const name of ["title", "grid", "even", "odd", "band", "starts", "now"]) {
    parts[name] = svg(name === "title" ? "title" : name === "now" ? "line" : "path", name === "title" ? {} : { class: name });
    lane.append(parts[name]);
  }
  parts.now.setAttribute("y1", "0");
  parts.now.setAttribute("y2", "24");
  lane.parts = parts;
  return lane;
}

function drawLane(lane, shapes, view, label) {
  const p = lane.parts;
  if (p.title.textContent !== label) p.title.textContent = label;
  setIf(lane, "aria-label", label);
  setIf(p.grid, "d", ticks(view).map((t) => `M${xOf(view, t).toFixed(1)},0V24`).join(""));
  setIf(p.even, "d", shapes.even);
  setIf(p.odd, "d", shapes.odd);
  setIf(p.band, "d", shapes.band);
  setIf(p.starts, "d", shapes.starts);
  moveNow(lane, view);
}

// A lane's note starts just after the "now" line, so the line never runs through its words.
function placeNote(note, view) {
  const at = (xOf(view, view.now) / LANE_WIDTH) * 100;
  const left = `calc(${at.toFixed(2)}% + 6px)`;
  if (note.style.left !== left) {
    note.style.left = left;
    note.style.maxWidth = `calc(${(100 - at).toFixed(2)}% - 12px)`;
  }
}

function moveNow(lane, view) {
  const x = xOf(view, view.now).toFixed(1);
  setIf(lane.parts.now, "x1", x);
  setIf(lane.parts.now, "x2", x);
}
