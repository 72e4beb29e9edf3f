// The xbo dashboard: one page, everything read from the JSON API
// (docs/api.md). Trials come from GET /api/studies/{s}/events?since=v, polled,
// so the page follows workers live; explanations are fetched on demand.
import * as echarts from 'echarts/core';
import { LineChart, ScatterChart, BarChart, HeatmapChart, ParallelChart, CustomChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, ParallelComponent,
  MarkLineComponent, MarkPointComponent, DataZoomComponent, AriaComponent, TitleComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([LineChart, ScatterChart, BarChart, HeatmapChart, ParallelChart, CustomChart,
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, ParallelComponent,
  MarkLineComponent, MarkPointComponent, DataZoomComponent, AriaComponent, TitleComponent, CanvasRenderer]);

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
const C = { blue: '#0072B2', orange: '#E69F00', green: '#009E73', red: '#D55E00', purple: '#CC79A7', sky: '#56B4E9', grey: '#999999', black: '#000000' };
const VIRIDIS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];
const POLL_MS = 1500;
const PAGE = 50;
const TRACE_POINTS = 2000; // points drawn per series in the trace
const PARALLEL_LINES = 2000;
const EXPLAIN_AUTO_MAX = 10000; // above this many complete trials, explanations wait for a click
// Freshness (web/README.md): an explanation that arrives names the usable
// trials it describes; when the study has more, the panel says it is stale.
// PDP and importance recompute by themselves when their last computation
// took at most EXPLAIN_AUTO_MS, at most once per EXPLAIN_AUTO_EVERY_MS; the
// other panels (and slower explanations) wait for their button.
const EXPLAIN_AUTO_MS = 3000;
const EXPLAIN_AUTO_EVERY_MS = 15000;
const STATUS_POLL_MS = 500;

const $ = (id) => document.getElementById(id);
const state = {
  studies: [], study: null, space: null, trials: new Map(), version: 0, timer: null,
  sortKey: 'number', sortDir: 1, filter: '', page: 0, selected: null,
  leaf: null, regional: null, firstRenderDone: false, loadStart: 0, gen: 0,
  explained: {}, computing: {},
};
window.xbo = { state, charts: {}, timings: {}, explained: state.explained };

function chart(id) {
  let c = window.xbo.charts[id];
  if (!c) {
    c = echarts.init($(id), null, { renderer: 'canvas' });
    window.xbo.charts[id] = c;
  }
  return c;
}
window.addEventListener('resize', () => Object.values(window.xbo.charts).forEach((c) => c.resize()));

async function api(path) {
  const r = await fetch(path, { headers: { Accept: 'application/json' } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}

function fmt(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '';
  if (typeof v !== 'number') return String(v);
  if (v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3)) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
}
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }
function setNote(id, text, isError) { const el = $(id); el.textContent = text || ''; el.classList.toggle('error', !!isError); }
function status(text) { $('status').textContent = text; }

function params() { return state.space ? state.space.params : []; }
function param(name) { return params().find((p) => p.name === name); }
// A parameter's value as text: a categorical's choice as written (choices
// keep their JSON types: 16, true, "adam"), a number rounded by fmt.
function paramText(name, v) {
  const p = param(name);
  return p && p.type === 'categorical' && v !== undefined && v !== null ? String(v) : fmt(v);
}
function minimize() { return !state.space || state.space.objective !== 'maximize'; }
function valueName() { return `objective value (${minimize() ? 'minimized' : 'maximized'}; study units)`; }
function axisName(p) {
  if (!p) return '';
  if (p.type === 'categorical') return `${p.name} (categorical)`;
  return `${p.name} (${p.type}, ${p.log ? 'log scale' : 'linear scale'}, [${fmt(p.low)}, ${fmt(p.high)}])`;
}
// The axis of a parameter: log axes for log parameters, categories for categoricals.
function paramAxis(p, extra) {
  const base = { name: axisName(p), nameLocation: 'middle', nameGap: 28, ...extra };
  // Category names are the choices' text forms: a numeric choice given as
  // a number would be read as a category index.
  if (p.type === 'categorical') return { ...base, type: 'category', data: p.choices.map(String) };
  return { ...base, type: p.log ? 'log' : 'value', min: p.low, max: p.high, logBase: 10 };
}

// ---------------------------------------------------------------- studies

async function loadStudies() {
  const { studies } = await api('/api/studies');
  state.studies = studies || [];
  const ul = $('studies');
  ul.innerHTML = '';
  for (const s of state.studies) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.study = s.name;
    const n = Object.values(s.counts || {}).reduce((a, b) => a + b, 0);
    b.innerHTML = `<strong>${esc(s.name)}</strong><br><small>${n} trials · best ${fmt(s.best)}</small>`;
    b.setAttribute('aria-current', String(state.study && state.study.name === s.name));
    b.addEventListener('click', () => { location.hash = `study=${encodeURIComponent(s.name)}`; });
    li.appendChild(b);
    ul.appendChild(li);
  }
  if (!state.studies.length) status('no studies yet: create one with POST /api/studies or xbo study create');
}

function hashArgs() {
  const h = new URLSearchParams(location.hash.slice(1));
  return { study: h.get('study'), trial: h.get('trial') };
}

async function route() {
  const { study, trial } = hashArgs();
  const name = study || (state.studies[0] && state.studies[0].name);
  if (!name) return;
  if (!state.study || state.study.name !== name) await openStudy(name);
  if (trial !== null && trial !== '' && String(state.selected) !== trial) selectTrial(Number(trial));
}

