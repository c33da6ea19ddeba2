/*
 * labs.js - the teaching labs (docs/labs/*.md, compiled into the server) as guided pages:
 * the lab's text, and above it its commands turned into presets. Every `simtrain` command of
 * the lab's shell blocks that names a shipped scenario becomes a button that loads the
 * scenario with the command's --set overrides (a `for X in a b c` loop and each value of a
 * sweep's --vary axes give one preset each), into configuration A, or B beside it. A command's
 * `|| test $? -eq 3` (the lab expects "does not fit") and the figure markers `<!--fig ...-->`
 * of its text (tests/cli/labs.sh) are not shown.
 */
'use strict';

function labByName(name) {
  var list = S.lib ? S.lib.labs : [];
  for (var i = 0; i < list.length; i++)
    if (list[i].name === name)
      return list[i];
  return null;
}

function drawLabs() {
  var labs = S.lib.labs || [];
  fillSelect($('lab'), labs.map(function (l) { return { value: l.name, text: l.title }; }),
    labs.length ? labs[0].name : '');
  if (labs.length)
    drawLab(labs[0].name);
}

/* ---- Markdown, the subset the labs use ------------------------------------------------------ */

function inline(text) {
  var out = esc(text.replace(/<!--[\s\S]*?-->/g, ''));
  out = out.replace(/`([^`]+)`/g, '<code>$1</code>');
  out = out.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  out = out.replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
  out = out.replace(/\[([^\]]+)\]\(([^)]+)\)/g, '$1');
  return out;
}

function markdown(md) {
  var lines = md.split('\n'), html = [], i = 0, para = [], list = null;
  function flush() {
    if (para.length)
      html.push('<p>' + inline(para.join(' ')) + '</p>');
    para = [];
    if (list)
      html.push('</' + list + '>');
    list = null;
  }
  while (i < lines.length) {
    var l = lines[i], m;
    if (/^```/.test(l)) {
      flush();
      var code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++)
        code.push(lines[i]);
      html.push('<pre>' + esc(code.join('\n')) + '</pre>');
    } else if ((m = /^(#{1,4})\s+(.*)$/.exec(l))) {
      flush();
      html.push('<h' + m[1].length + '>' + inline(m[2]) + '</h' + m[1].length + '>');
    } else if (/^\|/.test(l)) {
      flush();
      var rows = [];
      for (; i < lines.length && /^\|/.test(lines[i]); i++)
        if (!/^\|[\s|:-]+\|?\s*$/.test(lines[i]))
          rows.push('<tr>' + lines[i].replace(/^\||\|\s*$/g, '').split('|').map(function (c) {
            return '<td>' + inline(c.trim()) + '</td>';
          }).join('') + '</tr>');
      html.push('<table>' + rows.join('') + '</table>');
      i--;
    } else if ((m = /^\s*(?:[-*]|(\d+)\.)\s+(.*)$/.exec(l))) {
      var kind = m[1] ? 'ol' : 'ul';
      if (para.length || list !== kind) {
        flush();
        html.push('<' + kind + '>');
        list = kind;
      }
      html.push('<li>' + inline(m[2]) + '</li>');
    } else if (/^\s*$/.test(l)) {
      flush();
    } else if (list && /^\s+/.test(l)) {
      html[html.length - 1] = html[html.length - 1].replace(/<\/li>$/, ' ' + inline(l.trim()) + '</li>');
    } else {
      if (list)
        flush();
      para.push(l.trim());
    }
    i++;
  }
  flush();
  return html.join('\n');
}

/* ---- presets ------------------------------------------------------------------------------ */

