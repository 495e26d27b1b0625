// engine/report/html_script.h
//
// The stylesheet and the chart script of the HTML report (html_report.h), as text. The script
// reads the JSON report from <script id="zsim-data" type="application/json"> and draws four SVG
// charts with DOM calls only (createElementNS, textContent: no innerHTML, so no scanned name is
// ever parsed as markup). No library, no network.
//
// Thread safety: constants.

#ifndef ZSIM_ENGINE_REPORT_HTML_SCRIPT_H_
#define ZSIM_ENGINE_REPORT_HTML_SCRIPT_H_

namespace zsim::report {

inline constexpr const char* kHtmlStyle = R"CSS(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1d2330;
       padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #d5dae3; padding-bottom: 3px; }
.meta { color: #5b6475; }
.verdict { font-size: 17px; padding: 12px 16px; border-radius: 6px; background: #eef4ff;
           border-left: 6px solid #2f6fde; }
.verdict.dedup_pays { background: #eaf7ee; border-color: #2a9d4b; }
.verdict.dedup_needs_hardware { background: #fff6e5; border-color: #d98a00; }
.verdict.compression_only, .verdict.clone_instead_of_dedup { background: #eef4ff; }
ul.advice li { margin: 5px 0; }
.kind { display: inline-block; min-width: 130px; color: #5b6475; font-size: 12px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 6px; border-bottom: 1px solid #e6e9ef; text-align: right; font-size: 13px; }
td { white-space: nowrap; }
.scroll { overflow-x: auto; }
th { background: #f4f6fa; }
td.l, th.l { text-align: left; }
tr.featured td { font-weight: 600; background: #fbfcdf; }
pre { background: #f7f8fa; padding: 10px; overflow-x: auto; font-size: 12.5px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 18px; }
figure { margin: 0; border: 1px solid #e1e5ec; border-radius: 6px; padding: 8px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
figure .note { color: #5b6475; font-size: 12px; min-height: 1em; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2330; }
svg .axis { stroke: #8a93a5; stroke-width: 1; }
svg .grid { stroke: #e6e9ef; stroke-width: 1; }
)CSS";

inline constexpr const char* kHtmlScript = R"JS(
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var W = 560, H = 300, M = { l: 58, r: 14, t: 26, b: 64 };
  var COLORS = ['#2f6fde', '#e0812b', '#2a9d4b', '#b0399f', '#8a93a5', '#c8453b'];
  var data = JSON.parse(document.getElementById('zsim-data').textContent);
  var results = data.results || [];
  var featured = (data.advice && data.advice.featured) || null;

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function note(svg, text) { svg.parentNode.querySelector('.note').textContent = text; }
  function fmtBytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i === 0 ? b.toFixed(0) : b >= 100 ? b.toFixed(0) : b >= 10 ? b.toFixed(1) :
            b.toFixed(2)) + ' ' + u[i];
  }
  // A power-of-two size as a tick label: "512 B", "4 KiB", "1 MiB".
  function tickBytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (Math.round(b * 10) / 10) + ' ' + u[i];
  }
  function niceSize(b) {
    var u = ['', 'K', 'M', 'G', 'T'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (Math.round(b * 100) / 100) + u[i];
  }
  function frame(svg, yLabel) {
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    el('text', { x: 4, y: 14 }, svg, yLabel);
  }
  // log: a log scale; bytes (with log): ticks at powers of two, at most 7 of them, so every
  // label is a round size (4 KiB, 1 MiB, 64 MiB), never 97.7 KiB.
  function scale(lo, hi, log, bytes) {
    if (log) {
      lo = Math.max(lo, 1); hi = Math.max(hi, lo * 10);
      var t = [];
      if (bytes) {
        var e0 = Math.floor(Math.log2(lo)), e1 = Math.ceil(Math.log2(hi));
        var step = Math.max(1, Math.ceil((e1 - e0) / 6));
        e0 = Math.floor(e0 / step) * step;
        for (var e = e0; e <= e1; e += step) t.push(Math.pow(2, e));
        lo = Math.min(lo, t[0]); hi = Math.max(hi, t[t.length - 1]);
      } else {
        for (var p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++) {
          t.push(Math.pow(10, p));
        }
      }
      var a = Math.log10(lo), b = Math.log10(hi);
      return { f: function (v) { return H - M.b - (Math.log10(Math.max(v, lo)) - a) / (b - a) *
                                  (H - M.t - M.b); },
               ticks: t, lo: lo, hi: hi };
    }
    if (hi <= lo) hi = lo + 1;
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 4)));
    if ((hi - lo) / step > 8) step *= 2;
    if ((hi - lo) / step > 8) step *= 2.5;
    var t = [];
    for (var v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push(v);
    lo = Math.min(lo, t[0]); hi = Math.max(hi, t[t.length - 1]);
    return { f: function (v) { return H - M.b - (v - lo) / (hi - lo) * (H - M.t - M.b); },
             ticks: t, lo: lo, hi: hi };
  }
  function yAxis(svg, s, fmt) {
    s.ticks.forEach(function (v) {
      var y = s.f(v);
      if (y < M.t - 1 || y > H - M.b + 1) return;
      el('line', { x1: M.l, x2: W - M.r, y1: y, y2: y, 'class': 'grid' }, svg);
      el('text', { x: M.l - 5, y: y + 4, 'text-anchor': 'end' }, svg, fmt(v));
    });
    el('line', { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b, 'class': 'axis' }, svg);
    el('line', { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, 'class': 'axis' }, svg);
  }
  function legend(svg, series) {
    var width = 0;
    series.forEach(function (s) { width += 24 + s.name.length * 6.5; });
    var x = W - M.r - width;  // right-aligned, clear of the axis label on the left
    series.forEach(function (s, i) {
      el('rect', { x: x, y: M.t - 16, width: 10, height: 10, fill: COLORS[i % COLORS.length] },
         svg);
      el('text', { x: x + 14, y: M.t - 7 }, svg, s.name);
      x += 24 + s.name.length * 6.5;
    });
  }
  // Grouped bars: labels along x, one bar per series in each group. Returns the bars drawn.
  function bars(svg, labels, series, opt) {
    frame(svg, opt.yLabel);
    var all = [];
    series.forEach(function (s) { all = all.concat(s.values); });
    if (labels.length === 0 || all.length === 0) {
      el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle' }, svg, 'no data');
      yAxis(svg, scale(0, 1, false), function (v) { return v; });
      return 0;
    }
    var positive = all.filter(function (v) { return v > 0; });
    var lo = opt.log ? (positive.length ? Math.min.apply(null, positive) : 1) : Math.min(0, opt.min === undefined ?
                                                                  0 : opt.min, Math.min.apply(null, all));
    var hi = Math.max.apply(null, all.concat([opt.max || 0]).concat(
        (opt.lines || []).map(function (l) { return l.value; })));
    if (opt.log) {
      (opt.lines || []).forEach(function (l) { if (l.value > 0) lo = Math.min(lo, l.value); });
    }
    var s = scale(opt.log ? lo / 1.5 : lo, hi * (opt.log ? 1.5 : 1.08), opt.log, opt.bytes);
    yAxis(svg, s, opt.tick);
    if (series.length > 1) legend(svg, series);
    var gw = (W - M.l - M.r) / labels.length, bw = Math.min(38, gw * 0.8 / series.length);
    var n = 0, base = s.f(opt.log ? s.lo : Math.max(0, s.lo));
    labels.forEach(function (label, i) {
      var gx = M.l + gw * i + (gw - bw * series.length) / 2;
      series.forEach(function (ser, j) {
        var v = ser.values[i];
        if (v === undefined || v === null || !isFinite(v)) return;
        var y = s.f(v), top = Math.min(y, base), h = Math.max(Math.abs(base - y), 1);
        var mark = { x: gx + j * bw, y: top, width: Math.max(bw - 2, 1), height: h,
                     fill: COLORS[j % COLORS.length] };
        if (i === opt.highlight) { mark.stroke = '#1d2330'; mark['stroke-width'] = 2.5; }
        var r = el('rect', mark, svg);
        el('title', {}, r, ser.name + ' ' + label + ': ' + opt.tick(v));
        if (opt.valueLabels) {
          el('text', { x: gx + j * bw + bw / 2 - 1, y: top - 3, 'text-anchor': 'middle' }, svg,
             opt.tick(v));
        }
        n++;
      });
      var tx = M.l + gw * i + gw / 2, ty = H - M.b + 14;
      var t = el('text', { x: tx, y: ty, 'text-anchor': labels.length > 6 ? 'end' : 'middle' },
                 svg, i === opt.highlight ? label + ' \u2605' : label);
      if (i === opt.highlight) t.setAttribute('font-weight', 'bold');
      if (labels.length > 6) t.setAttribute('transform', 'rotate(-35 ' + tx + ' ' + ty + ')');
    });
    if (opt.xLabel) el('text', { x: (W + M.l) / 2, y: H - 4, 'text-anchor': 'middle' }, svg,
                       opt.xLabel);
    (opt.lines || []).forEach(function (line) {
      var y = s.f(line.value);
      el('line', { x1: M.l, x2: W - M.r, y1: y, y2: y, stroke: line.color, 'stroke-width': 2,
                   'stroke-dasharray': '6 4' }, svg);
      el('text', { x: W - M.r - 4, y: y - 4, 'text-anchor': 'end', fill: line.color }, svg,
         line.name + ': ' + opt.tick(line.value));
      n++;
    });
    return n;
  }
  function ratioTick(v) { return v.toFixed(2) + 'x'; }
  function featuredRecordsize() {
    return featured ? featured.recordsize : (results[0] ? results[0].recordsize : 0);
  }
  function featuredCompression() {
    return featured ? featured.compression : (results[0] ? results[0].compression : 'off');
  }

  function drawCodec(svg) {
    var rs = featuredRecordsize();
    var rows = results.filter(function (r) { return r.recordsize === rs; });
    // "off" runs no codec: its "speed" is a memcpy, not a point on this chart.
    var timed = rows.filter(function (r) {
      return r.compression !== 'off' && r.compress_bytes_per_second > 0; });
    if (timed.length === 0) {
      note(svg, 'Codec speed was not measured by this scan: compressratio per codec at ' +
           'recordsize ' + niceSize(rs) + '.');
      return bars(svg, rows.map(function (r) { return r.compression; }),
                  [{ name: 'compressratio', values: rows.map(function (r) {
                    return r.compressratio; }) }],
                  { yLabel: 'compressratio', tick: ratioTick, min: 1, valueLabels: true,
                    xLabel: 'codec' });
    }
    note(svg, 'recordsize ' + niceSize(rs) + '; speed: MB/s of input per core.');
    frame(svg, 'compressratio');
    var xs = timed.map(function (r) { return r.compress_bytes_per_second / 1e6; });
    var ys = timed.map(function (r) { return r.compressratio; });
    var sx = scale(Math.min.apply(null, xs) / 1.5, Math.max.apply(null, xs) * 1.5, true);
    var sy = scale(Math.min(1, Math.min.apply(null, ys)), Math.max.apply(null, ys) * 1.1, false);
    yAxis(svg, sy, ratioTick);
    var X = function (v) {
      return M.l + (Math.log10(v) - Math.log10(sx.lo)) / (Math.log10(sx.hi) -
             Math.log10(sx.lo)) * (W - M.l - M.r);
    };
    sx.ticks.forEach(function (v) {
      if (v < sx.lo || v > sx.hi) return;
      el('text', { x: X(v), y: H - M.b + 14, 'text-anchor': 'middle' }, svg, v + ' MB/s');
    });
    var n = 0;
    var chosen = featuredCompression();
    timed.forEach(function (r, i) {
      var mine = r.compression === chosen;
      var dot = { cx: X(xs[i]), cy: sy.f(ys[i]), r: mine ? 8 : 5, fill: COLORS[i % COLORS.length] };
      if (mine) { dot.stroke = '#1d2330'; dot['stroke-width'] = 2.5; }
      var c = el('circle', dot, svg);
      el('title', {}, c, r.compression + ': ' + ratioTick(ys[i]) + ' at ' + xs[i].toFixed(0) +
         ' MB/s');
      var label = el('text', { x: X(xs[i]) + 9, y: sy.f(ys[i]) - 7 }, svg,
                     mine ? r.compression + ' \u2605 recommended' : r.compression);
      if (mine) label.setAttribute('font-weight', 'bold');
      n++;
    });
    el('text', { x: (W + M.l) / 2, y: H - 4, 'text-anchor': 'middle' }, svg,
       'compression speed (log scale)');
    return n;
  }
  function drawDedupByRecordsize(svg) {
    var c = featuredCompression();
    var rows = results.filter(function (r) { return r.compression === c; });
    note(svg, 'compression ' + c + '; pays from ' +
         ((data.advice && data.advice.thresholds) ? data.advice.thresholds.dedup_pays_ratio
                                                   : 1.2) + 'x when the table fits in RAM.');
    var rs = featuredRecordsize();
    return bars(svg, rows.map(function (r) { return niceSize(r.recordsize); }),
                [{ name: 'dedup ratio', values: rows.map(function (r) { return r.dedup.ratio; }) }],
                { yLabel: 'dedup ratio', tick: ratioTick, min: 1, valueLabels: true,
                  xLabel: 'recordsize (\u2605 recommended)',
                  highlight: rows.map(function (r) { return r.recordsize; }).indexOf(rs) });
  }
  function drawHistogram(svg) {
    var idx = featured ? featured.index : 0;
    var r = results[idx];
    var hist = r ? r.dedup.histogram : [];
    note(svg, r ? ('recordsize ' + niceSize(r.recordsize) + ', compression ' + r.compression +
                   ': DSIZE per refcount bucket, log scale') : '');
    return bars(svg, hist.map(function (h) { return String(h.refcnt); }),
                [{ name: 'allocated', values: hist.map(function (h) { return h.allocated.dsize; }) },
                 { name: 'referenced', values: hist.map(function (h) {
                   return h.referenced.dsize; }) }],
                { yLabel: 'bytes (dsize)', tick: tickBytes, log: true, bytes: true,
                  xLabel: 'refcnt bucket' });
  }
  function drawSavings(svg) {
    note(svg, 'saved: 1 - stored / data (the files\' bytes outside holes; before state format ' +
         '22: the row\'s logical size), stored as zfs used counts it (parity deflated); ' +
         'with dedup: as dedup writes the data, less what dedup removes, plus the DDT.');
    return bars(svg, results.map(function (r) { return niceSize(r.recordsize) + ' ' +
                                                       r.compression; }),
                [{ name: 'saved without dedup', values: results.map(function (r) {
                   return r.saved_percent; }) },
                 { name: 'saved with dedup', values: results.map(function (r) {
                   return r.saved_with_dedup_percent; }) }],
                { yLabel: 'space saved (%)', tick: function (v) { return v.toFixed(0) + '%'; },
                  max: 10, xLabel: 'recordsize, compression (\u2605 recommended)',
                  highlight: featured ? featured.index : -1 });
  }
  // The DDT's RAM (in core + log, format in force) per recordsize against the budget the advice
  // judges it by (a quarter of RAM) and the RAM itself.
  function drawDdtRam(svg) {
    var c = featuredCompression(), rs = featuredRecordsize();
    var adv = data.advice || {};
    var format = adv.ddt_format || 'legacy';
    var rows = results.filter(function (r) { return r.compression === c; });
    var need = rows.map(function (r) {
      var f = (r.dedup.ddt_formats || []).filter(function (x) { return x.format === format; })[0];
      return f ? Math.max(f.cached || 0, f.in_core || 0) + (f.log_bytes || 0) : 0;
    });
    var ram = adv.ram_bytes || 0;
    var fraction = adv.thresholds ? adv.thresholds.ddt_ram_fraction : 0.25;
    var lines = ram > 0 ? [{ name: 'budget (' + Math.round(fraction * 100) + '% of RAM)',
                             value: ram * fraction, color: '#c8453b' },
                           { name: 'RAM', value: ram, color: '#5b6475' }] : [];
    note(svg, 'compression ' + c + ', ' + format + ' DDT: RAM the table needs held in ARC, ' +
         'log scale.');
    return bars(svg, rows.map(function (r) { return niceSize(r.recordsize); }),
                [{ name: 'DDT RAM', values: need }],
                { yLabel: 'bytes of RAM', tick: tickBytes, log: true, bytes: true,
                  xLabel: 'recordsize (\u2605 recommended)', lines: lines,
                  highlight: rows.map(function (r) { return r.recordsize; }).indexOf(rs) });
  }

  var charts = [['chart-codec', drawCodec], ['chart-dedup-recordsize', drawDedupByRecordsize],
                ['chart-ddt-histogram', drawHistogram], ['chart-savings', drawSavings],
                ['chart-ddt-ram', drawDdtRam]];
  var errors = [];
  charts.forEach(function (c) {
    var svg = document.getElementById(c[0]);
    try {
      svg.setAttribute('data-drawn', String(c[1](svg)));
    } catch (e) {
      errors.push(c[0] + ': ' + e.message);
      svg.setAttribute('data-error', e.message);
    }
  });
  document.title = errors.length ? 'zsim report: error: ' + errors.join('; ') : 'zsim report: ok';
})();
)JS";

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_HTML_SCRIPT_H_
