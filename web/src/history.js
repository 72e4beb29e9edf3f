// The History view: when and where trials ran (a timeline per worker), how
// the values are distributed (their empirical distribution function), and
// how trials progressed (every trial's intermediate values, pruned trials
// marked).
import {
  $, C, EDGE_AXIS, bestFeasible, chart, chartIf, onChart, durationMs, esc, fmt, fmtDuration, fmtInstant, multiObjective, objectiveIndex, objectiveLabel,
  minimize, objectiveValues, objectives, openTrial, setNote, sortedTrials, state, stateColour, timeMs, usable, usableAll,
} from './core.js';
import { clipText, isClipped, scaleControls, valueScale } from './scale.js';

const EDF_POINTS = 2000; // points drawn of the distribution function
const CURVE_POINTS = 20000; // intermediate values drawn, the latest trials first
const NO_WORKER = '(no worker)';

// States in legend order: the known ones first, then any other, by name.
function stateOrder(states) {
  const order = ['complete', 'pruned', 'failed', 'running', 'expired', 'pending'];
  return [...states].sort((a, b) => {
    const i = order.indexOf(a), j = order.indexOf(b);
    return (i < 0 ? order.length : i) - (j < 0 ? order.length : j) || a.localeCompare(b);
  });
}

// ---------------------------------------------------------------- timeline

// A trial's bar runs from its hand-out (its creation when it was recorded
// without one) to its result; a running trial's bar ends now, an expired
// one's at its deadline. Pending trials have not started and have no bar.
function span(t, now) {
  const start = timeMs(t.started_at) ?? (t.finished_at ? timeMs(t.created_at) : null);
  if (start === null) return null;
  let end = timeMs(t.finished_at);
  if (end === null) end = t.state === 'running' ? now : timeMs(t.deadline);
  return end === null ? null : [start, Math.max(start, end)];
}

// The bars are thick line segments, drawn in one path per state (a lines
// series in large mode): at 10,000 trials one graphic element per bar
// takes half a second to draw. The pointer finds its bar itself.
let bars = []; // per worker row: [start, end, number, state, duration], by start
let rows = [];

export function renderTimeline(all) {
  const now = Date.now();
  rows = [...new Set(all.map((t) => t.worker || NO_WORKER))].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const rowOf = new Map(rows.map((w, i) => [w, i]));
  const byState = new Map();
  let unstarted = 0, lo = Infinity, hi = -Infinity;
  for (const t of all) {
    const s = span(t, now);
    if (!s) { unstarted++; continue; }
    if (!byState.has(t.state)) byState.set(t.state, []);
    byState.get(t.state).push([s[0], s[1], rowOf.get(t.worker || NO_WORKER), t.number, durationMs(t) ?? s[1] - s[0]]);
    lo = Math.min(lo, s[0]);
    hi = Math.max(hi, s[1]);
  }
  const states = stateOrder(byState.keys());
  // A bar is at least 1/1500 of the whole time span long, so that a trial
  // of a few milliseconds in a day-long study is still seen.
  const minSpan = Number.isFinite(lo) ? Math.max(1, (hi - lo) / 1500) : 1;
  bars = rows.map(() => []);
  const series = states.map((s) => {
    const data = byState.get(s).map((b) => {
      bars[b[2]].push([b[0], b[1], b[3], s, b[4]]);
      return { coords: [[b[0], b[2]], [Math.max(b[1], b[0] + minSpan), b[2]]], trial: b[3] };
    });
    return { name: s, type: 'lines', coordinateSystem: 'cartesian2d', data, color: stateColour(s), large: true, largeThreshold: 500, silent: true, lineStyle: { cap: 'butt', opacity: 1 } };
  });
  for (const r of bars) r.sort((a, b) => a[0] - b[0]);
  const count = bars.reduce((a, r) => a + r.length, 0);
  window.xbo.timeline = { workers: rows, bars: count, minSpan, byState: Object.fromEntries(byState) };
  setNote('timeline-note', `${count} trials on ${rows.length} worker${rows.length === 1 ? '' : 's'}, bars from hand-out to result coloured by state` +
    (unstarted ? `; ${unstarted} not started (no bar)` : '') + '; point at a bar for its trial, click to open it; scroll or drag the slider to zoom');
  // The chart grows with the workers, up to 60 rows at 18 px.
  const el = $('timeline-chart');
  const height = 110 + 18 * Math.min(60, Math.max(8, rows.length));
  if (el.style.height !== `${height}px`) el.style.height = `${height}px`;
  const c = chart('timeline-chart');
  if (c.getHeight() !== el.clientHeight && el.clientHeight > 0) c.resize();
  const barPx = Math.max(1, Math.min(20, 0.6 * (height - 110) / Math.max(1, rows.length)));
  for (const s of series) s.lineStyle.width = barPx;
  c.setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: states.map((s) => ({ name: s, icon: 'rect' })), top: 0 },
    grid: { left: 110, right: 20, top: 30, bottom: 70 },
    // The extent is set: a lines series does not widen the axes.
    xAxis: { type: 'time', name: 'time (UTC)', nameLocation: 'middle', nameGap: 30, min: Number.isFinite(lo) ? lo - minSpan : undefined, max: Number.isFinite(hi) ? hi + 2 * minSpan : undefined,
      splitNumber: Math.max(2, Math.floor(el.clientWidth / 160)), axisLabel: { hideOverlap: true } },
    yAxis: { type: 'category', data: rows, name: 'worker', axisLabel: { width: 90, overflow: 'truncate' } },
    dataZoom: [{ type: 'inside', filterMode: 'none' }, { type: 'slider', height: 14, bottom: 4, filterMode: 'none', showDataShadow: false }],
    series,
  }, true);
  $('timeline-data').innerHTML = '<caption class="sr-only">Trials per worker and state</caption><thead><tr><th scope="col">worker</th>' +
    states.map((s) => `<th scope="col">${esc(s)}</th>`).join('') + '</tr></thead><tbody>' +
    rows.map((w, i) => `<tr data-worker="${esc(w)}"><th scope="row">${esc(w)}</th>` +
      states.map((s) => `<td data-state="${esc(s)}">${bars[i].filter((b) => b[3] === s).length}</td>`).join('') + '</tr>').join('') + '</tbody>';
}