/* The shell commands of the lab's code blocks, continuation lines joined, loops expanded. */
function labCommands(md) {
  var blocks = md.split(/^```[a-z]*\s*$/m), cmds = [];
  for (var b = 1; b < blocks.length; b += 2) {
    var text = blocks[b].replace(/\\\n\s*/g, ' '), loop = null;
    text.split('\n').forEach(function (line) {
      var m = /^\s*for\s+(\w+)\s+in\s+([^;]+);\s*do\s*(.*)$/.exec(line);
      if (m) {
        loop = { name: m[1], values: m[2].trim().split(/\s+/) };
        line = m[3];
      }
      if (/^\s*done\b/.test(line)) {
        loop = null;
        return;
      }
      line = line.replace(/\s#.*$/, '').replace(/\s*\|\|.*$/, '').trim();
      if (!/^simtrain\s/.test(line))
        return;
      if (loop)
        loop.values.forEach(function (v) {
          cmds.push(line.split('$' + loop.name).join(v).split('${' + loop.name + '}').join(v));
        });
      else
        cmds.push(line);
    });
  }
  return cmds;
}

/* A command's presets: {scenario, ovr, what}, one per value of each --vary axis. */
function commandPresets(cmd) {
  var words = cmd.split(/\s+/), scen = null, ovr = {}, vary = [], sub = '';
  for (var i = 1; i < words.length; i++) {
    var m = /(?:^|\/)scenarios\/([\w.+-]+)\.yaml$/.exec(words[i]);
    if (m && !scen)
      scen = m[1];
    else if (i === 1 && /^[a-z]+$/.test(words[i]))
      sub = words[i];
    else if ((words[i] === '--set' || words[i] === '--vary') && i + 1 < words.length) {
      var kv = words[++i], eq = kv.indexOf('=');
      if (eq > 0 && words[i - 1] === '--set')
        ovr[kv.slice(0, eq)] = kv.slice(eq + 1);
      else if (eq > 0)
        vary.push({ key: kv.slice(0, eq), values: kv.slice(eq + 1).split(',') });
    }
  }
  if (!scen || !libScenario(scen) || cmd.indexOf('$') >= 0)
    return [];
  var base = { scenario: scen, ovr: ovr, what: sub };
  if (!vary.length)
    return [base];
  var out = [];
  vary.forEach(function (ax) {
    ax.values.forEach(function (v) {
      var o = Object.assign({}, ovr);
      o[ax.key] = v;
      out.push({ scenario: scen, ovr: o, what: 'sweep point' });
    });
  });
  return out;
}

function presetText(p) {
  var keys = Object.keys(p.ovr);
  return p.scenario + (keys.length ? ': ' + keys.map(function (k) {
    return k.replace(/^(training|parallelism|cluster)\./, '') + '=' + p.ovr[k];
  }).join(' ') : ' as shipped') + (p.what && p.what !== 'sweep point' ? ' (' + p.what + ')' : '');
}

function drawLab(name) {
  var lab = labByName(name), seen = {}, presets = [];
  if (!lab)
    return;
  labCommands(lab.text).forEach(function (cmd) {
    commandPresets(cmd).forEach(function (p) {
      var key = p.scenario + JSON.stringify(Object.keys(p.ovr).sort().map(function (k) {
        return [k, p.ovr[k]];
      }));
      if (!seen[key]) {
        seen[key] = true;
        presets.push(p);
      }
    });
  });
  $('presets').innerHTML = presets.length ? '<div class="note">The lab\'s runs: load one into A, or ' +
    'into B beside it.</div>' + presets.map(function (p, i) {
      return '<div class="preset"><button class="go" data-p="' + i + '">' + esc(presetText(p)) +
        '</button><button data-p="' + i + '" data-b="1" title="load into B">B</button></div>';
    }).join('') : '<div class="note">This lab has no run of a shipped scenario to load.</div>';
  $('lab-text').innerHTML = markdown(lab.text);
  Array.prototype.forEach.call($('presets').querySelectorAll('button'), function (b) {
    b.addEventListener('click', function () {
      var p = presets[Number(b.getAttribute('data-p'))];
      if (b.getAttribute('data-b')) {
        if (!S.compare)
          setCompare(true);
        load('b', p.scenario, p.ovr);
      } else {
        load('a', p.scenario, p.ovr);
      }
    });
  });
}
