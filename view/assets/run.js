// The run page: the network round by round, and the curves.
'use strict';

// Evals holds metrics.jsonl as evaluations: each aggregate row with the
// client rows before it, tied to the round (tick) it happened at.
class Evals {
  constructor() { this.list = []; this.pending = []; this.aggKeys = new Set(); this.clientKeys = new Set(); }
  add(rows) {
    for (const r of rows) {
      if (r.client === 'all') {
        this.list.push({outer: r.outer, phase: r.phase, round: r.round, agg: r, clients: this.pending, tick: -1});
        this.pending = [];
        for (const k in r) if (!META.has(k)) this.aggKeys.add(k);
      } else {
        // A vector per client (the hyper-gradient estimate) is shown by
        // its norm.
        for (const k in r) {
          if (Array.isArray(r[k])) { r[k + '_norm'] = Math.hypot(...r[k]); delete r[k]; }
        }
        this.pending.push(r);
        for (const k in r) if (!META.has(k) && typeof r[k] !== 'string') this.clientKeys.add(k);
      }
    }
  }
  // place finds each evaluation's round from the phases; one that no
  // listed phase holds (a phase still running) follows the last one.
  place(phases) {
    let cur = 0, end = 0;
    for (const p of phases) end = Math.max(end, p.tick + p.rounds);
    for (const e of this.list) {
      let k = cur;
      while (k < phases.length && !(phases[k].phase === e.phase && phases[k].step === e.outer &&
          e.round >= phases[k].offset && e.round < phases[k].offset + phases[k].rounds)) k++;
      if (k < phases.length) { cur = k; e.tick = phases[k].tick + e.round - phases[k].offset; e.exact = true; }
      else { e.tick = end + e.round; e.exact = false; }
    }
  }
  // at returns the last evaluation at or before tick whose clients
  // report key.
  at(tick, key) {
    let lo = 0, hi = this.list.length - 1, best = -1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (this.list[m].tick <= tick) { best = m; lo = m + 1; } else hi = m - 1;
    }
    for (let k = best; k >= 0 && k > best - 1000; k--) {
      if (this.list[k].clients.some(c => key in c)) return this.list[k];
    }
    return null;
  }
}
const META = new Set(['outer', 'phase', 'round', 'client']);

// Rounds caches blocks of link states, fetched on demand: a round not
// cached is fetched alone first, to draw it at once, then its block.
class Rounds {
  constructor(run, block) { this.run = run; this.w = block; this.cache = new Map(); this.loading = new Map(); this.single = new Map(); }
  static decode(s) {
    return {up: unb64(s.up), cut: s.cut ? unb64(s.cut) : null, off: new Set(s.off || []), delay: new Map(s.delay || [])};
  }
  getAny(tick) {
    const c = this.cache.get(Math.floor(tick / this.w));
    if (c && tick % this.w < c.length) return c[tick % this.w];
    return this.single.get(tick);
  }
  async load(tick) {
    const w = Math.floor(tick / this.w);
    if (this.cache.has(w) && tick % this.w < this.cache.get(w).length) return;
    if (!this.loading.has(w) && !this.single.has(tick)) {
      const r = await api('rounds', {run: this.run, from: tick, count: 1});
      if (r.rounds.length) {
        if (this.single.size > 256) this.single.clear();
        this.single.set(tick, Rounds.decode(r.rounds[0]));
      }
    }
    // The block follows once the page stays in it: scrubbing past
    // asks for single rounds only.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { if (this.want === w) this.loadBlock(w); }, 300);
    this.want = w;
  }
  loadBlock(w) {
    if (w < 0 || (this.cache.has(w) && this.cache.get(w).length === this.w) || this.loading.has(w)) return this.loading.get(w);
    const p = api('rounds', {run: this.run, from: w * this.w, count: this.w}).then(r => {
      this.loading.delete(w);
      // A part block (the end of a running run) is fetched again once it grew.
      this.cache.set(w, r.rounds.map(Rounds.decode));
      if (this.cache.size > 256) this.cache.delete(this.cache.keys().next().value);
    }, e => { this.loading.delete(w); throw e; });
    this.loading.set(w, p);
    return p;
  }
  // ahead fetches the blocks after tick's, for playing.
  ahead(tick) {
    const w = Math.floor(tick / this.w);
    this.loadBlock(w + 1);
    if ((tick % this.w) > this.w / 2) this.loadBlock(w + 2);
  }
}

function unb64(s) {
  const b = atob(s), a = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) a[i] = b.charCodeAt(i);
  return a;
}
const bit = (a, k) => (a[k >> 3] >> (k & 7)) & 1;

