// The Trade-offs panel of a study with several objectives (GET
// explain/tradeoff; the quantities are defined in docs/explanations.md,
// "Trade-offs between objectives"): per parameter, its importance for each
// objective side by side, its conflict for each pair of objectives and the
// engine's verdict; and the Shapley values of one Pareto-optimal trial for
// every objective side by side (trial=N). The page draws the engine's
// answer as it is; it only orders the rows.
import { $, C, SERIES_COLOURS, chart, esc, fmt, fmtValue, multiObjective, objectiveValues, setNote, state } from './core.js';
import { interval, plus } from './format.js';
import { explainGET, freshPanel } from './freshness.js';
import { classify } from './pareto.js';

freshPanel('tradeoff', () => refreshTradeoff(), true, 'Recompute');

// The verdicts (explain.AlongFront …) in the order the rows are listed:
// the parameters that move a configuration along the front come first,
// because choosing a point on the front is choosing their values.
const VERDICTS = ['moves along the front', 'improves objectives together', 'affects objectives in no consistent direction', 'established on one objective only', 'no effect established'];
const VERDICT_CLASS = ['along', 'together', 'mixed', 'one', 'none'];

// tradeoffOrder sorts the answer's parameters: by verdict, then (along the
// front) by the largest conflict, then by the largest importance on any
// objective, then by name, so that equal answers always give one order.
export function tradeoffOrder(params) {
  const rank = (p) => { const i = VERDICTS.indexOf(p.verdict); return i < 0 ? VERDICTS.length : i; };
  const conflict = (p) => Math.max(0, ...p.pairs.map((q) => q.conflict));
  const importance = (p) => Math.max(0, ...p.importance.map((e) => e.fraction));
  return params.slice().sort((a, b) => rank(a) - rank(b)
    || (rank(a) === 0 ? conflict(b) - conflict(a) : 0)
    || importance(b) - importance(a)
    || (a.param < b.param ? -1 : a.param > b.param ? 1 : 0));
}

// The trial whose Shapley values the panel shows: the best feasible trial
// on the first objective (which is on the front) until another is chosen.
let chosen = null;

// resetTradeoff shows the panel for a study with several objectives only
// and clears what another study left in it.
export function resetTradeoff() {
  chosen = null;
  window.xbo.tradeoff = null;
  const multi = multiObjective();
  $('tradeoff-panel').hidden = !multi;
  $('tradeoff-trial').innerHTML = '';
  $('tradeoff-data').innerHTML = '';
  $('tradeoff-shapley-data').innerHTML = '';
  $('tradeoff-reading').textContent = '';
  setNote('tradeoff-note', '');
  setNote('tradeoff-shapley-note', '');
  for (const id of ['tradeoff-chart', 'tradeoff-shapley-chart']) if (window.xbo.charts[id]) window.xbo.charts[id].clear();
}

// tradeoffTrial explains trial n when it is on the page's Pareto front
// (a click on a Pareto-optimal trial anywhere opens it); other trials
// leave the panel as it is.
export function tradeoffTrial(n) {
  if (!multiObjective() || n === chosen) return;
  if (!classify([...state.trials.values()]).front.some((t) => t.number === n)) return;
  chosen = n;
  refreshTradeoff();
}

export async function refreshTradeoff() {
  if (!state.study || !multiObjective()) return;
  if (chosen === null && state.best) chosen = state.best.number;
  const n = chosen;
  const gen = state.gen;
  setNote('tradeoff-note', n === null ? 'computing…' : `computing (with the Shapley values of trial ${n})…`);
  try {
    const r = await explainGET('tradeoff', 'explain/tradeoff' + (n === null ? '' : `?trial=${n}`));
    if (!r || gen !== state.gen) return;
    window.xbo.tradeoff = r;
    drawTradeoff(r);
  } catch (e) {
    if (gen === state.gen) setNote('tradeoff-note', `trade-offs: ${e.message}`, true);
  }
}