// barAt is the bar under a point of the chart (within 3 pixels), or null.
function barAt(c, x, y) {
  if (!c.containPixel('grid', [x, y])) return null;
  const [t, r] = c.convertFromPixel('grid', [x, y]);
  const row = bars[Math.round(r)];
  if (!row) return null;
  const tol = Math.abs(c.convertFromPixel('grid', [x + 3, y])[0] - t);
  let found = null;
  for (const b of row) {
    if (b[0] - tol > t) break;
    if (t <= Math.max(b[1], b[0]) + tol) found = b; // the latest started wins
  }
  return found;
}
// The bar under the pointer is described in a tip of our own: ECharts'
// tooltip needs a graphic element per bar.
function showTip(b, x, y) {
  const tip = $('timeline-tip');
  if (!b) { tip.hidden = true; return; }
  tip.innerHTML = `trial ${b[2]} (${esc(b[3])}) on ${esc(rows[bars.findIndex((r) => r.includes(b))])}<br>${fmtInstant(b[0])} → ${fmtInstant(b[1])} (${fmtDuration(b[4])})`;
  tip.hidden = false;
  const box = $('timeline-chart');
  tip.style.left = `${Math.min(x + 14, box.clientWidth - tip.offsetWidth - 4)}px`;
  tip.style.top = `${y + 14}px`;
}
onChart('timeline-chart', (c) => {
  const zr = c.getZr();
  zr.on('mousemove', (e) => {
    const b = barAt(c, e.offsetX, e.offsetY);
    zr.setCursorStyle(b ? 'pointer' : 'default');
    showTip(b, e.offsetX, e.offsetY);
  });
  zr.on('globalout', () => showTip(null));
  zr.on('click', (e) => { const b = barAt(c, e.offsetX, e.offsetY); if (b) openTrial(b[2]); });
});

// --------------------------------------------------------------------- EDF

