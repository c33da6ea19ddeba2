/*
 * timeline.js - the step's timeline on a canvas: per simulated rank, a row per stream
 * (compute, each collective's stream, pipeline sends and receives, copies, host) with its
 * spans coloured by time category, the compute row's uncovered time as idle (the pipeline
 * bubble), and the rank's memory over the step against the GPU's capacity. Drawn from the
 * timeline of /api/view (src/report/timeline.h: the trace's own task records, merged to the
 * resolution of the window). Wheel zooms, drag pans, double-click shows the whole step, hover
 * names a span; a zoomed window is fetched again at full resolution when served.
 */
'use strict';

var TL = { GUTTER: 104, AXIS: 18, HEAD: 16, ROW: 13, COMPUTE: 18, MEM: 28 };

function tlState(id) {
  var c = S.cfg[id], tl = c.view ? c.view.timeline : null;
  if (!tl)
    return null;
  var step = tl.step_us / 1e6, z = c.zoom || { from: 0, to: step };
  return { c: c, tl: tl, step: step, from: z.from, to: z.to };
}

/* The rows of the picture, top to bottom, with their y and height. */
function tlRows(tl) {
  var rows = [], y = TL.AXIS;
  (tl.ranks || []).forEach(function (rk) {
    rows.push({ kind: 'head', rank: rk, y: y, h: TL.HEAD });
    y += TL.HEAD;
    (rk.tracks || []).forEach(function (tr) {
      var h = tl.streams[tr.stream] === 'compute' ? TL.COMPUTE : TL.ROW;
      rows.push({ kind: 'track', rank: rk, track: tr, y: y, h: h });
      y += h + 1;
    });
    if (rk.memory && rk.memory.length) {
      rows.push({ kind: 'mem', rank: rk, y: y + 2, h: TL.MEM });
      y += TL.MEM + 6;
    }
  });
  return { rows: rows, height: y + 4 };
}

/* The spans of a track: the detailed ones when a detail timeline covers the window. */
function tlSpans(st, row) {
  var d = st.c.detail;
  if (d && d.window_us[0] <= st.from * 1e6 && d.window_us[1] >= st.to * 1e6) {
    for (var i = 0; i < d.ranks.length; i++)
      if (d.ranks[i].rank === row.rank.rank)
        for (var k = 0; k < d.ranks[i].tracks.length; k++)
          if (d.ranks[i].tracks[k].stream === row.track.stream)
            return d.ranks[i].tracks[k].spans;
    return [];
  }
  return row.track.spans;
}

function tlTicks(ctx, st, W) {
  var span = st.to - st.from, raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = raw / p < 2 ? 2 * p : raw / p < 5 ? 5 * p : 10 * p, x0 = TL.GUTTER, w = W - x0;
  ctx.fillStyle = '#5f6b7a';
  ctx.font = '10px sans-serif';
  for (var t = Math.ceil(st.from / step) * step; t <= st.to; t += step) {
    var x = x0 + (t - st.from) / span * w;
    ctx.fillRect(x, TL.AXIS - 5, 1, 5);
    ctx.fillText(fmtTime(t), x + 2, 10);
  }
}

function tlTrack(ctx, st, row, W) {
  var tl = st.tl, x0 = TL.GUTTER, w = W - x0, span = st.to - st.from;
  var name = tl.streams[row.track.stream], spans = tlSpans(st, row);
  ctx.fillStyle = '#5f6b7a';
  ctx.font = '10px sans-serif';
  ctx.fillText(name, 8, row.y + row.h - 3);
  if (name === 'compute') {
    ctx.fillStyle = CAT_COLORS.idle;
    var a = Math.max(0, -st.from / span * w), b = Math.min(w, (st.step - st.from) / span * w);
    ctx.fillRect(x0 + a, row.y, b - a, row.h);
  }
  for (var i = 0; i < spans.length; i++) {
    var s = spans[i], t0 = s[0] / 1e6, t1 = t0 + s[1] / 1e6;
    if (t1 < st.from || t0 > st.to)
      continue;
    var xa = x0 + Math.max(0, (t0 - st.from) / span * w), xb = x0 + Math.min(w, (t1 - st.from) / span * w);
    var cat = tl.categories[s[2]] || '';
    ctx.fillStyle = colorOf(cat, s[2]);
    ctx.fillRect(xa, row.y, Math.max(0.7, xb - xa), row.h);
    if (xb - xa > 26 && row.h >= TL.COMPUTE) {
      ctx.fillStyle = '#fff';
      ctx.font = '10px sans-serif';
      var text = s[3] >= 0 ? cat.charAt(0).toUpperCase() + s[3] : s[5];
      ctx.fillText(text.slice(0, Math.floor((xb - xa) / 6)), xa + 2, row.y + row.h - 5);
    }
  }
}

