// interregion site: draws the charts embedded in the page and filters them by
// cloud pair and distance, all in the browser (no server, works from file://).
(function () {
  "use strict";
  var config = { responsive: true, displaylogo: false };
  var charts = [];

  function state() {
    var form = document.getElementById("filter");
    var pairs = {};
    var boxes = form ? form.querySelectorAll("input[name=pair]") : [];
    for (var i = 0; i < boxes.length; i++) {
      if (boxes[i].checked) pairs[boxes[i].value] = true;
    }
    var min = form ? parseFloat(form.elements["min_km"].value) : NaN;
    var max = form ? parseFloat(form.elements["max_km"].value) : NaN;
    return {
      pairs: pairs,
      min: isNaN(min) ? -Infinity : min,
      max: isNaN(max) ? Infinity : max,
    };
  }

  function copy(trace) {
    var out = {};
    for (var k in trace) out[k] = trace[k];
    return out;
  }

  function inBand(km, st) {
    return km >= st.min && km <= st.max;
  }

  // One trace, filtered; `meta.filter` says how (set in orchestrator/charts.py).
  function filterTrace(trace, st) {
    var meta = trace.meta || {};
    var t = copy(trace);
    var i;
    if (meta.filter === "points") {
      var keep = st.pairs[meta.cloud_pair];
      var x = [], y = [], text = [];
      for (i = 0; keep && i < trace.x.length; i++) {
        if (inBand(trace.x[i], st)) {
          x.push(trace.x[i]);
          y.push(trace.y[i]);
          if (trace.text) text.push(trace.text[i]);
        }
      }
      t.x = x;
      t.y = y;
      if (trace.text) t.text = text;
      return t;
    }
    if (meta.filter === "fit" || meta.filter === "series") {
      t.visible = st.pairs[meta.cloud_pair] ? (trace.visible === undefined ? true : trace.visible) : false;
      return t;
    }
    if (meta.filter === "routes") {
      var lat = [], lon = [];
      var n = meta.points;
      for (i = 0; i < meta.segments.length; i++) {
        var seg = meta.segments[i];
        var pairOk = st.pairs[seg[0] + "-" + seg[1]] || st.pairs[seg[1] + "-" + seg[0]];
        if (!pairOk || !inBand(seg[2], st)) continue;
        lat = lat.concat(trace.lat.slice(i * n, (i + 1) * n));
        lon = lon.concat(trace.lon.slice(i * n, (i + 1) * n));
      }
      t.lat = lat;
      t.lon = lon;
      return t;
    }
    if (meta.filter === "heatmap") {
      t.z = trace.z.map(function (row, r) {
        return row.map(function (v, c) {
          var pair = meta.clouds_y[r] + "-" + meta.clouds_x[c];
          var km = meta.km[r][c];
          if (!st.pairs[pair] || km === null || !inBand(km, st)) return null;
          return v;
        });
      });
      return t;
    }
    return t;
  }

  function apply() {
    var st = state();
    var shown = 0;
    charts.forEach(function (c) {
      var data = c.spec.data.map(function (t) {
        var f = filterTrace(t, st);
        // Counted on the all-pairs chart (each point is there twice: RTT and throughput).
        if (c.div.id === "chart-distance-all" && f.meta && f.meta.filter === "points" &&
            f.xaxis !== "x2") shown += f.x.length;
        return f;
      });
      Plotly.react(c.div, data, c.spec.layout, config);
    });
    var rows = document.querySelectorAll("tr[data-pair]");
    for (var i = 0; i < rows.length; i++) {
      var pair = rows[i].getAttribute("data-pair");
      rows[i].style.display = pair === "all" || st.pairs[pair] ? "" : "none";
    }
    var out = document.getElementById("filter-status");
    if (out) out.textContent = shown + " of the plotted RTT points match the filter";
    document.body.setAttribute("data-filter-points", String(shown));
  }

  function start() {
    var divs = document.querySelectorAll("div.chart[data-fig]");
    for (var i = 0; i < divs.length; i++) {
      var source = document.getElementById(divs[i].getAttribute("data-fig"));
      var spec = JSON.parse(source.textContent);
      charts.push({ div: divs[i], spec: spec });
    }
    var form = document.getElementById("filter");
    if (form) {
      form.addEventListener("change", apply);
      form.addEventListener("input", apply);
      form.addEventListener("reset", function () {
        setTimeout(apply, 0);
      });
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        apply();
      });
    }
    apply();
    document.body.setAttribute("data-charts-ready", String(charts.length));
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
