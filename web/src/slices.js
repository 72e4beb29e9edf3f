// The Overview's plots of the trials themselves, no model in between:
// slice plots (the objective against each parameter, one small chart per
// parameter) and two parameters against each other, each trial a point
// coloured by its objective value or by its rank. They answer "where did
// the good trials land" before any explanation is asked for; the model's
// view of the same pair is the 2-D PDP in the Explanations view.
import { $, axisValue, chart, esc, minimize, multiObjective, objectives, onChart, openTrial, paramAxis, params, setNote, sortedTrials, usable } from './core.js';
import { num } from './format.js';
import { isClipped, valueScale } from './scale.js';

// Pale (early, or worse) to dark (late, or better): one hue, so that
// darkness alone carries the order whatever the reader's colour vision.
const PALE_TO_DARK = ['#dbe9f6', '#9ecae1', '#4292c6', '#2171b5', '#08306b'];
const SLICE_ROW = 210; // px per row of slice plots

// The objective the plots show: the study's, or the first of several.
function objectiveWord() { return multiObjective() ? `${objectives()[0].name} (the first objective)` : 'objective value'; }

// The value axis of both plots: the trace's scale with outliers on the worse
// side clipped to its edge, so that one diverged trial does not squash the rest.
function yScale(done) { return valueScale(done.map((t) => t.value), { worseHigh: minimize(), log: false, clip: true }); }

function clippedNote(s) {
  if (!s.clipped) return '';
  return `; ${s.clipped} trial${s.clipped === 1 ? '' : 's'} ${minimize() ? 'above' : 'below'} ${num(s.limit)} drawn at the ${minimize() ? 'top' : 'bottom'} edge (▲)`;
}

// Above MAX_POINTS trials a plot draws an evenly spaced MAX_POINTS of them
// and the BEST_KEPT best, as the parallel coordinates do: tens of
// thousands of points make a solid blot and cost the Overview's first
// render hundreds of milliseconds.
const MAX_POINTS = 2000;
const BEST_KEPT = 50;

// thin returns the trials drawn (in their order) and the note's words.
export function thin(done, value = (t) => t.value) {
  if (done.length <= MAX_POINTS) return { drawn: done, words: '' };
  const keep = new Set();
  const step = done.length / MAX_POINTS;
  for (let i = 0; i < MAX_POINTS; i++) keep.add(done[Math.floor(i * step)]);
  const best = done.slice().sort((a, b) => (minimize() ? value(a) - value(b) : value(b) - value(a))).slice(0, BEST_KEPT);
  for (const t of best) keep.add(t);
  const drawn = done.filter((t) => keep.has(t));
  return { drawn, words: ` (${drawn.length} of them drawn: evenly spaced in trial order, the best ${BEST_KEPT} included)` };
}

// raw is a parameter's value with every digit, for the hover text.
function raw(v) { return typeof v === 'string' ? v : JSON.stringify(v); }

// ---------------------------------------------------------------- slice plots

// The trials of each slice, by series, for clicks and the e2e test.
let sliceTrials = [];

export function renderSlices(all) {
  const all0 = all.filter(usable);
  const { drawn: done, words } = thin(all0);
  const ps = params();
  const el = $('slice-chart');
  const cols = Math.max(1, Math.min(ps.length, Math.floor((el.clientWidth || 900) / 300)));
  const rows = Math.ceil(ps.length / cols);
  el.style.height = `${rows * SLICE_ROW + 10}px`;
  const s = yScale(done);
  const worseHigh = minimize();
  const first = done.length ? done[0].number : 0, last = done.length ? done[done.length - 1].number : 1;
  const grid = [], xAxis = [], yAxis = [], series = [];
  sliceTrials = [];
  const counts = {};
  ps.forEach((p, i) => {
    const r = Math.floor(i / cols), c = i % cols;
    const left = (c / cols) * 100, width = 100 / cols;
    grid.push({ left: `${left + 5}%`, width: `${width - 8}%`, top: r * SLICE_ROW + 40, height: SLICE_ROW - 80 });
    xAxis.push({ ...paramAxis(p, { gridIndex: i, nameGap: 24 }), name: p.name + (p.log ? ' (log)' : '') });
    // The axis ends at the clip limit on the worse side, else at round values
    // (a fixed end would be labelled with its digits, 4.26, over the 4).
    yAxis.push({ gridIndex: i, type: 'value', min: !worseHigh && s.clipped ? s.min : undefined, max: worseHigh && s.clipped ? s.max : undefined, scale: true, name: c === 0 ? objectiveWord() : '', nameLocation: 'middle', nameGap: 40,
      axisLabel: { formatter: (v) => num(v) } });
    // A trial whose parameter is inactive has no place on its slice.
    const pts = done.filter((t) => axisValue(p, t.params[p.name]) !== null);
    counts[p.name] = pts.length;
    sliceTrials.push(pts.map((t) => t.number));
    series.push({
      type: 'scatter', name: p.name, xAxisIndex: i, yAxisIndex: i, symbolSize: 6,
      data: pts.map((t) => {
        const out = isClipped(s, t.value, worseHigh);
        return { value: [axisValue(p, t.params[p.name]), out ? s.limit : t.value, t.number, t.value, raw(t.params[p.name])], symbol: out ? 'triangle' : 'circle' };
      }),
    });
  });
  window.xbo.slices = { params: ps.map((p) => p.name), trials: sliceTrials, counts };
  setNote('slice-note', `${all0.length} complete trials${words}: the ${objectiveWord()} against each parameter in turn (a trial whose parameter is inactive is left out of that slice); ` +
    `colour by trial number, pale the earliest, dark the latest${clippedNote(s)}; click a point for its trial`);
  const c = chart('slice-chart');
  c.resize();
  c.setOption({
    aria: { enabled: true }, animation: false, grid, xAxis, yAxis, series,
    visualMap: { type: 'continuous', dimension: 2, min: first, max: Math.max(last, first + 1), inRange: { color: PALE_TO_DARK }, show: false },
    tooltip: { trigger: 'item', formatter: (q) => `trial ${q.value[2]}<br>${esc(q.seriesName)} = ${esc(q.value[4])}<br>${esc(objectiveWord())} = ${q.value[3]}` },
  }, true);
}