function pairName(os, q) { return `${os[q.a].name} × ${os[q.b].name}`; }
function dirShort(o) { return o.direction === 'maximize' ? 'max' : 'min'; }
// spread writes an importance's uncertainty: the 95% interval of the GP's
// Sobol index, or the spread across a forest's trees.
function spread(e) {
  if (Array.isArray(e.ci95)) return interval(e.ci95[0], e.ci95[1]);
  return e.std ? `± ${fmt(e.std)}` : '';
}
// relation says what the engine established about a pair: the parameter
// trades the two objectives (opposed) or improves both (joint), and
// whether the PD bands alone show it.
function relation(q) {
  const r = q.opposed ? 'trades' : q.joint ? 'improves both' : '';
  return r && q.band_backed ? `${r} (bands)` : r;
}
// sub writes a second line under a cell's number (nothing when empty).
function sub(text) { return text ? `<span class="sub">${esc(text)}</span>` : ''; }
function span(e) { return Array.isArray(e.ci95) ? e.ci95 : [Math.max(0, e.fraction - e.std), e.fraction + e.std]; }

function drawTradeoff(r) {
  const os = r.objectives;
  const rows = tradeoffOrder(r.params);
  const pairs = rows.length ? rows[0].pairs : [];
  const ci = rows.some((p) => p.importance.some((e) => Array.isArray(e.ci95)));
  setNote('tradeoff-note', `${os.length} objectives (${os.map((o) => `${o.direction} ${o.name}`).join(', ')}); ${r.front.length} Pareto-optimal trials; ` +
    `${rows.length} parameters, those moving a configuration along the front first.`);
  $('tradeoff-reading').textContent = r.reading;
  // The table: importance per objective, conflict per pair, the verdict.
  $('tradeoff-data').innerHTML = '<caption class="sr-only">Trade-offs per parameter: importance for each objective, conflict for each pair of objectives, verdict</caption>' +
    '<thead><tr><th scope="col" rowspan="2" class="text">parameter</th>' +
    `<th scope="colgroup" colspan="${os.length}">importance: fraction of each objective's variance${ci ? ' [95% interval]' : ' (± sd across trees)'}</th>` +
    (pairs.length ? `<th scope="colgroup" colspan="${pairs.length}" title="−ρ·√(F_A·F_B): above 0 changing the parameter trades the two objectives, below 0 it improves both">conflict: above 0 trades the pair, below 0 improves both</th>` : '') +
    '<th scope="col" rowspan="2" class="text">verdict</th></tr><tr>' +
    os.map((o, k) => `<th scope="col" data-k="${k}">${esc(o.name)} (${dirShort(o)})</th>`).join('') +
    pairs.map((q, i) => `<th scope="col" data-pair="${i}">${esc(pairName(os, q))}</th>`).join('') + '</tr></thead><tbody>' +
    rows.map((p) => {
      const v = VERDICTS.indexOf(p.verdict); // a verdict this page does not know is shown unmarked
      return `<tr data-param="${esc(p.param)}"><th scope="row" class="text">${esc(p.param)}</th>` +
        p.importance.map((e, k) => `<td data-v="importance" data-k="${k}" data-x="${e.fraction}"${Array.isArray(e.ci95) ? ` data-lo="${e.ci95[0]}" data-hi="${e.ci95[1]}"` : ''}>` +
          `${fmt(e.fraction)}${sub(spread(e))}</td>`).join('') +
        p.pairs.map((q, i) => `<td data-v="conflict" data-pair="${i}" data-x="${q.conflict}" title="correlation of the two sign-aligned PD curves ρ = ${fmt(q.correlation)}">` +
          `${fmt(q.conflict)}${sub(relation(q))}</td>`).join('') +
        `<td data-v="verdict" class="text verdict ${v >= 0 ? VERDICT_CLASS[v] : ''}" title="${esc(p.reading)}">${esc(p.verdict)}</td></tr>`;
    }).join('') + '</tbody>';
  $('tradeoff-readings').innerHTML = rows.map((p) => `<li data-param="${esc(p.param)}">${esc(p.reading)}</li>`).join('');
  drawTradeoffChart(r, rows, pairs);
  fillTrials(r);
  drawTradeoffShapley(r, rows.map((p) => p.param));
}

