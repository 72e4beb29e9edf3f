// The Explanations view: partial dependence (global, regional, two
// parameters, ICE), importance, the Shapley explanation of a proposal, the
// desirability paths of the whole run, and a-BOBAX's band width. Every
// explanation is the API's document (GET explain/…), drawn as it is.
import {
  $, C, EDGE_AXIS, SERIES_COLOURS, VIRIDIS, axisName, bestFeasible, constrained, chart, chartIf, errorBars, esc, fmt, fmtValue, multiObjective, objectiveIndex,
  objectives, param, paramAxis, params, setNote, sortedTrials, state, trialNote, usable, withObjective,
} from './core.js';
import { explainGET, freshPanel } from './freshness.js';
import { budgetText, onBudgetChange, withBudget } from './budgets.js';
import { ranked, refreshImportance } from './importance.js';
import { explainTrial } from './shapley.js';

freshPanel('pdp', () => refreshPDP(), true, 'Recompute');
freshPanel('importance', () => refreshImportance(), true, 'Recompute');
freshPanel('proposal', () => refreshShapley(), false, 'Explain');
freshPanel('paths', () => loadPaths(), false, 'Load desirability paths');

// ------------------------------------------------------- what leads the view
// The view answers first which parameters matter (importance), then how
// the most important one acts (its PDP): the PDP's parameter follows the
// importance's ranking until the user picks one.
let pdpChosen = false;

export async function explainLeading() {
  const r = await refreshImportance();
  if (r && !pdpChosen) {
    const top = ranked(r).params[0];
    if (top && param(top.k)) $('pdp-param').value = top.k;
  }
  await refreshPDP();
}
onBudgetChange(() => { refreshPDP(); refreshImportance(); });

// ---------------------------------------------------------------- PDP

export function fillParamSelects() {
  pdpChosen = false;
  const opts = params().map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join('');
  $('pdp-param').innerHTML = opts;
  $('pdp-param2').innerHTML = '<option value="">none</option>' + opts;
}

function pdpMode() { return document.querySelector('input[name="pdp-mode"]:checked').value; }

export async function refreshPDP() {
  if (!state.study) return;
  const a = $('pdp-param').value, b = $('pdp-param2').value;
  const ice = $('pdp-ice').checked;
  const gen = state.gen;
  setNote('pdp-note', 'computing…');
  try {
    if (pdpMode() === 'regional') {
      const r = await explainGET('pdp', withObjective('pdp', withBudget(`explain/regional?param=${encodeURIComponent(a)}`)));
      if (!r || gen !== state.gen) return;
      state.regional = r;
      state.leaf = null;
      renderTree(r);
      drawPDP({ ...r.global, forest: r.forest }, 'global PDP (click a leaf for its region)');
      setNote('pdp-note', `${r.splits} split(s); impurity ${fmt(r.root_impurity)} → ${fmt(r.leaf_impurity)}${r.budget ? '; ' + budgetText(r) : ''}`);
    } else {
      $('tree').innerHTML = '';
      const q = `param=${encodeURIComponent(a)}` + (b && b !== a ? `&param=${encodeURIComponent(b)}` : '') + (ice && !(b && b !== a) ? '&ice=true' : '');
      const r = await explainGET('pdp', withObjective('pdp', withBudget(`explain/pdp?${q}`)));
      if (!r || gen !== state.gen) return;
      drawPDP(r, r.budget ? `global PDP at budget ${r.budget.step}` : 'global PDP');
      setNote('pdp-note', `${Math.round(r.level * 100)}% band (${r.band}), ${r.samples} Monte Carlo samples; ${r.units}${r.budget ? '; ' + budgetText(r) : ''}${r.note ? '. ' + r.note : ''}`);
    }
  } catch (e) {
    setNote('pdp-note', `PDP: ${e.message}`, true);
  }
}

