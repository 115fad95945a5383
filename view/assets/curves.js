// The curves of a run: every metric of metrics.jsonl against the round.
'use strict';

const PHASE_FILL = {sgp: '#2b5d8c', hypergradient: '#e08a00', outer: '#2b8c5d'};

// drawCurves draws one chart per metric into box: the aggregate row's
// value (or, for a metric only clients report, their mean), and with
// perClient every client's line; non-finite values are marked as
// blow-ups, and a cursor marks round tick.
function drawCurves(box, evals, info, perClient, tick) {
  box.textContent = '';
  const keys = [...new Set([...evals.aggKeys, ...evals.clientKeys])].sort();
  const W = 360, H = 170, L = 44, R = 8, T = 8, B = 18;
  let xmax = Math.max(1, info.rounds);
  for (const e of evals.list) xmax = Math.max(xmax, e.tick + 1);
  for (const key of keys) {
    const fromAgg = evals.aggKeys.has(key);
    const series = [{cls: 'agg', pts: [], bad: []}];
    const nc = info.clients;
    if (perClient && evals.clientKeys.has(key)) for (let i = 0; i < nc; i++) series.push({cls: 'cl', client: i, pts: [], bad: []});
    for (const e of evals.list) {
      let v;
      if (fromAgg) v = e.agg[key];
      else {
        let s = 0, c = 0;
        for (const r of e.clients) if (typeof r[key] === 'number') { s += r[key]; c++; }
        v = c ? s / c : undefined;
        if (e.clients.some(r => key in r && r[key] === null)) v = null;
      }
      if (typeof v === 'number') series[0].pts.push([e.tick, v]);
      else if (v === null) series[0].bad.push(e.tick);
      for (const sr of series.slice(1)) {
        const r = e.clients.find(c => c.client === sr.client);
        if (r && typeof r[key] === 'number') sr.pts.push([e.tick, r[key]]);
      }
    }
    let lo = Infinity, hi = -Infinity;
    for (const s of series) for (const [, v] of s.pts) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (!(lo <= hi)) { lo = 0; hi = 1; }
    const log = lo > 0 && hi / lo > 1e3;
    const f = log ? Math.log10 : (v) => v;
    let flo = f(lo), fhi = f(hi);
    if (fhi === flo) { flo -= 0.5; fhi += 0.5; }
    const xOf = (t) => L + (W - L - R) * t / xmax;
    const yOf = (v) => T + (H - T - B) * (1 - (f(v) - flo) / (fhi - flo));
    const div = el('div', {class: 'curve'}, box);
    const last = series[0].pts.length ? series[0].pts[series[0].pts.length - 1][1] : null;
    el('h3', {text: key + (fromAgg ? '' : ' (mean over clients)') + (log ? ', log scale' : '') + ' · last ' + fmt(last)}, div);
    const svg = el('svg:svg', {viewBox: '0 0 ' + W + ' ' + H, 'data-metric': key}, div);
    svg.xOf = xOf;
    for (const p of info.phases) {
      el('svg:rect', {class: 'phaseband', x: xOf(p.tick), y: T, width: Math.max(0.5, xOf(p.tick + p.rounds) - xOf(p.tick)),
        height: H - T - B, fill: PHASE_FILL[p.phase] || '#888'}, svg).appendChild(el('svg:title', {text: p.phase + ', outer step ' + p.step}));
    }
    el('svg:text', {class: 'axis', x: L - 3, y: T + 8, 'text-anchor': 'end', text: fmt(log ? 10 ** fhi : fhi)}, svg);
    el('svg:text', {class: 'axis', x: L - 3, y: H - B, 'text-anchor': 'end', text: fmt(log ? 10 ** flo : flo)}, svg);
    el('svg:text', {class: 'axis', x: L, y: H - 5, text: '0'}, svg);
    el('svg:text', {class: 'axis', x: W - R, y: H - 5, 'text-anchor': 'end', text: 'round ' + xmax}, svg);
    for (const s of series.slice(1).concat(series.slice(0, 1))) {
      const pl = el('svg:polyline', {class: s.cls, 'data-points': s.pts.length,
        points: s.pts.map(([t, v]) => xOf(t).toFixed(1) + ',' + yOf(v).toFixed(1)).join(' ')}, svg);
      if (s.cls === 'cl') { pl.setAttribute('stroke', 'hsl(' + (s.client * 137.5 % 360) + ',60%,45%)'); pl.dataset.client = s.client; }
      else pl.dataset.kind = fromAgg ? 'aggregate' : 'mean';
    }
    for (const t of series[0].bad) {
      const x = xOf(t);
      el('svg:path', {class: 'blowup', d: 'M' + (x - 4) + ',' + (T) + 'l8,8m0,-8l-8,8', 'data-round': t}, svg)
        .appendChild(el('svg:title', {text: key + ' not finite at round ' + t}));
    }
    for (const d of divergences(info)) {
      if (d.metric && d.metric !== key) continue;
      el('svg:line', {class: 'blowup', x1: xOf(d.tick), x2: xOf(d.tick), y1: T, y2: H - B, 'stroke-dasharray': '3 2',
        'data-round': d.tick}, svg).appendChild(el('svg:title', {text: d.text}));
    }
    el('svg:line', {class: 'cursor', x1: xOf(tick), x2: xOf(tick), y1: T, y2: H - B}, svg);
  }
}

// divergences finds, in summary.json's divergence record, the entries
// that say where (a phase, an outer step, a round) and places them at
// their round; an entry that names a metric marks that metric's chart
// only.
function divergences(info) {
  const out = [];
  (function walk(v) {
    if (Array.isArray(v)) { v.forEach(walk); return; }
    if (!v || typeof v !== 'object') return;
    if (typeof v.phase === 'string' && typeof v.round === 'number') {
      const step = typeof v.outer === 'number' ? v.outer : v.step;
      const p = info.phases.find(p => p.phase === v.phase && (step === undefined || p.step === step) &&
        v.round >= p.offset && v.round < p.offset + p.rounds);
      if (p) out.push({tick: p.tick + v.round - p.offset, metric: v.metric || v.key, text: 'divergence: ' + JSON.stringify(v)});
      return;
    }
    Object.values(v).forEach(walk);
  })(info.divergence);
  return out;
}
