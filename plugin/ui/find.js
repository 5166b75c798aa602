// Finding DAGs in a large fleet: the search, tags, filters and sort of GET /api/v1/page, all applied by the
// server to every DAG the user may read (the counts are the fleet's, not a page's). The choice lives in
// the page's address (?search=orders&tag=team-x&filter=late&sort=lateness), so a link shows the same view;
// embedded in Airflow's UI, the surrounding page's address carries it too.
"use strict";

const FIND_FILTERS = ["late", "not_ready", "failed_last", "paused", "excluded_today", "owed"];
const FIND_SORTS = ["dag_id", "lateness", "next_run"];
const find = { search: "", tags: [], filters: [], sort: "dag_id" };

// The address the choice is read from and written to: Airflow's page around this one when embedded.
function findLocation() {
  const host = parentWindow();
  return host ? host.location : window.location;
}

function readFind() {
  const params = new URLSearchParams(findLocation().search || window.location.search);
  find.search = (params.get("search") || "").slice(0, 250);
  find.tags = params.getAll("tag").filter(Boolean).slice(0, 10);
  find.filters = params.getAll("filter").filter((name) => FIND_FILTERS.includes(name));
  find.sort = FIND_SORTS.includes(params.get("sort")) ? params.get("sort") : "dag_id";
}

// The query string of the choice: the API's parameters, which are also the address's.
function findQuery() {
  const params = new URLSearchParams();
  if (find.search) params.set("search", find.search);
  for (const tag of find.tags) params.append("tag", tag);
  for (const name of find.filters) params.append("filter", name);
  if (find.sort !== "dag_id") params.set("sort", find.sort);
  return params.toString();
}

// Keep the choice in the address without a new history entry (the back button leaves the page, as before).
function writeFind() {
  const query = findQuery();
  for (const [win, where] of [[window, window.location], [parentWindow(), parentWindow() && parentWindow().location]]) {
    if (!win) continue;
    const address = `${where.pathname}${query ? `?${query}` : ""}${where.hash}`;
    if (address !== `${where.pathname}${where.search}${where.hash}`) win.history.replaceState(win.history.state, "", address);
  }
}

// The controls show the choice; a change starts over at the first page and reloads.
function showFind() {
  document.getElementById("search").value = find.search;
  document.getElementById("tag").value = find.tags.join(", ");
  document.getElementById("sort").value = find.sort;
  for (const box of document.querySelectorAll('#filters input[name="filter"]')) box.checked = find.filters.includes(box.value);
}

function watchFind(reload) {
  const apply = () => {
    find.search = document.getElementById("search").value.trim();
    find.tags = document.getElementById("tag").value.split(",").map((tag) => tag.trim()).filter(Boolean).slice(0, 10);
    find.filters = [...document.querySelectorAll('#filters input[name="filter"]:checked')].map((box) => box.value);
    find.sort = document.getElementById("sort").value;
    writeFind();
    pager.offset = 0;
    reload();
  };
  let typing = null;
  const soon = () => { clearTimeout(typing); typing = setTimeout(apply, 300); }; // one request per pause in typing
  document.getElementById("search").addEventListener("input", soon);
  document.getElementById("tag").addEventListener("input", soon);
  document.getElementById("filters").addEventListener("change", apply);
  document.getElementById("sort").addEventListener("change", apply);
  document.getElementById("find").addEventListener("submit", (event) => { event.preventDefault(); clearTimeout(typing); apply(); });
}

readFind();