onChart('slice-chart', (c) => c.on('click', (q) => { const n = (sliceTrials[q.seriesIndex] || [])[q.dataIndex]; if (n !== undefined) openTrial(n); }));

// ---------------------------------------------------------------- two parameters

let pairTrials = [];

// fillPairSelects offers the study's parameters, keeping a choice that is
// still one of them; the second defaults to the second parameter.
function fillPairSelects() {
  const names = params().map((p) => p.name);
  for (const [id, k] of [['pair-x', 0], ['pair-y', 1]]) {
    const sel = $(id);
    const have = [...sel.options].map((o) => o.value);
    if (have.join('\n') === names.join('\n')) continue;
    const keep = names.includes(sel.value) ? sel.value : names[Math.min(k, names.length - 1)];
    sel.innerHTML = names.map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join('');
    sel.value = keep;
  }
}

export function renderPairs(all) {
  const ps = params();
  $('pair-panel').hidden = ps.length < 2;
  if (ps.length < 2) return;
  fillPairSelects();
  const px = ps.find((p) => p.name === $('pair-x').value), py = ps.find((p) => p.name === $('pair-y').value);
  const byRank = $('pair-colour').value === 'rank';
  const both = all.filter(usable).filter((t) => axisValue(px, t.params[px.name]) !== null && axisValue(py, t.params[py.name]) !== null);
  const { drawn: done, words } = thin(both);
  // goodness: 0 the worst trial, 1 the best; the best are drawn last, on top.
  const order = done.slice().sort((a, b) => (minimize() ? b.value - a.value : a.value - b.value));
  const goodness = new Map(order.map((t, i) => [t.number, order.length > 1 ? i / (order.length - 1) : 1]));
  const s = yScale(done);
  const colourOf = (t) => {
    if (byRank) return goodness.get(t.number);
    // The value, clipped as the slices' axis is; better is darker.
    const v = Math.min(s.max, Math.max(s.min, t.value));
    return minimize() ? s.max - v : v - s.min;
  };
  pairTrials = order.map((t) => t.number);
  const data = order.map((t) => [axisValue(px, t.params[px.name]), axisValue(py, t.params[py.name]), colourOf(t), t.number, t.value, raw(t.params[px.name]), raw(t.params[py.name])]);
  window.xbo.pairs = { x: px.name, y: py.name, colour: byRank ? 'rank' : 'value', trials: pairTrials, colours: data.map((d) => d[2]) };
  // Without trials (an empty study) the extent is not a number: a span of 1
  // keeps the colour scale drawable.
  const span = byRank || !(s.max > s.min) ? 1 : s.max - s.min;
  const what = byRank ? 'rank (evenly from pale, the worst, to dark, the best)' : `${objectiveWord()} (pale the worst, dark the best${s.clipped ? '; clipped outliers at the palest' : ''})`;
  setNote('pair-note', `${both.length} complete trials with both parameters active${words}, each a point coloured by its ${what}; the best drawn last. ` +
    'This is the trials, not a model: the surrogate\'s contour of the pair is the 2-D PDP in Explanations (Partial dependence, second parameter).');
  chart('pair-chart').setOption({
    aria: { enabled: true }, animation: false,
    grid: { left: 70, right: 110, top: 30, bottom: 60 },
    xAxis: { ...paramAxis(px), name: px.name + (px.log ? ' (log)' : '') },
    yAxis: { ...paramAxis(py, { nameGap: 50 }), name: py.name + (py.log ? ' (log)' : '') },
    visualMap: {
      type: 'continuous', dimension: 2, min: 0, max: span, inRange: { color: PALE_TO_DARK },
      right: 10, top: 'middle', text: ['best', 'worst'], calculable: false, itemHeight: 160, formatter: () => '',
    },
    tooltip: { trigger: 'item', formatter: (q) => `trial ${q.value[3]}<br>${esc(px.name)} = ${esc(q.value[5])}, ${esc(py.name)} = ${esc(q.value[6])}<br>${esc(objectiveWord())} = ${q.value[4]}` },
    series: [{ type: 'scatter', symbolSize: 8, data }],
  }, true);
}

onChart('pair-chart', (c) => c.on('click', (q) => { const n = pairTrials[q.dataIndex]; if (n !== undefined) openTrial(n); }));

for (const id of ['pair-x', 'pair-y', 'pair-colour']) $(id).addEventListener('change', () => renderPairs(sortedTrials()));
