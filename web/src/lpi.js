// The trial view's local parameter importance (GET …/explain/lpi at the
// trial's configuration): how much of the surrogate's variation around
// this configuration each parameter carries when it alone is moved over
// its range (the LPI of Biedenkapp et al. 2018, as DeepCAVE shows it).
// Asked for with the panel's button rather than on every trial opened: a
// trial view is often opened only to read its facts.
import { $, api, chartIf, esc, multiObjective, objectives, setNote, studyURL } from './core.js';
import { onRequest } from './onrequest.js';
import { pct } from './format.js';

// The surrogate's outputs by what they are to a reader.
const OUTPUT_NAMES = { mean: 'mean', se: 'uncertainty (se)', cb: 'confidence bound (cb)' };

function draw(n, r) {
  const outs = r.outputs || [];
  const mean = outs.find((o) => o.output === 'mean') || outs[0];
  window.xbo.lpi = { trial: n, params: r.params, outputs: outs };
  // Largest first: the parameters that matter here lead.
  const order = r.params.map((p, j) => j).sort((a, b) => mean.fraction[b] - mean.fraction[a]);
  setNote('trial-lpi-note', `Each parameter's share of the surrogate's variation when it alone is moved over its range from trial ${n}'s configuration ` +
    `(the others held at the trial's values; ${r.grid} values per parameter; the variance on hover in the table)` + (multiObjective() ? `, for ${objectives()[0].name}, the first objective` : '') + '.');
  $('trial-lpi-data').innerHTML = `<caption class="sr-only">Local parameter importance at trial ${n}</caption><thead><tr><th scope="col">parameter</th>` +
    outs.map((o) => `<th scope="col">${esc(OUTPUT_NAMES[o.output] || o.output)}</th>`).join('') + '</tr></thead><tbody>' +
    order.map((j) => `<tr data-param="${esc(r.params[j])}"><th scope="row">${esc(r.params[j])}</th>` +
      outs.map((o) => `<td class="num" data-x="${o.fraction[j]}" title="variance ${o.variance[j]}">${pct(o.fraction[j])}</td>`).join('') + '</tr>').join('') + '</tbody>';
  chartIf('trial-lpi-chart', true).setOption({
    aria: { enabled: true }, animation: false,
    grid: { left: 100, right: 60, top: 20, bottom: 40 },
    xAxis: { type: 'value', min: 0, max: 1, name: `share of the ${mean.output}'s local variation`, nameLocation: 'middle', nameGap: 26, axisLabel: { formatter: (v) => pct(v) } },
    yAxis: { type: 'category', inverse: true, data: order.map((j) => r.params[j]) },
    series: [{ type: 'bar', barMaxWidth: 28, data: order.map((j) => mean.fraction[j]), itemStyle: { color: '#2171b5' }, label: { show: true, position: 'right', formatter: (q) => pct(q.value) } }],
  }, true);
}

// forgetLPI clears the panel when another trial is shown: its numbers are
// the previous trial's.
export const forgetLPI = onRequest('trial-lpi', 'Which parameters matter around this configuration: press the button to compute.',
  (t) => api(studyURL(`explain/lpi?point=${encodeURIComponent(JSON.stringify(t.params))}`)), draw);