async function openStudy(name) {
  const gen = ++state.gen;
  state.loadStart = performance.now();
  clearTimeout(state.timer);
  document.body.dataset.ready = '';
  status(`loading ${name}…`);
  const st = await api(`/api/studies/${encodeURIComponent(name)}`);
  if (gen !== state.gen) return;
  state.study = st;
  state.space = st.space;
  state.trials = new Map();
  state.version = 0;
  state.page = 0;
  state.selected = null;
  state.regional = null;
  state.leaf = null;
  for (const k of Object.keys(state.explained)) delete state.explained[k];
  for (const k of Object.keys(FRESH_PANELS)) renderFreshness(k);
  window.xbo.paths = null; // another study's paths must not stay on screen
  $('paths-data').innerHTML = '';
  if (window.xbo.charts['paths-chart']) window.xbo.charts['paths-chart'].clear();
  for (const b of document.querySelectorAll('#studies button')) b.setAttribute('aria-current', String(b.dataset.study === name));
  fillParamSelects();
  const ev = await api(`/api/studies/${encodeURIComponent(name)}/events?since=0`);
  if (gen !== state.gen) return;
  merge(ev);
  renderTrials();
  // Two animation frames: the charts have been painted once.
  await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  if (gen !== state.gen) return;
  const ms = performance.now() - state.loadStart;
  window.xbo.timings.firstRender = ms;
  window.xbo.timings.sinceNavigation = performance.now();
  document.body.dataset.ready = name;
  status(`${name}: ${state.trials.size} trials, first render ${ms.toFixed(0)} ms`);
  const complete = countComplete();
  if (complete >= 3 && complete <= EXPLAIN_AUTO_MAX) {
    refreshPDP();
    refreshImportance();
  } else {
    const why = complete < 3 ? `needs 3 complete trials (has ${complete})` : `${complete} complete trials: press Recompute (fitting a surrogate to this many is slow)`;
    setNote('pdp-note', why); setNote('importance-note', why); setNote('proposal-note', why);
  }
  poll(gen);
}

function countComplete() { let n = 0; for (const t of state.trials.values()) if (t.state === 'complete') n++; return n; }
// Usable trials are what an explanation describes: complete with a finite value.
function countUsable() { let n = 0; for (const t of state.trials.values()) if (t.state === 'complete' && Number.isFinite(t.value)) n++; return n; }

function merge(ev) {
  for (const t of ev.trials || []) {
    const old = state.trials.get(t.number);
    if (!old || old.version <= t.version) state.trials.set(t.number, t);
  }
  state.version = Math.max(state.version, ev.version || 0);
  return (ev.trials || []).length;
}

function poll(gen) {
  state.timer = setTimeout(async () => {
    if (gen !== state.gen) return;
    try {
      const ev = await api(`/api/studies/${encodeURIComponent(state.study.name)}/events?since=${state.version}`);
      if (gen !== state.gen) return;
      if (merge(ev) > 0) {
        renderTrials();
        status(`${state.study.name}: ${state.trials.size} trials (live, version ${state.version})`);
        for (const k of Object.keys(FRESH_PANELS)) renderFreshness(k);
      }
      autoRecompute();
    } catch (e) {
      status(`polling failed: ${e.message}; retrying`);
    }
    poll(gen);
  }, POLL_MS);
}

function sortedTrials() { return [...state.trials.values()].sort((a, b) => a.number - b.number); }

function renderTrials() {
  const all = sortedTrials();
  renderSummary(all);
  renderTrace(all);
  renderTable(all);
  renderParallel(all);
  renderBobax(all);
}

function renderSummary(all) {
  const counts = {};
  let best = null;
  for (const t of all) {
    counts[t.state] = (counts[t.state] || 0) + 1;
    if (t.state === 'complete' && (best === null || (minimize() ? t.value < best.value : t.value > best.value))) best = t;
  }
  state.best = best;
  const parts = Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ');
  $('summary').innerHTML = `<h2>${esc(state.study.name)}</h2><p>${minimize() ? 'minimize' : 'maximize'} · ${all.length} trials (${esc(parts)})` +
    (best ? ` · best <strong id="best-value">${fmt(best.value)}</strong> at trial ${best.number}` : '') + '</p>';
}

// ---------------------------------------------------------------- trace

// Min/max per bucket keeps the extremes of every stretch of trials visible
// while drawing at most `points` points.
function downsample(xs, ys, points) {
  if (xs.length <= points) return xs.map((x, i) => [x, ys[i]]);
  const buckets = Math.floor(points / 2);
  const size = xs.length / buckets;
  const out = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor(b * size), hi = Math.min(xs.length, Math.floor((b + 1) * size));
    let imin = lo, imax = lo;
    for (let i = lo; i < hi; i++) { if (ys[i] < ys[imin]) imin = i; if (ys[i] > ys[imax]) imax = i; }
    for (const i of imin <= imax ? [imin, imax] : [imax, imin]) out.push([xs[i], ys[i]]);
  }
  return out;
}

function renderTrace(all) {
  const done = all.filter((t) => t.state === 'complete');
  const xs = done.map((t) => t.number), ys = done.map((t) => t.value);
  const bestX = [], bestY = [];
  let b = null;
  for (let i = 0; i < ys.length; i++) {
    if (b === null || (minimize() ? ys[i] < b : ys[i] > b)) { b = ys[i]; bestX.push(xs[i]); bestY.push(b); }
  }
  if (xs.length) { bestX.push(xs[xs.length - 1]); bestY.push(b); }
  const pts = downsample(xs, ys, TRACE_POINTS);
  setNote('trace-note', xs.length > TRACE_POINTS ? `${xs.length} complete trials, drawn as ${pts.length} points (min and max of each stretch)` : `${xs.length} complete trials`);
  window.xbo.trace = { n: xs.length, best: b, drawn: pts.length };
  chart('trace-chart').setOption({
    aria: { enabled: true },
    animation: false,
    color: [C.blue, C.orange],
    tooltip: { trigger: 'item' },
    legend: { data: ['value', 'best so far'], top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: 60 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26, min: 0 },
    yAxis: { type: 'value', name: valueName(), nameLocation: 'middle', nameGap: 50, scale: true },
    dataZoom: [{ type: 'inside' }],
    series: [
      { name: 'value', type: 'scatter', symbolSize: 4, data: pts, large: pts.length > 1000 },
      { name: 'best so far', type: 'line', step: 'end', showSymbol: false, data: bestX.map((x, i) => [x, bestY[i]]), lineStyle: { width: 2 } },
    ],
  }, true);
}

