// The trial view (#study=…&trial=N): everything the API holds about one
// trial — typed parameters, value, state, fail reason, user attributes,
// timestamps and duration, worker, what chose it and its note — its
// intermediate-value curve, and the Shapley explanation of its proposal
// (with the model that proposed it: proposal.js).
import {
  $, EDGE_AXIS, chart, chartIf, constrained, constraintNames, directionWord, durationMs, esc, feasible, fmt, fmtDuration, fmtTime, fmtValue, jsonType,
  multiObjective, objectiveValues, objectives, openTrial, params, setNote, better, sortedTrials, state, stateColour, trialNote, usable, usableAll, violated,
} from './core.js';
import { classify } from './pareto.js';
import { freshPanel } from './freshness.js';
import { explainProposal } from './proposal.js';
import { exact } from './format.js';
import { renderTrialActions } from './actions.js';

freshPanel('trial-shapley', () => explainShown(), false, 'Explain this trial');

// shown is the trial the view draws; explainedFor the trial (and study
// generation) whose Shapley values are on screen.
let shown = null;
let explainedFor = '';

// inactiveText says that a parameter is off, and when it would be on.
function inactiveText(p) {
  const c = p.condition;
  return c && c.parent ? `inactive (active when ${c.parent} is ${(c.values || []).map(fmtValue).join(' or ')})` : 'inactive';
}

// rankText places a complete trial among the others: 1 is the best. Only
// feasible trials are ranked (an infeasible one is never best); with
// several objectives there is no rank, only the front.
function rankText(t) {
  if (!usable(t)) return '';
  if (!feasible(t)) return ` — infeasible (breaks ${violated(t).join(', ')})`;
  if (multiObjective()) return frontText(t);
  let rank = 1, n = 0;
  for (const x of state.trials.values()) {
    if (!usable(x) || !feasible(x)) continue;
    n++;
    if (better(x.value, t.value)) rank++;
  }
  const of = constrained() ? 'complete feasible trials' : 'complete trials';
  return rank === 1 ? ` — the best of ${n} ${of}` : `, rank ${rank} of ${n} ${of}`;
}

// frontText says whether a feasible trial is on the Pareto front, and if
// not, which Pareto-optimal trial dominates it (the first in number order).
function frontText(t) {
  if (!usableAll(t)) return '';
  const { front } = classify(sortedTrials());
  if (front.includes(t)) return ` — on the Pareto front (one of ${front.length})`;
  const os = objectives(), v = objectiveValues(t);
  const by = front.find((f) => {
    const w = objectiveValues(f);
    return os.every((o, k) => (o.direction === 'maximize' ? w[k] >= v[k] : w[k] <= v[k])) && w.some((x, k) => x !== v[k]);
  });
  return by ? ` — dominated by trial ${by.number}` : ' — dominated';
}

// outcomeTable lists every objective's value and every constraint's, with
// whether the trial keeps it (a study with several objectives or any
// constraint; otherwise the facts' value row says all).
function outcomeTable(t) {
  const el = $('trial-outcome');
  const os = objectives(), cs = constraintNames();
  el.hidden = !(multiObjective() || cs.length);
  if (el.hidden) { el.innerHTML = ''; return; }
  const v = objectiveValues(t);
  const c = Array.isArray(t.constraints) ? t.constraints : null;
  el.innerHTML = '<caption>Objectives and constraints</caption><tbody>' +
    (multiObjective() ? os.map((o, k) => `<tr data-objective="${esc(o.name)}"><th scope="row">${esc(o.name)}</th><td>` +
      (v && Number.isFinite(v[k]) ? `<span data-x="${v[k]}"${exact(v[k])}>${fmt(v[k])}</span> (${esc(directionWord(o))})` : '—') + '</td></tr>').join('') : '') +
    cs.map((name, j) => `<tr data-constraint="${esc(name)}"><th scope="row">${esc(name)} ≤ 0</th><td>` +
      (c ? `<span data-x="${c[j]}"${exact(c[j])}>${fmt(c[j])}</span> — ${c[j] <= 0 ? 'kept' : 'violated'}` : '— (not reported)') + '</td></tr>').join('') +
    (cs.length && (c || t.state === 'complete') ? `<tr data-k="feasible"><th scope="row">feasible</th><td>${feasible(t) ? 'yes' : `no: breaks ${violated(t).map(esc).join(', ')}`}</td></tr>` : '') +
    '</tbody>';
}

