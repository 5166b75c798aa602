// The pages of the Schedules page's rows: one answer holds at most PAGE_ROWS DAGs (the API's most), so a
// load costs the same whatever the fleet; a larger fleet is read a page at a time, as Airflow's list is.
"use strict";

const PAGE_ROWS = 1000;
const pager = { offset: 0 }; // the first row shown, among every DAG the page lists

const numberText = (n) => n.toLocaleString("en-US");

// Where the last page starts when `total` rows are listed (0 when there are none).
const lastPage = (total) => Math.max(0, Math.ceil(total / PAGE_ROWS) - 1) * PAGE_ROWS;

// More DAGs than one answer holds: which rows these are, and the way to the others. True when paged.
function showPager(page) {
  const paged = page.total > page.dags.length || page.offset > 0;
  document.getElementById("pager").hidden = !paged;
  if (!paged) return false;
  const last = page.offset + page.dags.length;
  document.getElementById("page-range").textContent = `DAGs ${numberText(page.offset + 1)}–${numberText(last)} of ${numberText(page.total)}`;
  document.getElementById("page-prev").disabled = page.offset === 0;
  document.getElementById("page-next").disabled = last >= page.total;
  return true;
}

function turnPages(load) {
  const turn = (by) => () => { pager.offset = Math.max(0, pager.offset + by); load(); };
  document.getElementById("page-prev").addEventListener("click", turn(-PAGE_ROWS));
  document.getElementById("page-next").addEventListener("click", turn(PAGE_ROWS));
}