// ---------------------------------------------------------------- table

function columns() {
  return [
    { key: 'number', label: '#' }, { key: 'state', label: 'state' }, { key: 'value', label: 'value' },
    ...params().map((p) => ({ key: 'p:' + p.name, label: p.name + (p.log ? ' (log)' : '') })),
    { key: 'acquisition', label: 'acquisition' }, { key: 'worker', label: 'worker' },
  ];
}
function cell(t, key) { return key.startsWith('p:') ? t.params[key.slice(2)] : t[key]; }

function renderTable(all) {
  const cols = columns();
  const thead = $('trials-table').tHead;
  thead.innerHTML = '<tr>' + cols.map((c) => {
    const sort = state.sortKey === c.key ? (state.sortDir > 0 ? 'ascending' : 'descending') : 'none';
    return `<th scope="col" aria-sort="${sort}"><button type="button" data-key="${esc(c.key)}">${esc(c.label)}${sort === 'none' ? '' : sort === 'ascending' ? ' ▲' : ' ▼'}</button></th>`;
  }).join('') + '</tr>';
  let rows = state.filter ? all.filter((t) => t.state === state.filter) : all;
  const k = state.sortKey, d = state.sortDir;
  rows = rows.slice().sort((a, b) => {
    const x = cell(a, k), y = cell(b, k);
    if (x === y) return a.number - b.number;
    if (x === undefined || x === null) return 1;
    if (y === undefined || y === null) return -1;
    return (x < y ? -1 : 1) * d;
  });
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  state.page = Math.min(state.page, pages - 1);
  const page = rows.slice(state.page * PAGE, (state.page + 1) * PAGE);
  $('page-info').textContent = `page ${state.page + 1} of ${pages} (${rows.length} trials)`;
  $('prev-page').disabled = state.page === 0;
  $('next-page').disabled = state.page >= pages - 1;
  $('trials-table').tBodies[0].innerHTML = page.map((t) =>
    `<tr tabindex="0" data-number="${t.number}" aria-selected="${state.selected === t.number}">` +
    cols.map((c) => `<td>${esc(c.key.startsWith('p:') ? paramText(c.key.slice(2), cell(t, c.key)) : fmt(cell(t, c.key)))}</td>`).join('') + '</tr>').join('');
}

$('trials-table').addEventListener('click', (e) => {
  const b = e.target.closest('th button');
  if (b) {
    const k = b.dataset.key;
    state.sortDir = state.sortKey === k ? -state.sortDir : 1;
    state.sortKey = k;
    renderTable(sortedTrials());
    const again = document.querySelector(`#trials-table th button[data-key="${CSS.escape(k)}"]`);
    if (again) again.focus();
    return;
  }
  const tr = e.target.closest('tbody tr');
  if (tr) location.hash = `study=${encodeURIComponent(state.study.name)}&trial=${tr.dataset.number}`;
});
$('trials-table').addEventListener('keydown', (e) => {
  const tr = e.target.closest('tbody tr');
  if (!tr) return;
  if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); tr.click(); }
  if (e.key === 'ArrowDown' && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
  if (e.key === 'ArrowUp' && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
});
$('state-filter').addEventListener('change', (e) => { state.filter = e.target.value; state.page = 0; renderTable(sortedTrials()); });
$('prev-page').addEventListener('click', () => { state.page--; renderTable(sortedTrials()); });
$('next-page').addEventListener('click', () => { state.page++; renderTable(sortedTrials()); });

// ---------------------------------------------------------------- parallel coordinates

function renderParallel(all) {
  let done = all.filter((t) => t.state === 'complete');
  const n = done.length;
  if (n > PARALLEL_LINES) { // evenly spaced subset, always with the best trial
    const step = n / PARALLEL_LINES;
    const keep = [];
    for (let i = 0; i < PARALLEL_LINES; i++) keep.push(done[Math.floor(i * step)]);
    if (state.best && !keep.includes(state.best)) keep.push(state.best);
    done = keep;
  }
  setNote('parallel-note', n > PARALLEL_LINES ? `${done.length} of ${n} complete trials drawn (evenly spaced, best included)` : `${n} complete trials`);
  const ps = params();
  // Full names, never truncated; they alternate in height so neighbours do
  // not overlap.
  const nameStyle = (i) => ({ nameTruncate: { maxWidth: null }, nameTextStyle: { padding: [0, 0, i % 2 ? 14 : 0, 0] } });
  const axes = ps.map((p, i) => ({ dim: i, ...paramAxis(p), nameLocation: 'end', nameGap: 12, name: p.name + (p.log ? ' (log)' : ''), ...nameStyle(i) }));
  axes.push({ dim: ps.length, name: 'value', type: 'value', scale: true, nameLocation: 'end', nameGap: 12, ...nameStyle(ps.length) });
  const data = done.map((t) => [...ps.map((p) => {
    const v = t.params[p.name];
    if (v === undefined) return null;
    return p.type === 'categorical' ? String(v) : v;
  }), t.value]);
  const vals = done.map((t) => t.value);
  chart('parallel-chart').setOption({
    aria: { enabled: true },
    animation: false,
    parallelAxis: axes,
    // The colour scale has a margin of its own, clear of the value axis.
    parallel: { left: 50, right: 130, top: 50, bottom: 30 },
    visualMap: {
      type: 'continuous', dimension: ps.length, min: vals.length ? Math.min(...vals) : 0, max: vals.length ? Math.max(...vals) : 1,
      inRange: { color: minimize() ? VIRIDIS.slice().reverse() : VIRIDIS }, right: 10, top: 'middle', calculable: true,
      text: ['high', 'low'], itemHeight: 160, precision: 3,
    },
    // Many lines fade, so the ticks stay readable at 10,000 trials.
    series: [{ type: 'parallel', data, lineStyle: { width: 1, opacity: Math.max(0.08, Math.min(0.45, 60 / Math.max(1, done.length))) }, progressive: 500, smooth: false }],
  }, true);
}

