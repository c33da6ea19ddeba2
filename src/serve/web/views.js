/*
 * views.js - one configuration's result: the headline figures (the step time in the element
 * id="step-time", "step-time-b" for B), the step breakdown, the memory per GPU against its
 * capacity with the verdict, the timeline (timeline.js), the collectives and, on a page
 * written by --html, the scenario's text. It reads the JSON of `simtrain --json`
 * (docs/json-schema.md) by name and walks its objects, so that fields added later show up
 * or are ignored, never break it.
 */
'use strict';

var CAT_COLORS = {
  'forward': '#4c7fd6', 'backward': '#43a45a', 'recompute': '#e39b2d', 'optimizer': '#8e5bc4',
  'tp comm': '#d9534f', 'cp comm': '#1f9e9a', 'ep comm': '#9b6a3c', 'pp comm': '#e377c2',
  'dp comm': '#c9a227', 'offload': '#7f8c8d', 'idle': '#f3c6c0', 'host': '#5d6d7e'
};
var MEM_COLORS = ['#4c7fd6', '#6c9be3', '#43a45a', '#8e5bc4', '#e39b2d', '#d9534f', '#1f9e9a',
  '#9b6a3c', '#e377c2', '#c9a227', '#7f8c8d', '#b3b9c2', '#5d6d7e', '#a3c4f3'];

function colorOf(name, i) {
  if (CAT_COLORS[name])
    return CAT_COLORS[name];
  var h = 0;
  for (var k = 0; k < name.length; k++)
    h = (h * 31 + name.charCodeAt(k)) % 360;
  return 'hsl(' + (i !== undefined ? (i * 67) % 360 : h) + ',45%,55%)';
}

function fmtTime(s) {
  if (!(s >= 0) && !(s < 0))
    return '-';
  var a = Math.abs(s);
  if (a >= 86400 * 2) return (s / 86400).toFixed(1) + ' days';
  if (a >= 3600) return (s / 3600).toFixed(1) + ' h';
  if (a >= 1) return s.toFixed(3) + ' s';
  if (a >= 1e-3) return (s * 1e3).toFixed(2) + ' ms';
  return (s * 1e6).toFixed(1) + ' \u00b5s';
}

function fmtBytes(b) {
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : String(b)) + ' ' + u[i];
}

function fmtCount(n) {
  if (!(n >= 0)) return '-';
  var u = ['', 'k', 'M', 'G', 'T'], i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (n >= 100 || i === 0 ? n.toFixed(0) : n.toPrecision(3)) + (u[i] ? ' ' + u[i] : '');
}

function fig(key, value, id, title) {
  return '<div class="fig"' + (title ? ' title="' + esc(title) + '"' : '') + '><div class="k">' +
    esc(key) + '</div><div class="v"' + (id ? '' : '') + '>' + value + '</div></div>';
}

/* The step time and its interval when the JSON has one (result.step_time_interval_s). */
function stepFigure(res, id) {
  var html = '<span id="' + id + '">' + Number(res.step_time_s).toPrecision(6) + '</span>' +
    ' <small>s</small>', iv = res.step_time_interval_s, title = res.interval_basis;
  if (Array.isArray(iv) && iv.length === 2)
    html += '<br><small>' + Number(iv[0]).toPrecision(3) + ' \u2013 ' + Number(iv[1]).toPrecision(3) +
      ' s</small>';
  else if (iv && typeof iv === 'object')
    html += '<br><small>' + esc(JSON.stringify(iv)) + '</small>';
  return fig('step time', html, null, typeof title === 'string' ? title : JSON.stringify(title || ''));
}

