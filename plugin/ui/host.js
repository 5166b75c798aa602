// What the Schedules page needs from the Airflow UI around it: its address, its theme, its router.
"use strict";

// The Airflow UI's own address: this page is served at <base>/tessera/ui/.
const AIRFLOW_BASE = window.location.pathname.replace(/\/tessera\/ui\/.*$/, "");
const EMBEDDED = window.parent !== window;

function parentWindow() {
  try { return EMBEDDED && window.parent.document ? window.parent : null; } catch (_) { return null; }
}

// Airflow 3.3's UI keeps its theme with next-themes: the resolved theme is the class "light" or
// "dark" on its <html>, the choice ("light", "dark" or "system") in localStorage under "theme".
// Same origin, so the parent's class is read directly; alone, the stored choice or the system's.
function airflowTheme() {
  const host = parentWindow();
  if (host) {
    const classes = host.document.documentElement.classList;
    if (classes.contains("dark")) return "dark";
    if (classes.contains("light")) return "light";
  }
  let stored = null;
  try { stored = localStorage.getItem("theme"); } catch (_) { /* storage disabled */ }
  if (stored === "dark" || stored === "light") return stored;
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function applyTheme() {
  const dark = airflowTheme() === "dark";
  document.documentElement.classList.toggle("dark", dark);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

function followTheme() {
  applyTheme();
  const host = parentWindow();
  if (host) {
    new host.MutationObserver(applyTheme).observe(host.document.documentElement, { attributes: true, attributeFilter: ["class"] });
  }
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", applyTheme);
  window.addEventListener("storage", (event) => { if (event.key === "theme") applyTheme(); });
}

// Airflow's UI mirrors an embedded page's own path into the address bar when the frame loads
// (plugin pages may deep-link): /plugin/tessera-schedules becomes
// /plugin/tessera-schedules/tessera/ui/ once this page has loaded, which takes as long as the
// API server takes to answer the first request. This page has a single address, so put the one
// the user opened back, without a new history entry. The UI's router is not told: its own
// links and the back button still work, and a reload of either address opens this page.
const ADDRESS_WATCH_MS = 10 * 1000;

function keepAirflowAddress() {
  const host = parentWindow();
  if (!host) return;
  const ours = window.location.pathname;
  const restore = () => {
    const path = host.location.pathname;
    if (path.length > ours.length && path.endsWith(ours)) {
      const opened = path.slice(0, path.length - ours.length);
      // the search, filters and sort stay in it (find.js)
      host.history.replaceState(host.history.state, "", opened + host.location.search + host.location.hash);
    }
  };
  const started = Date.now();
  const timer = setInterval(() => {
    restore();
    if (Date.now() - started > ADDRESS_WATCH_MS) clearInterval(timer);
  }, 100);
  restore();
}

// Open an Airflow page in the surrounding UI: this page runs in a same-origin iframe whose
// sandbox forbids top navigation, so drive the UI's router through its history instead.
function openInAirflow(path) {
  const target = `${AIRFLOW_BASE}${path}`;
  const host = parentWindow();
  if (!host) { window.location.href = target; return; }
  host.history.pushState({}, "", target);
  host.dispatchEvent(new PopStateEvent("popstate"));
}

// A link to an Airflow page: a real address (copy, middle-click), opened in the UI on a plain click.
function airflowLink(path, text, attrs = {}) {
  const link = el("a", { href: `${AIRFLOW_BASE}${path}`, class: "dag-link", ...attrs }, text);
  link.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    openInAirflow(path);
  });
  return link;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "title") node.title = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

followTheme();
if (document.readyState === "complete") keepAirflowAddress();
else window.addEventListener("load", keepAirflowAddress);
