// Studies with several objectives (docs/api.md): which complete trials are
// Pareto-optimal, dominated or infeasible, the hypervolume of the feasible
// front after each trial, and the Overview's two panels that lead such a
// study (a study with several objectives has no single best value, so its
// overview starts with the front, not with a best-so-far trace).
//
// The decisions are the server's (history.History.ParetoFront, package
// pareto): a trial is on the front when it is complete, feasible (every
// constraint value ≤ 0) and no other such trial is at least as good in every
// objective and better in one, each in its own direction; equal trials are
// all on the front. The page computes them itself because it follows the
// trials live; the e2e test checks it against GET …/best_trials and Go's
// pareto.Hypervolume.
import {
  $, C, EDGE_AXIS, chart, chartIf, constraintNames, esc, feasible, fmt, multiObjective, objectiveLabel, objectiveValues, objectives, onChart,
  openTrial, setNote, usableAll, violated,
} from './core.js';
import { exact } from './format.js';

// ------------------------------------------------------------- dominance

// sign turns objective k's value into a gain: larger is better.
function signs(os) { return os.map((o) => (o.direction === 'maximize' ? 1 : -1)); }

// frontMask marks the vectors no other vector dominates (in the objectives'
// directions). Vectors sorted better-first lexicographically can only be
// dominated by earlier ones, and a vector dominated by anything is
// dominated by a member of the front (dominance is transitive), so one
// pass that compares each vector with the front so far is exact: O(n·k) for
// a front of k, not O(n²).
export function frontMask(vals, os) {
  const s = signs(os);
  const m = os.length;
  const order = vals.map((_, i) => i).sort((a, b) => {
    for (let k = 0; k < m; k++) if (vals[a][k] !== vals[b][k]) return s[k] * (vals[b][k] - vals[a][k]);
    return a - b;
  });
  const onFront = new Array(vals.length).fill(false);
  const front = [];
  for (const i of order) {
    const v = vals[i];
    let dominated = false;
    for (const j of front) {
      const w = vals[j];
      let atLeast = true, strictly = false;
      for (let k = 0; k < m; k++) {
        const d = s[k] * (w[k] - v[k]);
        if (d < 0) { atLeast = false; break; }
        if (d > 0) strictly = true;
      }
      if (atLeast && strictly) { dominated = true; break; }
    }
    if (!dominated) { front.push(i); onFront[i] = true; }
  }
  return onFront;
}

// classify splits the complete trials (every objective finite) into the
// Pareto front, the feasible dominated trials and the infeasible ones, each
// in number order.
export function classify(all) {
  const os = objectives();
  const feas = [], infeasible = [];
  for (const t of all) if (usableAll(t)) (feasible(t) ? feas : infeasible).push(t);
  const mask = frontMask(feas.map(objectiveValues), os);
  const front = [], dominated = [];
  feas.forEach((t, i) => (mask[i] ? front : dominated).push(t));
  return { front, dominated, infeasible, feasible: feas };
}

// ----------------------------------------------------------- hypervolume

// referencePoint is the documented rule (web/README.md, the report's Pareto
// section): for each objective, the worst value among the feasible trials,
// moved 10% of their range further in the worse direction (10% of the
// worst value's magnitude, or 1, when they all have one value), so that
// every feasible trial adds to the hypervolume, the extreme ones included.
// The rule depends only on the trials, so the page and the report agree.
export function referencePoint(vals, os) {
  if (!vals.length) return null;
  return os.map((o, k) => {
    let lo = Infinity, hi = -Infinity;
    for (const v of vals) { lo = Math.min(lo, v[k]); hi = Math.max(hi, v[k]); }
    const worst = o.direction === 'maximize' ? lo : hi;
    const pad = hi > lo ? 0.1 * (hi - lo) : (worst !== 0 ? 0.1 * Math.abs(worst) : 1);
    return o.direction === 'maximize' ? worst - pad : worst + pad;
  });
}

// insertFront adds gain vector p to a set of mutually non-dominated gain
// vectors (larger is better, the first m coordinates compared): unchanged
// when a member is at least as good as p in every coordinate, else p
// joins and the members it is at least as good as leave.
function insertFront(set, p, m) {
  for (const q of set) {
    let ge = true;
    for (let k = 0; k < m && ge; k++) ge = q[k] >= p[k];
    if (ge) return set;
  }
  const out = set.filter((q) => { for (let k = 0; k < m; k++) if (q[k] > p[k]) return true; return false; });
  out.push(p);
  return out;
}

