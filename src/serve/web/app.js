/*
 * app.js - the page's state and its conversation with the server (src/serve/api.h): the
 * library, two configurations A and B (a scenario's text, its knob overrides, the last
 * simulated view), the knobs, the YAML editor and the compare mode. views.js draws a result,
 * timeline.js the step's timeline, labs.js the teaching labs. Plain JavaScript, no build step,
 * nothing loaded from anywhere but this server (or, written by --html, nothing at all).
 */
'use strict';

var S = {
  data: null,    /* the run embedded by --html, or null when served */
  lib: null,     /* GET /api/library */
  cfg: { a: newConfig('a'), b: newConfig('b') },
  active: 'a',
  compare: false
};

function newConfig(id) {
  return { id: id, scenario: '', text: '', ovr: {}, view: null, error: null, seq: 0,
           busy: false, timer: 0, zoom: null, detail: null, detailSeq: 0 };
}

function $(id) { return document.getElementById(id); }

function esc(s) {
  return String(s).replace(/[&<>"']/g, function (c) {
    return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
  });
}

/* ---- the API ---------------------------------------------------------------------------- */

function query(params) {
  var parts = [];
  Object.keys(params).forEach(function (k) {
    if (params[k] !== undefined && params[k] !== null && params[k] !== '')
      parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(String(params[k])));
  });
  return parts.length ? '?' + parts.join('&') : '';
}

function api(method, path, body, params) {
  var init = { method: method, headers: {} };
  if (body !== null) {
    init.body = body;
    init.headers['Content-Type'] = 'application/yaml';
  }
  return fetch(path + query(params || {}), init).then(function (r) {
    return r.text().then(function (t) {
      var j = null;
      try { j = JSON.parse(t); } catch (e) { j = { error: t || ('HTTP ' + r.status) }; }
      return { ok: r.ok, status: r.status, json: j };
    });
  });
}

function simulate(id) {
  var c = S.cfg[id], seq = ++c.seq;
  c.busy = true;
  markBusy(id);
  api('POST', '/api/view', c.text, Object.assign({ width_px: 2000 }, c.ovr)).then(function (res) {
    if (seq !== c.seq)
      return; /* a newer request replaced this one */
    c.busy = false;
    if (res.ok) {
      c.view = res.json;
      c.error = null;
      c.detail = null;
      if (c.zoom && c.zoom.to * 1e6 > c.view.timeline.step_us)
        c.zoom = null;
    } else {
      c.error = res.json;
    }
    refresh(id);
  }).catch(function (e) {
    if (seq !== c.seq)
      return;
    c.busy = false;
    c.error = { error: 'the server did not answer (' + e + ')' };
    refresh(id);
  });
}

function later(id, ms) {
  var c = S.cfg[id];
  clearTimeout(c.timer);
  c.timer = setTimeout(function () { simulate(id); }, ms);
}

/* The timeline of a zoomed window at full resolution (served only): one more simulation. */
function fetchDetail(id, from, to) {
  var c = S.cfg[id], seq = ++c.detailSeq, base = c.seq;
  if (S.data)
    return;
  api('POST', '/api/view', c.text,
      Object.assign({ from_s: from, to_s: to, width_px: 2000 }, c.ovr)).then(function (res) {
    if (seq !== c.detailSeq || base !== c.seq || !res.ok)
      return;
    c.detail = res.json.timeline;
    redrawTimeline(id);
  }).catch(function () {});
}

function refresh(id) {
  render(id);
  if (id === S.active) {
    drawKnobs();
    drawEditorError();
  }
}

function markBusy(id) {
  var el = $('result-' + id);
  if (el)
    el.classList.toggle('busy', S.cfg[id].busy);
}

/* ---- configurations ----------------------------------------------------------------------- */

function cur() { return S.cfg[S.active]; }

function libScenario(name) {
  var list = S.lib ? S.lib.scenarios : [];
  for (var i = 0; i < list.length; i++)
    if (list[i].name === name)
      return list[i];
  return null;
}