// ---------------------------------------------------------------- PDP

function fillParamSelects() {
  const opts = params().map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join('');
  $('pdp-param').innerHTML = opts;
  $('pdp-param2').innerHTML = '<option value="">none</option>' + opts;
}

function pdpMode() { return document.querySelector('input[name="pdp-mode"]:checked').value; }
function studyURL(path) { return `/api/studies/${encodeURIComponent(state.study.name)}/${path}`; }

async function refreshPDP() {
  if (!state.study) return;
  const a = $('pdp-param').value, b = $('pdp-param2').value;
  const ice = $('pdp-ice').checked;
  const gen = state.gen;
  setNote('pdp-note', 'computing…');
  try {
    if (pdpMode() === 'regional') {
      const r = await explainGET('pdp', `explain/regional?param=${encodeURIComponent(a)}`);
      if (gen !== state.gen) return;
      state.regional = r;
      state.leaf = null;
      renderTree(r);
      drawPDP(r.global, 'global PDP (click a leaf for its region)');
      setNote('pdp-note', `${r.splits} split(s); impurity ${fmt(r.root_impurity)} → ${fmt(r.leaf_impurity)}`);
    } else {
      $('tree').innerHTML = '';
      const q = `param=${encodeURIComponent(a)}` + (b && b !== a ? `&param=${encodeURIComponent(b)}` : '') + (ice && !(b && b !== a) ? '&ice=true' : '');
      const r = await explainGET('pdp', `explain/pdp?${q}`);
      if (gen !== state.gen) return;
      drawPDP(r, 'global PDP');
      setNote('pdp-note', `${Math.round(r.level * 100)}% band (${r.band}), ${r.samples} Monte Carlo samples; ${r.units}${r.note ? '. ' + r.note : ''}`);
    }
  } catch (e) {
    setNote('pdp-note', `PDP: ${e.message}`, true);
  }
}

function renderTree(r) {
  const leaves = new Map((r.leaves || []).map((l) => [l.id, l]));
  const node = (n) => {
    const leaf = leaves.get(n.id);
    const label = n.split ? `${n.split.param} ${n.split.threshold !== undefined ? '≤ ' + fmt(n.split.threshold) : 'in {' + (n.split.left_levels || []).join(', ') + '}'}?` : (n.path && n.path.length ? n.path[n.path.length - 1] : 'whole space');
    const cls = leaf ? 'leaf' + (r.best_leaf === n.id ? ' best' : '') : '';
    const btn = leaf
      ? `<button type="button" class="${cls}" data-leaf="${n.id}" aria-pressed="false" title="${esc((n.path || []).join(' and ') || 'whole space')}">leaf ${n.id}: ${esc(label)} (${n.size} curves)</button>`
      : `<span>node ${n.id}: ${esc(label)} (${n.size})</span>`;
    const kids = [n.left, n.right].filter(Boolean).map(node).join('');
    return `<li role="treeitem" aria-expanded="${kids ? 'true' : 'false'}">${btn}${kids ? `<ul role="group">${kids}</ul>` : ''}</li>`;
  };
  $('tree').innerHTML = `<p><strong>Regions</strong> (${r.leaves.length} leaves)</p><ul role="tree" aria-label="Confidence-splitting tree">${node(r.tree)}</ul>`;
}

$('tree').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-leaf]');
  if (!b || !state.regional) return;
  const id = Number(b.dataset.leaf);
  const leaf = state.regional.leaves.find((l) => l.id === id);
  for (const x of document.querySelectorAll('#tree button[data-leaf]')) x.setAttribute('aria-pressed', String(x === b));
  state.leaf = id;
  drawPDP(leaf.pdp, `leaf ${id}: ${(leaf.path || []).join(' and ') || 'whole space'}`);
  setNote('pdp-note', `leaf ${id}: ${leaf.size} ICE curves${leaf.holds_best ? ', holds the best trial' : ''}`);
});

