/*
 * knobs.js - the knobs of the active configuration: each one a `--set` override (a query
 * parameter of /api/view) over the scenario's text. A knob shows the override when there is
 * one, else the value the last simulation reports (the run's "config" in its JSON), else the
 * value in the text, else the schema's default.
 */
'use strict';

var POW2 = [1, 2, 4, 8, 16, 32, 64, 128];

var KNOBS = [
  { head: 'Cluster and stack' },
  { key: 'gpus', label: 'GPUs', type: 'number', json: ['config', 'gpus'] },
  { key: 'training.framework', label: 'framework', json: ['framework', 'name'],
    options: function () { return (S.lib ? S.lib.frameworks : []).concat(['other']); } },
  { head: 'Parallel layout' },
  { key: 'parallelism.dp', label: 'dp (follows GPUs / tp·pp·cp)', type: 'number',
    json: ['config', 'parallelism', 'dp'] },
  { key: 'parallelism.tp', label: 'tp', options: POW2, json: ['config', 'parallelism', 'tp'] },
  { key: 'parallelism.pp', label: 'pp', options: POW2, json: ['config', 'parallelism', 'pp'] },
  { key: 'parallelism.vpp', label: 'vpp (chunks per stage)', options: [1, 2, 3, 4, 5, 6, 8, 10],
    json: ['config', 'parallelism', 'vpp'] },
  { key: 'parallelism.cp', label: 'cp', options: [1, 2, 4, 8, 16],
    json: ['config', 'parallelism', 'cp'] },
  { key: 'parallelism.ep', label: 'ep', options: POW2, json: ['config', 'parallelism', 'ep'] },
  { key: 'parallelism.schedule', label: 'pipeline schedule',
    options: ['1f1b', 'gpipe', 'interleaved', 'zb-h1'], json: ['config', 'parallelism', 'schedule'] },
  { key: 'parallelism.sharding', label: 'sharding',
    options: ['none', 'zero1', 'zero2', 'zero3', 'fsdp', 'fsdp_grad_op', 'hsdp', 'fsdp_no_shard'],
    json: ['config', 'parallelism', 'sharding'] },
  { head: 'Batch' },
  { key: 'training.micro_batch', label: 'micro-batch', options: POW2,
    json: ['config', 'training', 'micro_batch'] },
  { key: 'training.global_batch', label: 'global batch', type: 'number',
    json: ['config', 'training', 'global_batch'] },
  { key: 'training.seq_len', label: 'sequence', options: [512, 1024, 2048, 4096, 8192, 16384, 32768,
    65536, 131072], json: ['config', 'training', 'seq_len'] },
  { head: 'Memory and precision' },
  { key: 'training.recompute', label: 'recompute', options: ['none', 'selective', 'full'],
    json: ['config', 'training', 'recompute'] },
  { key: 'training.precision', label: 'precision', options: ['bf16', 'fp16', 'fp8', 'fp32'],
    json: ['config', 'training', 'precision'] },
  { key: 'training.finetune', label: 'fine-tuning', options: ['full', 'lora', 'qlora', 'lora_int8'],
    json: ['config', 'training', 'finetune'] },
  { key: 'training.offload', label: 'CPU offload', options: ['none', 'optimizer', 'params',
    'params_only'], text: /^\s+offload:\s*([\w-]+)/m }
];

function knob(key) {
  for (var i = 0; i < KNOBS.length; i++)
    if (KNOBS[i].key === key)
      return KNOBS[i];
  return null;
}

function dig(obj, path) {
  for (var i = 0; obj && i < path.length; i++)
    obj = obj[path[i]];
  return obj;
}

/* The value a knob shows for configuration c. */
function knobValue(c, k) {
  if (k.key === 'gpus' && c.ovr['cluster.gpus'] !== undefined)
    return c.ovr['cluster.gpus'];
  if (c.ovr[k.key] !== undefined)
    return c.ovr[k.key];
  var run = c.view ? c.view.run : null, v = run && k.json ? dig(run, k.json) : undefined;
  if (v !== undefined)
    return v;
  if (k.text) {
    var m = k.text.exec(c.text);
    if (m)
      return m[1];
  }
  return k.options ? (typeof k.options === 'function' ? k.options() : k.options)[0] : '';
}

