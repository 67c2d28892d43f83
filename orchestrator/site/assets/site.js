// interregion site: draws the page's charts (from its fig-*.js files) and filters them by
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
    // "injected": tests the emulator perturbed on purpose, filtered as points, never refitted
    if (meta.filter === "points" || meta.filter === "injected") {
      var keep = st.pairs[meta.cloud_pair];
      var x = [], y = [], text = [], custom = [];
      for (i = 0; keep && i < trace.x.length; i++) {
        if (inBand(trace.x[i], st)) {
          x.push(trace.x[i]);
          y.push(trace.y[i]);
          if (trace.text) text.push(trace.text[i]);
          if (trace.customdata) custom.push(trace.customdata[i]);
        }
      }
      t.x = x;
      t.y = y;
      if (trace.text) t.text = text;
      if (trace.customdata) t.customdata = custom;
      return t;
    }
    if (meta.filter === "fit" || meta.filter === "series") {
      t.visible = st.pairs[meta.cloud_pair] ? (trace.visible === undefined ? true : trace.visible) : false;
      return t;
    }
    if (meta.filter === "routes") {
      var lat = [], lon = [], texts = [], custom = [];
      var n = meta.points;
      for (i = 0; i < meta.segments.length; i++) {
        var seg = meta.segments[i];
        var pairOk = st.pairs[seg[0] + "-" + seg[1]] || st.pairs[seg[1] + "-" + seg[0]];
        if (!pairOk || !inBand(seg[2], st)) continue;
        lat = lat.concat(trace.lat.slice(i * n, (i + 1) * n));
        lon = lon.concat(trace.lon.slice(i * n, (i + 1) * n));
        if (trace.text) texts = texts.concat(trace.text.slice(i * n, (i + 1) * n));
        if (trace.customdata) custom = custom.concat(trace.customdata.slice(i * n, (i + 1) * n));
      }
      t.lat = lat;
      t.lon = lon;
      if (trace.text) t.text = texts;
      if (trace.customdata) t.customdata = custom;
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

  // Side-by-side subplots (make_subplots' 1 x 2) stacked one above the other when the
  // chart is narrower than NARROW_PX: on a phone the two halves would overlap.
  var NARROW_PX = 700;
  function fitWidth(layout, width) {
    var x1 = layout.xaxis, x2 = layout.xaxis2;
    if (width >= NARROW_PX || !x1 || !x2 || !x1.domain || !x2.domain) return layout;
    if (x1.domain[1] > x2.domain[0]) return layout; // already one above the other
    var out = copy(layout);
    var gap = 0.16;
    var top = [0.5 + gap / 2, 1], bottom = [0, 0.5 - gap / 2];
    out.xaxis = copy(x1);
    out.xaxis.domain = [0, 1];
    out.xaxis2 = copy(x2);
    out.xaxis2.domain = [0, 1];
    out.yaxis = copy(layout.yaxis || {});
    out.yaxis.domain = top;
    out.yaxis2 = copy(layout.yaxis2 || {});
    out.yaxis2.domain = bottom;
    // the subplot titles are annotations placed above each half
    out.annotations = (layout.annotations || []).map(function (a, i) {
      var b = copy(a);
      if (i < 2 && a.xref === "paper" && a.yref === "paper" && a.y === 1) {
        b.x = 0.5;
        b.y = i === 0 ? top[1] : bottom[1];
      }
      return b;
    });
    out.height = Math.max(layout.height || 520, 760);
    return out;
  }

  // --- the statistics of the points that match the filter -------------------------

  // Least squares y = a + b x with Pearson's r (as analyze.linear_fit); null below 2.
  function fit(xs, ys) {
    var n = xs.length;
    if (n < 2) return null;
    var mx = 0, my = 0, i;
    for (i = 0; i < n; i++) { mx += xs[i]; my += ys[i]; }
    mx /= n; my /= n;
    var sxx = 0, syy = 0, sxy = 0;
    for (i = 0; i < n; i++) {
      var dx = xs[i] - mx, dy = ys[i] - my;
      sxx += dx * dx; syy += dy * dy; sxy += dx * dy;
    }
    if (sxx === 0) return null;
    var b = sxy / sxx;
    return { a: my - b * mx, b: b, r: syy === 0 ? NaN : sxy / Math.sqrt(sxx * syy) };
  }

  // Hyndman-Fan 7 (numpy's default), as orchestrator.core.stats.
  function quantile(values, q) {
    if (!values.length) return NaN;
    var s = values.slice().sort(function (x, y) { return x - y; });
    var h = (s.length - 1) * q, lo = Math.floor(h);
    return lo + 1 < s.length ? s[lo] + (h - lo) * (s[lo + 1] - s[lo]) : s[lo];
  }

  // Per cloud pair (and "all"): the RTT and throughput points the filter keeps, from
  // the all-pairs distance chart's traces (RTT on x, throughput on x2).
  function matching(spec, st) {
    var out = { all: { km: [], rtt: [], tkm: [], tput: [] } };
    spec.data.forEach(function (t) {
      var meta = t.meta || {};
      if (meta.filter !== "points" || !st.pairs[meta.cloud_pair]) return;
      var g = out[meta.cloud_pair] = out[meta.cloud_pair] || { km: [], rtt: [], tkm: [], tput: [] };
      var tput = t.xaxis === "x2";
      for (var i = 0; i < t.x.length; i++) {
        if (!inBand(t.x[i], st) || t.y[i] === null) continue;
        [g, out.all].forEach(function (h) {
          (tput ? h.tkm : h.km).push(t.x[i]);
          (tput ? h.tput : h.rtt).push(t.y[i]);
        });
      }
    });
    return out;
  }

  function text(v, digits) {
    return v === null || v === undefined || !isFinite(v) ? "-" : v.toFixed(digits);
  }

  function summaryCells(g, inflationKm) {
    var f = fit(g.km, g.rtt);
    var logs = g.tput.filter(function (v) { return v > 0; });
    var lf = fit(g.tkm.filter(function (_k, i) { return g.tput[i] > 0; }),
      logs.map(function (v) { return Math.log10(v); }));
    var inflation = [];
    g.km.forEach(function (km, i) { if (km >= inflationKm) inflation.push(g.rtt[i] / (km / 100)); });
    return {
      n: String(g.rtt.length),
      rtt_distance_r: text(f && f.r, 3),
      rtt_intercept_ms: text(f && f.a, 2),
      rtt_slope_ms_per_1000km: text(f && f.b * 1000, 2),
      log_throughput_distance_r: text(lf && lf.r, 3),
      route_inflation_median: text(quantile(inflation, 0.5), 2),
      rtt_p50_ms: text(quantile(g.rtt, 0.5), 1),
      rtt_p90_ms: text(quantile(g.rtt, 0.9), 1),
      throughput_p50_bps: text(quantile(g.tput, 0.5), 2),
      throughput_p90_bps: text(quantile(g.tput, 0.9), 2),
    };
  }

  var original = null; // the summary as built from every row, restored without a filter

  function updateSummary(groups, filtered) {
    var table = document.getElementById("summary");
    if (!table) return;
    var cells = table.querySelectorAll("td[data-col]");
    if (original === null) {
      original = [];
      for (var i = 0; i < cells.length; i++) original.push(cells[i].textContent);
    }
    var inflationKm = parseFloat(table.getAttribute("data-inflation-km")) || 500;
    var rows = table.querySelectorAll("tr[data-pair]");
    var k = 0;
    for (var r = 0; r < rows.length; r++) {
      var pair = rows[r].getAttribute("data-pair");
      var tds = rows[r].querySelectorAll("td[data-col]");
      var values = filtered ? summaryCells(groups[pair] || { km: [], rtt: [], tkm: [], tput: [] }, inflationKm) : null;
      for (var c = 0; c < tds.length; c++, k++) {
        var col = tds[c].getAttribute("data-col");
        if (col === "cloud_pair") continue;
        tds[c].textContent = values ? values[col] : original[k];
      }
    }
    var note = document.getElementById("summary-note");
    if (note) {
      note.textContent = filtered ?
        "Computed in the browser from the plotted points that match the filter (charts show " +
        "at most a subset of the rows; summary.csv holds every row's figures)." :
        "Computed from every measurement; with a filter, from the plotted points that match it.";
    }
  }

  // A fit line of a distance chart, redrawn through the points the filter keeps.
  function refit(trace, groups, st) {
    if (!st.pairs[trace.meta.cloud_pair]) return filterTrace(trace, st); // hidden
    var g = groups[trace.meta.cloud_pair] || { km: [], rtt: [], tkm: [], tput: [] };
    var tput = trace.xaxis === "x2";
    var xs = tput ? g.tkm : g.km, ys = tput ? g.tput : g.rtt;
    var keep = [], vals = [];
    xs.forEach(function (x, i) { if (!tput || ys[i] > 0) { keep.push(x); vals.push(tput ? Math.log10(ys[i]) : ys[i]); } });
    var f = fit(keep, vals);
    var t = copy(trace);
    if (!f) { t.visible = false; return t; }
    var lo = Math.min.apply(null, keep), hi = Math.max.apply(null, keep);
    t.x = [lo, hi];
    t.y = tput ? [Math.pow(10, f.a + f.b * lo), Math.pow(10, f.a + f.b * hi)] : [f.a + f.b * lo, f.a + f.b * hi];
    t.name = trace.name.replace(/r=[^,)]*$/, "r=" + text(f.r, 2));
    return t;
  }

  // The map's lines hover like the marker at their middle: each line point gets its
  // pair's text and customdata here, in the browser (in the figure JSON they would weigh
  // ROUTE_POINTS times more). The markers list the pairs in the lines' order.
  function lineHovers(spec) {
    var routes = spec.data.filter(function (t) { return (t.meta || {}).filter === "routes"; });
    var mids = routes.filter(function (t) { return t.meta.points === 1; });
    if (mids.length !== 1) return;
    var mid = mids[0], k = 0;
    routes.forEach(function (t) {
      if (t === mid) return;
      var n = t.meta.points, text = [], custom = [];
      for (var s = 0; s < t.meta.segments.length; s++, k++) {
        for (var j = 0; j < n; j++) {
          text.push(mid.text[k]);
          custom.push(mid.customdata ? mid.customdata[k] : null);
        }
      }
      t.text = text;
      if (mid.customdata) t.customdata = custom;
      t.hovertemplate = mid.hovertemplate;
      delete t.hoverinfo;
      t.hoveron = "points";
    });
  }

  // --- the time series' picker: any pair, from the figure's layout.meta.picker ------

  function picked(spec) {
    var sel = document.querySelector("select[data-fig='" + spec.name + "']");
    var picker = spec.layout.meta && spec.layout.meta.picker;
    if (!sel || !picker || sel.value === "") return null;
    return { picker: picker, index: Number(sel.value) };
  }

  // The chosen directed pair (and its reverse, dashed), drawn as the chart's own series
  // traces are (their axes, hover formats and modes), on the picker's time axis.
  function pickedTraces(spec, chosen) {
    var p = chosen.picker;
    var templates = spec.data.filter(function (t) { return (t.meta || {}).filter === "series"; });
    var rows = [];
    templates.forEach(function (t) {
      var axis = t.yaxis || "y";
      if (!rows.some(function (r) { return (r.yaxis || "y") === axis; })) rows.push(t);
    });
    var name = p.pairs[chosen.index];
    var ends = name.split(" → ");
    var back = p.pairs.indexOf(ends[1] + " → " + ends[0]);
    var out = [];
    [chosen.index, back].forEach(function (i, n) {
      if (i < 0) return;
      rows.forEach(function (tpl) {
        var tput = (tpl.yaxis || "y") !== "y";
        var t = copy(tpl);
        t.x = p.x;
        t.y = tput ? p.tput[i] : p.rtt[i];
        t.name = p.pairs[i];
        t.legendgroup = p.pairs[i];
        t.showlegend = !tput;
        t.connectgaps = true;
        t.line = n ? { dash: "dash" } : {};
        t.marker = n ? { symbol: "circle-open", size: 8 } : { size: 6 };
        t.hovertemplate = p.pairs[i] + "<br>%{x}<br>%{y:" + (tput ? ".3~r" : ".1f") + "} " +
          (tput ? "Mbit/s" : "ms") + "<extra></extra>";
        t.meta = { filter: "series", cloud_pair: p.codes[i], pair: p.pairs[i] };
        out.push(t);
      });
    });
    return out;
  }

  function pickerSetUp(spec) {
    var form = document.getElementById("series-picker");
    var sel = form && form.querySelector("select[data-fig='" + spec.name + "']");
    var p = spec.layout.meta && spec.layout.meta.picker;
    if (!sel || !p) return;
    var order = p.pairs.map(function (_n, i) { return i; });
    order.sort(function (a, b) { return p.pairs[a] < p.pairs[b] ? -1 : p.pairs[a] > p.pairs[b] ? 1 : 0; });
    sel.options[0].textContent = "the " + p.shown + " pairs that moved most";
    order.forEach(function (i) {
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = p.pairs[i];
      sel.appendChild(o);
    });
    var note = document.getElementById("series-picker-note");
    if (note) {
      note.textContent = p.pairs.length + " pairs" + (p.sweeps_kept < p.sweeps ?
        "; a picked pair shows the latest " + p.sweeps_kept + " of " + p.sweeps + " sweeps" : "");
    }
    form.addEventListener("change", apply);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
  }

  function apply() {
    var st = state();
    var shown = 0;
    var filtered = st.min > -Infinity || st.max < Infinity ||
      document.querySelectorAll("#filter input[name=pair]:not(:checked)").length > 0;
    charts.forEach(function (c) {
      var groups = filtered && /^chart-distance-/.test(c.div.id) ? matching(c.spec, st) : null;
      if (groups && c.div.id === "chart-distance-all") updateSummary(groups, true);
      var chosen = picked(c.spec);
      var traces = chosen ? pickedTraces(c.spec, chosen) : c.spec.data;
      c.div.setAttribute("data-picked", chosen ? chosen.picker.pairs[chosen.index] : "");
      var data = traces.map(function (t) {
        var f = groups && (t.meta || {}).filter === "fit" ? refit(t, groups, st) : filterTrace(t, st);
        // Counted on the all-pairs chart (each point is there twice: RTT and throughput).
        if (c.div.id === "chart-distance-all" && f.meta && f.meta.filter === "points" &&
            f.xaxis !== "x2") shown += f.x.length;
        return f;
      });
      Plotly.react(c.div, data, fitWidth(c.spec.layout, c.div.clientWidth), config);
    });
    if (!filtered) updateSummary(null, false);
    var rows = document.querySelectorAll("tr[data-pair]");
    for (var i = 0; i < rows.length; i++) {
      var pair = rows[i].getAttribute("data-pair");
      var km = rows[i].getAttribute("data-km"); // outliers: the pair's distance
      var inside = km === null || inBand(parseFloat(km), st);
      rows[i].style.display = (pair === "all" || st.pairs[pair]) && inside ? "" : "none";
    }
    var out = document.getElementById("filter-status");
    if (out) out.textContent = shown + " of the plotted RTT points match the filter";
    document.body.setAttribute("data-filter-points", String(shown));
  }

  function start() {
    // the figures come from data/<sweep>/fig-<name>.js (and data/timeseries.js)
    var figures = window.InterregionFigures || {};
    var divs = document.querySelectorAll("div.chart[data-fig]");
    for (var i = 0; i < divs.length; i++) {
      var spec = figures[divs[i].getAttribute("data-fig")];
      if (spec) {
        spec.name = divs[i].getAttribute("data-fig");
        lineHovers(spec);
        charts.push({ div: divs[i], spec: spec });
        pickerSetUp(spec);
      }
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
    var narrow = window.innerWidth < NARROW_PX;
    window.addEventListener("resize", function () {
      if ((window.innerWidth < NARROW_PX) !== narrow) {
        narrow = !narrow;
        apply();
      }
    });
    document.body.setAttribute("data-charts-ready", String(charts.length));
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