// slotBars draws one series of horizontal bars (with whiskers from lo to
// hi) in its own slot of each category band: the bars and their whiskers
// are placed by the same arithmetic, so a whisker is always on its bar.
function slotBars({ name, color, data, slot, slots, axis, tip }) {
  return {
    name, type: 'custom', xAxisIndex: axis, yAxisIndex: axis, color, data, encode: { x: [1, 2, 3], y: 0 },
    tooltip: { formatter: (p) => tip(p.value) },
    renderItem: (_, api) => {
      const j = api.value(0), v = api.value(1), lo = api.value(2), hi = api.value(3);
      const band = api.size([0, 1])[1];
      const h = (0.8 * band) / slots;
      const y = api.coord([0, j])[1] - 0.4 * band + slot * h + h / 2;
      const x0 = api.coord([0, j])[0], x1 = api.coord([v, j])[0];
      const children = [{ type: 'rect', shape: { x: Math.min(x0, x1), y: y - 0.4 * h, width: Math.max(1, Math.abs(x1 - x0)), height: 0.8 * h }, style: { fill: color } }];
      if (Number.isFinite(lo) && Number.isFinite(hi) && lo !== hi) {
        const a = api.coord([lo, j])[0], b = api.coord([hi, j])[0], cap = Math.min(4, 0.3 * h);
        const style = { stroke: C.black, lineWidth: 1.2 };
        children.push({ type: 'line', shape: { x1: a, y1: y, x2: b, y2: y }, style },
          { type: 'line', shape: { x1: a, y1: y - cap, x2: a, y2: y + cap }, style },
          { type: 'line', shape: { x1: b, y1: y - cap, x2: b, y2: y + cap }, style });
      }
      return { type: 'group', children };
    },
  };
}

// The chart: on the left each parameter's importance for every objective
// (one colour per objective), on the right its conflict for every pair,
// the parameters in the table's order from the top.
function drawTradeoffChart(r, rows, pairs) {
  const os = r.objectives;
  const names = rows.map((p) => p.param);
  const slots = Math.max(os.length, pairs.length, 1);
  const band = Math.max(40, 14 * slots + 16);
  const el = $('tradeoff-chart');
  // A legend over each half, wrapped to as many lines as its names need
  // (about 7 px a letter and 30 px of key), and the plots below them.
  const half = 0.45 * (el.clientWidth || 800);
  const lines = (labels) => {
    let n = 1, x = 0;
    for (const l of labels) {
      const w = 30 + 7 * l.length;
      if (x > 0 && x + w > half) { n++; x = 0; }
      x += w;
    }
    return n;
  };
  const objNames = os.map((o) => o.name), pairNames = pairs.map((q) => pairName(os, q));
  const top = 14 + 22 * Math.max(lines(objNames), lines(pairNames));
  const height = top + 48 + names.length * band;
  if (el.style.height !== `${height}px`) el.style.height = `${height}px`;
  const c = chart('tradeoff-chart');
  if (c.getHeight() !== el.clientHeight && el.clientHeight > 0) c.resize();
  drawnWidth = el.clientWidth;
  const series = [];
  os.forEach((o, k) => series.push(slotBars({
    name: o.name, color: SERIES_COLOURS[k], slot: k, slots: os.length, axis: 0,
    data: rows.map((p, j) => [j, p.importance[k].fraction, ...span(p.importance[k])]),
    tip: (v) => `${esc(names[v[0]])}: importance for ${esc(o.name)} ${fmt(v[1])} ${interval(v[2], v[3])}`,
  })));
  // Pairs in colours after the objectives', so a pair is never mistaken for one.
  pairs.forEach((q, i) => series.push(slotBars({
    name: pairName(os, q), color: SERIES_COLOURS[(os.length + i) % SERIES_COLOURS.length], slot: i, slots: pairs.length, axis: 1,
    data: rows.map((p, j) => [j, p.pairs[i].conflict, NaN, NaN]),
    tip: (v) => `${esc(names[v[0]])}: conflict ${esc(pairName(os, q))} ${fmt(v[1])} (${v[1] > 0 ? 'trades them' : v[1] < 0 ? 'improves both' : 'none'})`,
  })));
  const cat = (i, show) => ({ gridIndex: i, type: 'category', data: names, inverse: true, axisTick: { show: false }, axisLabel: { show, interval: 0 } });
  // Conflict is bounded by the importances: a symmetric axis shows its sign.
  const reach = Math.max(0.05, ...rows.flatMap((p) => p.pairs.map((q) => Math.abs(q.conflict))));
  c.setOption({
    aria: { enabled: true }, animation: false,
    legend: [{ data: objNames, left: 8, width: '45%', top: 0 }, { data: pairNames, left: '53%', width: '45%', top: 0 }],
    tooltip: { trigger: 'item' },
    grid: [{ left: 8, right: '53%', top, bottom: 48, containLabel: true }, { left: '53%', right: 16, top, bottom: 48, containLabel: true }],
    xAxis: [
      // The whiskers decide the right end, so none is clipped.
      { gridIndex: 0, type: 'value', min: 0, max: (v) => (v.max <= 0.95 ? Math.max(0.05, 1.05 * v.max) : Math.max(1, 1.02 * v.max)), name: 'importance (fraction of variance)',
        nameLocation: 'middle', nameGap: 26, axisLabel: { formatter: fmt, showMaxLabel: false } },
      { gridIndex: 1, type: 'value', min: -1.05 * reach, max: 1.05 * reach, name: 'conflict (> 0 trades, < 0 improves both)', nameLocation: 'middle', nameGap: 26,
        axisLabel: { formatter: fmt, showMinLabel: false, showMaxLabel: false } },
    ],
    yAxis: [cat(0, true), cat(1, true)],
    series,
  }, true);
}