function num(c, key, path) {
  var v = c.ovr[key] !== undefined ? c.ovr[key] : dig(c.view ? c.view.run : null, path);
  return Number(v) || 1;
}

/* The GPUs per node of the configuration's hardware (library), for cluster.nodes. */
function gpusPerNode(c) {
  var hw = libHardware(dig(c.view ? c.view.run : null, ['config', 'hardware']));
  return hw && hw.gpus_per_node ? hw.gpus_per_node : 8;
}

/* dp follows the GPUs and the other degrees (when they divide them). */
function deriveDp(c) {
  var gpus = num(c, 'cluster.gpus', ['config', 'gpus']);
  var rest = num(c, 'parallelism.tp', ['config', 'parallelism', 'tp']) *
    num(c, 'parallelism.pp', ['config', 'parallelism', 'pp']) *
    num(c, 'parallelism.cp', ['config', 'parallelism', 'cp']);
  if (gpus % rest === 0)
    c.ovr['parallelism.dp'] = gpus / rest;
}

function knobChanged(key, value) {
  var c = cur();
  if (key === 'gpus') {
    var g = Math.max(1, Math.round(Number(value))), gpn = gpusPerNode(c);
    c.ovr['cluster.gpus'] = g;
    c.ovr['cluster.nodes'] = Math.max(1, Math.ceil(g / gpn));
    deriveDp(c);
  } else {
    c.ovr[key] = value;
  }
  if (key === 'parallelism.tp' || key === 'parallelism.pp' || key === 'parallelism.cp')
    deriveDp(c);
  if (key === 'parallelism.pp' && Number(value) === 1) {
    c.ovr['parallelism.vpp'] = 1;
    c.ovr['parallelism.schedule'] = '1f1b';
  }
  if (key === 'parallelism.vpp') {
    var sched = knobValue(c, knob('parallelism.schedule'));
    c.ovr['parallelism.schedule'] = Number(value) > 1 ? 'interleaved' :
      (sched === 'interleaved' ? '1f1b' : sched);
  }
  if (key === 'parallelism.schedule' && value !== 'interleaved' &&
      Number(knobValue(c, knob('parallelism.vpp'))) > 1)
    c.ovr['parallelism.vpp'] = 1;
  drawKnobs();
  later(c.id, 150);
}

function drawKnobs() {
  var c = cur(), box = $('knobs'), html = [];
  KNOBS.forEach(function (k, i) {
    if (k.head) {
      html.push('<h3>' + esc(k.head) + '</h3>');
      return;
    }
    var v = knobValue(c, k), changed = c.ovr[k.key] !== undefined ||
      (k.key === 'gpus' && c.ovr['cluster.gpus'] !== undefined), field;
    if (k.options) {
      var opts = (typeof k.options === 'function' ? k.options() : k.options).slice();
      if (opts.map(String).indexOf(String(v)) < 0)
        opts.push(v);
      field = '<select data-knob="' + i + '">' + opts.map(function (o) {
        return '<option' + (String(o) === String(v) ? ' selected' : '') + '>' + esc(o) + '</option>';
      }).join('') + '</select>';
    } else {
      field = '<input type="number" min="1" data-knob="' + i + '" value="' + esc(v) + '">';
    }
    html.push('<label class="' + (changed ? 'changed' : '') + '" title="--set ' +
      esc(k.key === 'gpus' ? 'cluster.gpus' : k.key) + '">' + esc(k.label) + field + '</label>');
  });
  box.innerHTML = html.join('');
  Array.prototype.forEach.call(box.querySelectorAll('[data-knob]'), function (el) {
    el.addEventListener('change', function () {
      knobChanged(KNOBS[Number(el.getAttribute('data-knob'))].key, el.value);
    });
  });
}