// volume is the hypervolume of gain vectors (larger is better, the
// reference point at the origin, every coordinate positive) in their first
// m coordinates: a sweep in two dimensions; above, slices along the last
// coordinate, each the volume of the non-dominated projection of the
// vectors above it (exact, as package pareto; keeping only the projection's
// front is what keeps three and four objectives fast).
function volume(pts, m) {
  if (!pts.length) return 0;
  if (m === 1) return Math.max(...pts.map((p) => p[0]));
  if (m === 2) {
    const s = pts.slice().sort((a, b) => b[0] - a[0] || b[1] - a[1]);
    let v = 0, top = 0;
    for (const p of s) if (p[1] > top) { v += p[0] * (p[1] - top); top = p[1]; }
    return v;
  }
  const s = pts.slice().sort((a, b) => b[m - 1] - a[m - 1]);
  let v = 0, set = [];
  for (let i = 0; i < s.length; i++) {
    set = insertFront(set, s[i], m - 1);
    const depth = s[i][m - 1] - (i + 1 < s.length ? s[i + 1][m - 1] : 0);
    if (depth > 0) v += depth * volume(set, m - 1);
  }
  return v;
}

function gains(v, ref, s) { return v.map((x, k) => s[k] * (x - ref[k])); }

// hypervolume of objective vectors against ref (pareto.Hypervolume):
// vectors not strictly better than ref in every objective add nothing.
export function hypervolume(vals, ref, os) {
  const s = signs(os);
  return volume(vals.map((v) => gains(v, ref, s)).filter((g) => g.every((x) => x > 0)), os.length);
}

// hypervolumeTrace is the hypervolume of the feasible front after each
// complete trial, in number order: [trial, hypervolume, front size]. The
// front is kept as trials come, and the volume recomputed only when a trial
// joins it.
export function hypervolumeTrace(done, ref, os, isFeasible = (t) => feasible(t)) {
  const s = signs(os), m = os.length;
  let front = [], hv = 0;
  const out = [];
  for (const t of done) {
    if (isFeasible(t)) {
      const g = gains(objectiveValues(t), ref, s);
      const covered = !g.every((x) => x > 0) || front.some((f) => f.every((x, k) => x >= g[k]));
      if (!covered) {
        // What g adds: its box less the part the front already covers
        // (the front clipped to g's box), rather than the whole volume
        // again, which costs as much as the front is large.
        let clipped = [];
        for (const f of front) clipped = insertFront(clipped, f.map((x, k) => Math.min(x, g[k])), m);
        hv += g.reduce((a, x) => a * x, 1) - volume(clipped, m);
        front = insertFront(front, g, m);
      }
    }
    out.push([t.number, hv, front.length]);
  }
  return out;
}

// ---------------------------------------------------------------- panels

// A cross, the mark of an infeasible trial: a shape of its own, not only a
// colour, so it reads in grey print and with any colour vision.
const CROSS = 'path://M2,0 L5,3 L8,0 L10,2 L7,5 L10,8 L8,10 L5,7 L2,10 L0,8 L3,5 L0,2 Z';
const STYLE = {
  front: { name: 'Pareto front', color: C.orange, symbol: 'circle', symbolSize: 10, itemStyle: { borderColor: C.black, borderWidth: 1 }, z: 4 },
  dominated: { name: 'dominated', color: C.blue, symbol: 'circle', symbolSize: 7, itemStyle: { opacity: 0.5 }, z: 2 },
  infeasible: { name: 'infeasible', color: C.red, symbol: CROSS, symbolSize: 8, itemStyle: { opacity: 0.8 }, z: 3 },
};
const KINDS = ['front', 'dominated', 'infeasible'];
// Room around the extreme trials, so that none is cut by the plot's edge:
// 4% of the range on each side, without rounding out to the next tick
// (which could reach values no objective takes, such as a negative error);
// the ends are then not labelled.
const PADDED = {
  min: (v) => v.min - 0.04 * (v.max - v.min || Math.abs(v.min) || 1),
  max: (v) => v.max + 0.04 * (v.max - v.min || Math.abs(v.max) || 1),
};
const ENDS = { showMinLabel: false, showMaxLabel: false };