// fillTrials lists the Pareto-optimal trials of the answer, each with its
// objective values, and selects the one explained.
function fillTrials(r) {
  const sel = $('tradeoff-trial');
  const shown = r.shapley && r.shapley.length ? r.shapley[0].trial : null;
  const nums = r.front.slice();
  if (shown !== null && !nums.includes(shown)) nums.push(shown);
  sel.innerHTML = nums.map((n) => {
    const t = state.trials.get(n);
    const v = t && objectiveValues(t);
    const text = v ? r.objectives.map((o, k) => `${o.name} ${fmt(v[k])}`).join(', ') : '';
    return `<option value="${n}">trial ${n}${text ? ` (${esc(text)})` : ''}${r.front.includes(n) ? '' : ' — not on the front'}</option>`;
  }).join('');
  sel.disabled = nums.length === 0;
  if (shown !== null) sel.value = String(shown);
}
$('tradeoff-trial').addEventListener('change', () => {
  const n = Number($('tradeoff-trial').value);
  if (!Number.isInteger(n)) return;
  chosen = n;
  refreshTradeoff();
});
$('tradeoff-refresh').addEventListener('click', () => refreshTradeoff());

// The Shapley values of the chosen trial: one panel per objective, each in
// its own units (they cannot share an axis), the parameters in the table's
// order; the table beside has every value with its interval.
function drawTradeoffShapley(r, order) {
  const sh = r.shapley || [];
  const el = $('tradeoff-shapley-chart');
  el.hidden = sh.length === 0;
  if (!sh.length) {
    $('tradeoff-shapley-h').textContent = 'Shapley values of a Pareto-optimal trial';
    setNote('tradeoff-shapley-note', r.front.length ? 'Choose a Pareto-optimal trial above.' : 'No feasible trial yet: the front is empty.');
    $('tradeoff-shapley-data').innerHTML = '';
    return;
  }
  const os = r.objectives;
  const n = sh[0].trial;
  const t = state.trials.get(n);
  $('tradeoff-shapley-h').textContent = `Shapley values of trial ${n} for every objective`;
  const where = r.front.includes(n) ? 'Pareto-optimal' : 'not on the front';
  setNote('tradeoff-shapley-note', `Trial ${n} (${where}): each objective's surrogate mean there is its average over the space plus the sum of the parameters' ` +
    `contributions φ, in that objective's own units (${sh.map((s) => `${s.objective}: ${fmt(s.prediction)} = ${fmt(s.average)} ${plus(s.prediction - s.average)}`).join('; ')}). ` +
    'A φ that lowers a minimized objective or raises a maximized one helps it; a parameter with opposite signs across objectives is traded here.');
  const label = (p) => (t && t.params[p] !== undefined && t.params[p] !== null ? `${p} = ${fmtValue(t.params[p])}` : `${p} (off)`);
  const m = sh.length;
  const labelW = Math.min(180, 12 + 7 * Math.max(...order.map((p) => label(p).length)));
  const band = 30;
  const height = 80 + order.length * band;
  if (el.style.height !== `${height}px`) el.style.height = `${height}px`;
  const c = chart('tradeoff-shapley-chart');
  if (c.getHeight() !== el.clientHeight && el.clientHeight > 0) c.resize();
  // Panels side by side in pixels: the labels once, on the left.
  const width = Math.max(300, el.clientWidth);
  const share = (width - labelW - 16) / m;
  const grid = [], xAxis = [], yAxis = [], series = [];
  sh.forEach((s, k) => {
    const o = os[k];
    // A gap of 48 px between panels keeps one's end labels off the next one's.
    grid.push({ left: labelW + k * share + 24, width: share - 48, top: 44, bottom: 48 });
    xAxis.push({ gridIndex: k, type: 'value', name: `φ, ${o.name} (${dirShort(o)})`, nameLocation: 'middle', nameGap: 26, scale: false,
      axisLabel: { formatter: fmt, hideOverlap: true } });
    yAxis.push({ gridIndex: k, type: 'category', data: order.map(label), inverse: true, axisTick: { show: false }, axisLabel: { show: k === 0, interval: 0 } });
    series.push(slotBars({
      name: o.name, color: SERIES_COLOURS[k], slot: 0, slots: 1, axis: k,
      data: order.map((p, j) => [j, s.phi[p], s.lower[p], s.upper[p]]),
      tip: (v) => `${esc(label(order[v[0]]))}: φ for ${esc(o.name)} ${fmt(v[1])}${v[2] !== v[3] ? ` ${interval(v[2], v[3])}` : ''}`,
    }));
  });
  c.setOption({
    aria: { enabled: true }, animation: false, tooltip: { trigger: 'item' },
    legend: { data: series.map((x) => x.name), top: 0 },
    grid, xAxis, yAxis, series,
  }, true);
  $('tradeoff-shapley-data').innerHTML = `<caption class="sr-only">Shapley values of trial ${n} for every objective, with their intervals</caption>` +
    '<thead><tr><th scope="col" class="text">parameter = value</th>' + os.map((o, k) => `<th scope="col" data-k="${k}">φ, ${esc(o.name)} (${dirShort(o)})</th>`).join('') + '</tr></thead><tbody>' +
    order.map((p) => `<tr data-param="${esc(p)}"><th scope="row" class="text">${esc(label(p))}</th>` +
      sh.map((s, k) => `<td data-v="phi" data-k="${k}" data-x="${s.phi[p]}">${fmt(s.phi[p])}` +
        `${sub(interval(s.lower[p], s.upper[p]))}</td>`).join('') + '</tr>').join('') +
    '<tr data-k="prediction"><th scope="row" class="text">prediction (surrogate mean)</th>' + sh.map((s) => `<td data-x="${s.prediction}">${fmt(s.prediction)}</td>`).join('') + '</tr>' +
    '<tr data-k="average"><th scope="row" class="text">average over the space</th>' + sh.map((s) => `<td data-x="${s.average}">${fmt(s.average)}</td>`).join('') + '</tr></tbody>';
}

// The charts are laid out in pixels (legend lines, the Shapley panels):
// drawn again when their width changes (a resized window, or the view
// shown after the answer arrived while it was hidden, at zero width).
let drawnWidth = -1;
new ResizeObserver(() => {
  const el = $('tradeoff-chart');
  const r = window.xbo.tradeoff;
  if (!r || el.clientWidth === 0 || el.clientWidth === drawnWidth) return;
  const rows = tradeoffOrder(r.params);
  drawTradeoffChart(r, rows, rows.length ? rows[0].pairs : []);
  drawTradeoffShapley(r, rows.map((p) => p.param));
}).observe($('tradeoff-chart'));
