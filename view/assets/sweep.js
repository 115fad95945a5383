// The sweep page: progress, the study table, the plots and the runs.
'use strict';

function duration(s) {
  if (s < 0) return '–';
  s = Math.round(s);
  if (s < 120) return s + ' s';
  if (s < 7200) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

// markdownTables turns study.md (pipe tables and paragraphs) into HTML.
function markdown(md, parent) {
  const lines = md.split('\n');
  let table = null;
  for (const line of lines) {
    if (line.startsWith('|')) {
      const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map(s => s.trim());
      if (cells.every(c => /^:?-+:?$/.test(c))) continue;
      if (!table) { table = el('table', {}, parent); el('tr', {}, table).append(...cells.map(c => el('th', {text: c}))); continue; }
      el('tr', {}, table).append(...cells.map(c => el('td', {text: c})));
    } else {
      table = null;
      if (line.trim()) el('p', {text: line.replace(/^#+\s*/, ''), class: line.startsWith('#') ? '' : 'note'}, parent);
    }
  }
}

async function sweepPage() {
  const app = document.getElementById('app');
  let last = '';
  async function draw() {
    const sw = await api('sweep');
    const key = JSON.stringify(sw);
    if (key === last) return sw;
    last = key;
    document.getElementById('title').textContent = 'sweep ' + sw.name;
    document.title = 'hgpsim · ' + sw.name;
    app.textContent = '';
    const prog = el('section', {id: 'progress'}, app);
    el('h2', {text: 'Progress'}, prog);
    const fin = sw.done + sw.failed;
    const p = el('p', {}, prog);
    el('div', {class: 'bar'}, p).appendChild(el('div', {style: 'width:' + (sw.total ? 100 * fin / sw.total : 0) + '%'}));
    el('span', {id: 'runsdone', 'data-done': sw.done, 'data-failed': sw.failed, 'data-total': sw.total,
      text: ' ' + fin + ' / ' + sw.total + ' runs' + (sw.failed ? ' (' + sw.failed + ' failed)' : '') +
        ' · ' + duration(sw.elapsed) + (fin < sw.total ? ', about ' + duration(sw.left) + ' left' : '')}, p);
    if (sw.study) {
      const st = el('section', {id: 'study'}, app);
      el('h2', {text: 'Study'}, st);
      markdown(sw.study, st);
    }
    if (sw.plots.length) {
      const pl = el('section', {class: 'plots'}, app);
      el('h2', {text: 'Plots'}, pl);
      for (const f of sw.plots) { const u = fileURL(f); if (u) el('img', {src: u, alt: f, title: f}, pl); }
    }
    const rs = el('section', {id: 'runs'}, app);
    el('h2', {text: 'Runs'}, rs);
    const t = el('table', {}, rs);
    el('tr', {}, t).append(el('th', {text: 'run'}), el('th', {text: 'method'}), el('th', {text: 'seed'}), el('th', {text: 'varied'}), el('th', {text: 'status'}));
    for (const r of sw.runs) {
      const tr = el('tr', {}, t);
      const td = el('td', {}, tr);
      if ((offline && !offline.runs[r.dir]) || r.status === 'pending') td.textContent = r.name;
      else el('a', {href: pageURL(r.dir), text: r.name, class: 'runlink'}, td);
      el('td', {text: r.method}, tr);
      el('td', {text: r.seed}, tr);
      el('td', {text: (r.vary || []).map(v => v.key + '=' + v.value).join(' ')}, tr);
      el('td', {text: r.status, class: 'status-' + r.status}, tr);
    }
    return sw;
  }
  let sw = await draw();
  ready();
  status(sw.done + sw.failed < sw.total ? 'running' : 'finished');
  while (!offline && sw.done + sw.failed < sw.total) {
    await new Promise(r => setTimeout(r, 2000));
    try { sw = await draw(); } catch (e) { status(e.message); }
    status(sw.done + sw.failed < sw.total ? 'running' : 'finished');
  }
}