function shortName(o) { return `${o.name} (${o.direction === 'maximize' ? 'max' : 'min'})`; }
function valuesText(t) { const v = objectiveValues(t); return objectives().map((o, k) => `${esc(o.name)} ${fmt(v[k])}`).join(', '); }
function kindText(kind, t) { return kind === 'infeasible' ? `infeasible (violates ${violated(t).map(esc).join(', ')})` : kind === 'front' ? 'Pareto-optimal' : 'dominated'; }
// Where the better trials lie on a chart of objectives i (x) and j (y).
function cornerText(i, j) {
  const os = objectives();
  return `${os[j].direction === 'maximize' ? 'upper' : 'lower'} ${os[i].direction === 'maximize' ? 'right' : 'left'}`;
}

// staircase is the boundary of what the front dominates in two objectives,
// through its points in order of the first: between neighbours a and b the
// corner is (b.x, a.y) when the first objective is minimized and (a.x, b.y)
// when it is maximized (the dominated region lies right of, resp. left of,
// the front).
function staircase(pts, os) {
  const s = pts.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = [];
  s.forEach((p, i) => {
    if (i > 0) out.push(os[0].direction === 'maximize' ? [s[i - 1][0], p[1]] : [p[0], s[i - 1][1]]);
    out.push([p[0], p[1]]);
  });
  return out;
}

let drawnTrials = {}; // per series name and index: the trial numbers, for clicks

// renderPareto draws the Overview's front and hypervolume panels of a
// study with several objectives and hides them for one objective.
export function renderPareto(all) {
  const multi = multiObjective();
  for (const id of ['pareto-panel', 'hv-panel']) $(id).hidden = !multi;
  if (!multi) { window.xbo.pareto = null; return; }
  const os = objectives();
  const m = os.length;
  const cl = classify(all);
  const done = all.filter(usableAll);
  const ref = referencePoint(cl.feasible.map(objectiveValues), os);
  const trace = ref ? hypervolumeTrace(done, ref, os) : [];
  window.xbo.pareto = {
    front: cl.front.map((t) => t.number), dominated: cl.dominated.map((t) => t.number), infeasible: cl.infeasible.map((t) => t.number),
    ref, hypervolume: trace,
  };
  $('pareto-panel').classList.toggle('wide', m > 2);
  const counts = `${cl.front.length} Pareto-optimal, ${cl.dominated.length} dominated` +
    (constraintNames().length ? `, ${cl.infeasible.length} infeasible` : '') + ` of ${done.length} complete trials`;
  if (m === 2) drawScatter(cl, ref);
  else drawMatrix(cl);
  setNote('pareto-note', done.length === 0 ? 'no complete trials yet' : `${counts}. ` + (m === 2
    ? `Better trials lie toward the ${cornerText(0, 1)}; the line is the front's boundary, the + the hypervolume's reference point.`
    : `Every pair of the ${m} objectives; a trial on the front of all ${m} may look dominated in one pair.`) +
    (constraintNames().length ? ' × marks a trial that breaks a constraint.' : '') + ' Click a point for its trial.');
  frontTable(cl.front);
  drawHypervolume(trace, ref, os);
}

function point(t, i, j) { const v = objectiveValues(t); return [v[i], v[j], t.number]; }

function tooltip(p) {
  const n = p.value && p.value[2];
  const entry = Object.entries(drawnTrials).find(([, nums]) => nums.includes(n));
  const t = window.xbo.state.trials.get(n);
  if (!t || !entry) return '';
  return `trial ${n}: ${valuesText(t)}<br>${kindText(entry[0], t)}`;
}