function drawPDP(r, title) {
  window.xbo.pdp = r;
  const p = param(r.param);
  const c = chart('pdp-chart');
  const complete = sortedTrials().filter((t) => t.state === 'complete');
  const best = state.best;
  const labelOf = (p, v, labels, i) => (p.type === 'categorical' ? String(labels ? labels[i] : p.choices[v]) : v);
  if (r.param2) {
    const p2 = param(r.param2);
    const n2 = r.grid2.length;
    const data = [];
    r.mean.forEach((m, k) => data.push([Math.floor(k / n2), k % n2, m]));
    c.setOption({
      aria: { enabled: true }, animation: false,
      title: { text: title, left: 'center', top: 0, textStyle: { fontSize: 12 } },
      tooltip: { formatter: (q) => `${r.param}=${fmt(r.grid[q.data[0]])}, ${r.param2}=${fmt(r.grid2[q.data[1]])}: ${fmt(q.data[2])} ± ${fmt(r.upper[q.dataIndex] - r.mean[q.dataIndex])}` },
      grid: { left: 80, right: 90, top: 30, bottom: 60 },
      xAxis: { type: 'category', name: axisName(p) + ' (grid)', nameLocation: 'middle', nameGap: 36, data: r.grid.map((v, i) => fmt(labelOf(p, v, r.labels, i))) },
      yAxis: { type: 'category', name: axisName(p2) + ' (grid)', nameLocation: 'middle', nameGap: 60, data: r.grid2.map((v, i) => fmt(labelOf(p2, v, r.labels2, i))) },
      visualMap: { min: Math.min(...r.mean), max: Math.max(...r.mean), calculable: true, right: 0, top: 'middle', inRange: { color: minimize() ? VIRIDIS.slice().reverse() : VIRIDIS }, text: ['PD high', 'PD low'], precision: 3 },
      series: [{ type: 'heatmap', name: 'PD mean', data }],
    }, true);
  } else {
    const cat = p.type === 'categorical';
    const xs = r.grid.map((v, i) => labelOf(p, v, r.labels, i));
    const pt = (i, y) => [xs[i], y];
    const lo = Math.min(...r.lower), hi = Math.max(...r.upper);
    const series = [
      // The band is a stacked area: the lower bound (invisible) plus the width.
      { name: 'band lower', type: 'line', data: r.lower.map((y, i) => pt(i, y)), stack: 'band', symbol: 'none', lineStyle: { opacity: 0 }, silent: true, tooltip: { show: false } },
      { name: `${Math.round(r.level * 100)}% band`, type: 'line', data: r.upper.map((y, i) => pt(i, y - r.lower[i])), stack: 'band', symbol: 'none', color: C.sky, lineStyle: { opacity: 0 }, areaStyle: { color: C.sky, opacity: 0.35 }, tooltip: { show: false } },
      {
        name: 'PD mean', type: 'line', data: r.mean.map((y, i) => pt(i, y)), symbolSize: 5, color: C.blue, lineStyle: { width: 2.5 },
        markLine: best && best.params[p.name] !== undefined ? { symbol: 'none', label: { formatter: 'best' }, lineStyle: { color: C.red, type: 'dashed' }, data: [{ xAxis: best.params[p.name] }] } : undefined,
      },
    ];
    if (cat) {
      // Levels are not a continuum: points with error bars, no band
      // between them, no curves through them.
      series.length = 0;
      series.push({ name: 'PD mean', type: 'scatter', data: r.mean.map((y, i) => [i, y]), symbolSize: 11, color: C.blue, z: 5 });
      series.push(errorBars(`${Math.round(r.level * 100)}% band`, r.lower.map((l, i) => [i, l, r.upper[i]])));
    }
    for (const [k, curve] of (cat ? [] : (r.ice || [])).slice(0, 60).entries()) {
      series.push({ name: k === 0 ? 'ICE' : `ICE ${k}`, type: 'line', data: curve.map((y, i) => pt(i, y)), symbol: 'none', silent: true, color: C.grey, lineStyle: { width: 0.6, opacity: 0.5 }, z: 1 });
    }
    // Rug: the evaluated values of the parameter, at the bottom of the plot.
    if (!cat) series.push({ name: 'evaluated (rug)', type: 'scatter', symbol: 'rect', symbolSize: [1.5, 10], color: C.black, data: complete.filter((t) => t.params[p.name] !== undefined).slice(-2000).map((t) => [t.params[p.name], lo]), tooltip: { show: false } });
    c.setOption({
      aria: { enabled: true }, animation: false,
      title: { text: title, left: 'center', top: 0, textStyle: { fontSize: 12 } },
      tooltip: { trigger: 'axis', valueFormatter: fmt },
      legend: { data: cat ? ['PD mean'] : ['PD mean', `${Math.round(r.level * 100)}% band`, 'evaluated (rug)', ...(r.ice ? ['ICE'] : [])], top: 22 },
      grid: { left: 70, right: 20, top: 56, bottom: 55 },
      xAxis: cat ? { type: 'category', data: xs, name: axisName(p), nameLocation: 'middle', nameGap: 30 } : paramAxis(p),
      yAxis: { type: 'value', name: 'partial dependence (' + valueName() + ')', nameLocation: 'middle', nameGap: 50, min: lo - 0.02 * (hi - lo), max: hi + 0.02 * (hi - lo), axisLabel: { formatter: fmt } },
      series,
    }, true);
  }
  // The numbers behind the chart, for screen readers and for checking.
  const rows = r.mean.map((m, k) => {
    const g = r.param2 ? `${fmt(r.grid[Math.floor(k / r.grid2.length)])}, ${fmt(r.grid2[k % r.grid2.length])}` : fmt(r.grid[k]);
    // Five significant digits on screen; the exact number in data-x.
    const cell = (v, name) => `<td data-v="${name}" data-x="${v}">${fmt(v)}</td>`;
    return `<tr><td>${esc(g)}</td>${cell(m, 'mean')}${cell(r.lower[k], 'lower')}${cell(r.upper[k], 'upper')}</tr>`;
  }).join('');
  $('pdp-data').innerHTML = `<thead><tr><th scope="col">${esc(r.param)}${r.param2 ? ', ' + esc(r.param2) : ''}</th><th scope="col">mean</th><th scope="col">lower</th><th scope="col">upper</th></tr></thead><tbody>${rows}</tbody>`;
}

for (const id of ['pdp-param', 'pdp-param2', 'pdp-ice', 'pdp-refresh']) $(id).addEventListener(id === 'pdp-refresh' ? 'click' : 'change', refreshPDP);
for (const r of document.querySelectorAll('input[name="pdp-mode"]')) r.addEventListener('change', refreshPDP);

// ---------------------------------------------------------------- importance

// Error bars drawn as a custom series: a whisker from lower to upper.
function errorBars(name, data) {
  return {
    name, type: 'custom', data, z: 10, tooltip: { show: false },
    renderItem: (params, api) => {
      const x = api.value(0), lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
      const w = api.size([1, 0])[0] * 0.12;
      const style = { stroke: C.black, lineWidth: 1.2 };
      return { type: 'group', children: [
        { type: 'line', shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style },
        { type: 'line', shape: { x1: lo[0] - w, y1: lo[1], x2: lo[0] + w, y2: lo[1] }, style },
        { type: 'line', shape: { x1: hi[0] - w, y1: hi[1], x2: hi[0] + w, y2: hi[1] }, style },
      ] };
    },
  };
}

