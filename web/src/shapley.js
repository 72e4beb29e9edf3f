// The Shapley explanation of one configuration (GET explain/shapley,
// ShapleyMBO, Croppi 2021), drawn by the Proposal panel and the trial view.
import { $, C, chart, esc, fmt, fmtValue, groupedErrorBars, multiObjective, objectiveIndex, objectiveValues, objectives, setNote, state, unitsOf, withObjective } from './core.js';
import { explainGET } from './freshness.js';
import { interval, plus } from './format.js';

const OUTPUT_COLOURS = [C.blue, C.orange, C.green, C.purple];
// Acquisition labels of trials no surrogate chose (opt/settings.go, notProposals).
export const NOT_PROPOSALS = new Set(['initial-design', 'random', 'random-fallback', 'design', 'initial', 'init', 'enqueued', 'imported', 'requeue']);

// explainTrial fetches trial n's Shapley values (today's surrogate) for the
// panel whose elements are `${panel}-note`, `-chart` and `-data`, and draws
// them while stillWanted() says the panel still shows trial n (how: see
// drawShapley). It returns the answer, or null when the study or the trial
// changed meanwhile or the request failed.
export async function explainTrial(panel, n, stillWanted, how) {
  const gen = state.gen;
  setNote(`${panel}-note`, `explaining trial ${n}…`);
  try {
    const r = await explainGET(panel, withObjective(panel, `explain/shapley?trial=${n}`));
    if (!r || gen !== state.gen || !stillWanted()) return null;
    drawShapley(panel, r, how);
    return r;
  } catch (e) {
    if (gen === state.gen && stillWanted()) setNote(`${panel}-note`, `Shapley values of trial ${n}: ${e.message}`, true);
    return null;
  }
}

// drawShapley draws an explanation of trial r.trial's configuration. how,
// when given, says which model it is (how.lead, the note's first words)
// and in which units (how.units); without it the model is today's
// surrogate and a trial no model chose is said to be seen as it is now.
export function drawShapley(panel, r, how = {}) {
  const ex = r.explanation;
  const outs = ex.outputs;
  const n = r.trial;
  const t = state.trials.get(n);
  // With several objectives the values explain the chosen one: its value is quoted.
  const k = objectiveIndex(panel);
  const vals = t && objectiveValues(t);
  const valueText = !t || t.value === undefined ? '' : multiObjective() ? (vals ? `, ${objectives()[k].name} ${fmt(vals[k])}` : '') : ', value ' + fmt(t.value);
  // Exact values have no intervals to speak of (lower = upper).
  const exact = outs.every((o) => o.phi.every((_, j) => o.lower[j] === o.upper[j]));
  setNote(`${panel}-note`, `trial ${n}${t ? ` (${t.state}${valueText}, ${t.acquisition || ''})` : ''}${how.lead ? ` ${how.lead}` : ''}: ${ex.method} Shapley values${exact ? '' : `, ${Math.round(ex.level * 100)}% intervals`}; ` +
    outs.map((o) => `${o.output}: prediction ${fmt(o.prediction)} = average ${fmt(o.average)} ${plus(o.payout)}`).join('; ') +
    (!how.lead && t && NOT_PROPOSALS.has(t.acquisition) ? `. No surrogate chose this configuration (${t.acquisition}): the values say how the surrogate sees it now, not why it was proposed.` : ''));
  const series = outs.map((o, k) => ({ name: o.output, type: 'bar', data: o.phi, color: OUTPUT_COLOURS[k % OUTPUT_COLOURS.length] }));
  // Whiskers of every output over its bar in the group; an exact value
  // (lower = upper) has none.
  series.push(groupedErrorBars('interval', outs.flatMap((o, k) => o.phi.map((_, j) => [j, o.lower[j], o.upper[j], k]).filter((w) => w[1] !== w[2])), outs.length));
  const many = ex.params.length > 4;
  chart(`${panel}-chart`).setOption({
    aria: { enabled: true }, animation: false,
    tooltip: { trigger: 'axis', valueFormatter: fmt }, legend: { data: outs.map((o) => o.output), top: 0 },
    grid: { left: 70, right: 20, top: 30, bottom: many ? 80 : 45 },
    // Every parameter, with the explained configuration's value.
    xAxis: { type: 'category', data: ex.params.map((name) => (r.point && r.point[name] !== undefined && r.point[name] !== null ? `${name}=${fmtValue(r.point[name])}` : `${name} (off)`)),
      axisLabel: { interval: 0, rotate: many ? 30 : 0 }, name: 'parameter = value', nameLocation: 'middle', nameGap: many ? 58 : 28 },
    yAxis: { type: 'value', name: `Shapley value (${how.units || unitsOf(k)})`, nameLocation: 'middle', nameGap: 50, axisLabel: { formatter: fmt } },
    series,
  }, true);
  $(`${panel}-data`).innerHTML = `<caption class="sr-only">Shapley values of trial ${n} with their intervals</caption><thead><tr><th scope="col">output</th>` +
    ex.params.map((p) => `<th scope="col">${esc(p)} = ${esc(r.point && p in r.point ? fmtValue(r.point[p]) : 'off')}</th>`).join('') + '</tr></thead><tbody>' +
    outs.map((o) => `<tr><th scope="row">${esc(o.output)}</th>${o.phi.map((v, j) => `<td data-v="phi" data-x="${v}" title="${v} [${o.lower[j]}, ${o.upper[j]}]">${[fmt(v), interval(o.lower[j], o.upper[j])].filter(Boolean).join(' ')}</td>`).join('')}</tr>`).join('') + '</tbody>';
}
