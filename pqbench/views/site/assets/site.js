/* pqbench publish: the site's one script. It reads the page's data from a
   <script type="application/json"> block (never from the HTML), draws the charts with
   plotly.js (written beside it; no request leaves the page), and runs the filters in the
   page. Text from the data reaches the page through textContent or plotly's own text
   rendering (entity-escaped by pqbench), never as HTML. */
"use strict";

(function () {
  function data(id) {
    const element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  function chosen(form, name) {
    const select = form.querySelector(`select[name="${name}"]`);
    return select ? select.value : "";
  }

  function say(text) {
    const status = document.getElementById("filter-status");
    if (status) { status.textContent = text; }
  }

  /* The index: each row of the rows table carries its algorithm, implementation,
     operation and the machines that measured it; a filter hides the others. */
  function filterTable(form) {
    const wanted = ["algorithm", "implementation", "operation"].map((n) => [n, chosen(form, n)]);
    const machine = chosen(form, "machine");
    let shown = 0;
    for (const row of document.querySelectorAll("tr[data-algorithm]")) {
      const keep = wanted.every(([n, v]) => !v || row.dataset[n] === v) &&
        (!machine || row.dataset.machines.split(" ").includes(machine));
      row.hidden = !keep;
      if (keep) { shown += 1; }
    }
    say(`${shown} row${shown === 1 ? "" : "s"} shown`);
  }

  /* A row's page: the machine filter shows one machine's history; another algorithm,
     implementation or operation is another row's page. */
  function filterRowPage(form, rows, here) {
    const machine = chosen(form, "machine");
    let shown = 0;
    for (const section of document.querySelectorAll("section[data-machine]")) {
      section.hidden = Boolean(machine) && section.dataset.machine !== machine;
      if (!section.hidden) { shown += 1; }
    }
    const wanted = ["algorithm", "implementation", "operation"].map((n) => chosen(form, n));
    if (wanted.every((v, i) => v === here[i])) {
      say(`${shown} machine${shown === 1 ? "" : "s"} shown`);
      window.dispatchEvent(new Event("resize"));
      return;
    }
    const match = rows.find((r) => wanted.every((v, i) => !v || r[i] === v));
    if (match) {
      window.location.href = match[3] + (machine ? `#m-${machine}` : "");
    } else {
      say("no row measured matches these filters");
    }
  }

  function drawCharts(charts) {
    if (!charts || typeof Plotly === "undefined") { return Promise.resolve(); }
    const config = { displaylogo: false, responsive: true, scrollZoom: false,
                     modeBarButtonsToRemove: ["select2d", "lasso2d"] };
    return Promise.all(charts.map((chart) =>
      Plotly.newPlot(chart.id, chart.traces, chart.layout, config)));
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("filters");
    const page = data("pqbench-page") || {};
    if (form) {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (page.row) { filterRowPage(form, page.rows, page.row); } else { filterTable(form); }
      });
      const machine = form.querySelector('select[name="machine"]');
      if (machine && page.row) {
        machine.addEventListener("change", () => filterRowPage(form, page.rows, page.row));
        const wanted = window.location.hash.replace(/^#m-/, "");
        if (wanted && [...machine.options].some((o) => o.value === wanted)) {
          machine.value = wanted;
          filterRowPage(form, page.rows, page.row);
        }
      }
    }
    drawCharts(data("pqbench-charts")).then(() => { document.body.dataset.ready = "yes"; },
      (error) => { document.body.dataset.ready = "failed"; throw error; });
  });
})();