async function refreshImportance() {
  if (!state.study) return;
  const good = $('good-region').checked;
  const gen = state.gen;
  setNote('importance-note', 'computing…');
  try {
    const r = await explainGET('importance', 'explain/importance' + (good ? '?cap_quantile=0.25' : ''));
    if (gen !== state.gen) return;
    window.xbo.importance = r;
    const main = Object.entries(r.main).map(([k, e]) => ({ k, ...e })).sort((a, b) => b.fraction - a.fraction);
    const pairs = Object.entries(r.pairs || {}).map(([k, e]) => ({ k: k.replace(',', ' × '), ...e })).sort((a, b) => b.fraction - a.fraction).slice(0, 5);
    const items = [...main, ...pairs];
    // gp-sobol gives 95% posterior intervals; forest-fanova a spread across trees.
    const ci = items.length > 0 && Array.isArray(items[0].ci95);
    const how = ci
      ? 'bars: Sobol index of the GP mean, whiskers the 95% interval from posterior samples'
      : 'bars: mean fraction over trees, whiskers ± one standard deviation across trees';
    setNote('importance-note', `${good ? 'good region (values capped at the top-25% quantile)' : 'whole space'}; ${r.method}; variance ${fmt(r.total_variance)}; ${how}; main effects then the top ${pairs.length} pairs`);
    chart('importance-chart').setOption({
      aria: { enabled: true }, animation: false,
      tooltip: { trigger: 'axis' },
      grid: { left: 60, right: 20, top: 20, bottom: 70 },
      xAxis: { type: 'category', data: items.map((i) => i.k), axisLabel: { rotate: 30 }, name: 'effect (main, then pair)', nameLocation: 'middle', nameGap: 55 },
      // The whiskers decide the top, so none is clipped.
      yAxis: { type: 'value', name: 'fraction of variance (0–1)', nameLocation: 'middle', nameGap: 42, min: 0,
        max: ((top) => (top <= 0.95 ? 1.05 * top : Math.max(1, 1.02 * top)))(Math.max(0.01, ...items.map((i) => (Array.isArray(i.ci95) ? i.ci95[1] : i.fraction + i.std)))),
        axisLabel: { formatter: fmt, showMaxLabel: false } },
      series: [
        { name: 'fraction', type: 'bar', data: items.map((i, n) => ({ value: i.fraction, itemStyle: { color: n < main.length ? C.blue : C.orange } })) },
        errorBars(ci ? '95% interval' : '± sd', items.map((i, n) => (Array.isArray(i.ci95) ? [n, i.ci95[0], i.ci95[1]] : [n, Math.max(0, i.fraction - i.std), i.fraction + i.std]))),
      ],
    }, true);
    $('importance-data').innerHTML = '<thead><tr><th scope="col">effect</th><th scope="col">fraction</th><th scope="col">sd</th><th scope="col">95% interval</th></tr></thead><tbody>' +
      items.map((i) => `<tr><td>${esc(i.k)}</td><td data-v="fraction">${i.fraction}</td><td>${i.std}</td><td>${Array.isArray(i.ci95) ? `${fmt(i.ci95[0])} – ${fmt(i.ci95[1])}` : ''}</td></tr>`).join('') + '</tbody>';
  } catch (e) {
    setNote('importance-note', `importance: ${e.message}`, true);
  }
}
$('good-region').addEventListener('change', refreshImportance);
$('importance-refresh').addEventListener('click', refreshImportance);

// ---------------------------------------------------------------- proposal

function selectTrial(n) {
  state.selected = n;
  $('proposal-trial').value = String(n);
  for (const tr of document.querySelectorAll('#trials-table tbody tr')) tr.setAttribute('aria-selected', String(Number(tr.dataset.number) === n));
  refreshShapley();
}

async function refreshShapley() {
  const n = Number($('proposal-trial').value);
  if (!state.study || !Number.isInteger(n)) return;
  const gen = state.gen;
  setNote('proposal-note', `explaining trial ${n}…`);
  try {
    const r = await explainGET('proposal', `explain/shapley?trial=${n}`);
    if (gen !== state.gen) return;
    window.xbo.shapley = r;
    const ex = r.explanation;
    const outs = ex.outputs;
    const t = state.trials.get(n);
    setNote('proposal-note', `trial ${n}${t ? ` (${t.state}${t.value !== undefined ? ', value ' + fmt(t.value) : ''}, ${t.acquisition || ''})` : ''}: ${ex.method} Shapley values, ${Math.round(ex.level * 100)}% intervals; ` +
      outs.map((o) => `${o.output}: prediction ${fmt(o.prediction)} = average ${fmt(o.average)} + ${fmt(o.payout)}`).join('; '));
    const colors = [C.blue, C.orange, C.green, C.purple];
    const series = [];
    outs.forEach((o, k) => {
      series.push({ name: o.output, type: 'bar', data: o.phi, color: colors[k % colors.length] });
    });
    // Whiskers of every output, placed over its bar in the group.
    const nOut = outs.length;
    series.push({
      name: 'interval', type: 'custom', z: 10, tooltip: { show: false },
      data: outs.flatMap((o, k) => o.phi.map((_, j) => [j, o.lower[j], o.upper[j], k])),
      renderItem: (params, api) => {
        const j = api.value(0), k = api.value(3);
        const band = api.size([1, 0])[0] * 0.8;
        const dx = -band / 2 + band * (k + 0.5) / nOut;
        const lo = api.coord([j, api.value(1)]), hi = api.coord([j, api.value(2)]);
        const style = { stroke: C.black, lineWidth: 1.2 };
        return { type: 'group', children: [
          { type: 'line', shape: { x1: lo[0] + dx, y1: lo[1], x2: hi[0] + dx, y2: hi[1] }, style },
          { type: 'line', shape: { x1: lo[0] + dx - 3, y1: lo[1], x2: lo[0] + dx + 3, y2: lo[1] }, style },
          { type: 'line', shape: { x1: hi[0] + dx - 3, y1: hi[1], x2: hi[0] + dx + 3, y2: hi[1] }, style },
        ] };
      },
    });
    chart('proposal-chart').setOption({
      aria: { enabled: true }, animation: false,
      tooltip: { trigger: 'axis' }, legend: { data: outs.map((o) => o.output), top: 0 },
      grid: { left: 70, right: 20, top: 30, bottom: ex.params.length > 4 ? 80 : 45 },
      // Every parameter, with the explained configuration's value.
      xAxis: { type: 'category', data: ex.params.map((name) => (r.point && r.point[name] !== undefined && r.point[name] !== null ? `${name}=${paramText(name, r.point[name])}` : `${name} (off)`)),
        axisLabel: { interval: 0, rotate: ex.params.length > 4 ? 30 : 0 }, name: 'parameter = value', nameLocation: 'middle', nameGap: ex.params.length > 4 ? 58 : 28 },
      yAxis: { type: 'value', name: 'Shapley value (study units)', nameLocation: 'middle', nameGap: 50 },
      series,
    }, true);
    $('proposal-data').innerHTML = '<thead><tr><th scope="col">output</th>' + ex.params.map((p) => `<th scope="col">${esc(p)}</th>`).join('') + '</tr></thead><tbody>' +
      outs.map((o) => `<tr><th scope="row">${esc(o.output)}</th>${o.phi.map((v, j) => `<td data-v="phi">${v} [${o.lower[j]}, ${o.upper[j]}]</td>`).join('')}</tr>`).join('') + '</tbody>';
  } catch (e) {
    setNote('proposal-note', `Shapley: ${e.message}`, true);
  }
}
$('proposal-go').addEventListener('click', () => { location.hash = `study=${encodeURIComponent(state.study.name)}&trial=${$('proposal-trial').value}`; });
$('proposal-trial').addEventListener('keydown', (e) => { if (e.key === 'Enter') $('proposal-go').click(); });

