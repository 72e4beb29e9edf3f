// What every view of the dashboard shares: the page state, the API, charts,
// number and value formatting, the study's space and trial helpers.
import * as echarts from 'echarts/core';
import { LineChart, LinesChart, ScatterChart, BarChart, HeatmapChart, ParallelChart, CustomChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, ParallelComponent,
  MarkLineComponent, MarkPointComponent, DataZoomComponent, AriaComponent, TitleComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { fmtInstant, fmtValue, num as fmt } from './format.js';

echarts.use([LineChart, LinesChart, ScatterChart, BarChart, HeatmapChart, ParallelChart, CustomChart,
  GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, ParallelComponent,
  MarkLineComponent, MarkPointComponent, DataZoomComponent, AriaComponent, TitleComponent, CanvasRenderer]);

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
export const C = { blue: '#0072B2', orange: '#E69F00', green: '#009E73', red: '#D55E00', purple: '#CC79A7', sky: '#56B4E9', yellow: '#F0E442', grey: '#999999', black: '#000000' };
// Distinct colours for lines that must be told apart (one per parameter or study).
export const SERIES_COLOURS = [C.blue, C.orange, C.green, C.red, C.purple, C.sky, C.black];
// An axis drawn at the edge of the plot, not where the other axis is zero
// (which would put it inside the plot when values straddle zero).
export const EDGE_AXIS = { axisLine: { onZero: false } };
export const VIRIDIS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];

// Trial states the API names (docs/api.md), in the order the filters list
// them, each with its colour. A state this page does not know yet is still
// shown, in OTHER_STATE_COLOUR, under its own name.
export const KNOWN_STATES = ['complete', 'pruned', 'failed', 'running', 'pending', 'expired'];
const STATE_COLOURS = { complete: C.blue, pruned: C.orange, failed: C.red, running: C.green, pending: C.sky, expired: C.grey };
const OTHER_STATE_COLOUR = C.purple;
export function stateColour(s) { return STATE_COLOURS[s] || OTHER_STATE_COLOUR; }

export const $ = (id) => document.getElementById(id);
export const state = {
  studies: [], study: null, space: null, trials: new Map(), version: 0, timer: null,
  sortKey: 'number', sortDir: 1, page: 0, selected: null, view: 'overview',
  leaf: null, regional: null, gen: 0, best: null, explained: {}, computing: {},
};
window.xbo = { state, charts: {}, timings: {}, explained: state.explained };

// Charts are made when first drawn (each made chart costs a little on
// every frame); onChart registers what to attach to a chart when it is.
const onMake = {};
export function onChart(id, attach) { onMake[id] = attach; }
export function chart(id) {
  let c = window.xbo.charts[id];
  if (!c) {
    c = echarts.init($(id), null, { renderer: 'canvas' });
    window.xbo.charts[id] = c;
    if (onMake[id]) onMake[id](c);
  }
  return c;
}

// chartIf shows a chart's element when there is something to draw and
// returns its chart (laid out again if it was hidden); otherwise it hides
// the element (no empty axes) and returns null.
export function chartIf(id, show) {
  const el = $(id);
  const was = el.hidden;
  el.hidden = !show;
  if (!show) return null;
  const c = chart(id);
  if (was) c.resize();
  return c;
}

// resizeCharts lays out again the charts inside el whose size is not their
// element's (a view just shown: its charts may have been drawn while it was
// hidden, at zero size).
export function resizeCharts(el) {
  for (const [id, c] of Object.entries(window.xbo.charts)) {
    const dom = $(id);
    if (el.contains(dom) && (c.getWidth() !== dom.clientWidth || c.getHeight() !== dom.clientHeight)) c.resize();
  }
}
window.addEventListener('resize', () => Object.values(window.xbo.charts).forEach((c) => c.resize()));

