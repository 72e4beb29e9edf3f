// The Overview view: the study's summary line, the optimization trace and
// parallel coordinates (the trials table is in table.js). A point of the
// trace or a line of the parallel coordinates opens its trial.
import {
  $, C, EDGE_AXIS, axisValue, bestFeasible, bestSoFar, chart, constraintNames, esc, feasible, fmt, minimize, multiObjective, objectiveValues,
  objectives, onChart, openTrial, paramAxis, params, setNote, sortedTrials, state, usable, usableAll, valueName,
} from './core.js';
import { clamp, clipText, isClipped, scaleControls, valueScale } from './scale.js';
import { exact } from './format.js';
import { classify } from './pareto.js';

const TRACE_POINTS = 2000; // points drawn per series in the trace
const PARALLEL_LINES = 2000;

// The summary line names the direction and the best value; a study with
// several objectives has no single best, so its line names the objectives
// and the size of the front instead. state.best is the best feasible trial
// on the first objective (GET …/best): the trial the explanations start from.
export function renderSummary(all) {
  const counts = {};
  for (const t of all) counts[t.state] = (counts[t.state] || 0) + 1;
  const best = bestFeasible(all);
  state.best = best;
  const parts = Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ');
  if (multiObjective()) {
    const cl = classify(all);
    const cs = constraintNames();
    $('summary').innerHTML = `<h2>${esc(state.study.name)}</h2><p>${objectives().map((o) => `${o.direction} ${esc(o.name)}`).join(', ')}` +
      (cs.length ? ` subject to ${cs.map(esc).join(', ')} ≤ 0` : '') + ` · ${all.length} trials (${esc(parts)})` +
      ` · Pareto front: <strong id="front-size">${cl.front.length}</strong> trial${cl.front.length === 1 ? '' : 's'}` +
      (cs.length ? `, ${cl.infeasible.length} infeasible` : '') + '</p>';
    return;
  }
  $('summary').innerHTML = `<h2>${esc(state.study.name)}</h2><p>${minimize() ? 'minimize' : 'maximize'} · ${all.length} trials (${esc(parts)})` +
    (best ? ` · best <strong id="best-value"${exact(best.value)}>${fmt(best.value)}</strong> at trial ${best.number}` : '') + '</p>';
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

// The trace is of one objective's best so far: a study with several
// objectives shows its front (pareto.js) instead.
export function renderTrace(all) {
  $('trace-panel').hidden = multiObjective();
  if (multiObjective()) { window.xbo.trace = null; return; }
  const done = all.filter(usable);
  const xs = done.map((t) => t.number), ys = done.map((t) => t.value);
  // An infeasible trial is never best (GET …/best): the line skips them.
  const { line, best: b } = bestSoFar(done, minimize(), (t) => feasible(t));
  const infeasible = constraintNames().length ? done.filter((t) => !feasible(t)).length : 0;
  const pts = downsample(xs, ys, TRACE_POINTS);
  // A minimized objective's outliers are high, a maximized one's low.
  const worseHigh = minimize();
  const sc = valueScale(ys, { worseHigh, ...scaleControls('trace', ys) });
  const kept = pts.filter((p) => !isClipped(sc, p[1], worseHigh));
  // A clipped point is drawn at the edge, and keeps its value for the tooltip and a click.
  const edge = pts.filter((p) => isClipped(sc, p[1], worseHigh)).map((p) => ({ value: [p[0], worseHigh ? sc.max : sc.min], trial: p[0], real: p[1] }));
  setNote('trace-note', (xs.length > TRACE_POINTS ? `${xs.length} complete trials, drawn as ${pts.length} points (min and max of each stretch)` : `${xs.length} complete trials`) +
    (constraintNames().length ? `; best so far among the feasible ones (${infeasible} infeasible)` : '') + clipText(sc, worseHigh) + '; click a point for its trial');
  window.xbo.trace = { n: xs.length, best: b, drawn: pts.length, clipped: sc.clipped, limit: sc.limit, axis: sc.type };
  chart('trace-chart').setOption({
    aria: { enabled: true },
    animation: false,
    color: [C.blue, C.orange, C.red],
    tooltip: { trigger: 'item', formatter: (p) => (p.seriesName === CLIPPED ? `trial ${p.data.trial}: ${fmt(p.data.real)} (beyond the axis)` : `trial ${p.value[0]}: ${fmt(p.value[1])}`) },
    legend: { data: ['value', 'best so far', ...(edge.length ? [CLIPPED] : [])], top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: 60 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26, min: 0, ...EDGE_AXIS },
    yAxis: { type: sc.type, name: valueName() + (sc.type === 'log' ? ', log scale' : ''), nameLocation: 'middle', nameGap: 50, min: sc.min, max: sc.max, logBase: 10, axisLabel: { formatter: fmt, showMinLabel: false, showMaxLabel: false }, ...EDGE_AXIS },
    dataZoom: [{ type: 'inside' }],
    series: [
      { name: 'value', type: 'scatter', symbolSize: 4, data: kept, large: kept.length > 1000 },
      // The line is clipped by the axis too; clicks reach the points.
      { name: 'best so far', type: 'line', step: 'end', showSymbol: false, silent: true, data: line, lineStyle: { width: 2 } },
      { name: CLIPPED, type: 'scatter', symbol: 'triangle', symbolRotate: worseHigh ? 0 : 180, symbolSize: 9, data: edge, z: 5 },
    ],
  }, true);
}
const CLIPPED = 'clipped (beyond the axis)';
for (const id of ['trace-log', 'trace-clip']) $(id).addEventListener('change', () => renderTrace(sortedTrials()));
for (const id of ['parallel-log', 'parallel-clip']) $(id).addEventListener('change', () => renderParallel(sortedTrials()));


// ---------------------------------------------------------------- parallel coordinates

export function renderParallel(all) {
  const multi = multiObjective();
  // With two objectives the panel spans the view (the front and the
  // hypervolume share the row above); with three or four the front's
  // scatter matrix spans it and this panel shares the row below.
  $('parallel-panel').classList.toggle('wide', objectives().length === 2);
  let done = all.filter(multi ? usableAll : usable);
  const n = done.length;
  if (n > PARALLEL_LINES) { // evenly spaced subset, always with the best trial
    const step = n / PARALLEL_LINES;
    const keep = [];
    for (let i = 0; i < PARALLEL_LINES; i++) keep.push(done[Math.floor(i * step)]);
    // The best trial, or with several objectives the whole front, is always drawn.
    const kept = new Set(keep);
    for (const t of multi ? classify(all).front : [state.best]) if (t && !kept.has(t)) { keep.push(t); kept.add(t); }
    done = multi ? keep.sort((a, b) => a.number - b.number) : keep;
  }
  const os = objectives();
  // One diverged trial must not squash the others: each objective's axis
  // takes the trace's log scale and clipping of the worse side (scale.js);
  // a clipped value is drawn at its axis's end.
  const objVals = os.map((_, k) => done.map((t) => (multi ? objectiveValues(t)[k] : t.value)));
  const ctl = scaleControls('parallel', objVals.flat());
  const worse = os.map((o) => o.direction !== 'maximize');
  const scales = objVals.map((vs, k) => valueScale(vs, { worseHigh: worse[k], ...ctl }));
  const clipWords = scales.map((sc, k) => clipText(sc, worse[k], multi ? `${os[k].name} value` : 'value', `drawn at the axis's ${worse[k] ? 'top' : 'bottom'} end`)).join('');
  window.xbo.parallel = { clipped: scales.map((sc) => sc.clipped), axis: scales.map((sc) => sc.type), limit: scales.map((sc) => sc.limit) };
  setNote('parallel-note', (n > PARALLEL_LINES ? `${done.length} of ${n} complete trials drawn (evenly spaced, ${multi ? 'the Pareto front' : 'best'} included)` : `${n} complete trials`) + clipWords + '; click a line for its trial');
  const valueAxis = (k, name) => ({ type: scales[k].type, min: scales[k].min, max: scales[k].max, logBase: 10, name: name + (scales[k].type === 'log' ? ' (log)' : ''),
    // The ends are labelled only where values are clipped (the limit);
    // elsewhere the axis's own round ticks say enough.
    axisLabel: { formatter: fmt, showMinLabel: scales[k].clipped > 0 && !worse[k], showMaxLabel: scales[k].clipped > 0 && worse[k] },
    nameLocation: 'end', nameGap: 12, ...nameStyle(ps.length + k) });
  const ps = params();
  // Full names, never truncated; they alternate in height so neighbours do
  // not overlap.
  const nameStyle = (i) => ({ nameTruncate: { maxWidth: 10000 }, // null would mean the space between axes
    nameTextStyle: { padding: [0, 0, i % 2 ? 14 : 0, 0] } });
  const axes = ps.map((p, i) => ({ dim: i, ...paramAxis(p), nameLocation: 'end', nameGap: 12, name: p.name + (p.log ? ' (log)' : ''), ...nameStyle(i) }));
  const row = (t) => [...ps.map((p) => axisValue(p, t.params[p.name])), ...(multi ? objectiveValues(t) : [t.value]).map((v, k) => clamp(scales[k], v, worse[k]))];
  const opacity = Math.max(0.08, Math.min(0.45, 60 / Math.max(1, done.length)));
  if (multi) {
    // An axis per objective; the lines are coloured by where the trial
    // stands (front, dominated, infeasible), not by one objective's value.
    os.forEach((o, k) => axes.push({ dim: ps.length + k, ...valueAxis(k, `${o.name} (${o.direction === 'maximize' ? 'max' : 'min'})`) }));
    const cl = classify(all);
    const kinds = new Map(done.map((t) => [t.number, null]));
    for (const kind of ['front', 'dominated', 'infeasible']) for (const t of cl[kind]) if (kinds.has(t.number)) kinds.set(t.number, kind);
    const groups = [
      { kind: 'dominated', name: 'dominated', color: C.blue, width: 1, opacity },
      { kind: 'infeasible', name: 'infeasible', color: C.red, width: 1, opacity, type: 'dashed' },
      { kind: 'front', name: 'Pareto front', color: C.orange, width: 2, opacity: 0.9 },
    ].filter((g) => g.kind !== 'infeasible' || constraintNames().length);
    parallelTrials = groups.map((g) => done.filter((t) => kinds.get(t.number) === g.kind).map((t) => t.number));
    chart('parallel-chart').setOption({
      aria: { enabled: true }, animation: false, color: groups.map((g) => g.color),
      legend: { data: groups.map((g) => g.name), top: 0 },
      parallelAxis: axes,
      parallel: { left: Math.max(50, 4 * (axes[0] ? axes[0].name.length : 0)), right: 60, top: 70, bottom: 30 },
      series: groups.map((g, i) => ({ name: g.name, type: 'parallel', data: parallelTrials[i].map((n) => row(state.trials.get(n))),
        lineStyle: { width: g.width, opacity: g.opacity, type: g.type || 'solid', color: g.color }, progressive: 500, smooth: false })),
    }, true);
    return;
  }
  axes.push({ dim: ps.length, ...valueAxis(0, 'value') });
  // The best trials are drawn last (on top), dark and opaque; the worst
  // first, pale and faint: the lines a reader looks for are the easiest to
  // see. Colour follows the rank, not the value, so that one diverged
  // trial does not make every other line equally dark.
  const min = minimize();
  const order = done.slice().sort((a, b) => (min ? b.value - a.value : a.value - b.value));
  const goodness = (i) => (order.length > 1 ? i / (order.length - 1) : 1);
  const data = order.map((t, i) => [...row(t), goodness(i)]);
  parallelTrials = [order.map((t) => t.number)];
  window.xbo.parallelTrials = parallelTrials[0];
  chart('parallel-chart').setOption({
    aria: { enabled: true },
    animation: false,
    parallelAxis: axes,
    // The colour scale has a margin of its own, clear of the value axis;
    // the first axis's name (centred on it, about 8 px a letter) fits left.
    parallel: { left: Math.max(50, 4 * (axes[0] ? axes[0].name.length : 0)), right: 110, top: 50, bottom: 30 },
    visualMap: {
      type: 'continuous', dimension: ps.length + 1, min: 0, max: 1,
      inRange: { color: BEST_LAST, opacity: [opacity, 0.95] }, right: 10, top: 'middle', calculable: false,
      text: ['best', 'worst'], itemHeight: 160, formatter: () => '',
    },
    series: [{ type: 'parallel', data, lineStyle: { width: 1.2 }, progressive: 500, smooth: false }],
  }, true);
}

// Pale to dark (worse to better) on white: one hue, so that darkness alone
// says how good a line is, whatever the reader's colour vision.
const BEST_LAST = ['#dbe9f6', '#9ecae1', '#4292c6', '#2171b5', '#08306b'];

// The trial of each line of the parallel coordinates, per series in drawing order.
let parallelTrials = [];
onChart('parallel-chart', (c) => c.on('click', (p) => { const n = (parallelTrials[p.seriesIndex] || [])[p.dataIndex]; if (n !== undefined) openTrial(n); }));
onChart('trace-chart', (c) => c.on('click', (p) => {
  if (p.seriesName === 'value' && p.value) openTrial(p.value[0]);
  if (p.seriesName === CLIPPED && p.data) openTrial(p.data.trial);
}));