function libHardware(name) {
  var list = S.lib ? S.lib.hardware : [];
  for (var i = 0; i < list.length; i++)
    if (list[i].name === name)
      return list[i];
  return null;
}

function load(id, name, ovr) {
  var c = S.cfg[id], sc = libScenario(name);
  if (!sc)
    return;
  c.scenario = name;
  c.text = sc.text;
  c.ovr = Object.assign({}, ovr || {});
  c.zoom = null;
  if (id === S.active) {
    $('scenario').value = name;
    $('yaml').value = c.text;
    drawEditorError();
  }
  simulate(id);
}

function setActive(id) {
  S.active = id;
  $('edit-a').classList.toggle('on', id === 'a');
  $('edit-b').classList.toggle('on', id === 'b');
  $('scenario').value = cur().scenario;
  $('yaml').value = cur().text;
  $('editing').textContent = S.compare ? 'editing configuration ' + id.toUpperCase() : '';
  drawKnobs();
  drawEditorError();
}

function setCompare(on) {
  S.compare = on;
  $('compare').classList.toggle('on', on);
  ['edit-a', 'edit-b', 'copy-ab'].forEach(function (b) { $(b).classList.toggle('hidden', !on); });
  $('result-b').classList.toggle('hidden', !on);
  if (on && !S.cfg.b.text)
    copyAB();
  setActive(on ? S.active : 'a');
  render('a');
  if (on)
    render('b');
}

function copyAB() {
  var a = S.cfg.a, b = S.cfg.b;
  b.scenario = a.scenario;
  b.text = a.text;
  b.ovr = Object.assign({}, a.ovr);
  b.view = a.view;
  b.error = a.error;
  simulate('b');
}

/* ---- the YAML editor ------------------------------------------------------------------------ */

/* The error's range in the text: from its line:col to the end of the token (at least 1). */
function errorRange(text, line, col) {
  var at = 0, l = 1;
  while (l < line && at < text.length) {
    var nl = text.indexOf('\n', at);
    if (nl < 0)
      return null;
    at = nl + 1;
    l++;
  }
  var start = Math.min(at + col - 1, text.length), end = start;
  while (end < text.length && !/[\s,:\]}]/.test(text[end]))
    end++;
  if (end === start)
    end = Math.min(start + 1, text.length);
  return [start, end];
}

function drawEditorError() {
  var c = cur(), text = $('yaml').value, back = $('yaml-back'), box = $('yaml-error');
  var e = c.error, r = e && e.line ? errorRange(text, e.line, e.column) : null;
  if (r && r[1] > r[0])
    back.innerHTML = esc(text.slice(0, r[0])) + '<span class="err">' +
      esc(text.slice(r[0], r[1])) + '</span>' + esc(text.slice(r[1])) + '\n';
  else if (r)
    back.innerHTML = esc(text) + '<span class="err"> </span>\n';
  else
    back.textContent = text + '\n';
  box.innerHTML = e && e.line ? '<div class="error">' + esc(e.diagnostics || e.error) + '</div>' : '';
  $('knob-error').innerHTML = e && !e.line ?
    '<div class="error">' + esc(e.diagnostics || e.error) + '</div>' : '';
}

function onYamlInput() {
  var c = cur();
  c.text = $('yaml').value;
  drawEditorError();
  later(c.id, 700);
}

/* ---- start ------------------------------------------------------------------------------- */

function fillSelect(sel, items, value) {
  sel.innerHTML = items.map(function (it) {
    var v = typeof it === 'object' ? it.value : it, t = typeof it === 'object' ? it.text : it;
    return '<option value="' + esc(v) + '"' + (String(v) === String(value) ? ' selected' : '') +
      '>' + esc(t) + '</option>';
  }).join('');
}

function startServed() {
  api('GET', '/api/library', null).then(function (res) {
    if (!res.ok) {
      $('result-a').innerHTML = '<div class="card error">' + esc(res.json.error) + '</div>';
      return;
    }
    S.lib = res.json;
    fillSelect($('scenario'), S.lib.scenarios.map(function (s) {
      return { value: s.name, text: s.name + (s.gpus ? ' (' + s.gpus + ' GPUs)' : '') };
    }), S.lib.flagship);
    drawLabs();
    openHash(location.hash.slice(1));
  }).catch(function (e) {
    $('result-a').innerHTML = '<div class="card error">cannot reach the server: ' + esc(e) + '</div>';
  });
}