export async function api(path) {
  const r = await fetch(path, { headers: { Accept: 'application/json' } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}
export function studyURL(path, study) { return `/api/studies/${encodeURIComponent(study || state.study.name)}/${path}`; }

// Numbers and values are written by format.js (three significant digits,
// the exact number on hover); fmt is its num under the name every view uses.
export { num as fmt, fmtValue, fmtDuration, fmtInstant } from './format.js';
export function jsonType(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
export function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }
export function setNote(id, text, isError) { const el = $(id); el.textContent = text || ''; el.classList.toggle('error', !!isError); }
export function status(text) { $('status').textContent = text; }

export function params() { return state.space ? state.space.params : []; }
export function param(name) { return params().find((p) => p.name === name); }
export function minimize() { return !state.space || state.space.objective !== 'maximize'; }
export function better(a, b) { return minimize() ? a < b : a > b; }
export function valueName() { return `objective value (${minimize() ? 'minimized' : 'maximized'}; study units)`; }

// Several objectives and constraints (docs/api.md): a study's space may name
// its objectives ({name, direction}, at most four) and constraints (a trial
// is feasible when every constraint value is ≤ 0). A trial's `value` is the
// first objective, `values` every objective (multi-objective studies only),
// `constraints` its constraint values. A study with one objective is
// described here as one objective called "value", so code that handles
// several objectives handles one too.
export function objectives() {
  const sp = state.space;
  if (sp && Array.isArray(sp.objectives) && sp.objectives.length) {
    return sp.objectives.map((o, k) => ({ name: o.name || `objective_${k}`, direction: o.direction === 'maximize' ? 'maximize' : 'minimize' }));
  }
  return [{ name: 'value', direction: minimize() ? 'minimize' : 'maximize' }];
}
export function multiObjective() { return objectives().length > 1; }
export function constraintNames() { return state.space && Array.isArray(state.space.constraints) ? state.space.constraints : []; }
export function constrained() { return constraintNames().length > 0; }
// objectiveValues is a trial's value of every objective (null when it has none).
export function objectiveValues(t) {
  if (Array.isArray(t.values) && t.values.length) return t.values;
  return Number.isFinite(t.value) ? [t.value] : null;
}
// usableAll: complete with a finite value of every objective (the trials a
// front and the explanations are made of; history.Trial.Usable).
export function usableAll(t) {
  if (!usable(t)) return false;
  const v = objectiveValues(t);
  return v !== null && v.length === objectives().length && v.every(Number.isFinite);
}
// feasible is history.History.Feasible: every constraint value ≤ 0; in a
// constrained study a trial that reported no constraint values is
// infeasible (nothing shows it keeps the limits).
export function feasible(t, n = constraintNames().length) {
  if (n === 0) return true;
  const c = t.constraints;
  return Array.isArray(c) && c.length === n && c.every((x) => x <= 0);
}
// violated names the constraints a trial breaks (all of them when it reported none).
export function violated(t) {
  const names = constraintNames();
  const c = t.constraints;
  if (!Array.isArray(c) || c.length !== names.length) return names.slice();
  return names.filter((_, j) => !(c[j] <= 0));
}
// directionWord is how an axis or a column says which way is better.
export function directionWord(o) { return o.direction === 'maximize' ? 'maximized: higher is better' : 'minimized: lower is better'; }
export function betterIn(o, a, b) { return o.direction === 'maximize' ? a > b : a < b; }
// objectiveName is the name of objective k for labels: the study's own
// name of it, or "objective value" for a single unnamed objective.
export function objectiveLabel(k) {
  const o = objectives()[k];
  return multiObjective() ? `${o.name} (${directionWord(o)})` : valueName();
}
// bestFeasible is the best usable feasible trial on objective k (the
// earliest among equals), null when there is none: what GET …/best gives
// for k = 0.
export function bestFeasible(all, k = 0) {
  const o = objectives()[k];
  let best = null;
  for (const t of all) {
    if (!usableAll(t) || !feasible(t)) continue;
    if (best === null || preferred(t, best, k)) best = t;
  }
  return best;
}
// preferred: a is better than b on objective k, or equal on it and better
// on the others in order (history's tie-break, which keeps the best trial
// of the first objective on the Pareto front).
function preferred(a, b, k) {
  const os = objectives(), va = objectiveValues(a), vb = objectiveValues(b);
  for (const j of [k, ...os.keys()]) {
    if (va[j] !== vb[j]) return betterIn(os[j], va[j], vb[j]);
  }
  return false;
}
export function axisName(p) {
  if (!p) return '';
  if (p.type === 'categorical') return `${p.name} (categorical)`;
  return `${p.name} (${p.type}, ${p.log ? 'log scale' : 'linear scale'}, [${fmt(p.low)}, ${fmt(p.high)}])`;
}
// A categorical parameter's choices may be strings, numbers or booleans:
// charts place a level by its index and label it by its value. A value is
// the choice it equals, or else the one it spells (a server may send a
// trial's level 64 as "64").
export function choiceIndex(p, v) {
  const i = p.choices.findIndex((c) => c === v);
  return i >= 0 ? i : p.choices.findIndex((c) => fmtValue(c) === fmtValue(v));
}
export function choiceLabels(p) { return p.choices.map(fmtValue); }
// The axis of a parameter: log axes for log parameters, categories for categoricals.
export function paramAxis(p, extra) {
  const base = { name: axisName(p), nameLocation: 'middle', nameGap: 28, ...extra };
  if (p.type === 'categorical') return { ...base, type: 'category', data: choiceLabels(p) };
  return { ...base, type: p.log ? 'log' : 'value', min: p.low, max: p.high, logBase: 10 };
}
// axisValue is where a trial's value of p goes on paramAxis(p); null when
// the parameter is inactive.
export function axisValue(p, v) {
  if (v === undefined || v === null) return null;
  if (p.type !== 'categorical') return v;
  const i = choiceIndex(p, v);
  return i < 0 ? null : i;
}

export function sortedTrials() { return [...state.trials.values()].sort((a, b) => a.number - b.number); }
export function usable(t) { return t.state === 'complete' && Number.isFinite(t.value); }
export function trialHash(n) { return `study=${encodeURIComponent(state.study.name)}&trial=${n}`; }
export function openTrial(n) { location.hash = trialHash(n); }

export function timeMs(s) { const v = s ? Date.parse(s) : NaN; return Number.isFinite(v) ? v : null; }
// durationMs is how long a trial ran: from its hand-out to its result
// (null when it was never started or has not finished).
export function durationMs(t) {
  const a = timeMs(t.started_at), b = timeMs(t.finished_at);
  return a !== null && b !== null ? b - a : null;
}
export function fmtTime(s) { const ms = timeMs(s); return ms === null ? '' : fmtInstant(ms); }
// note is what the optimizer wrote about a proposal (meta.note).
export function trialNote(t) { return t.meta && typeof t.meta === 'object' && typeof t.meta.note === 'string' ? t.meta.note : ''; }

// Error bars drawn as a custom series: a whisker from lower to upper.
export function errorBars(name, data) {
  return {
    name, type: 'custom', data, z: 10, tooltip: { show: false },
    renderItem: (_, api) => {
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

// groupedErrorBars draws whiskers over grouped bars: data [category,
// lower, upper, k, label] puts each whisker over bar k of the category's
// nBars, with the label (if any) above its top: a bar's value written
// there stays readable whatever the bar's height, 0 included.
export function groupedErrorBars(name, data, nBars) {
  return {
    name, type: 'custom', data, z: 10, tooltip: { show: false },
    renderItem: (_, api) => {
      const j = api.value(0), k = api.value(3);
      const band = api.size([1, 0])[0] * 0.8;
      const dx = -band / 2 + band * (k + 0.5) / nBars;
      const lo = api.coord([j, api.value(1)]), hi = api.coord([j, api.value(2)]);
      const style = { stroke: C.black, lineWidth: 1.2 };
      const label = api.value(4);
      return { type: 'group', children: [
        { type: 'line', shape: { x1: lo[0] + dx, y1: lo[1], x2: hi[0] + dx, y2: hi[1] }, style },
        { type: 'line', shape: { x1: lo[0] + dx - 3, y1: lo[1], x2: lo[0] + dx + 3, y2: lo[1] }, style },
        { type: 'line', shape: { x1: hi[0] + dx - 3, y1: hi[1], x2: hi[0] + dx + 3, y2: hi[1] }, style },
        ...(label ? [{ type: 'text', x: hi[0] + dx, y: hi[1] - 3, style: { text: label, fill: C.black, fontSize: 10, align: 'center', verticalAlign: 'bottom' } }] : []),
      ] };
    },
  };
}

// bestSoFar is the step line of the best value after each complete trial,
// in the direction of minimizeIt; the last point closes the line at the last trial.
// Only the trials keep(t) accepts can be best (the feasible ones of a
// constrained study); the line still runs to the last trial of done.
export function bestSoFar(done, minimizeIt, keep = () => true) {
  const out = [];
  let b = null;
  for (const t of done) {
    if (!keep(t)) continue;
    if (b === null || (minimizeIt ? t.value < b : t.value > b)) { b = t.value; out.push([t.number, b]); }
  }
  if (out.length) out.push([done[done.length - 1].number, b]);
  return { line: out, best: b };
}

// The objective selectors of the per-objective panels (explanations, EDF):
// shown only for a study with several objectives, whose explanations take
// objective=<name> (each objective is explained with its own surrogate);
// a study with one objective sends no parameter and looks as it always did.
export function fillObjectiveSelects() {
  const os = objectives();
  const multi = os.length > 1;
  const opts = os.map((o) => `<option value="${esc(o.name)}">${esc(o.name)} (${o.direction === 'maximize' ? 'maximize' : 'minimize'})</option>`).join('');
  for (const sel of document.querySelectorAll('select.objective-select')) {
    sel.innerHTML = opts;
    sel.value = os[0].name;
    sel.closest('.objective-choice').hidden = !multi;
  }
}
// objectiveIndex is the objective a panel's selector names (0 without one).
export function objectiveIndex(panel) {
  const sel = $(`${panel}-objective`);
  const k = sel ? objectives().findIndex((o) => o.name === sel.value) : -1;
  return k < 0 ? 0 : k;
}
// withObjective appends the panel's objective to an explanation's path.
export function withObjective(panel, path) {
  if (!multiObjective()) return path;
  return path + (path.includes('?') ? '&' : '?') + `objective=${encodeURIComponent(objectives()[objectiveIndex(panel)].name)}`;
}
// unitsOf names the units of the numbers a panel shows for objective k.
export function unitsOf(k) { return multiObjective() ? `${objectives()[k].name}'s units` : 'study units'; }