// With several objectives the selector picks the objective whose values
// are drawn (each in its own units).
export function renderEDF(all) {
  const multi = multiObjective();
  const k = objectiveIndex('edf');
  const vals = (multi ? all.filter(usableAll).map((t) => objectiveValues(t)[k]) : all.filter(usable).map((t) => t.value)).sort((a, b) => a - b);
  const n = vals.length;
  // Above EDF_POINTS values, evenly spaced order statistics (the first and
  // the last included) keep the curve's shape.
  const idx = n <= EDF_POINTS ? vals.map((_, i) => i) : Array.from({ length: EDF_POINTS }, (_, k) => Math.round(k * (n - 1) / (EDF_POINTS - 1)));
  const data = idx.map((i) => [vals[i], (i + 1) / n]);
  const median = n ? (n % 2 ? vals[(n - 1) / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2) : null;
  // One diverged trial must not squash the others, as on the trace: log
  // scale and clipping of the worse side (scale.js). The curve keeps every
  // value (its fractions stay true); the axis ends at the fence, and the
  // values beyond it are triangles at the edge, at their fractions.
  const worseHigh = objectives()[k].direction !== 'maximize';
  const sc = valueScale(vals, { worseHigh, ...scaleControls('edf', vals) });
  const edge = data.filter((d) => isClipped(sc, d[0], worseHigh)).map((d) => ({ value: [worseHigh ? sc.max : sc.min, d[1]], real: d[0] }));
  window.xbo.edf = { n, drawn: data.length, median, clipped: sc.clipped, axis: sc.type };
  const best = multi ? bestFeasible(all, k) : state.best;
  const bestText = multi ? `best feasible ${objectives()[k].name} ${fmt(best ? objectiveValues(best)[k] : null)}` : `best ${fmt(best ? best.value : null)}`;
  setNote('edf-note', n ? `${n} complete trials; median ${fmt(median)}, ${bestText}; the curve gives the fraction of trials with a value at most x` +
    (n > EDF_POINTS ? ` (drawn through ${data.length} order statistics)` : '') + clipText(sc, worseHigh, 'value', `${worseHigh ? '▶ at the right' : '◀ at the left'} edge`) : 'no complete trials yet');
  chart('edf-chart').setOption({
    aria: { enabled: true }, animation: false,
    tooltip: { trigger: 'axis', valueFormatter: fmt, formatter: edfTip },
    grid: { left: 70, right: 20, top: 20, bottom: 50 },
    xAxis: {
      type: sc.type, name: objectiveLabel(k) + (sc.type === 'log' ? ' (log scale)' : ''), nameLocation: 'middle', nameGap: 30, min: sc.min, max: sc.max, logBase: 10,
      axisLabel: { formatter: fmt, showMinLabel: false, showMaxLabel: false }, ...EDGE_AXIS,
    },
    yAxis: { type: 'value', name: 'fraction of trials ≤ x', nameLocation: 'middle', nameGap: 45, min: 0, max: 1, ...EDGE_AXIS },
    series: [{
      name: 'EDF', type: 'line', step: 'end', showSymbol: false, color: C.blue, data, lineStyle: { width: 2 },
      markLine: median === null ? undefined : { symbol: 'none', silent: true, lineStyle: { color: C.grey, type: 'dashed' }, label: { formatter: 'median' }, data: [{ xAxis: median }] },
    }, ...(edge.length ? [{ name: CLIPPED, type: 'scatter', data: edge, symbol: 'triangle', symbolRotate: worseHigh ? -90 : 90, symbolSize: 9, color: C.red, z: 6 }] : [])],
  }, true);
}

// edfTip names a clipped value by its own number, not the axis's edge.
function edfTip(ps) {
  return ps.map((p) => (p.seriesName === CLIPPED ? `${fmt(p.data.real)} (beyond the axis): fraction ${fmt(p.value[1])}` : `${fmt(p.value[0])}: fraction ${fmt(p.value[1])}`)).join('<br>');
}
for (const id of ['edf-log', 'edf-clip']) $(id).addEventListener('change', () => renderEDF(sortedTrials()));

// ------------------------------------------------------- intermediate values

// A cross, the mark of where a pruned trial was stopped.
const CROSS = 'path://M2,0 L5,3 L8,0 L10,2 L7,5 L10,8 L8,10 L5,7 L2,10 L0,8 L3,5 L0,2 Z';

export function renderCurves(all) {
  const withValues = all.filter((t) => Array.isArray(t.intermediate) && t.intermediate.length);
  // The latest trials first, until CURVE_POINTS values.
  const kept = [];
  let points = 0;
  for (let i = withValues.length - 1; i >= 0 && points < CURVE_POINTS; i--) {
    kept.push(withValues[i]);
    points += withValues[i].intermediate.length;
  }
  kept.reverse();
  // One line series per state; curves are separated by a gap.
  const byState = new Map();
  const stops = [];
  for (const t of kept) {
    const iv = t.intermediate.slice().sort((a, b) => a.step - b.step);
    if (!byState.has(t.state)) byState.set(t.state, { data: [], trials: 0 });
    const g = byState.get(t.state);
    if (g.data.length) g.data.push('-');
    for (const p of iv) g.data.push([p.step, p.value, t.number]);
    g.trials++;
    if (t.state === 'pruned') stops.push([iv[iv.length - 1].step, iv[iv.length - 1].value, t.number]);
  }
  const states = stateOrder(byState.keys());
  const few = points <= 2000;
  // One diverged trial must not squash the others: log scale and clipping
  // (scale.js), in the study's direction.
  const worseHigh = minimize();
  const values = [];
  for (const g of byState.values()) for (const d of g.data) if (d !== '-') values.push(d[1]);
  const sc = valueScale(values, { worseHigh, ...scaleControls('curves', values) });
  const edge = [];
  for (const g of byState.values()) for (const d of g.data) if (d !== '-' && isClipped(sc, d[1], worseHigh)) edge.push({ value: [d[0], worseHigh ? sc.max : sc.min, d[2]], real: d[1] });
  window.xbo.curves = { trials: kept.length, of: withValues.length, points, byState: Object.fromEntries(states.map((s) => [s, byState.get(s).trials])), stops: stops.length, clipped: edge.length, axis: sc.type };
  setNote('curves-note', withValues.length === 0 ? 'no trial has reported intermediate values (POST …/trials/{t}/report)' :
    `${kept.length}${kept.length < withValues.length ? ` of ${withValues.length} (the latest)` : ''} trials with intermediate values, ${points} values; ` +
    states.map((s) => `${byState.get(s).trials} ${s}`).join(', ') + (stops.length ? '; × marks where a pruned trial was stopped' : '') + clipText(sc, worseHigh, 'value') + (few ? '; click a point for its trial' : ''));
  const series = states.map((s) => ({
    name: s, type: 'line', data: byState.get(s).data, color: stateColour(s), showSymbol: few, symbolSize: 4, connectNulls: false,
    lineStyle: { width: s === 'pruned' ? 1.5 : 1, type: s === 'pruned' ? 'dashed' : 'solid', opacity: Math.max(0.25, Math.min(0.9, 40 / Math.max(1, byState.get(s).trials))) },
  }));
  if (edge.length) series.push({ name: CLIPPED, type: 'scatter', data: edge, symbol: 'triangle', symbolRotate: worseHigh ? 0 : 180, symbolSize: 8, color: C.red, z: 6 });
  if (stops.length) series.push({ name: 'pruned here', type: 'scatter', data: stops, symbol: CROSS, symbolSize: 10, color: C.black, z: 5 });
  const c = chartIf('curves-chart', withValues.length > 0);
  if (!c) return;
  c.setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: series.map((s) => s.name), top: 0 },
    tooltip: { trigger: 'item', formatter: (p) => `trial ${p.value[2]} (${esc(p.seriesName)}): step ${p.value[0]}, value ${fmt(p.seriesName === CLIPPED ? p.data.real : p.value[1])}` },
    grid: { left: 70, right: 20, top: 30, bottom: 50 },
    xAxis: { type: 'value', name: 'step', nameLocation: 'middle', nameGap: 28, minInterval: 1, scale: true, ...EDGE_AXIS },
    yAxis: { type: sc.type, name: `intermediate value (study units${sc.type === 'log' ? ', log scale' : ''})`, nameLocation: 'middle', nameGap: 50, min: sc.min, max: sc.max, logBase: 10, axisLabel: { formatter: fmt, showMinLabel: false, showMaxLabel: false }, ...EDGE_AXIS },
    dataZoom: [{ type: 'inside' }],
    series,
  }, true);
}
const CLIPPED = 'clipped (beyond the axis)';
for (const id of ['curves-log', 'curves-clip']) $(id).addEventListener('change', () => renderCurves(sortedTrials()));

$('edf-objective').addEventListener('change', () => renderEDF(sortedTrials()));
onChart('curves-chart', (c) => c.on('click', (p) => { if (p.value && Number.isInteger(p.value[2])) openTrial(p.value[2]); }));