/*
 * What the address's #fragment asks for, '&'-separated: scenario=NAME (A's; default the
 * flagship), a.KEY=VALUE and b.KEY=VALUE (overrides of A and B), compare (B beside A),
 * lab=NAME (the Labs tab on that lab), tab=knobs|yaml|labs. For links and screenshots.
 */
function openHash(hash) {
  var want = { scenario: S.lib.flagship, a: {}, b: null, lab: '', tab: '' };
  hash.split('&').forEach(function (part) {
    var eq = part.indexOf('='), k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    var v = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    if (k === 'scenario' || k === 'lab' || k === 'tab')
      want[k] = v;
    else if (k === 'compare')
      want.b = want.b || {};
    else if (/^[ab]\./.test(k)) {
      if (k[0] === 'b')
        want.b = want.b || {};
      want[k[0]][k.slice(2)] = v;
    }
  });
  if (!libScenario(want.scenario))
    want.scenario = S.lib.flagship;
  load('a', want.scenario, want.a);
  if (want.b) {
    S.compare = true;
    load('b', want.scenario, Object.assign({}, want.a, want.b));
    setCompare(true);
  }
  if (want.lab && labByName(want.lab)) {
    $('lab').value = want.lab;
    drawLab(want.lab);
    showTab('labs');
  } else if (want.tab) {
    showTab(want.tab);
  }
}

function startStatic(data) {
  document.body.classList.add('static');
  $('pick').classList.add('hidden');
  $('cmp-tools').classList.add('hidden');
  $('footer').textContent = 'Written by simtrain ' + (data.run.simtrain_version || '') +
    ' (simtrain SCENARIO --html): this page holds one run and needs no server or network.';
  S.cfg.a.view = { run: data.run, timeline: data.timeline };
  S.cfg.a.scenario = data.scenario ? data.scenario.name : '';
  S.cfg.a.text = data.scenario ? data.scenario.text : '';
  render('a');
}

function wire() {
  $('scenario').addEventListener('change', function () { load(S.active, this.value); });
  $('yaml').addEventListener('input', onYamlInput);
  $('yaml').addEventListener('scroll', function () {
    $('yaml-back').scrollTop = this.scrollTop;
    $('yaml-back').scrollLeft = this.scrollLeft;
  });
  $('compare').addEventListener('click', function () { setCompare(!S.compare); });
  $('edit-a').addEventListener('click', function () { setActive('a'); });
  $('edit-b').addEventListener('click', function () { setActive('b'); });
  $('copy-ab').addEventListener('click', copyAB);
  $('reset-knobs').addEventListener('click', function () {
    cur().ovr = {};
    drawKnobs();
    simulate(S.active);
  });
  $('lab').addEventListener('change', function () { drawLab(this.value); });
  Array.prototype.forEach.call(document.querySelectorAll('#side .tabs button'), function (b) {
    b.addEventListener('click', function () { showTab(b.getAttribute('data-tab')); });
  });
  window.addEventListener('resize', function () {
    redrawTimeline('a');
    if (S.compare)
      redrawTimeline('b');
  });
}

function showTab(tab) {
  Array.prototype.forEach.call(document.querySelectorAll('#side .tabs button'), function (b) {
    b.classList.toggle('on', b.getAttribute('data-tab') === tab);
  });
  ['knobs', 'yaml', 'labs'].forEach(function (t) { $('pane-' + t).classList.toggle('hidden', t !== tab); });
  if (tab === 'yaml')
    drawEditorError();
}

document.addEventListener('DOMContentLoaded', function () {
  var el = $('simtrain-data');
  try { S.data = JSON.parse(el.textContent); } catch (e) { S.data = null; }
  wire();
  if (S.data && S.data.run)
    startStatic(S.data);
  else
    startServed();
});
