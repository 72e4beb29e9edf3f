// The Overview view: the study's summary line, the optimization trace and
// parallel coordinates (the trials table is in table.js). A point of the
// trace or a line of the parallel coordinates opens its trial.
import {
  $, C, EDGE_AXIS, VIRIDIS, axisValue, bestSoFar, better, chart, esc, fmt, minimize, onChart, openTrial, paramAxis, params,
  setNote, state, usable, valueName,
} from './core.js';

const TRACE_POINTS = 2000; // points drawn per series in the trace
const PARALLEL_LINES = 2000;

export function renderSummary(all) {
  const counts = {};
  let best = null;
  for (const t of all) {
    counts[t.state] = (counts[t.state] || 0) + 1;
    if (usable(t) && (best === null || better(t.value, best.value))) best = t;
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

export function renderTrace(all) {
  const done = all.filter(usable);
  const xs = done.map((t) => t.number), ys = done.map((t) => t.value);
  const { line, best: b } = bestSoFar(done, minimize());
  const pts = downsample(xs, ys, TRACE_POINTS);
  setNote('trace-note', (xs.length > TRACE_POINTS ? `${xs.length} complete trials, drawn as ${pts.length} points (min and max of each stretch)` : `${xs.length} complete trials`) + '; click a point for its trial');
  window.xbo.trace = { n: xs.length, best: b, drawn: pts.length };
  chart('trace-chart').setOption({
    aria: { enabled: true },
    animation: false,
    color: [C.blue, C.orange],
    tooltip: { trigger: 'item', formatter: (p) => `trial ${p.value[0]}: ${fmt(p.value[1])}` },
    legend: { data: ['value', 'best so far'], top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: 60 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26, min: 0, ...EDGE_AXIS },
    yAxis: { type: 'value', name: valueName(), nameLocation: 'middle', nameGap: 50, scale: true, axisLabel: { formatter: fmt } },
    dataZoom: [{ type: 'inside' }],
    series: [
      { name: 'value', type: 'scatter', symbolSize: 4, data: pts, large: pts.length > 1000 },
      { name: 'best so far', type: 'line', step: 'end', showSymbol: false, silent: true, data: line, lineStyle: { width: 2 } }, // clicks reach the points
    ],
  }, true);
}


// ---------------------------------------------------------------- parallel coordinates

export function renderParallel(all) {
  let done = all.filter(usable);
  const n = done.length;
  if (n > PARALLEL_LINES) { // evenly spaced subset, always with the best trial
    const step = n / PARALLEL_LINES;
    const keep = [];
    for (let i = 0; i < PARALLEL_LINES; i++) keep.push(done[Math.floor(i * step)]);
    if (state.best && !keep.includes(state.best)) keep.push(state.best);
    done = keep;
  }
  setNote('parallel-note', (n > PARALLEL_LINES ? `${done.length} of ${n} complete trials drawn (evenly spaced, best included)` : `${n} complete trials`) + '; click a line for its trial');
  const ps = params();
  // Full names, never truncated; they alternate in height so neighbours do
  // not overlap.
  const nameStyle = (i) => ({ nameTruncate: { maxWidth: 10000 }, // null would mean the space between axes
    nameTextStyle: { padding: [0, 0, i % 2 ? 14 : 0, 0] } });
  const axes = ps.map((p, i) => ({ dim: i, ...paramAxis(p), nameLocation: 'end', nameGap: 12, name: p.name + (p.log ? ' (log)' : ''), ...nameStyle(i) }));
  axes.push({ dim: ps.length, name: 'value', type: 'value', scale: true, nameLocation: 'end', nameGap: 12, ...nameStyle(ps.length) });
  const data = done.map((t) => [...ps.map((p) => axisValue(p, t.params[p.name])), t.value]);
  parallelTrials = done.map((t) => t.number);
  const vals = done.map((t) => t.value);
  chart('parallel-chart').setOption({
    aria: { enabled: true },
    animation: false,
    parallelAxis: axes,
    // The colour scale has a margin of its own, clear of the value axis;
    // the first axis's name (centred on it, about 8 px a letter) fits left.
    parallel: { left: Math.max(50, 4 * (axes[0] ? axes[0].name.length : 0)), right: 130, top: 50, bottom: 30 },
    visualMap: {
      type: 'continuous', dimension: ps.length, min: vals.length ? Math.min(...vals) : 0, max: vals.length ? Math.max(...vals) : 1,
      inRange: { color: minimize() ? VIRIDIS.slice().reverse() : VIRIDIS }, right: 10, top: 'middle', calculable: true,
      text: ['high', 'low'], itemHeight: 160, precision: 3,
    },
    // Many lines fade, so the ticks stay readable at 10,000 trials.
    series: [{ type: 'parallel', data, lineStyle: { width: 1, opacity: Math.max(0.08, Math.min(0.45, 60 / Math.max(1, done.length))) }, progressive: 500, smooth: false }],
  }, true);
}

// The trial of each line of the parallel coordinates, in drawing order.
let parallelTrials = [];
onChart('parallel-chart', (c) => c.on('click', (p) => { const n = parallelTrials[p.dataIndex]; if (n !== undefined) openTrial(n); }));
onChart('trace-chart', (c) => c.on('click', (p) => { if (p.seriesName === 'value' && p.value) openTrial(p.value[0]); }));
