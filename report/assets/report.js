// memdiag report: draws the charts of the data in #memdiag-data with
// uPlot, links their zoom and cursor, shades the episodes, marks the
// culprits' firings, fills each chart's data table on demand and links
// the timeline's rows to the charts. It writes what it drew into data-*
// attributes (data-series, data-bands, data-markers on each figure;
// data-ready on <body>) so that a test can read the page back.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("memdiag-data").textContent);
  const plots = [];
  const H = 190;

  // Formatting by unit.
  const iec = (v) => {
    const a = Math.abs(v);
    const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = 0, x = a;
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (v < 0 ? "-" : "") + (i === 0 ? x.toFixed(0) : x.toFixed(x < 10 ? 1 : 0)) + " " + u[i];
  };
  const compact = (v) => {
    const a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e3) return (v / 1e3).toFixed(1) + "k";
    return a >= 10 || v === 0 ? v.toFixed(0) : v.toPrecision(2);
  };
  const fmt = {
    "ms": (v) => v < 1000 ? v.toFixed(v < 10 ? 1 : 0) + " ms" : (v / 1000).toFixed(2) + " s",
    "%": (v) => v.toFixed(v < 10 ? 1 : 0) + " %",
    "B": iec,
    "B/s": (v) => iec(v) + "/s",
    "/s": (v) => compact(v) + "/s",
    "s/s": (v) => v.toFixed(2) + " s/s",
    "": (v) => compact(v),
  };
  const show = (unit, v) => v == null ? "–" : (fmt[unit] || fmt[""])(v);

  const pad2 = (n) => String(n).padStart(2, "0");
  // x is wall-clock seconds shifted to UTC (absolute) or seconds since
  // each run's start (relative).
  const timeText = (x, withDate) => {
    if (D.relative) {
      const s = Math.round(x);
      const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
      return "+" + (h ? h + "h" + pad2(m) + "m" + pad2(sec) + "s" : m + "m" + pad2(sec) + "s");
    }
    const d = new Date(x * 1000);
    const t = pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes()) + ":" + pad2(d.getUTCSeconds());
    return withDate ? d.toISOString().slice(0, 10) + " " + t : t;
  };

  const css = (name) => getComputedStyle(document.body).getPropertyValue(name).trim();
  // On a dark background the darkest Okabe-Ito colours give way to
  // lighter ones of the same set (blue to sky blue, vermillion to orange).
  const darkMQ = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  const onDark = { "#0072B2": "#56B4E9", "#D55E00": "#E69F00", "#CC79A7": "#E8A3C9" };
  const themed = (c) => (darkMQ && darkMQ.matches && onDark[c]) || c;

  // One plot area for every chart, so that one moment is one x on all of
  // them: each side's value axes share one width, that of the longest
  // label on any chart ("954 MiB", "1.2 GiB/s") plus ticks and gap, at
  // least 50 px (a fixed width cut the first digit of long labels). A
  // chart without a right axis gets a blank one as wide. Every chart is
  // sized again once all are built (fit), so that the first ones take the
  // widths the later ones needed.
  const gutter = [50, 50]; // left, right
  function axisSize(u, values, ai, cycle) {
    const a = u.axes[ai];
    const side = a.side === 1 ? 1 : 0;
    if (cycle > 1) return gutter[side];
    let size = a.ticks.size + a.gap;
    const longest = (values || []).reduce((acc, v) => (v.length > acc.length ? v : acc), "");
    if (longest !== "") {
      u.ctx.font = a.font[0];
      size += u.ctx.measureText(longest).width / (window.devicePixelRatio || 1);
    }
    gutter[side] = Math.max(gutter[side], Math.ceil(size) + 4);
    return gutter[side];
  }

  function axis(unit, side) {
    return {
      scale: side ? "r" : "l",
      side: side ? 1 : 3,
      size: axisSize,
      grid: { show: !side, stroke: () => css("--grid"), width: 1 },
      stroke: () => css("--fg"),
      ticks: { stroke: () => css("--grid") },
      values: (u, splits) => splits.map((v) => v == null ? "" : show(unit, v)),
    };
  }

  // The right axis of a chart with none: no labels, no ticks, the
  // right-hand gutter's width.
  function blankAxis() {
    return {
      scale: "l",
      side: 1,
      size: axisSize,
      grid: { show: false },
      ticks: { show: false },
      values: (u, splits) => splits.map(() => ""),
    };
  }

  // Ticks in 24-hour time, with seconds when the ticks are under a
  // minute apart and the date where the day changes.
  function xAxis() {
    const a = { stroke: () => css("--fg"), grid: { stroke: () => css("--grid"), width: 1 }, ticks: { stroke: () => css("--grid") } };
    a.values = (u, splits, ai, space, incr) => {
      let day = "";
      return splits.map((v) => {
        if (v == null) return "";
        if (D.relative) return timeText(v, false);
        const d = new Date(v * 1000);
        let t = pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
        if (incr < 60) t += ":" + pad2(d.getUTCSeconds());
        const today = d.toISOString().slice(0, 10);
        if (today !== day) {
          if (day !== "" || splits[0] === v) t += "\n" + today;
          day = today;
        }
        return t;
      });
    };
    return a;
  }

  // Episode bands and firing markers: elements in the plot's overlay,
  // placed again whenever the x scale or the size changes.
  function overlay(u, fig, labelled) {
    const over = u.over;
    const bands = D.episodes.map((e) => {
      const el = document.createElement("div");
      el.className = "band run" + e.run + (e.spike ? " spike" : "");
      el.title = e.label + " (" + timeText(e.from, true) + " – " + timeText(e.to, false) + ")";
      el.dataset.from = e.from;
      el.dataset.to = e.to;
      over.appendChild(el);
      return el;
    });
    const markers = D.firings.map((f, i) => {
      const el = document.createElement("div");
      el.className = "marker run" + f.run + (f.missed ? " missed" : "");
      el.title = f.label + ": fired at " + timeText(f.at, true);
      if (labelled) {
        // Labels on the first chart only; the others show the lines.
        const lab = document.createElement("span");
        lab.className = "mlabel";
        lab.textContent = f.label;
        lab.style.top = (2 + (i % 3) * 12) + "px";
        el.appendChild(lab);
      }
      el.dataset.at = f.at;
      over.appendChild(el);
      return el;
    });
    fig.dataset.bands = bands.length;
    fig.dataset.markers = markers.length;
    return function place() {
      const w = u.over.clientWidth;
      D.episodes.forEach((e, i) => {
        const l = u.valToPos(e.from, "x"), r = u.valToPos(e.to, "x");
        const el = bands[i];
        if (r < 0 || l > w) { el.style.display = "none"; return; }
        el.style.display = "";
        el.style.left = Math.max(0, l) + "px";
        el.style.width = Math.max(2, Math.min(w, r) - Math.max(0, l)) + "px";
      });
      D.firings.forEach((f, i) => {
        const x = u.valToPos(f.at, "x");
        const el = markers[i];
        el.style.display = x < 0 || x > w ? "none" : "";
        el.style.left = x + "px";
      });
    };
  }

  const hover = document.getElementById("hover");
  function showHover(u) {
    const i = u.cursor.idx;
    if (i == null || !hover) return;
    const b = D.bucket_s > 0 ? Math.floor(i / 2) : i;
    let when;
    if (D.bucket_s > 0) {
      const lo = D.x[2 * b] - D.bucket_s / 4;
      when = timeText(lo, !D.relative) + " – " + timeText(lo + D.bucket_s, false);
    } else {
      when = "interval ending " + timeText(D.x[i], !D.relative);
    }
    hover.textContent = "";
    const h = document.createElement("strong");
    h.textContent = when;
    hover.appendChild(h);
    D.top.forEach((run, r) => {
      const p = document.createElement("span");
      const who = D.runs && D.runs[r] ? D.runs[r] + ": " : "";
      p.textContent = " " + who + "top I/O: " + (run[b] || "none recorded");
      hover.appendChild(p);
    });
  }

  let syncing = false;
  const placers = [];
  function zoom(min, max) {
    plots.forEach((p) => p.setScale("x", { min, max }));
  }

  function build(spec, fig) {
    const el = fig.querySelector(".plot");
    const data = [D.x.map(Number)];
    const series = [{ value: (u, v) => v == null ? "–" : timeText(v, !D.relative) }];
    spec.series.forEach((s) => {
      data.push(s.values);
      const unit = spec.units[s.axis] || spec.units[0];
      series.push({
        label: s.label,
        scale: s.axis ? "r" : "l",
        stroke: () => themed(s.color),
        width: 1.5,
        dash: s.dash ? [6, 4] : undefined,
        value: (u, v) => show(unit, v),
        spanGaps: false,
      });
    });
    const axes = [xAxis(), axis(spec.units[0], 0)];
    axes.push(spec.series.some((s) => s.axis === 1) ? axis(spec.units[1], 1) : blankAxis());
    const opts = {
      width: Math.max(320, el.clientWidth || 800),
      height: H,
      series,
      axes,
      scales: { x: { time: !D.relative }, l: { auto: true }, r: { auto: true } },
      cursor: { sync: { key: "memdiag" }, drag: { x: true, y: false } },
      legend: { live: true },
      hooks: {
        setScale: [(u, key) => {
          if (key !== "x") return;
          if (u === plots[0]) {
            // The shown time range, for tests and for anyone reading the DOM.
            document.body.dataset.xMin = u.scales.x.min;
            document.body.dataset.xMax = u.scales.x.max;
          }
          if (placers[plots.indexOf(u)]) placers[plots.indexOf(u)]();
          if (syncing) return;
          syncing = true;
          const { min, max } = u.scales.x;
          plots.forEach((p) => {
            if (p !== u && (p.scales.x.min !== min || p.scales.x.max !== max)) p.setScale("x", { min, max });
          });
          syncing = false;
        }],
        setSize: [(u) => { const i = plots.indexOf(u); if (placers[i]) placers[i](); }],
        setCursor: [showHover],
      },
    };
    if (!D.relative) opts.tzDate = (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");
    const u = new uPlot(opts, data, el);
    plots.push(u);
    const place = overlay(u, fig, plots.length === 1);
    placers.push(place);
    place();
    fig.dataset.series = u.series.length - 1;
    fig.dataset.points = D.x.length;

    // The data table, filled when opened (thousands of rows).
    const det = fig.querySelector("details.data");
    det.addEventListener("toggle", () => {
      const slot = det.querySelector(".table");
      if (!det.open || slot.firstChild) return;
      const t = document.createElement("table");
      const cap = document.createElement("caption");
      cap.textContent = spec.title + (D.bucket_s > 0 ? " (each bucket's minimum and maximum, in the order they occurred)" : "");
      t.appendChild(cap);
      const hr = t.createTHead().insertRow();
      ["time"].concat(spec.series.map((s) => s.label + " (" + (spec.units[s.axis] || spec.units[0]) + ")")).forEach((h) => {
        const th = document.createElement("th");
        th.scope = "col";
        th.textContent = h;
        hr.appendChild(th);
      });
      const body = t.createTBody();
      D.x.forEach((x, i) => {
        const r = body.insertRow();
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = timeText(x, !D.relative);
        r.appendChild(th);
        spec.series.forEach((s) => {
          r.insertCell().textContent = s.values[i] == null ? "" : String(s.values[i]);
        });
      });
      slot.appendChild(t);
      det.dataset.rows = D.x.length;
    });
  }

  D.charts.forEach((spec) => {
    const fig = document.getElementById("chart-" + spec.id);
    if (!fig) return;
    if (spec.series.length === 0) {
      fig.dataset.series = 0;
      return;
    }
    build(spec, fig);
  });

  // Timeline rows: #row-N zooms the charts to that row's time.
  function goRow() {
    const m = /^#row-(\d+)$/.exec(location.hash);
    if (!m || !D.rows || !D.rows[+m[1]]) return;
    const r = D.rows[+m[1]];
    const span = Math.max(r.to - r.from, 60);
    zoom(r.from - 3 * span, r.to + 3 * span);
    document.querySelectorAll("tr.current").forEach((e) => e.classList.remove("current"));
    const tr = document.getElementById("row-" + m[1]);
    if (tr) tr.classList.add("current");
    const charts = document.getElementById("charts");
    if (charts && charts.scrollIntoView) charts.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", goRow);
  document.querySelectorAll('a[href^="#row-"]').forEach((a) => {
    a.addEventListener("click", (ev) => {
      if (location.hash === a.getAttribute("href")) { ev.preventDefault(); goRow(); }
    });
  });

  // Sizes: follow the window, and fit the paper when printing.
  // Sizing a chart can widen a gutter (axisSize) after other charts took
  // the narrower one: they are laid out again until no gutter grows, so
  // that every plot area ends with the same left edge and width. batch
  // commits at once (uPlot otherwise commits in a microtask).
  function align() {
    for (let round = 0; round < 4; round++) {
      const before = gutter.join();
      plots.forEach((p) => p.batch(() => p.redraw(false, true)));
      if (gutter.join() === before) break;
    }
    document.body.dataset.gutters = gutter.join(",");
  }
  const fit = (w) => {
    plots.forEach((p) => p.batch(() => p.setSize({ width: w || Math.max(320, p.root.parentElement.clientWidth), height: H })));
    align();
  };
  let resizeTimer = 0;
  window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => fit(), 100); });
  window.addEventListener("beforeprint", () => {
    fit(680);
    document.body.dataset.printWidth = plots.length ? plots[0].width : 0;
  });
  window.addEventListener("afterprint", () => fit());
  // Light and dark: the axes read the page's colours when drawn.
  if (darkMQ && darkMQ.addEventListener) {
    darkMQ.addEventListener("change", align);
  }
  // The scroll bar appears once the charts are drawn: fit them again.
  fit();
  goRow();
  document.body.dataset.charts = plots.length;
  document.body.dataset.renderMs = Math.round(performance.now());
  document.body.dataset.ready = "1";
})();