// ------------------------------------------------------- desirability paths
// One explanation per model-chosen proposal, each with its own iteration's
// surrogate (GET explain/paths): costlier than one trial's Shapley values,
// so it is loaded by a click and re-drawn from the cached answer when the
// output toggle changes.

// Plain words for the three outputs; the bound's formula goes in a tooltip.
const PATHS_OUTPUT = { mean: 'the predicted value (exploitation)', se: 'the uncertainty (exploration)', cb: 'the confidence bound (both)' };
function pathsOutput() { return document.querySelector('input[name="paths-output"]:checked').value; }

async function loadPaths() {
  if (!state.study) return;
  const gen = state.gen;
  setNote('paths-note', 'explaining every model-chosen proposal…');
  $('paths-go').disabled = true;
  try {
    const r = await explainGET('paths', 'explain/paths');
    if (gen !== state.gen) return;
    window.xbo.paths = r;
    drawPaths();
  } catch (e) {
    setNote('paths-note', `desirability paths: ${e.message}`, true);
  } finally {
    $('paths-go').disabled = false;
  }
}

function drawPaths() {
  const r = window.xbo.paths;
  if (!r) return;
  const out = pathsOutput();
  const attr = (s) => s.explanation.outputs.find((o) => o.output === out);
  const steps = r.steps.filter((s) => attr(s));
  // The bound's formula depends on the direction: m + τ·s when maximizing.
  const formula = steps.length && steps[0].explanation.formula;
  if (formula) $('paths-cb-label').title = `contribution to the confidence bound the optimizer ranks by: ${formula}`;
  const colors = [C.blue, C.orange, C.green, C.red, C.purple, C.sky, C.grey, C.black];
  setNote('paths-note', steps.length === 0 ? (r.note || 'no model-chosen proposals yet') :
    `${r.explained} of ${r.proposals} model-chosen proposals (${r.method}${r.samples ? `, K = ${r.samples}` : ''}, τ = ${r.tau}); ` +
    `contribution (φ) of each parameter to ${PATHS_OUTPUT[out]}${out === 'cb' && formula ? ` (${formula})` : ''}, study units${r.truncated ? `; ${r.note}` : ''}`);
  chart('paths-chart').setOption({
    aria: { enabled: true }, animation: false,
    tooltip: { trigger: 'axis', valueFormatter: fmt }, legend: { data: r.params, top: 0, type: 'scroll' },
    grid: { left: 70, right: 20, top: 30, bottom: 45 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 28, minInterval: 1, scale: true },
    yAxis: { type: 'value', name: `φ: ${{ mean: 'predicted value', se: 'uncertainty', cb: 'confidence bound' }[out]} (study units)`, nameLocation: 'middle', nameGap: 50 },
    dataZoom: steps.length > 60 ? [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 2 }] : [],
    series: r.params.map((p, j) => ({
      name: p, type: 'line', showSymbol: steps.length <= 60, color: colors[j % colors.length],
      data: steps.map((s) => [s.trial, attr(s).phi[j]]),
    })),
  }, true);
  $('paths-data').innerHTML = `<caption class="sr-only">φ of ${esc(out)} per proposal</caption><thead><tr><th scope="col">trial</th><th scope="col">acquisition</th><th scope="col">payout</th>` +
    r.params.map((p) => `<th scope="col">${esc(p)}</th>`).join('') + '</tr></thead><tbody>' +
    steps.map((s) => { const a = attr(s); return `<tr data-trial="${s.trial}"><th scope="row">${s.trial}</th><td>${esc(s.acquisition || '')}</td><td data-v="payout">${a.payout}</td>` +
      a.phi.map((v, j) => `<td data-v="phi" data-param="${esc(r.params[j])}">${v}</td>`).join('') + '</tr>'; }).join('') + '</tbody>';
}
$('paths-go').addEventListener('click', loadPaths);
for (const el of document.querySelectorAll('input[name="paths-output"]')) el.addEventListener('change', drawPaths);

// ---------------------------------------------------------------- a-BOBAX

const BOBAX = /a-bobax: mean PD band half-width ([-+0-9.eE]+|NaN|[+-]?Inf) \(tolerance ([-+0-9.eE]+)\)(?:, phase (\S+))?/;