function drawScatter(cl, ref) {
  const os = objectives();
  drawnTrials = {};
  const series = [];
  for (const kind of KINDS) {
    const ts = cl[kind];
    drawnTrials[kind] = ts.map((t) => t.number);
    if (kind === 'infeasible' && !constraintNames().length) continue;
    series.push({ ...STYLE[kind], type: 'scatter', data: ts.map((t) => point(t, 0, 1)), large: ts.length > 2000 });
  }
  // The boundary shares the front's legend entry: one click hides both.
  series.push({ name: STYLE.front.name, type: 'line', data: staircase(cl.front.map((t) => point(t, 0, 1)), os), color: C.orange,
    showSymbol: false, silent: true, lineStyle: { width: 2 }, z: 3, tooltip: { show: false } });
  if (ref) series.push({ name: 'reference point', type: 'scatter', symbol: 'path://M4,0 H6 V4 H10 V6 H6 V10 H4 V6 H0 V4 H4 Z', symbolSize: 12, color: C.black, data: [[ref[0], ref[1]]], z: 5,
    tooltip: { formatter: () => `hypervolume reference point: ${os.map((o, k) => `${esc(o.name)} ${fmt(ref[k])}`).join(', ')}` } });
  chart('pareto-chart').setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: series.filter((s) => s.type === 'scatter').map((s) => s.name), top: 0 },
    tooltip: { trigger: 'item', formatter: tooltip },
    grid: { left: 70, right: 24, top: 34, bottom: 50 },
    xAxis: { type: 'value', name: objectiveLabel(0), nameLocation: 'middle', nameGap: 28, ...PADDED, axisLabel: { formatter: fmt, ...ENDS }, ...EDGE_AXIS },
    yAxis: { type: 'value', name: objectiveLabel(1), nameLocation: 'middle', nameGap: 52, ...PADDED, axisLabel: { formatter: fmt, ...ENDS }, ...EDGE_AXIS },
    series,
  }, true);
}

// drawMatrix draws a scatter of every pair of three or four objectives,
// as many per row as fit at 260 px or more (drawn again when a resized
// window fits another number).
let matrixCols = 0;
function matrixColumns(pairs) { return Math.max(1, Math.min(pairs, 3, Math.floor($('pareto-chart').clientWidth / 260))); }
window.addEventListener('resize', () => {
  const os = objectives();
  if (os.length > 2 && !$('pareto-panel').hidden && $('pareto-panel').offsetParent !== null && matrixColumns((os.length * (os.length - 1)) / 2) !== matrixCols) {
    renderPareto([...window.xbo.state.trials.values()].sort((a, b) => a.number - b.number));
  }
});
function drawMatrix(cl) {
  const os = objectives();
  const pairs = [];
  for (let i = 0; i < os.length; i++) for (let j = i + 1; j < os.length; j++) pairs.push([i, j]);
  const el = $('pareto-chart');
  const cols = matrixColumns(pairs.length);
  matrixCols = cols;
  const rows = Math.ceil(pairs.length / cols);
  const cellH = 250, top = 34;
  const height = top + rows * cellH;
  if (el.style.height !== `${height}px`) el.style.height = `${height}px`;
  const c = chart('pareto-chart');
  if (c.getHeight() !== el.clientHeight && el.clientHeight > 0) c.resize();
  const grid = [], xAxis = [], yAxis = [], series = [];
  drawnTrials = {};
  for (const kind of KINDS) drawnTrials[kind] = cl[kind].map((t) => t.number);
  pairs.forEach(([i, j], p) => {
    const col = p % cols, row = Math.floor(p / cols);
    // Percent of the width per column; pixels down the rows.
    grid.push({ left: `${(100 * col) / cols + 7}%`, width: `${100 / cols - 10}%`, top: top + row * cellH + 8, height: cellH - 62 });
    xAxis.push({ gridIndex: p, type: 'value', name: shortName(os[i]), nameLocation: 'middle', nameGap: 24, ...PADDED, axisLabel: { formatter: fmt, hideOverlap: true, ...ENDS }, ...EDGE_AXIS });
    yAxis.push({ gridIndex: p, type: 'value', name: shortName(os[j]), nameLocation: 'middle', nameGap: 40, ...PADDED, axisLabel: { formatter: fmt, ...ENDS }, ...EDGE_AXIS });
    for (const kind of KINDS) {
      if (kind === 'infeasible' && !constraintNames().length) continue;
      series.push({ ...STYLE[kind], type: 'scatter', xAxisIndex: p, yAxisIndex: p, data: cl[kind].map((t) => point(t, i, j)), large: cl[kind].length > 2000 });
    }
  });
  c.setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: KINDS.filter((k) => k !== 'infeasible' || constraintNames().length).map((k) => STYLE[k].name), top: 0 },
    tooltip: { trigger: 'item', formatter: tooltip },
    grid, xAxis, yAxis, series,
  }, true);
}

