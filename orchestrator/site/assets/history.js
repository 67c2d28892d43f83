// interregion site, pages built from the history store (orchestrator/site_history.py).
// The matrix switches between views precomputed at build time (window.InterregionMatrix,
// from matrix-data.js); pair pages draw their embedded runs with the local plotly.js.
// Nothing is fetched: the pages work from file://.
(function () {
  "use strict";

  // Absolute buckets (bounds), best first: RTT and jitter in ms, loss in %, throughput in
  // Mbit/s (higher is better). Emulated throughput is bucketed over the view's own range.
  var BUCKETS = {
    rtt: [10, 30, 60, 100, 150, 250],
    loss: [0.01, 0.1, 0.5, 1, 2, 5],
    jitter: [0.5, 1, 2, 5, 10, 20],
    throughput: [2500, 1000, 500, 250, 100, 50],
  };
  var HIGHER_IS_BETTER = { throughput: true };
  var DEVIATION = [0.05, 0.1, 0.2]; // |value / reference - 1| bands
  var TITLES = { rtt: "RTT", loss: "loss", jitter: "jitter", throughput: "throughput" };

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // The same name as history_pages.pair_file.
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

  function signed(x, digits) {
    return (x >= 0 ? "+" : "") + x.toFixed(digits === undefined ? 1 : digits);
  }

  // As history.views.format_value: ms to 0.1, % to 0.01, Mbit/s to three digits.
  function fmt(metric, value) {
    if (value === null || value === undefined) return "—";
    if (metric === "throughput") {
      var a = Math.abs(value);
      return value.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
    }
    return metric === "loss" ? value.toFixed(2) : value.toFixed(1);
  }

  // Emulated throughput: six bounds spread evenly (in log) over the view's own range.
  function rangeBuckets(values) {
    var lo = Infinity, hi = -Infinity;
    values.forEach(function (x) {
      if (x !== null && x > 0) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    });
    if (!(lo < hi)) return null;
    var out = [];
    for (var i = 1; i <= 6; i++) {
      var x = Math.exp(Math.log(hi) - (i * (Math.log(hi) - Math.log(lo))) / 7);
      out.push(Number(x.toPrecision(2)));
    }
    return out;
  }

  function absoluteClass(metric, value, bounds) {
    for (var i = 0; i < bounds.length; i++) {
      if (HIGHER_IS_BETTER[metric] ? value >= bounds[i] : value < bounds[i]) return "q" + i;
    }
    return "q" + bounds.length;
  }

  // Worse = higher, or lower for throughput; against a reference (baseline or the
  // previous window). A reference of 0 (no loss before): any loss is the worst band.
  function relativeClass(metric, value, ref) {
    if (ref === null || ref === undefined) return "nobase";
    if (ref === 0) return value === 0 ? "d0" : (HIGHER_IS_BETTER[metric] ? "db" : "dw") + DEVIATION.length;
    var d = value / ref - 1;
    var worse = HIGHER_IS_BETTER[metric] ? d < 0 : d > 0;
    var size = Math.abs(d);
    for (var i = 0; i < DEVIATION.length; i++) {
      if (size < DEVIATION[i]) return i === 0 ? "d0" : (worse ? "dw" : "db") + i;
    }
    return (worse ? "dw" : "db") + DEVIATION.length;
  }

  function legend(metric, colour, unit, bounds) {
    var items = [];
    var i;
    if (colour === "absolute") {
      var op = HIGHER_IS_BETTER[metric] ? "≥" : "<";
      for (i = 0; i < bounds.length; i++) items.push(["q" + i, op + " " + bounds[i] + " " + unit]);
      items.push(["q" + bounds.length, (HIGHER_IS_BETTER[metric] ? "< " : "≥ ") +
        bounds[bounds.length - 1] + " " + unit]);
    } else {
      var what = colour === "delta" ? "the previous window's p50" : "the baseline";
      items.push(["d0", "the window's p50 within 5 % of " + what]);
      for (i = 1; i <= DEVIATION.length; i++) {
        var band = i < DEVIATION.length ? DEVIATION[i - 1] * 100 + "-" + DEVIATION[i] * 100 + " %" :
          "≥ " + DEVIATION[i - 1] * 100 + " %";
        items.push(["dw" + i, "worse " + band]);
        items.push(["db" + i, "better " + band]);
      }
      items.push(["nobase", colour === "delta" ? "no test in the previous window" :
        "no baseline (fewer than 8 comparable runs, or not followed for this metric)"]);
    }
    return items.map(function (it) {
      return "<span class='swatch " + it[0] + "'></span>" + esc(it[1]);
    }).join(" ");
  }

  function head(region, city, heads) {
    if (heads === "code" || !city) return esc(region);
    if (heads === "city") return esc(city);
    return esc(region) + " <small>" + esc(city) + "</small>";
  }

  // Each (source, metric) is its own file, with the p50 and the counts, and each other
  // statistic of it too (history_pages.matrix_files), loaded by a script element the
  // first time it is shown (file:// allows scripts, not fetch).
  var parts = {};
  var waiting = {};
  window.InterregionMatrixPart = function (source, metric, part, stat) {
    var key = source + "|" + metric + (stat ? "|" + stat : "");
    parts[key] = part;
    (waiting[key] || []).forEach(function (f) { f(); });
    delete waiting[key];
  };

  // `stat`: that statistic's file (none: the metric's own)
  function loadPart(folder, src, metric, stat, done) {
    var key = src.source + "|" + metric + (stat ? "|" + stat : "");
    if (parts[key]) return done();
    if (waiting[key]) return waiting[key].push(done);
    waiting[key] = [done];
    var s = document.createElement("script");
    s.src = folder + (stat ? src.stat_files[metric][stat] : src.files[metric]);
    s.onerror = function () {
      document.getElementById("matrix-caption").textContent = "could not load " + s.src;
    };
    document.body.appendChild(s);
  }

  function matrixPage(data) {
    var form = document.getElementById("matrix-controls");
    var table = document.getElementById("matrix");
    var pairs = table.getAttribute("data-pairs") || "pairs/";
    var folder = table.getAttribute("data-base") || "";
    var current = null;

    function choice(name) {
      return form.elements[name].value;
    }

    function render() {
      var src = null;
      for (var s = 0; s < data.sources.length; s++) {
        if (data.sources[s].source === choice("source")) src = data.sources[s];
      }
      var metric = choice("metric"), stat = choice("stat");
      var part = parts[src.source + "|" + metric];
      // a statistic the metric's file lacks is a file of its own
      var own = (src.stat_files && src.stat_files[metric] || {})[stat] ? stat : null;
      var statPart = own ? parts[src.source + "|" + metric + "|" + own] : null;
      if (!part || (own && !statPart)) {
        document.body.setAttribute("data-matrix-loading", "1");
        return loadPart(folder, src, metric, part ? own : null, render);
      }
      document.body.removeAttribute("data-matrix-loading");
      var win = choice("window");
      var colour = choice("colour"), detail = choice("show") === "detail", heads = choice("heads");
      var view = part.views[win];
      var values = own ? statPart[win] : view[stat];
      var base = part.baseline || [], prev = view.prev_p50 || [];
      var needs = (data.min_samples || {})[stat] || 1;
      var open = {};
      (part.open || []).forEach(function (k) { open[k] = true; });
      var regions = src.regions, cities = src.cities || [], n = regions.length;
      var unit = data.units[metric];
      var scaled = src.emulated && metric === "throughput";
      var bounds = (scaled && rangeBuckets(values)) || BUCKETS[metric];
      current = { src: src, metric: metric, stat: stat, view: view, unit: unit };
      function named(i) {
        return regions[i] + (cities[i] ? " (" + cities[i] + ")" : "");
      }
      var html = ["<thead><tr><th class='corner'>From \\ To</th>"];
      regions.forEach(function (r, i) {
        html.push("<th class='to' data-region='" + esc(r) + "' title='" + esc(named(i)) +
          "'><span>" + head(r, cities[i], heads) + "</span></th>");
      });
      html.push("</tr></thead><tbody>");
      var filled = 0;
      for (var i = 0; i < n; i++) {
        html.push("<tr><th class='from' data-region='" + esc(regions[i]) + "' title='" +
          esc(named(i)) + "'>" + head(regions[i], cities[i], heads) + "</th>");
        for (var j = 0; j < n; j++) {
          var k = i * n + j, value = values[k];
          if (view.tests[k] === null) {
            html.push("<td class='empty'></td>");
            continue;
          }
          // Deviation and change compare like with like: the window's p50 against the
          // baseline (a median of per-test medians) or the previous window's p50.
          var p50 = view.p50[k];
          var ref = colour === "delta" ? prev[k] : base[k];
          var cls = colour === "absolute" ? (value === null ? "nodata" : absoluteClass(metric, value, bounds)) :
            (p50 === null ? "nodata" : relativeClass(metric, p50, ref));
          if (open[k]) cls += " open";
          if (value !== null) filled++;
          var change = ref !== null && ref !== undefined && p50 !== null ?
            " (p50 " + signed(p50 - ref, metric === "loss" ? 2 : 1) + " " + unit +
            (ref ? ", " + signed(100 * (p50 / ref - 1)) + " %" : "") + ")" : "";
          // a percentile from too few samples is not estimated: say how many it needs
          var title = named(i) + " → " + named(j) + ": " + fmt(metric, value) + " " + unit +
            " (" + stat + (value === null && view.samples[k] < needs ? ", needs " + needs +
            " samples" : "") + "), n = " + view.samples[k] + " samples, " + view.tests[k] +
            " tests, newest " + age(view.newest_s[k]) + " ago, " +
            (colour === "delta" ? "previous window p50 " + fmt(metric, prev[k]) :
              "baseline " + fmt(metric, base[k])) + change + (open[k] ? ", open episode" : "") +
            (view.limiter && view.limiter[k] ? ", limited by " + view.limiter[k] : "") +
            // loss: the window's pings lost / sent with its Wilson 95 % interval
            (view.loss_pct && view.loss_pct[k] !== null ? "; pings lost / sent " +
              view.loss_pct[k] + " % (95 %: " + view.loss_low_pct[k] + "-" +
              view.loss_high_pct[k] + " % of " + view.pings_sent[k] + " pings)" : "");
          var text = colour === "delta" && p50 !== null && ref !== null && ref !== undefined ?
            signed(p50 - ref, metric === "loss" ? 2 : metric === "throughput" ? 0 : 1) :
            fmt(metric, value);
          if (detail) text += "<small>n " + view.samples[k] + "<br>" + age(view.newest_s[k]) + "</small>";
          html.push("<td class='" + cls + "' data-k='" + k + "' title='" + esc(title) + "'><a href='" +
            esc(pairs + pairFile(regions[i], regions[j])) + "'>" + text + "</a></td>");
        }
        html.push("</tr>");
      }
      html.push("</tbody>");
      table.innerHTML = html.join("");
      var range = win === "latest" ? "each pair's newest test" :
        (view.window_start_utc || "start") + " .. " + view.window_end_utc;
      document.getElementById("matrix-caption").textContent = TITLES[metric] + " " +
        (colour === "delta" ? "p50 change vs the previous window" : stat) + " (" +
        unit + "), window " + win + " (" + range + "); " + src.caption;
      var note = document.getElementById("matrix-scale");
      if (note) {
        note.hidden = !scaled;
        note.textContent = scaled ? "EMULATED rates: the real curve × " + data.emulated_rate_scale +
          " (rate scale, Methodology); colours span this view's own range." : "";
      }
      document.getElementById("source-banner").hidden = !src.emulated;
      document.getElementById("matrix-legend").innerHTML = legend(metric, colour, unit, bounds);
      document.body.setAttribute("data-matrix-view", [src.source, metric, stat, win, colour].join("|"));
      document.body.setAttribute("data-matrix-filled", String(filled));
      document.body.setAttribute("data-history-ready", "matrix");
    }

    table.addEventListener("mouseover", function (e) {
      var td = e.target.closest ? e.target.closest("td[data-k]") : null;
      if (td && current) document.getElementById("matrix-detail").textContent = td.title;
    });
    form.addEventListener("change", render);
    render();
  }

  function pairPage(data) {
    var config = { responsive: true, displaylogo: false };
    var divs = document.querySelectorAll("div.pair-chart");
    for (var i = 0; i < divs.length; i++) {
      var div = divs[i];
      var entry = data.sources[Number(div.getAttribute("data-source"))];
      var metric = div.getAttribute("data-metric");
      if (div.getAttribute("data-kind") === "mesh") {
        meshChart(div, entry, metric, config);
        continue;
      }
      var unit = metric === "rtt" ? "ms" : "Mbit/s";
      // an emulated throughput says its rate scale beside it, in the hover and the title
      var shown = metric !== "rtt" && entry.rate_scale_tag ? unit + ", " + entry.rate_scale_tag : unit;
      var last = null;
      var traces = entry.directions.map(function (d, n) {
        if (d.t.length && (last === null || d.t[d.t.length - 1] > last)) last = d.t[d.t.length - 1];
        // the two directions often lie on each other: the reverse one dashed, hollow marks
        return {
          type: "scatter", mode: "lines+markers", connectgaps: true,
          name: d.src + " → " + d.dst, x: d.t, y: d[metric], text: d.sweep,
          line: n ? { dash: "dash" } : {}, marker: n ? { symbol: "circle-open", size: 8 } : { size: 5 },
          hovertemplate: "%{x}<br>%{y:" + (metric === "rtt" ? ".1f" : ".3~r") + "} " + shown +
            "<br>sweep %{text}<extra>%{fullData.name}</extra>",
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
          // labels one above the other, not printed over each other
          yshift: 12 * notes.length,
          text: e.src.split(":")[1] + "→" + e.dst.split(":")[1] + ": " + e.status, font: { size: 10 },
        });
      });
      entry.configuration_changes.forEach(function (c) {
        shapes.push({
          type: "line", xref: "x", yref: "paper", x0: c.utc, x1: c.utc, y0: 0, y1: 1,
          line: { dash: "dot", width: 1, color: "#555" },
        });
      });
      // the axis spans the window the caption names (one test alone would span ±1 ms);
      // a pair untested in the window shows up to its newest test
      var first = null;
      entry.directions.forEach(function (d) {
        if (d.t.length && (first === null || d.t[0] < first)) first = d.t[0];
      });
      var start = entry.window_start_utc && first !== null && first < entry.window_start_utc ?
        first : (entry.window_start_utc || first);
      var end = entry.window_end_utc || last;
      var xaxis = { type: "date" };
      if (start && end) xaxis.range = paddedRange(start, end);
      var layout = {
        // on a phone the caption goes on a line of its own (plotly clips, never wraps)
        title: { text: TITLES[metric] + " (" + shown + ")" + (div.clientWidth < 600 ? "<br>" : ", ") +
          entry.caption, font: div.clientWidth < 600 ? { size: 13 } : {} },
        xaxis: xaxis, yaxis: { title: { text: unit }, rangemode: "tozero" },
        shapes: shapes, annotations: notes, margin: { t: 70 + 12 * notes.length },
        legend: { orientation: "h" },
      };
      Plotly.newPlot(div, traces, layout, config);
      div.setAttribute("data-episodes", String(notes.length));
    }
    document.body.setAttribute("data-history-ready", "pair");
  }

  // A mesh source's 5-minute bins (history_pages' mesh_pairs): its recent window, or the
  // bins around one of its changes (data-change); p50 solid, p90 dashed, p99 dotted per
  // direction (a bin with too few samples for one is a gap), or each bin's loss.
  function meshChart(div, entry, metric, config) {
    var n = div.getAttribute("data-change");
    var change = n === null ? null : entry.changes[Number(n)];
    var directions = change ? change.directions : entry.directions;
    var episodes = change ? change.episodes : entry.episodes;
    var stats = metric === "rtt" ? ["p50", "p90", "p99"] : ["loss"];
    var dashes = { p50: "solid", p90: "dash", p99: "dot", loss: "solid" };
    var traces = [], last = null;
    directions.forEach(function (d, k) {
      if (d.t.length && (last === null || d.t[d.t.length - 1] > last)) last = d.t[d.t.length - 1];
      stats.forEach(function (stat) {
        traces.push({
          type: "scatter", mode: "lines+markers", connectgaps: false,
          name: d.src + " → " + d.dst + (metric === "rtt" ? " " + stat : ""),
          x: d.t, y: d[stat], text: d.received,
          line: { dash: dashes[stat], width: stat === "p50" ? 2 : 1 },
          marker: { size: k ? 4 : 5, symbol: k ? "circle-open" : "circle" },
          hovertemplate: "%{x}<br>%{y:.2f} " + (metric === "rtt" ? "ms" : "%") +
            "<br>%{text} replies<extra>%{fullData.name}</extra>",
        });
      });
    });
    var shapes = [], notes = [];
    episodes.forEach(function (e) {
      var worse = e.new_level > e.old_level;
      shapes.push({
        type: "rect", xref: "x", yref: "paper", x0: e.started_utc, x1: e.closed_utc || last,
        y0: 0, y1: 1, line: { width: 0 }, opacity: 0.18, fillcolor: worse ? "#d62728" : "#2ca02c",
      });
      if (e.confirmed_utc) {
        shapes.push({
          type: "line", xref: "x", yref: "paper", x0: e.confirmed_utc, x1: e.confirmed_utc,
          y0: 0, y1: 1, line: { dash: "dot", width: 1, color: "#d62728" },
        });
      }
      notes.push({
        x: e.started_utc, y: 1, xref: "x", yref: "paper", showarrow: false, yanchor: "bottom",
        yshift: 12 * notes.length,
        text: e.src.split(":")[1] + "→" + e.dst.split(":")[1] + ": " + e.status, font: { size: 10 },
      });
    });
    var unit = metric === "rtt" ? "ms" : "%";
    var title = (change ? "bins around the change, " : "") + TITLES[metric] + " (" + unit + ")" +
      (div.clientWidth < 600 ? "<br>" : ", ") + entry.caption + ", mesh";
    Plotly.newPlot(div, traces, {
      title: { text: title, font: div.clientWidth < 600 ? { size: 13 } : {} },
      xaxis: { type: "date" }, yaxis: { title: { text: unit }, rangemode: "tozero" },
      shapes: shapes, annotations: notes, margin: { t: 70 + 12 * notes.length },
      legend: { orientation: "h" },
    }, config);
    div.setAttribute("data-episodes", String(notes.length));
    div.setAttribute("data-traces", String(traces.length));
  }

  // A window's ends with a margin: a test at either end (one sweep alone sits at both)
  // is drawn whole, not cut in half by the plot's edge. 3 % of the span, at least an hour.
  function paddedRange(start, end) {
    var a = Date.parse(start), b = Date.parse(end);
    var pad = Math.max((b - a) * 0.03, 3600e3);
    return [new Date(a - pad).toISOString().replace("Z", ""),
            new Date(b + pad).toISOString().replace("Z", "")];
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
