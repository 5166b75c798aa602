// The fleet load view: run starts per minute over the next 24 hours across every DAG, the
// peak-to-mean ratio and, for each spike, the DAGs that form it (GET /api/v1/load).
"use strict";

const LOAD_MINUTES = 1440;

function loadChart(counts) {
  const peak = Math.max(1, ...counts);
  const chart = svg("svg", { class: "load-chart", viewBox: `0 0 ${LOAD_MINUTES} 100`, preserveAspectRatio: "none",
    role: "img", "aria-label": "run starts per minute over the next 24 hours" });
  // One path for all the minutes: a column per minute with runs, as tall as its share of the peak.
  let d = "";
  counts.forEach((n, minute) => { if (n) d += `M${minute + 0.5},100V${(100 - (n / peak) * 96).toFixed(1)}`; });
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  chart.append(svg("path", { class: "bars", d }),
    svg("line", { class: "mean", x1: 0, x2: LOAD_MINUTES, y1: 100 - (mean / peak) * 96, y2: 100 - (mean / peak) * 96 }));
  return chart;
}

function loadAxis(start) {
  const first = Date.parse(start);
  const labels = [];
  for (let h = 0; h <= 24; h += 3) {
    const t = first + h * HOUR;
    labels.push(el("span", { class: "tick", style: `left:${(h / 24) * 100}%` }, new Date(t).toISOString().slice(11, 16)));
  }
  return el("div", { class: "axis load-axis" }, labels);
}

function describeLoad(load, withPaused) {
  const counted = load.dags.filter((d) => d.runs).length;
  const ratio = load.peak_to_mean === null ? "—" : load.peak_to_mean.toLocaleString("en");
  return [
    el("span", { class: "metric" }, el("b", {}, ratio), " peak-to-mean"),
    el("span", { class: "metric without-phases", title: "every run counted at its occurrence, as if no DAG had a phase" },
      el("b", {}, load.peak_to_mean_without_phases === null ? "—" : load.peak_to_mean_without_phases.toLocaleString("en")),
      " without phases"),
    el("span", {}, `${load.total_runs.toLocaleString("en")} run starts of ${counted} DAGs`),
    el("span", {}, `mean ${load.mean_per_minute.toFixed(2)} a minute`),
    el("span", {}, `peak ${load.peak}${load.peak_at ? ` at ${when(load.peak_at, false).slice(0, 5)}` : ""}`),
    withPaused ? el("span", { class: "sub" }, "paused DAGs counted") : null];
}

function spikeList(load) {
  if (!load.spikes.length) return el("p", { class: "sub" }, "No spikes: no minute starts 2 runs or more and 3× the mean.");
  return el("ol", { class: "spikes" }, load.spikes.map((s) => el("li", {},
    el("span", { class: "mono" }, when(s.minute, false).slice(0, 5)), " ",
    chip("warn", `${s.runs} runs`), " ",
    el("span", { class: "dags" }, s.dag_ids.join(", "), s.dag_count > s.dag_ids.length ? ` and ${s.dag_count - s.dag_ids.length} more` : ""))));
}

function loadNotes(load) {
  const notes = [];
  const capped = load.dags.filter((d) => d.capped).map((d) => d.dag_id);
  if (capped.length) notes.push(`Counted up to ${load.run_cap_per_dag} runs a day each (they start more): ${capped.join(", ")}.`);
  const broken = load.dags.filter((d) => d.error);
  if (broken.length) notes.push(`Not counted: ${broken.map((d) => `${d.dag_id} (${d.error})`).join("; ")}.`);
  if (load.paused_left_out) notes.push(`${load.paused_left_out} paused DAGs are not counted.`);
  return notes.map((text) => el("p", { class: "sub" }, text));
}

async function showLoad() {
  const box = document.getElementById("load-body");
  const button = document.getElementById("load-again");
  button.disabled = true;
  box.setAttribute("aria-busy", "true");
  try {
    const withPaused = document.getElementById("load-paused").checked;
    const load = await api(`/load${withPaused ? "?include_paused=true" : ""}`);
    box.replaceChildren(
      el("div", { class: "summary load-summary" }, describeLoad(load, withPaused)),
      el("div", { class: "load-plot" }, loadChart(load.counts), loadAxis(load.start)),
      el("h3", {}, "Spikes, busiest first"), spikeList(load), ...loadNotes(load));
    box.dataset.peakToMean = load.peak_to_mean === null ? "" : String(load.peak_to_mean);
  } catch (error) {
    box.replaceChildren(el("p", { class: "error", role: "alert" }, `Could not compute the load: ${error.message}`));
  } finally {
    button.disabled = false;
    box.removeAttribute("aria-busy");
  }
}

// Computed when the section is opened (it reads every DAG), and again on demand.
document.getElementById("load").addEventListener("toggle", (event) => { if (event.target.open) showLoad(); });
document.getElementById("load-again").addEventListener("click", showLoad);
document.getElementById("load-paused").addEventListener("change", showLoad);