// frontTable lists the Pareto-optimal trials with every objective and
// constraint value: the chart's numbers for screen readers and checks.
function frontTable(front) {
  const os = objectives(), cs = constraintNames();
  $('pareto-data').innerHTML = '<caption class="sr-only">Pareto-optimal trials with their objective and constraint values</caption><thead><tr><th scope="col">trial</th>' +
    os.map((o) => `<th scope="col">${esc(o.name)} (${o.direction === 'maximize' ? 'max' : 'min'})</th>`).join('') +
    cs.map((c) => `<th scope="col">${esc(c)} (≤ 0)</th>`).join('') + '</tr></thead><tbody>' +
    front.map((t) => `<tr data-trial="${t.number}"><th scope="row"><a href="#${esc(`study=${encodeURIComponent(window.xbo.state.study.name)}&trial=${t.number}`)}">${t.number}</a></th>` +
      objectiveValues(t).map((v, k) => `<td data-v="${esc(os[k].name)}" data-x="${v}"${exact(v)}>${fmt(v)}</td>`).join('') +
      cs.map((_, j) => `<td data-c="${j}" data-x="${t.constraints[j]}"${exact(t.constraints[j])}>${fmt(t.constraints[j])}</td>`).join('') + '</tr>').join('') + '</tbody>';
}

function drawHypervolume(trace, ref, os) {
  const refText = ref ? os.map((o, k) => `${o.name} = ${fmt(ref[k])}`).join(', ') : '';
  setNote('hv-note', !ref ? 'no feasible complete trial yet: no front to measure' :
    `The volume the feasible front dominates up to the reference point (${refText}): each objective's worst feasible value moved 10% of the feasible range further (recomputed as trials arrive). ` +
    `After trial ${trace[trace.length - 1][0]}: ${fmt(trace[trace.length - 1][1])} (front of ${trace[trace.length - 1][2]}); in the product of the objectives' units.`);
  const c = chartIf('hv-chart', !!ref);
  // The rows where the front changed (the volume is flat in between).
  const changed = trace.filter((r, i) => i === 0 || r[1] !== trace[i - 1][1] || r[2] !== trace[i - 1][2] || i === trace.length - 1);
  $('hv-data').innerHTML = ref ? '<caption class="sr-only">Hypervolume after each trial that changed the front, and after the last</caption>' +
    '<thead><tr><th scope="col">after trial</th><th scope="col">hypervolume</th><th scope="col">front size</th></tr></thead><tbody>' +
    changed.map((r) => `<tr data-trial="${r[0]}"><th scope="row">${r[0]}</th><td data-v="hv" data-x="${r[1]}"${exact(r[1])}>${fmt(r[1])}</td><td>${r[2]}</td></tr>`).join('') + '</tbody>' : '';
  if (!c) return;
  c.setOption({
    aria: { enabled: true }, animation: false,
    // The reference point is on the chart itself, not only in the note.
    title: { text: `reference point: ${refText}`, left: 'center', top: 0, textStyle: { fontSize: 12, fontWeight: 'normal' } },
    tooltip: { trigger: 'axis', formatter: (ps) => { const p = ps[0]; return p ? `after trial ${p.value[0]}: hypervolume ${fmt(p.value[1])}, front of ${p.value[2]}` : ''; } },
    grid: { left: 70, right: 24, top: 34, bottom: 50 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 28, min: 0, minInterval: 1, ...EDGE_AXIS },
    yAxis: { type: 'value', name: 'hypervolume (higher is better)', nameLocation: 'middle', nameGap: 52, min: 0, axisLabel: { formatter: fmt } },
    series: [{ name: 'hypervolume', type: 'line', step: 'end', showSymbol: false, data: trace, color: C.green, lineStyle: { width: 2 } }],
  }, true);
}

onChart('pareto-chart', (c) => c.on('click', (p) => { if (p.value && Number.isInteger(p.value[2])) openTrial(p.value[2]); }));