function renderBobax(all) {
  const pts = [];
  let tol = null, phase = '';
  for (const t of all) {
    let note = '';
    if (t.meta && typeof t.meta === 'object') note = t.meta.note || '';
    const m = BOBAX.exec(note);
    if (!m) continue;
    const w = Number(m[1]);
    if (!Number.isFinite(w)) continue;
    pts.push([t.number, w]);
    tol = Number(m[2]);
    phase = m[3] || '';
  }
  window.xbo.bobax = { points: pts.length, tolerance: tol };
  if (!pts.length) {
    $('bobax-panel').hidden = true;
    return;
  }
  $('bobax-panel').hidden = false;
  const last = pts[pts.length - 1][1];
  setNote('bobax-note', `current half-width ${fmt(last)} vs tolerance ${fmt(tol)} (${last <= tol ? 'reached' : 'not reached'}); phase ${phase}`);
  chart('bobax-chart').setOption({
    aria: { enabled: true }, animation: false, tooltip: { trigger: 'axis' },
    grid: { left: 70, right: 100, top: 20, bottom: 45 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26 },
    yAxis: { type: 'value', name: 'mean PD band half-width (study units)', nameLocation: 'middle', nameGap: 50, min: 0 },
    series: [{ name: 'half-width', type: 'line', data: pts, color: C.blue, markLine: { symbol: 'none', data: [{ yAxis: tol, name: 'tolerance' }], label: { formatter: 'tolerance {c}' }, lineStyle: { color: C.red } } }],
  }, true);
}


// ------------------------------------------------------------ freshness

// The panels whose explanations carry a freshness line, how to recompute
// each, and whether it may recompute by itself.
const FRESH_PANELS = {
  pdp: { refresh: () => refreshPDP(), auto: true, button: 'Recompute' },
  importance: { refresh: () => refreshImportance(), auto: true, button: 'Recompute' },
  proposal: { refresh: () => refreshShapley(), auto: false, button: 'Explain' },
  paths: { refresh: () => loadPaths(), auto: false, button: 'Load desirability paths' },
};

function surrogateText(s) {
  if (!s) return '';
  const model = s.kind === 'forest' ? `forest of ${s.trees} trees` : `GP (${s.kernel})`;
  if (!s.approximate) return `${model} on ${s.conditioned_on} trials`;
  return `${model}, approximate: mean on ${s.conditioned_on}, uncertainty on ${s.variance_conditioned_on || s.conditioned_on} of ${s.trials} trials`;
}

// explainGET fetches an explanation for a panel, shows the engine's progress
// while it computes and records what the answer describes.
async function explainGET(panel, path) {
  const study = state.study.name;
  const started = performance.now();
  const token = {};
  state.computing[panel] = token;
  const note = `${panel}-note`;
  const base = $(note).textContent;
  const watch = setInterval(async () => {
    try {
      const st = await api('/api/explain/status');
      if (state.computing[panel] !== token) return;
      const mine = (st.computing || []).filter((c) => c.study === study);
      if (!mine.length) return;
      const c = mine[0];
      setNote(note, `${base} ${c.waiting ? 'waiting for a free slot' : c.step}${c.total > 1 ? ` (${c.done}/${c.total})` : ''}, ${c.seconds.toFixed(1)} s`);
    } catch (e) { /* progress is best effort */ }
  }, STATUS_POLL_MS);
  try {
    const r = await api(studyURL(path));
    state.explained[panel] = { trials: r.trials, fingerprint: r.fingerprint, version: state.version, ms: performance.now() - started, at: Date.now(), about: r };
    return r;
  } finally {
    clearInterval(watch);
    if (state.computing[panel] === token) delete state.computing[panel];
    renderFreshness(panel);
  }
}

// renderFreshness writes the panel's freshness line: the trials and study
// version the explanation describes, its surrogate, the sampling bias, and
// whether newer trials make it stale.
function renderFreshness(panel) {
  const el = $(`${panel}-fresh`);
  if (!el) return;
  const e = state.explained[panel];
  if (!e) {
    el.textContent = '';
    el.dataset.stale = 'false';
    el.classList.remove('stale');
    return;
  }
  const a = e.about;
  const now = countUsable();
  const stale = now > e.trials;
  const bias = a.sampling_bias;
  const parts = [`describes ${e.trials} usable trials (study version ${e.version})`];
  if (a.surrogate) parts.push(surrogateText(a.surrogate));
  if (bias) parts.push(`sampling bias: ${bias.level}`);
  let text = parts.join(' · ');
  if (stale) {
    const auto = FRESH_PANELS[panel].auto && e.ms <= EXPLAIN_AUTO_MS;
    text = `Stale (${now - e.trials} newer trial${now - e.trials === 1 ? '' : 's'}; ${auto ? 'recomputing shortly' : `press ${FRESH_PANELS[panel].button}`}): ` + text;
  }
  el.textContent = text;
  el.dataset.stale = String(stale);
  el.classList.toggle('stale', stale);
  const warn = $(`${panel}-warning`);
  if (warn) warn.textContent = bias && bias.warning ? bias.warning : '';
}

// autoRecompute refreshes stale panels that are cheap to recompute, at most
// once per EXPLAIN_AUTO_EVERY_MS each.
function autoRecompute() {
  const now = countUsable();
  for (const [panel, p] of Object.entries(FRESH_PANELS)) {
    const e = state.explained[panel];
    if (!p.auto || !e || state.computing[panel] || now <= e.trials) continue;
    if (e.ms > EXPLAIN_AUTO_MS || Date.now() - e.at < EXPLAIN_AUTO_EVERY_MS) continue;
    p.refresh();
  }
}

// ---------------------------------------------------------------- start

window.addEventListener('hashchange', () => route().catch((e) => status(e.message)));
(async () => {
  try {
    await loadStudies();
    await route();
  } catch (e) {
    status(`error: ${e.message}`);
  }
  setInterval(() => loadStudies().catch(() => {}), 10000);
})();
