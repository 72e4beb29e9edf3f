// The trial view's ablation path (GET …/explain/ablation from the trial's
// configuration to the best trial's, Fawcett and Hoos 2016): the
// parameters changed one at a time, each step the change the surrogate's
// mean rewards most, with what each brings. It says which of a trial's
// differences from the best matter, and in which order. Computed on
// request, as the local importance is.
import { $, api, chartIf, esc, fmtValue, multiObjective, objectives, setNote, studyURL } from './core.js';
import { onRequest } from './onrequest.js';
import { num, numSpan, pct } from './format.js';

function draw(n, r) {
  const steps = r.steps || [];
  window.xbo.ablation = { trial: n, steps: steps.map((s) => s.param), predictions: steps.map((s) => s.prediction) };
  setNote('trial-ablation-note', (steps.length
    ? `From trial ${n}'s configuration (predicted mean ${num(r.source_prediction)}) to the best trial's (${num(r.target_prediction)}), one parameter at a time, ` +
      `each step the change the surrogate's mean rewards most; "mean after" is the predicted mean once the step is taken, "gain" what the step brings, "share" its part of the whole way`
    : `Trial ${n}'s configuration is the best trial's: there is no path to walk`) +
    (multiObjective() ? `, for ${objectives()[0].name}, the first objective.` : '.'));
  $('trial-ablation-data').innerHTML = steps.length ? `<caption class="sr-only">Ablation path from trial ${n} to the best trial</caption>` +
    '<thead><tr><th scope="col">step</th><th scope="col">parameter</th><th scope="col">from</th><th scope="col">to</th><th scope="col">mean after</th><th scope="col">gain</th><th scope="col">share</th></tr></thead><tbody>' +
    steps.map((s, k) => `<tr data-param="${esc(s.param)}"><td class="num">${k + 1}</td><th scope="row">${esc(s.param)}</th>` +
      `<td>${esc(fmtValue(r.source_point[s.param]))}</td><td>${esc(fmtValue(r.target_point[s.param]))}</td>` +
      `<td class="num" data-x="${s.prediction}">${numSpan(s.prediction)}</td><td class="num" data-x="${s.contribution}">${numSpan(s.contribution)}</td>` +
      `<td class="num" data-x="${s.relative}">${pct(s.relative)}</td></tr>`).join('') + '</tbody>' : '';
  chartIf('trial-ablation-chart', true).setOption({
    aria: { enabled: true }, animation: false,
    grid: { left: 70, right: 20, top: 20, bottom: 50 },
    xAxis: { type: 'category', data: [`trial ${n}`, ...steps.map((s) => `+ ${s.param}`)], name: 'parameters changed so far', nameLocation: 'middle', nameGap: 30 },
    yAxis: { type: 'value', scale: true, name: 'predicted mean', nameLocation: 'middle', nameGap: 50, axisLabel: { formatter: (v) => num(v) } },
    tooltip: { trigger: 'axis', valueFormatter: (v) => String(v) },
    series: [{ type: 'line', step: false, symbolSize: 8, data: [r.source_prediction, ...steps.map((s) => s.prediction)], itemStyle: { color: '#2171b5' } }],
  }, true);
}

// forgetAblation clears the panel when another trial is shown.
export const forgetAblation = onRequest('trial-ablation', 'Which of this trial\'s differences from the best trial matter, in order: press the button to compute.',
  (t) => api(studyURL(`explain/ablation?source=${encodeURIComponent(JSON.stringify(t.params))}&target=best`)), draw);