// colour maps t in [0, 1] through a blue–green–yellow ramp.
function colour(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  t = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
  const c = stops[i].map((v, k) => Math.round(v + f * (stops[i + 1][k] - v)));
  return 'rgb(' + c.join(',') + ')';
}
const GROUP_COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324'];

async function runPage(run) {
  const app = document.getElementById('app');
  let info = await api('info', {run: run});
  document.getElementById('title').textContent = 'run ' + info.name;
  document.title = 'hgpsim · ' + info.name;
  app.textContent = '';
  const evals = new Evals();
  let offset = 0;
  const m = await api('metrics', {run: run, offset: 0});
  evals.add(m.rows); offset = m.next;
  evals.place(info.phases);

  const net = el('section', {id: 'network'}, app);
  el('h2', {text: 'Network'}, net);
  const ctl = el('div', {class: 'controls'}, net);
  const play = el('button', {id: 'play', text: '▶ play'}, ctl);
  const slider = el('input', {id: 'round', type: 'range', min: 0, max: Math.max(0, info.rounds - 1), value: 0}, ctl);
  const label = el('span', {id: 'roundlabel'}, ctl);
  const speed = el('select', {id: 'speed', title: 'rounds per second'}, ctl);
  for (const s of [2, 10, 50, 200]) el('option', {value: s, text: s + ' rounds/s'}, speed);
  speed.value = 10;
  const colourBy = el('select', {id: 'colour', title: 'node colour'}, ctl);
  const ckeys = [...evals.clientKeys].sort((a, b) => (b === 'weight') - (a === 'weight') || a.localeCompare(b));
  el('option', {value: '', text: 'colour: none'}, colourBy);
  for (const k of ckeys) el('option', {value: k, text: 'colour: ' + (k === 'weight' ? 'push-sum weight ω' : k)}, colourBy);
  colourBy.value = params.get('colour') || (ckeys.includes('weight') ? 'weight' : (ckeys[0] || ''));
  const wrap = el('div', {class: 'netwrap'}, net);
  const svg = el('svg:svg', {id: 'net', viewBox: '0 0 560 560'}, wrap);
  const legend = el('div', {id: 'legend'}, wrap);
  if (info.source === 'none') el('p', {class: 'note', text: 'No links: ' + info.network_error}, net);
  else el('p', {class: 'note', text: info.source === 'recorded' ? 'Links as recorded (links.csv.gz).' :
    'Links re-realized from the scenario and its seed.'}, net);
  if (!info.phases_exact) el('p', {class: 'note', text: 'Phases inferred from metrics.jsonl (no phases.jsonl): phases without evaluations are missing, rounds may be shifted.'}, net);

  const P = (i) => [30 + 500 * info.x[i], 30 + 500 * info.y[i]];
  const n = info.clients, radius = Math.max(3, Math.min(12, 600 / Math.max(n, 1)));
  el('svg:defs', {}, svg).innerHTML = '<marker id="arr" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0L6,3L0,6z" fill="context-stroke"/></marker>';
  const gGroups = el('svg:g', {}, svg), gLinks = el('svg:g', {id: 'links'}, svg), gNodes = el('svg:g', {id: 'nodes'}, svg);
  const groupOf = new Array(n).fill(-1);
  info.groups.forEach((g, k) => g.forEach(v => { groupOf[v] = k; }));
  const rings = [];
  for (let i = 0; i < n; i++) {
    if (groupOf[i] >= 0) rings.push(el('svg:circle', {class: 'group', cx: P(i)[0], cy: P(i)[1], r: radius + 4,
      stroke: GROUP_COLOURS[groupOf[i] % GROUP_COLOURS.length], 'data-group': groupOf[i], visibility: 'hidden'}, gGroups));
  }
  const arrows = info.links.length <= 3000;
  const linkEls = info.links.map(([a, b], k) => {
    const [x1, y1] = P(a), [x2, y2] = P(b);
    const dx = x2 - x1, dy = y2 - y1, d = Math.hypot(dx, dy) || 1;
    const ox = -dy / d * 2.5, oy = dx / d * 2.5, sh = (radius + 2) / d; // one side per direction, short of the nodes
    return el('svg:line', {class: 'link', 'data-link': k, 'data-from': a, 'data-to': b, 'data-state': 'down',
      x1: x1 + ox + dx * sh, y1: y1 + oy + dy * sh, x2: x2 + ox - dx * sh, y2: y2 + oy - dy * sh,
      'marker-end': arrows ? 'url(#arr)' : ''}, gLinks);
  });
  const nodeEls = [];
  for (let i = 0; i < n; i++) {
    const [x, y] = P(i);
    const c = el('svg:circle', {class: 'node', 'data-client': i, cx: x, cy: y, r: radius, fill: '#fff'}, gNodes);
    el('svg:title', {text: 'client ' + i}, c);
    nodeEls.push(c);
    if (n <= 40) el('svg:text', {class: 'nlabel', x: x, y: y, text: i}, gNodes);
  }
  const curves = el('section', {id: 'curves'}, app);
  const curveCtl = el('div', {class: 'controls'}, curves);
  el('h2', {text: 'Curves'}, curveCtl);
  const per = el('label', {}, curveCtl);
  const perBox = el('input', {type: 'checkbox', id: 'perclient'}, per);
  per.append(' per client');
  const curveBox = el('div', {class: 'curves'}, curves);

  const rounds = new Rounds(run, info.window);
  let tick = Math.min(+(params.get('round') || 0), Math.max(0, info.rounds - 1));
  let range = null;

  function colourRange(key) {
    let lo = Infinity, hi = -Infinity;
    for (const e of evals.list) for (const c of e.clients) {
      const v = c[key];
      if (typeof v === 'number' && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    return lo <= hi ? [lo, hi] : null;
  }

  function phaseAt(t) {
    let best = null;
    for (const p of info.phases) if (p.tick <= t && t < p.tick + p.rounds) best = p;
    return best;
  }

  // drawRound shows round t; it returns false while its window loads.
  function drawRound(t) {
    const st = rounds.getAny(t);
    const ph = phaseAt(t);
    label.textContent = 'round ' + t + ' / ' + info.rounds + (ph ? ' · phase ' + ph.phase + ' (round ' + (t - ph.tick + ph.offset) +
      ') · outer step ' + ph.step : '');
    label.dataset.round = t;
    slider.value = t;
    if (!st) { if (info.source !== 'none') rounds.load(t).then(() => { if (tick === t && rounds.getAny(t)) drawRound(t); }); return false; }
    svg.dataset.round = t;
    for (let k = 0; k < linkEls.length; k++) {
      const e = linkEls[k], [a, b] = info.links[k];
      const up = bit(st.up, k);
      const cause = up ? '' : st.cut && bit(st.cut, k) ? 'cut' : st.off.has(a) || st.off.has(b) ? 'offline' : 'link';
      const state = up ? 'up' : 'down';
      if (e.dataset.state !== state) e.dataset.state = state;
      if ((e.dataset.cause || '') !== cause) { if (cause) e.dataset.cause = cause; else delete e.dataset.cause; }
      const d = up ? st.delay.get(k) : undefined;
      if (d) e.dataset.delay = d; else if (e.dataset.delay) delete e.dataset.delay;
    }
    const partitioned = st.cut !== null;
    for (const r of rings) r.setAttribute('visibility', partitioned ? 'visible' : 'hidden');
    const key = colourBy.value, ev = key ? evals.at(t, key) : null;
    for (let i = 0; i < n; i++) {
      const off = st.off.has(i);
      nodeEls[i].dataset.offline = off ? '1' : '0';
      let fill = '#fff', v;
      const row = ev && ev.clients.find(c => c.client === i);
      if (range && row && typeof (v = row[key]) === 'number') {
        fill = colour(range[1] > range[0] ? (v - range[0]) / (range[1] - range[0]) : 0.5);
      }
      nodeEls[i].setAttribute('fill', fill);
      nodeEls[i].firstChild.textContent = 'client ' + i + (off ? ' (offline)' : '') + (v !== undefined ? '\n' + key + ' = ' + fmt(v) : '');
    }
    for (const c of curveBox.querySelectorAll('line.cursor')) {
      const x = c.parentNode.xOf(t);
      c.setAttribute('x1', x); c.setAttribute('x2', x);
    }
    return true;
  }

  function drawLegend() {
    legend.textContent = '';
    const key = colourBy.value;
    range = key ? colourRange(key) : null;
    const add = (html) => { el('div', {}, legend).innerHTML = html; };
    add('<svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#2b5d8c" stroke-width="2"/></svg> up');
    add('<svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#e08a00" stroke-dasharray="4 2" stroke-width="2"/></svg> up, delayed');
    add('<svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#ccc" stroke-dasharray="2 3" stroke-width="2"/></svg> down');
    add('<svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" stroke="#d33" stroke-dasharray="5 3" stroke-width="2"/></svg> cut by a partition');
    add('<svg width="30" height="12"><circle cx="15" cy="6" r="5" fill="#eee" stroke="#999" stroke-dasharray="2 2"/></svg> offline (crash, churn)');
    if (info.groups.length) add('Partition groups (ringed while cut): ' + info.groups.map((g, k) =>
      '<span style="color:' + GROUP_COLOURS[k % GROUP_COLOURS.length] + '">' + g.join(', ') + '</span>').join(' | '));
    if (range) add('Colour: ' + key + ' at the last evaluation<br><svg width="120" height="10">' +
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(i => '<rect x="' + i * 12 + '" width="12" height="10" fill="' + colour(i / 9) + '"/>').join('') +
      '</svg><br>' + fmt(range[0]) + ' … ' + fmt(range[1]));
    for (const f of info.failures || []) {
      const g = Object.assign({}, f); delete g.kind;
      add('<span class="note">' + f.kind + ': ' + JSON.stringify(g).replace(/[<&]/g, '') + '</span>');
    }
  }

  function go(t) { tick = Math.max(0, Math.min(t, Math.max(0, info.rounds - 1))); drawRound(tick); }
  slider.addEventListener('input', () => go(+slider.value));
  colourBy.addEventListener('change', () => { drawLegend(); drawRound(tick); });
  perBox.addEventListener('change', () => drawCurves(curveBox, evals, info, perBox.checked, tick));
  let playing = false, lastStep = 0;
  function frame(now) {
    if (!playing) return;
    if (now - lastStep >= 1000 / +speed.value) {
      if (tick + 1 >= info.rounds) { toggle(); return; }
      if (rounds.getAny(tick + 1)) { go(tick + 1); lastStep = now; } else rounds.loadBlock(Math.floor((tick + 1) / info.window));
      if (info.source !== 'none') rounds.ahead(tick);
    }
    requestAnimationFrame(frame);
  }
  function toggle() {
    playing = !playing;
    play.textContent = playing ? '❚❚ pause' : '▶ play';
    if (playing) requestAnimationFrame(frame);
  }
  play.addEventListener('click', toggle);
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return; // the slider steps by itself
    if (e.key === 'ArrowRight') go(tick + 1); else if (e.key === 'ArrowLeft') go(tick - 1);
    else if (e.key === ' ') { e.preventDefault(); toggle(); }
  });

  // scrub measures scrubbing (?scrub=N): N jumps to rounds not seen
  // yet, each fetched and drawn, then N redraws of cached rounds.
  async function scrub(count) {
    let fetched = 0, drawn = 0;
    for (let k = 0; k < count; k++) {
      const t = Math.floor((k + 0.5) * info.rounds / count), t0 = performance.now();
      await rounds.load(t); go(t);
      fetched += performance.now() - t0;
      const t1 = performance.now();
      go(t - 1 >= 0 && rounds.getAny(t - 1) ? t - 1 : t);
      drawn += performance.now() - t1;
    }
    console.log('hgpsim view: scrub ' + count + ' jumps: ' + (fetched / count).toFixed(1) + ' ms to fetch and draw a round, ' +
      (drawn / count).toFixed(1) + ' ms to draw a cached one');
  }

  drawLegend();
  drawCurves(curveBox, evals, info, perBox.checked, tick);
  if (info.source !== 'none' && info.rounds > 0) await rounds.load(tick);
  drawRound(tick);
  ready();
  document.body.dataset.firstEvals = document.body.dataset.evals = evals.list.length;
  status(info.done ? 'finished' : 'running');
  if (params.get('scrub')) await scrub(+params.get('scrub'));

  // Follow a running run: new metrics lines from the offset reached,
  // new phases from info.
  while (!offline && !info.done) {
    await new Promise(r => setTimeout(r, 1000));
    try {
      const inf = await api('info', {run: run});
      const mm = await api('metrics', {run: run, offset: offset});
      offset = mm.next;
      if (mm.rows.length || inf.rounds !== info.rounds || inf.done) {
        info = Object.assign(info, {phases: inf.phases, rounds: inf.rounds, done: inf.done, divergence: inf.divergence});
        evals.add(mm.rows);
        evals.place(info.phases);
        document.body.dataset.evals = evals.list.length;
        slider.max = Math.max(0, info.rounds - 1);
        drawLegend();
        drawCurves(curveBox, evals, info, perBox.checked, tick);
        drawRound(tick);
      }
      status(info.done ? 'finished' : 'running · ' + evals.list.length + ' evaluations');
    } catch (e) { status(e.message); }
  }
}
