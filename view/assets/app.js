// hgpsim view: the page of a run or a sweep. Data come from the server's
// /api endpoints, or from window.HGPSIM_DATA in a file written by --html.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const params = new URLSearchParams(location.search);
const offline = window.HGPSIM_DATA || null;

function el(tag, attrs, parent) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
  }
  if (parent) parent.appendChild(e);
  return e;
}

// api fetches an endpoint with the page's run and token, or answers it
// from the inlined data.
async function api(endpoint, q) {
  q = Object.assign({}, q || {});
  if (offline) return offlineAPI(endpoint, q);
  if (params.get('token')) q.token = params.get('token');
  const r = await fetch('api/' + endpoint + '?' + new URLSearchParams(q));
  if (!r.ok) throw new Error(endpoint + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
}

function offlineAPI(endpoint, q) {
  const run = offline.runs[q.run || '.'];
  switch (endpoint) {
    case 'sweep': return offline.sweep;
    case 'info': return run.info;
    case 'metrics': return q.offset > 0 ? {next: q.offset, rows: []} : {next: 1, rows: run.metrics};
    case 'rounds': {
      const from = +q.from, n = Math.max(0, Math.min(+q.count, run.rounds.length - from));
      return {from: from, rounds: run.rounds.slice(from, from + n)};
    }
  }
  throw new Error('not in this file: ' + endpoint);
}

function fileURL(rel) {
  if (offline) return offline.files[rel] || '';
  const t = params.get('token');
  return 'file/' + rel.split('/').map(encodeURIComponent).join('/') + (t ? '?token=' + encodeURIComponent(t) : '');
}

function pageURL(run) {
  const q = new URLSearchParams();
  if (run) q.set('run', run);
  if (params.get('token')) q.set('token', params.get('token'));
  return '?' + q;
}

function status(msg) { document.getElementById('status').textContent = msg; }

function fmt(v) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return +v.toPrecision(4) + '';
}

// ready marks the first full render for measurements: the time since
// navigation start in ms, in the DOM.
function ready() {
  if (document.body.dataset.renderMs) return;
  performance.mark('hgpsim-rendered');
  document.body.dataset.renderMs = Math.round(performance.now());
  console.log('hgpsim view: rendered ' + document.body.dataset.renderMs + ' ms after navigation start');
}

async function main() {
  try {
    let kind = 'run';
    if (!params.get('run')) {
      if (offline) kind = offline.sweep ? 'sweep' : 'run';
      else {
        const r = await fetch('api/sweep' + (params.get('token') ? '?token=' + encodeURIComponent(params.get('token')) : ''));
        if (r.ok) kind = 'sweep';
      }
    }
    if (kind === 'sweep') await sweepPage(); else await runPage(params.get('run') || '.');
  } catch (e) {
    document.getElementById('app').textContent = 'Error: ' + e.message;
    document.body.dataset.error = e.message;
  }
}

document.addEventListener('DOMContentLoaded', main);