function renderTree(r) {
  const leaves = new Map((r.leaves || []).map((l) => [l.id, l]));
  const node = (n) => {
    const leaf = leaves.get(n.id);
    const label = n.split ? `${n.split.param} ${n.split.threshold !== undefined ? '≤ ' + fmt(n.split.threshold) : 'in {' + (n.split.left_levels || []).map(fmtValue).join(', ') + '}'}?` : (n.path && n.path.length ? n.path[n.path.length - 1] : 'whole space');
    const cls = leaf ? 'leaf' + (r.best_leaf === n.id ? ' best' : '') : '';
    const btn = leaf
      ? `<button type="button" class="${cls}" data-leaf="${n.id}" aria-pressed="false" title="${esc((n.path || []).join(' and ') || 'whole space')}">leaf ${n.id}: ${esc(label)} (${n.size} curves)</button>`
      : `<span>node ${n.id}: ${esc(label)} (${n.size})</span>`;
    const kids = [n.left, n.right].filter(Boolean).map(node).join('');
    return `<li>${btn}${kids ? `<ul>${kids}</ul>` : ''}</li>`;
  };
  $('tree').innerHTML = `<p><strong>Regions</strong> (${r.leaves.length} leaves)</p><ul aria-label="Confidence-splitting tree">${node(r.tree)}</ul>`;
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
  const complete = sortedTrials().filter(usable);
  // The objective the curve explains: its direction, units and best trial.
  const k = objectiveIndex('pdp');
  const minimize = () => objectives()[k].direction !== 'maximize';
  const best = multiObjective() ? bestFeasible(complete, k) : state.best;
  const labelOf = (p, v, labels, i) => (p.type === 'categorical' ? (labels ? labels[i] : p.choices[v]) : v);
  if (r.param2) {
    const p2 = param(r.param2);
    const n2 = r.grid2.length;
    const data = [];
    r.mean.forEach((m, k) => data.push([Math.floor(k / n2), k % n2, m]));
    c.setOption({
      aria: { enabled: true }, animation: false,
      title: { text: title, left: 'center', top: 0, textStyle: { fontSize: 12 } },
      // ECharts puts a formatter's string into the page as HTML: every
      // name and level comes from the study's author and is escaped.
      tooltip: { formatter: (q) => `${esc(r.param)}=${esc(fmt(labelOf(p, r.grid[q.data[0]], r.labels, q.data[0])))}, ${esc(r.param2)}=${esc(fmt(labelOf(p2, r.grid2[q.data[1]], r.labels2, q.data[1])))}: ${fmt(q.data[2])} ± ${fmt(r.upper[q.dataIndex] - r.mean[q.dataIndex])}` },
      grid: { left: 80, right: 90, top: 30, bottom: 60 },
      xAxis: { type: 'category', name: axisName(p) + ' (grid)', nameLocation: 'middle', nameGap: 36, data: r.grid.map((v, i) => fmt(labelOf(p, v, r.labels, i))) },
      yAxis: { type: 'category', name: axisName(p2) + ' (grid)', nameLocation: 'middle', nameGap: 60, data: r.grid2.map((v, i) => fmt(labelOf(p2, v, r.labels2, i))) },
      visualMap: { min: Math.min(...r.mean), max: Math.max(...r.mean), calculable: true, right: 0, top: 'middle', inRange: { color: minimize() ? VIRIDIS.slice().reverse() : VIRIDIS }, text: ['PD high', 'PD low'], formatter: fmt },
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
    // The random forest's curve, whose band the calibrated band also covers.
    const forest = !cat && r.forest && r.forest.mean && r.forest.mean.length === r.mean.length;
    if (forest) series.push({ name: 'forest', type: 'line', data: r.forest.mean.map((y, i) => pt(i, y)), symbol: 'none', color: C.grey, lineStyle: { width: 1.5, type: 'dashed' }, z: 2 });
    for (const [k, curve] of (cat ? [] : (r.ice || [])).slice(0, 60).entries()) {
      series.push({ name: k === 0 ? 'ICE' : `ICE ${k}`, type: 'line', data: curve.map((y, i) => pt(i, y)), symbol: 'none', silent: true, color: C.grey, lineStyle: { width: 0.6, opacity: 0.5 }, z: 1 });
    }
    // Rug: the evaluated values of the parameter, at the bottom of the plot.
    if (!cat) series.push({ name: 'evaluated (rug)', type: 'scatter', symbol: 'rect', symbolSize: [1.5, 10], color: C.black, data: complete.filter((t) => t.params[p.name] !== undefined).slice(-2000).map((t) => [t.params[p.name], lo]), tooltip: { show: false } });
    c.setOption({
      aria: { enabled: true }, animation: false,
      title: { text: title, left: 'center', top: 0, textStyle: { fontSize: 12 } },
      tooltip: { trigger: 'axis', valueFormatter: fmt },
      legend: { data: cat ? ['PD mean'] : ['PD mean', `${Math.round(r.level * 100)}% band`, ...(forest ? ['forest'] : []), 'evaluated (rug)', ...(r.ice ? ['ICE'] : [])], top: 22 },
      grid: { left: 70, right: 20, top: 56, bottom: 55 },
      xAxis: cat ? { type: 'category', data: xs, name: axisName(p), nameLocation: 'middle', nameGap: 30, ...EDGE_AXIS } : paramAxis(p, EDGE_AXIS),
      // With several objectives the axis names the objective (its units).
      yAxis: { type: 'value', name: multiObjective() ? `partial dependence of ${objectives()[k].name} (${minimize() ? 'lower' : 'higher'} is better)` : `partial dependence (study units, ${minimize() ? 'lower' : 'higher'} is better)`, nameLocation: 'middle', nameGap: 50, min: lo - 0.02 * (hi - lo), max: hi + 0.02 * (hi - lo),
        // The padded ends are not round numbers: only the gridlines' are written.
        axisLabel: { formatter: fmt, showMinLabel: false, showMaxLabel: false } },
      series,
    }, true);
  }
  // The numbers behind the chart, for screen readers and for checking.
  const rows = r.mean.map((m, k) => {
    const g = r.param2 ? `${fmt(r.grid[Math.floor(k / r.grid2.length)])}, ${fmt(r.grid2[k % r.grid2.length])}` : fmt(r.grid[k]);
    // Three significant digits on screen; the exact number in data-x and on hover.
    const cell = (v, name) => `<td data-v="${name}" data-x="${v}" title="${v}">${fmt(v)}</td>`;
    return `<tr><td>${esc(g)}</td>${cell(m, 'mean')}${cell(r.lower[k], 'lower')}${cell(r.upper[k], 'upper')}</tr>`;
  }).join('');
  $('pdp-data').innerHTML = `<thead><tr><th scope="col">${esc(r.param)}${r.param2 ? ', ' + esc(r.param2) : ''}</th><th scope="col">mean</th><th scope="col">lower</th><th scope="col">upper</th></tr></thead><tbody>${rows}</tbody>`;
}

for (const id of ['pdp-objective', 'pdp-param', 'pdp-param2', 'pdp-ice', 'pdp-refresh']) $(id).addEventListener(id === 'pdp-refresh' ? 'click' : 'change', refreshPDP);
$('pdp-param').addEventListener('change', () => { pdpChosen = true; });
for (const r of document.querySelectorAll('input[name="pdp-mode"]')) r.addEventListener('change', refreshPDP);

// ---------------------------------------------------------------- proposal

// The panel explains the trial chosen last (in the table, the trace, the
// parallel coordinates or its own box), and the best trial until one is.
export function proposeTrial(n) {
  if (!Number.isInteger(n)) return;
  $('proposal-trial').value = String(n);
  refreshShapley();
}

async function refreshShapley() {
  const n = Number($('proposal-trial').value);
  if (!state.study || !Number.isInteger(n) || $('proposal-trial').value === '') return;
  const r = await explainTrial('proposal', n, () => $('proposal-trial').value === String(n));
  if (r) window.xbo.shapley = r;
}
$('proposal-go').addEventListener('click', refreshShapley);
$('proposal-objective').addEventListener('change', refreshShapley);
$('proposal-trial').addEventListener('keydown', (e) => { if (e.key === 'Enter') refreshShapley(); });

// ------------------------------------------------------- desirability paths
// One explanation per model-chosen proposal, each with its own iteration's
// surrogate (GET explain/paths): costlier than one trial's Shapley values,
// so it is loaded by a click and re-drawn from the cached answer when the
// output toggle changes.

// Plain words for the three outputs; the bound's formula goes in a tooltip.
const PATHS_TOP = 4;
const PATHS_OUTPUT = { mean: 'the predicted value (exploitation)', se: 'the uncertainty (exploration)', cb: 'the confidence bound (both)' };
function pathsOutput() { return document.querySelector('input[name="paths-output"]:checked').value; }

async function loadPaths() {
  if (!state.study) return;
  const gen = state.gen;
  setNote('paths-note', 'explaining every model-chosen proposal…');
  $('paths-go').disabled = true;
  try {
    const r = await explainGET('paths', 'explain/paths');
    if (!r || gen !== state.gen) return;
    window.xbo.paths = r;
    drawPaths();
  } catch (e) {
    setNote('paths-note', `desirability paths: ${e.message}`, true);
  } finally {
    $('paths-go').disabled = multiObjective() || constrained();
  }
}

// pathUnits says what the φ are measured in: the study's objective, or the
// warped values the optimizer's proposal model was fitted to (the study's
// output_warp), whose order is the objective's; "mixed" when trust-region
// proposals (unwarped model) and the others (warped) are both drawn.
function pathUnits(units, steps) {
  if (units === 'mixed') {
    const warp = (steps.find((s) => s.units && s.units !== 'objective') || {}).units;
    return `each proposal in its model's units: study units for trust-region proposals, the ${warp}-warped model's (ordered as the objective) for the others, so compare steps of one kind`;
  }
  return !units || units === 'objective' ? 'study units' : `units of the optimizer's ${units}-warped model (ordered as the objective)`;
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
  // The PATHS_TOP parameters with the largest mean |φ| get a line each, in
  // distinct colours; the others are summed into one grey line.
  const weight = r.params.map((_, j) => steps.reduce((a, s) => a + Math.abs(attr(s).phi[j]), 0));
  const order = r.params.map((_, j) => j).sort((a, b) => weight[b] - weight[a] || a - b);
  const top = order.slice(0, PATHS_TOP), rest = order.slice(PATHS_TOP);
  window.xbo.pathsDrawn = { top: top.map((j) => r.params[j]), rest: rest.map((j) => r.params[j]) };
  setNote('paths-note', steps.length === 0 ? (r.note || 'no model-chosen proposals yet') :
    `${r.explained} of ${r.proposals} model-chosen proposals (${r.method}${r.samples ? `, K = ${r.samples}` : ''}, τ = ${r.tau}); ` +
    `contribution (φ) of each parameter to ${PATHS_OUTPUT[out]}${out === 'cb' && formula ? ` (${formula})` : ''}, ${pathUnits(r.units, steps)}` +
    (rest.length ? `; the ${top.length} parameters contributing most (mean |φ|) drawn, the other ${rest.length} summed (every one in the table)` : '') +
    `${r.truncated ? `; ${r.note}` : ''}`);
  const series = top.map((j, k) => ({
    name: r.params[j], type: 'line', showSymbol: steps.length <= 60, color: SERIES_COLOURS[k], lineStyle: { width: 2 },
    data: steps.map((s) => [s.trial, attr(s).phi[j]]),
  }));
  if (rest.length) {
    series.push({
      name: `other ${rest.length} (sum)`, type: 'line', showSymbol: false, color: C.grey, lineStyle: { width: 1.5, type: 'dashed' },
      data: steps.map((s) => [s.trial, rest.reduce((a, j) => a + attr(s).phi[j], 0)]),
    });
  }
  chartIf('paths-chart', true).setOption({
    aria: { enabled: true }, animation: false,
    tooltip: { trigger: 'axis', valueFormatter: fmt }, legend: { data: series.map((x) => x.name), top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: 45 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 28, minInterval: 1, scale: true },
    yAxis: { type: 'value', name: `φ: ${{ mean: 'predicted value', se: 'uncertainty', cb: 'confidence bound' }[out]} (study units)`, nameLocation: 'middle', nameGap: 50, axisLabel: { formatter: fmt } },
    dataZoom: steps.length > 60 ? [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 2 }] : [],
    series,
  }, true);
  $('paths-data').innerHTML = `<caption class="sr-only">φ of ${esc(out)} per proposal</caption><thead><tr><th scope="col">trial</th><th scope="col">acquisition</th><th scope="col">payout</th>` +
    r.params.map((p) => `<th scope="col">${esc(p)}</th>`).join('') + '</tr></thead><tbody>' +
    steps.map((s) => { const a = attr(s); return `<tr data-trial="${s.trial}"><th scope="row">${s.trial}</th><td>${esc(s.acquisition || '')}</td><td data-v="payout" data-x="${a.payout}" title="${a.payout}">${fmt(a.payout)}</td>` +
      a.phi.map((v, j) => `<td data-v="phi" data-param="${esc(r.params[j])}" data-x="${v}" title="${v}">${fmt(v)}</td>`).join('') + '</tr>'; }).join('') + '</tbody>';
}
$('paths-go').addEventListener('click', loadPaths);

// Desirability paths replay the single-objective optimizer's proposals
// (the API refuses them for a study with several objectives or
// constraints, whose proposals came from ParEGO or ranked infeasible
// trials apart): such a study's panel says so instead of offering the button.
export function fillPathsPanel() {
  const off = multiObjective() || constrained();
  $('paths-go').disabled = off;
  for (const el of document.querySelectorAll('input[name="paths-output"]')) el.disabled = off;
  setNote('paths-note', off
    ? `Not available for a study with ${multiObjective() ? 'several objectives' : 'constraints'}: desirability paths replay a single-objective optimizer's proposals.`
    : 'Shapley values of every model-chosen proposal, each with the surrogate of its own iteration (costlier: loaded on demand).');
}
for (const el of document.querySelectorAll('input[name="paths-output"]')) el.addEventListener('change', drawPaths);

// ---------------------------------------------------------------- a-BOBAX

const BOBAX = /a-bobax: mean PD band half-width ([-+0-9.eE]+|NaN|[+-]?Inf) \(tolerance ([-+0-9.eE]+)\)(?:, phase (\S+))?/;

export function renderBobax(all) {
  const pts = [];
  let tol = null, phase = '';
  for (const t of all) {
    const m = BOBAX.exec(trialNote(t));
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

