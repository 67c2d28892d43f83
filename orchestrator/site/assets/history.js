// interregion site, pages built from the history store (orchestrator/site_history.py).
// The matrix switches between views precomputed at build time (window.InterregionMatrix,
// from matrix-data.js); pair pages draw their embedded runs with the local plotly.js.
// Nothing is fetched: the pages work from file://.
(function () {
  "use strict";

  // Absolute buckets (upper bounds), best first: RTT in ms, throughput in Mbit/s.
  var BUCKETS = { rtt: [10, 30, 60, 100, 150, 250], throughput: [2500, 1000, 500, 250, 100, 50] };
  var DEVIATION = [0.05, 0.1, 0.2]; // |value / baseline - 1| bands
  var TITLES = { rtt: "RTT", throughput: "throughput" };

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // The same name as site_history.pair_file.
  function pairFile(a, b) {
    var p = [a, b].sort();
    function part(r) {
      return r.toLowerCase().replace(/[^a-z0-9-]/g, "_");
    }
    return part(p[0]) + "--" + part(p[1]) + ".html";
  }

  function age(seconds) {
    if (seconds === null || seconds === undefined) return "—";
    var s = Math.max(0, Date.now() / 1000 - seconds);
    if (s < 3600) return Math.round(s / 60) + " min";
    if (s < 48 * 3600) return Math.round(s / 3600) + " h";
    if (s < 730 * 86400) return Math.round(s / 86400) + " d";
    return (s / (365.25 * 86400)).toFixed(1) + " y";
  }

  function signed(x) {
    return (x >= 0 ? "+" : "") + x.toFixed(1);
  }

  function fmt(metric, value) {
    if (value === null || value === undefined) return "—";
    return metric === "rtt" ? value.toFixed(1) : value.toFixed(0);
  }

  function absoluteClass(metric, value) {
    var bounds = BUCKETS[metric];
    for (var i = 0; i < bounds.length; i++) {
      if (metric === "rtt" ? value < bounds[i] : value >= bounds[i]) return "q" + i;
    }
    return "q" + bounds.length;
  }

  // Worse = higher RTT or lower throughput.
  function deviationClass(metric, value, base) {
    if (base === null || base === undefined || base === 0) return "nobase";
    var d = value / base - 1;
    var worse = metric === "rtt" ? d > 0 : d < 0;
    var size = Math.abs(d);
    for (var i = 0; i < DEVIATION.length; i++) {
      if (size < DEVIATION[i]) return i === 0 ? "d0" : (worse ? "dw" : "db") + i;
    }
    return (worse ? "dw" : "db") + DEVIATION.length;
  }

  function legend(metric, colour, unit) {
    var items = [];
    var i;
    if (colour === "absolute") {
      var b = BUCKETS[metric];
      var op = metric === "rtt" ? "<" : "≥";
      for (i = 0; i < b.length; i++) items.push(["q" + i, op + " " + b[i] + " " + unit]);
      items.push(["q" + b.length, (metric === "rtt" ? "≥ " : "< ") + b[b.length - 1] + " " + unit]);
    } else {
      items.push(["d0", "the window's p50 within 5 % of the baseline"]);
      for (i = 1; i <= DEVIATION.length; i++) {
        var band = i < DEVIATION.length ? DEVIATION[i - 1] * 100 + "-" + DEVIATION[i] * 100 + " %" :
          "≥ " + DEVIATION[i - 1] * 100 + " %";
        items.push(["dw" + i, "worse " + band]);
        items.push(["db" + i, "better " + band]);
      }
      items.push(["nobase", "no baseline yet (fewer than 8 comparable runs)"]);
    }
    return items.map(function (it) {
      return "<span class='swatch " + it[0] + "'></span>" + esc(it[1]);
    }).join(" ");
  }

  function matrixPage(data) {
    var form = document.getElementById("matrix-controls");
    var table = document.getElementById("matrix");
    var current = null;

    function choice(name) {
      return form.elements[name].value;
    }

    function render() {
      var src = null;
      for (var s = 0; s < data.sources.length; s++) {
        if (data.sources[s].source === choice("source")) src = data.sources[s];
      }
      var metric = choice("metric"), stat = choice("stat"), win = choice("window");
      var colour = choice("colour"), detail = choice("show") === "detail";
      var view = src.views[metric + "|" + win];
      var values = view[stat], base = src.baseline[metric];
      var open = {};
      src.open[metric].forEach(function (k) { open[k] = true; });
      var regions = src.regions, n = regions.length, unit = data.units[metric];
      current = { src: src, metric: metric, stat: stat, view: view, unit: unit };
      var html = ["<thead><tr><th class='corner'>From \\ To</th>"];
      regions.forEach(function (r) { html.push("<th class='to'><span>" + esc(r) + "</span></th>"); });
      html.push("</tr></thead><tbody>");
      var filled = 0;
      for (var i = 0; i < n; i++) {
        html.push("<tr><th class='from'>" + esc(regions[i]) + "</th>");
        for (var j = 0; j < n; j++) {
          var k = i * n + j, value = values[k];
          if (view.tests[k] === null) {
            html.push("<td class='empty'></td>");
            continue;
          }
          // Deviation compares like with like: the window's p50 against the baseline (a
          // median of per-test medians), whichever stat the cell shows.
          var p50 = view.p50[k];
          var cls = colour === "absolute" ? (value === null ? "nodata" : absoluteClass(metric, value)) :
            (p50 === null ? "nodata" : deviationClass(metric, p50, base[k]));
          if (open[k]) cls += " open";
          if (value !== null) filled++;
          var title = regions[i] + " → " + regions[j] + ": " + fmt(metric, value) + " " + unit +
            " (" + stat + "), n = " + view.samples[k] + " samples, " + view.tests[k] +
            " tests, newest " + age(view.newest_s[k]) + " ago, baseline " + fmt(metric, base[k]) +
            (base[k] && p50 !== null ? " (p50 " + signed(100 * (p50 / base[k] - 1)) + " %)" : "") +
            (open[k] ? ", open episode" : "");
          var text = fmt(metric, value);
          if (detail) text += "<small>n " + view.samples[k] + "<br>" + age(view.newest_s[k]) + "</small>";
          html.push("<td class='" + cls + "' data-k='" + k + "' title='" + esc(title) + "'><a href='pairs/" +
            esc(pairFile(regions[i], regions[j])) + "'>" + text + "</a></td>");
        }
        html.push("</tr>");
      }
      html.push("</tbody>");
      table.innerHTML = html.join("");
      var range = win === "latest" ? "each pair's newest test" :
        (view.window_start_utc || "start") + " .. " + view.window_end_utc;
      document.getElementById("matrix-caption").textContent = TITLES[metric] + " " + stat + " (" +
        unit + "), window " + win + " (" + range + "); " + src.caption;
      document.getElementById("source-banner").hidden = !src.emulated;
      document.getElementById("matrix-legend").innerHTML = legend(metric, colour, unit);
      document.body.setAttribute("data-matrix-view", [src.source, metric, stat, win, colour].join("|"));
      document.body.setAttribute("data-matrix-filled", String(filled));
    }

    table.addEventListener("mouseover", function (e) {
      var td = e.target.closest ? e.target.closest("td[data-k]") : null;
      if (td && current) document.getElementById("matrix-detail").textContent = td.title;
    });
    form.addEventListener("change", render);
    render();
    document.body.setAttribute("data-history-ready", "matrix");
  }

  function pairPage(data) {
    var config = { responsive: true, displaylogo: false };
    var divs = document.querySelectorAll("div.pair-chart");
    for (var i = 0; i < divs.length; i++) {
      var div = divs[i];
      var entry = data.sources[Number(div.getAttribute("data-source"))];
      var metric = div.getAttribute("data-metric");
      var unit = metric === "rtt" ? "ms" : "Mbit/s";
      var last = null;
      var traces = entry.directions.map(function (d) {
        if (d.t.length && (last === null || d.t[d.t.length - 1] > last)) last = d.t[d.t.length - 1];
        return {
          type: "scatter", mode: "lines+markers", connectgaps: true,
          name: d.src + " → " + d.dst, x: d.t, y: d[metric], text: d.sweep,
          hovertemplate: "%{x}<br>%{y} " + unit + "<br>sweep %{text}<extra>%{fullData.name}</extra>",
        };
      });
      var shapes = [], notes = [];
      entry.episodes.filter(function (e) { return e.metric === metric; }).forEach(function (e) {
        var worse = metric === "rtt" ? e.new_level > e.old_level : e.new_level < e.old_level;
        shapes.push({
          type: "rect", xref: "x", yref: "paper", x0: e.started_utc, x1: e.closed_utc || last,
          y0: 0, y1: 1, line: { width: 0 }, opacity: 0.18, fillcolor: worse ? "#d62728" : "#2ca02c",
        });
        notes.push({
          x: e.started_utc, y: 1, xref: "x", yref: "paper", showarrow: false, yanchor: "bottom",
          text: e.src.split(":")[1] + "→" + e.dst.split(":")[1] + ": " + e.status, font: { size: 10 },
        });
      });
      entry.configuration_changes.forEach(function (c) {
        shapes.push({
          type: "line", xref: "x", yref: "paper", x0: c.utc, x1: c.utc, y0: 0, y1: 1,
          line: { dash: "dot", width: 1, color: "#555" },
        });
      });
      var layout = {
        title: { text: TITLES[metric] + " (" + unit + "), " + entry.caption },
        xaxis: { type: "date" }, yaxis: { title: { text: unit }, rangemode: "tozero" },
        shapes: shapes, annotations: notes, margin: { t: 70 }, legend: { orientation: "h" },
      };
      Plotly.newPlot(div, traces, layout, config);
      div.setAttribute("data-episodes", String(notes.length));
    }
    document.body.setAttribute("data-history-ready", "pair");
  }

  function start() {
    if (window.InterregionMatrix && document.getElementById("matrix")) {
      matrixPage(window.InterregionMatrix);
    }
    var pair = document.getElementById("pair-data");
    if (pair) pairPage(JSON.parse(pair.textContent));
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