function row(label, html, key) { return `<tr data-k="${key}"><th scope="row">${esc(label)}</th><td>${html}</td></tr>`; }

export function renderTrial(n) {
  const t = state.trials.get(n);
  // The number box is set when another trial is shown, not when this one
  // is drawn again (trials arrived) while the user may be typing in it.
  if (shown !== n) $('trial-number').value = String(n);
  shown = n;
  $('trial-h').textContent = `Trial ${n}`;
  const numbers = sortedTrials().map((x) => x.number);
  const at = numbers.indexOf(n);
  $('trial-prev').disabled = at <= 0;
  $('trial-next').disabled = at < 0 || at >= numbers.length - 1;
  renderTrialActions(t);
  if (!t) {
    setNote('trial-summary', `This study has no trial ${n} (yet).`, true);
    for (const id of ['trial-facts', 'trial-params', 'trial-attrs', 'trial-outcome', 'trial-meta', 'trial-curve-data']) $(id).innerHTML = '';
    $('trial-outcome').hidden = true;
    $('trial-curve-panel').hidden = true;
    $('trial-shapley-panel').hidden = true;
    return;
  }
  const vals = objectiveValues(t);
  const valueText = !Number.isFinite(t.value) ? '' : multiObjective() && vals
    ? ', ' + objectives().map((o, k) => `${o.name} ${fmt(vals[k])}`).join(', ') : `, value ${fmt(t.value)}`;
  setNote('trial-summary', `${t.state}${valueText}${rankText(t)}`);
  const dur = durationMs(t);
  const note = trialNote(t);
  $('trial-facts').innerHTML = '<caption>Facts</caption><tbody>' + [
    row('state', `<span class="dot" style="background:${stateColour(t.state)}" aria-hidden="true"></span>${esc(t.state)}`, 'state'),
    // With several objectives the outcome table has every value.
    multiObjective() ? '' : row('value', Number.isFinite(t.value) ? `<span data-x="${t.value}"${exact(t.value)}>${fmt(t.value)}</span>` : '—', 'value'),
    t.fail_reason ? row('fail reason', esc(t.fail_reason), 'fail_reason') : '',
    row('chosen by', esc(t.acquisition || '—'), 'acquisition'),
    note ? row('optimizer note', esc(note), 'note') : '',
    row('worker', esc(t.worker || '—'), 'worker'),
    row('created', esc(fmtTime(t.created_at)), 'created_at'),
    row('started', esc(fmtTime(t.started_at) || '—'), 'started_at'),
    row('finished', esc(fmtTime(t.finished_at) || '—'), 'finished_at'),
    row('duration', dur === null ? '—' : `<span data-ms="${dur}">${esc(fmtDuration(dur))}</span>`, 'duration'),
    t.deadline && !t.finished_at ? row('deadline', esc(fmtTime(t.deadline)), 'deadline') : '',
    t.requeued_from !== undefined && t.requeued_from !== null ? row('requeued from', `<a href="#${esc(`study=${encodeURIComponent(state.study.name)}&trial=${t.requeued_from}`)}">trial ${t.requeued_from}</a>`, 'requeued_from') : '',
    row('intermediate values', (t.intermediate || []).length ? `${t.intermediate.length} (see below)` : 'none reported', 'intermediate'),
    row('version', String(t.version), 'version'),
  ].join('') + '</tbody>';
  // Typed parameters: the space's type and the value's JSON type.
  $('trial-params').innerHTML = '<caption>Parameters</caption><thead><tr><th scope="col">parameter</th><th scope="col">type</th><th scope="col">value</th></tr></thead><tbody>' +
    params().map((p) => {
      const v = t.params[p.name];
      const type = p.type === 'categorical' ? `categorical (${jsonType(v)})` : `${p.type}${p.log ? ', log' : ''}`;
      return `<tr data-param="${esc(p.name)}"><th scope="row">${esc(p.name)}</th><td>${esc(type)}</td><td data-json="${esc(JSON.stringify(v ?? null))}"${exact(v)}>${v === undefined ? esc(inactiveText(p)) : esc(fmtValue(v))}</td></tr>`;
    }).join('') + '</tbody>';
  outcomeTable(t);
  const attrs = Object.entries(t.user_attrs || {});
  $('trial-attrs').innerHTML = '<caption>User attributes</caption>' + (attrs.length
    ? '<thead><tr><th scope="col">name</th><th scope="col">value</th></tr></thead><tbody>' +
      attrs.map(([k, v]) => `<tr data-attr="${esc(k)}"><th scope="row">${esc(k)}</th><td data-json="${esc(JSON.stringify(v))}">${esc(fmtValue(v))}</td></tr>`).join('') + '</tbody>'
    : '<tbody><tr><td>none</td></tr></tbody>');
  // What else the optimizer recorded (e.g. the GP hyperparameters).
  const meta = t.meta && typeof t.meta === 'object' ? Object.fromEntries(Object.entries(t.meta).filter(([k]) => k !== 'note')) : null;
  $('trial-meta').innerHTML = meta && Object.keys(meta).length ? `<details><summary>Optimizer record (meta)</summary><pre>${esc(JSON.stringify(meta, null, 2))}</pre></details>` : '';
  renderCurve(t);
  renderShapley(t);
}