function headline(run, id) {
  var r = run.result, t = r.time_to_train || {}, out = [];
  out.push(stepFigure(r, id === 'a' ? 'step-time' : 'step-time-' + id));
  out.push(fig('MFU', (100 * r.mfu).toFixed(1) + ' <small>%</small>', null,
    'HFU ' + (100 * r.hfu).toFixed(1) + ' %, ' + (r.flops_convention || '')));
  out.push(fig('tokens/s', fmtCount(r.tokens_per_s) + '<br><small>' +
    fmtCount(r.tokens_per_s_per_gpu) + ' per GPU</small>'));
  if (t.days !== undefined)
    out.push(fig('time to train', fmtTime(t.seconds) + '<br><small>' + fmtCount(t.tokens) +
      ' tokens</small>'));
  if (t.cost_usd !== undefined)
    out.push(fig('cost to train', '$' + fmtCount(t.cost_usd) + '<br><small>' +
      fmtCount(t.gpu_hours) + ' GPU-hours</small>'));
  out.push(fig('peak memory', fmtBytes(r.peak_memory_bytes) + '<br><small>of ' +
    fmtBytes(r.memory_capacity_bytes) + '</small>'));
  return '<div class="head">' + out.join('') + '</div>';
}

function describe(run) {
  var c = run.config || {}, p = c.parallelism || {}, t = c.training || {}, m = c.model || {};
  var fw = run.framework ? run.framework.name + ' ' + (run.framework.version || '') : '';
  return esc((m.name || '?') + ' on ' + c.gpus + ' GPUs (' + c.hardware + '): dp ' + p.dp +
    ' \u00d7 tp ' + p.tp + ' \u00d7 pp ' + p.pp + (p.vpp > 1 ? ' (vpp ' + p.vpp + ')' : '') +
    (p.cp > 1 ? ' \u00d7 cp ' + p.cp : '') + (p.ep > 1 ? ', ep ' + p.ep : '') + ', ' +
    p.schedule + ', ' + p.sharding + '; micro-batch ' + t.micro_batch + ', global ' +
    t.global_batch + ' \u00d7 ' + t.seq_len + ' tokens, ' + t.precision + ', recompute ' +
    t.recompute + ', ' + t.finetune + (fw ? '; ' + fw : ''));
}

function breakdown(res) {
  var bd = res.breakdown_s || {}, step = res.step_time_s, keys = Object.keys(bd), bar = [], rows = [];
  keys.forEach(function (k, i) {
    var v = bd[k], pct = step > 0 ? 100 * v / step : 0;
    if (!(v > 0))
      return;
    bar.push('<div style="width:' + pct + '%;background:' + colorOf(k, i) + '" title="' + esc(k) +
      ' ' + fmtTime(v) + '"></div>');
    rows.push('<tr><td><span class="sw" style="background:' + colorOf(k, i) + '"></span>' +
      esc(k === 'idle' ? 'idle (pipeline bubble, waiting)' : k) + '</td><td class="n">' +
      fmtTime(v) + '</td><td class="n">' + pct.toFixed(1) + ' %</td></tr>');
  });
  return '<div class="bar">' + bar.join('') + '</div><table class="bd">' + rows.join('') + '</table>';
}

function memory(run) {
  var res = run.result, cap = res.memory_capacity_bytes, ranks = run.ranks || [], max = cap;
  var cats = [], html = [];
  ranks.forEach(function (rk) {
    var m = rk.memory || {}, at = m.at_peak_bytes || {};
    Object.keys(at).forEach(function (k) { if (cats.indexOf(k) < 0) cats.push(k); });
    max = Math.max(max, m.peak_bytes || 0);
  });
  max *= 1.04;
  ranks.forEach(function (rk) {
    var m = rk.memory || {}, at = m.at_peak_bytes || {}, parts = [];
    cats.forEach(function (k, i) {
      if (at[k] > 0)
        parts.push('<div style="width:' + (100 * at[k] / max) + '%;background:' +
          MEM_COLORS[i % MEM_COLORS.length] + '" title="' + esc(k) + ' ' + fmtBytes(at[k]) + '"></div>');
    });
    html.push('<div class="mem"><div class="lbl"><span>rank ' + rk.rank + ' (stage ' + rk.stage +
      ')</span><span>' + fmtBytes(m.peak_bytes) + '</span></div><div class="track"><div class="fill">' +
      parts.join('') + '</div><div class="cap" style="left:' + (100 * cap / max) +
      '%" title="capacity ' + fmtBytes(cap) + '"></div></div></div>');
  });
  var legend = cats.map(function (k, i) {
    return '<span><span class="sw" style="background:' + MEM_COLORS[i % MEM_COLORS.length] +
      '"></span>' + esc(k) + '</span>';
  }).join('');
  var free = cap - res.peak_memory_bytes;
  var verdict = res.fits ? '<span class="verdict fits">fits: ' + fmtBytes(free) + ' free</span>' :
    '<span class="verdict oom">does not fit: ' + fmtBytes(-free) + ' over the ' + fmtBytes(cap) +
    ' of the GPU</span>';
  return '<p class="desc">' + verdict + ' (peak per GPU at the moment of the highest use; the bar ' +
    'is the capacity)</p>' + html.join('') + '<div class="legend">' + legend + '</div>';
}