function tlMemory(ctx, st, row, W) {
  var x0 = TL.GUTTER, w = W - x0, span = st.to - st.from, mem = row.rank.memory;
  var cap = st.c.view.run.result.memory_capacity_bytes, peak = 0;
  var total = mem.map(function (m) {
    var s = 0;
    for (var i = 1; i < m.length; i++) s += m[i];
    return s;
  });
  total.forEach(function (v) { peak = Math.max(peak, v); });
  var top = Math.max(peak * 1.15, Math.min(cap, peak * 2)) || 1;
  ctx.fillStyle = '#5f6b7a';
  ctx.font = '10px sans-serif';
  ctx.fillText('memory', 8, row.y + 12);
  ctx.fillText(fmtBytes(peak), 8, row.y + 24);
  ctx.fillStyle = 'rgba(76,127,214,.45)';
  ctx.strokeStyle = '#4c7fd6';
  ctx.beginPath();
  ctx.moveTo(x0, row.y + row.h);
  var last = row.y + row.h;
  for (var i = 0; i < mem.length; i++) {
    var x = x0 + Math.min(w, Math.max(0, (mem[i][0] / 1e6 - st.from) / span * w));
    var y = row.y + row.h - row.h * total[i] / top;
    ctx.lineTo(x, last);
    ctx.lineTo(x, y);
    last = y;
  }
  ctx.lineTo(x0 + w, last);
  ctx.lineTo(x0 + w, row.y + row.h);
  ctx.closePath();
  ctx.fill();
  if (cap <= top) {
    ctx.fillStyle = '#c0392b';
    ctx.fillRect(x0, row.y + row.h - row.h * cap / top, w, 1);
  }
}

function redrawTimeline(id) {
  var cv = $('tl-' + id), st = tlState(id);
  if (!cv || !st)
    return;
  var lay = tlRows(st.tl), dpr = window.devicePixelRatio || 1, W = cv.clientWidth || 800;
  cv.width = Math.round(W * dpr);
  cv.height = Math.round(lay.height * dpr);
  cv.style.height = lay.height + 'px';
  var ctx = cv.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, lay.height);
  tlTicks(ctx, st, W);
  lay.rows.forEach(function (row) {
    if (row.kind === 'head') {
      ctx.fillStyle = '#1d2330';
      ctx.font = 'bold 11px sans-serif';
      ctx.fillText('rank ' + row.rank.rank + ' (stage ' + row.rank.stage + ')', 4, row.y + 12);
    } else if (row.kind === 'track') {
      tlTrack(ctx, st, row, W);
    } else {
      tlMemory(ctx, st, row, W);
    }
  });
  var win = $('tl-win-' + id);
  if (win)
    win.textContent = fmtTime(st.from) + ' \u2013 ' + fmtTime(st.to) +
      (st.c.detail ? ' (full resolution)' : '');
  var leg = $('tl-legend-' + id);
  if (leg)
    leg.innerHTML = st.tl.categories.map(function (k, i) {
      return '<span><span class="sw" style="background:' + colorOf(k, i) + '"></span>' +
        esc(k === 'idle' ? 'idle: bubble, waiting' : k) + '</span>';
    }).join('');
  if (!cv.wired)
    tlWire(cv, id);
}

function tlSetWindow(id, from, to) {
  var st = tlState(id);
  if (!st)
    return;
  var len = Math.min(st.step, Math.max(to - from, st.step * 1e-6));
  from = Math.max(0, Math.min(from, st.step - len));
  st.c.zoom = { from: from, to: from + len };
  if (len >= st.step * 0.999)
    st.c.zoom = null;
  redrawTimeline(id);
  clearTimeout(st.c.detailTimer);
  if (st.c.zoom && len < st.step / 4)
    st.c.detailTimer = setTimeout(function () { fetchDetail(id, from, from + len); }, 350);
}