function renderCurve(t) {
  const iv = (t.intermediate || []).slice().sort((a, b) => a.step - b.step);
  // Without values the panel is left out and the facts say so; the Shapley
  // panel then takes the row.
  $('trial-curve-panel').hidden = iv.length === 0;
  $('trial-shapley-panel').classList.toggle('wide', iv.length === 0);
  setNote('trial-curve-note', iv.length ? `${iv.length} intermediate value${iv.length === 1 ? '' : 's'} reported` : 'no intermediate values reported');
  $('trial-curve-data').innerHTML = iv.length ? '<thead><tr><th scope="col">step</th><th scope="col">value</th></tr></thead><tbody>' +
    iv.map((p) => `<tr><td>${p.step}</td><td data-v="iv" data-x="${p.value}"${exact(p.value)}>${fmt(p.value)}</td></tr>`).join('') + '</tbody>' : '';
  const c = chartIf('trial-curve-chart', iv.length > 0);
  if (!c) return;
  c.setOption({
    aria: { enabled: true }, animation: false, tooltip: { trigger: 'axis', valueFormatter: fmt },
    grid: { left: 70, right: 20, top: 20, bottom: 45 },
    xAxis: { type: 'value', name: 'step', nameLocation: 'middle', nameGap: 26, minInterval: 1, scale: true, ...EDGE_AXIS },
    yAxis: { type: 'value', name: 'intermediate value (study units)', nameLocation: 'middle', nameGap: 50, scale: true, axisLabel: { formatter: fmt } },
    series: [{ name: `trial ${t.number}`, type: 'line', data: iv.map((p) => [p.step, p.value]), color: stateColour(t.state), symbolSize: 6 }],
  }, true);
}

// The Shapley values are computed once per shown trial (a click recomputes
// them); they need three usable trials.
function renderShapley(t) {
  $('trial-shapley-panel').hidden = false;
  const key = `${state.gen}:${t.number}`;
  if (explainedFor === key) return;
  explainedFor = key;
  $('trial-shapley-data').innerHTML = '';
  if (window.xbo.charts['trial-shapley-chart']) window.xbo.charts['trial-shapley-chart'].clear();
  delete state.explained['trial-shapley'];
  explainShown();
}
function explainShown() {
  const n = shown;
  if (n !== null) explainProposal('trial-shapley', n, () => shown === n).then((r) => { if (r) window.xbo.trialShapley = r; });
}
export function forgetTrialView() { shown = null; explainedFor = ''; }

function step(dir) {
  const numbers = sortedTrials().map((x) => x.number);
  const at = numbers.indexOf(shown);
  const next = numbers[at + dir];
  if (next !== undefined) openTrial(next);
}
$('trial-prev').addEventListener('click', () => step(-1));
$('trial-next').addEventListener('click', () => step(1));
$('trial-go').addEventListener('click', () => { const n = Number($('trial-number').value); if (Number.isInteger(n)) openTrial(n); });
$('trial-number').addEventListener('keydown', (e) => { if (e.key === 'Enter') $('trial-go').click(); });
$('trial-shapley-go').addEventListener('click', explainShown);
$('trial-shapley-objective').addEventListener('change', explainShown);