function collectives(run) {
  var list = run.collectives || [];
  if (!list.length)
    return '';
  return '<div class="card"><h2>Collectives</h2><table class="bd"><tr><td>group</td><td>op</td>' +
    '<td class="n">size</td><td class="n">ranks</td><td>algorithm</td><td class="n">time</td>' +
    '<td class="n">per step</td></tr>' + list.slice(0, 16).map(function (c) {
      return '<tr><td>' + esc(c.group) + '</td><td>' + esc(c.op) + '</td><td class="n">' +
        fmtBytes(c.bytes) + '</td><td class="n">' + c.ranks + '</td><td title="' + esc(c.path) +
        '">' + esc(c.algo + ' ' + c.proto) + '</td><td class="n">' + fmtTime(c.time_s) +
        '</td><td class="n">' + Math.round(c.count) + '</td></tr>';
    }).join('') + '</table></div>';
}

function render(id) {
  var c = S.cfg[id], el = $('result-' + id), html = [], name = id.toUpperCase();
  var run = c.view ? c.view.run : null, tag = S.compare ? name + ': ' : '';
  if (!el)
    return;
  markBusy(id);
  if (c.error && !run) {
    el.innerHTML = '<div class="card"><h2>' + esc(tag) + esc(c.scenario) + '</h2><div class="error">' +
      esc(c.error.diagnostics || c.error.error) + '</div></div>';
    return;
  }
  if (!run) {
    el.innerHTML = '<div class="card"><h2>' + esc(tag) + 'simulating\u2026</h2></div>';
    return;
  }
  html.push('<div class="card"><h2>' + esc(tag) + '<span class="tag">' + esc(run.config.scenario) +
    '</span></h2><p class="desc">' + describe(run) + '</p>' + headline(run, id) +
    (c.error ? '<div class="error">not simulated, the figures are the last run\'s: ' +
      esc(c.error.error) + '</div>' : '') + '</div>');
  html.push('<div class="card"><h2>Step breakdown</h2>' + breakdown(run.result) + '</div>');
  html.push('<div class="card"><h2>Memory per GPU</h2>' + memory(run) + '</div>');
  html.push('<div class="card tl"><h2>Timeline of one step</h2><div class="tools">' +
    '<button data-z="in">zoom in</button><button data-z="out">zoom out</button>' +
    '<button data-z="all">whole step</button><span id="tl-win-' + id + '"></span>' +
    '<span>wheel: zoom, drag: pan, hover: a task</span></div><canvas id="tl-' + id +
    '"></canvas><div class="legend" id="tl-legend-' + id + '"></div></div>');
  html.push(collectives(run));
  if (S.data && c.text)
    html.push('<div class="card"><h2>Scenario <span class="tag">' + esc(c.scenario) +
      '</span></h2><pre class="yaml">' + esc(c.text) + '</pre></div>');
  el.innerHTML = html.join('');
  Array.prototype.forEach.call(el.querySelectorAll('[data-z]'), function (b) {
    b.addEventListener('click', function () { zoomButton(id, b.getAttribute('data-z')); });
  });
  redrawTimeline(id);
}