function zoomButton(id, z) {
  var st = tlState(id);
  if (!st)
    return;
  var mid = (st.from + st.to) / 2, len = st.to - st.from;
  if (z === 'all')
    tlSetWindow(id, 0, st.step);
  else
    tlSetWindow(id, mid - len * (z === 'in' ? 0.25 : 1), mid + len * (z === 'in' ? 0.25 : 1));
}

/* The span under canvas point (x, y), or null. */
function tlHit(id, x, y, W) {
  var st = tlState(id), lay = st ? tlRows(st.tl) : null;
  if (!st || x < TL.GUTTER)
    return null;
  var t = st.from + (x - TL.GUTTER) / (W - TL.GUTTER) * (st.to - st.from);
  var tol = 3 / (W - TL.GUTTER) * (st.to - st.from);
  for (var i = 0; i < lay.rows.length; i++) {
    var row = lay.rows[i];
    if (row.kind !== 'track' || y < row.y || y > row.y + row.h)
      continue;
    var spans = tlSpans(st, row), lo = 0, hi = spans.length - 1, best = -1;
    while (lo <= hi) {
      var m = (lo + hi) >> 1;
      if (spans[m][0] / 1e6 <= t + tol) { best = m; lo = m + 1; } else hi = m - 1;
    }
    for (var k = best; k >= 0 && k > best - 4; k--) {
      var s = spans[k];
      if (t >= s[0] / 1e6 - tol && t <= (s[0] + s[1]) / 1e6 + tol)
        return { span: s, row: row, st: st };
    }
    return { idle: st.tl.streams[row.track.stream] === 'compute', t: t, row: row, st: st };
  }
  return null;
}

function tlTip(hit) {
  var s = hit.span, tl = hit.st.tl;
  if (!s)
    return hit.idle ? 'idle at ' + fmtTime(hit.t) + ' (rank ' + hit.row.rank.rank +
      '): nothing computes here (pipeline bubble, or waiting for communication)' : '';
  return s[5] + (s[4] > 1 ? '  (and ' + (s[4] - 1) + ' more tasks)' : '') + '\n' +
    (tl.categories[s[2]] || '') + (s[3] >= 0 ? ', micro-batch ' + s[3] : '') + ', ' +
    tl.streams[hit.row.track.stream] + ' stream, rank ' + hit.row.rank.rank + '\nstart ' +
    fmtTime(s[0] / 1e6) + ', lasts ' + fmtTime(s[1] / 1e6);
}

function tlWire(cv, id) {
  var drag = null, tip = $('tip');
  cv.wired = true;
  cv.addEventListener('wheel', function (e) {
    var st = tlState(id), r = cv.getBoundingClientRect(), W = r.width;
    if (!st || e.clientX - r.left < TL.GUTTER)
      return;
    e.preventDefault();
    var t = st.from + (e.clientX - r.left - TL.GUTTER) / (W - TL.GUTTER) * (st.to - st.from);
    var f = e.deltaY < 0 ? 0.8 : 1.25;
    tlSetWindow(id, t - (t - st.from) * f, t + (st.to - t) * f);
  }, { passive: false });
  cv.addEventListener('mousedown', function (e) {
    var st = tlState(id);
    if (st)
      drag = { x: e.clientX, from: st.from, to: st.to };
  });
  cv.addEventListener('mouseup', function () { drag = null; });
  cv.addEventListener('mousemove', function (e) {
    var r = cv.getBoundingClientRect(), W = r.width;
    if (drag) {
      var dt = (e.clientX - drag.x) / (W - TL.GUTTER) * (drag.to - drag.from);
      tlSetWindow(id, drag.from - dt, drag.to - dt);
      tip.style.display = 'none';
      return;
    }
    var hit = tlHit(id, e.clientX - r.left, e.clientY - r.top, W), text = hit ? tlTip(hit) : '';
    tip.style.display = text ? 'block' : 'none';
    tip.textContent = text;
    tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 370) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
  });
  cv.addEventListener('mouseleave', function () {
    drag = null;
    tip.style.display = 'none';
  });
  cv.addEventListener('dblclick', function () { zoomButton(id, 'all'); });
}
