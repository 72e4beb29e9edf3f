// The Overview's configuration footprint: where the evaluated
// configurations lie in the space, on a 2-D map the server computes
// (GET …/explain/footprint: the principal components of the unit-cube
// encodings, i.e. classical MDS of their distances), beside uniformly
// drawn configurations on the same axes. Grey without trials is space the
// study never searched; dark points are its best trials.
import { $, api, chart, minimize, onChart, openTrial, setNote, state, studyURL, usable } from './core.js';
import { num, pct } from './format.js';
import { thin } from './slices.js';

const PALE_TO_DARK = ['#dbe9f6', '#9ecae1', '#4292c6', '#2171b5', '#08306b'];

// The map is fetched again only when the usable trials changed, not on
// every event of a running study.
let fetched = { study: null, count: -1 };
let footTrials = [];

// axisName names a component by the share of the spread it carries and its
// largest weights: what moves a configuration along it.
function axisName(res, k) {
  const top = res.params.map((p, j) => ({ p, w: res.loadings[j][k] })).sort((a, b) => Math.abs(b.w) - Math.abs(a.w)).slice(0, 2)
    .filter((x) => Math.abs(x.w) >= 0.05);
  return `component ${k + 1} (${pct(res.explained[k])})` + (top.length ? `: ${top.map((x) => `${x.p} ${x.w < 0 ? '−' : '+'}${num(Math.abs(x.w))}`).join(', ')}` : '');
}

export async function renderFootprint(all) {
  const count = all.filter(usable).length;
  const study = state.study.name;
  if (fetched.study === study && fetched.count === count) return;
  fetched = { study, count };
  let res;
  try {
    res = await api(studyURL('explain/footprint'));
  } catch (e) {
    setNote('footprint-note', `no footprint yet: ${e.message}`, false);
    return;
  }
  if (state.study.name !== study) return;
  // The best trials drawn last, darkest: ranked by value, not coloured by it,
  // so that one diverged trial does not wash the others out.
  const { drawn, words } = thin(res.trials, (p) => p.value);
  const order = drawn.slice().sort((a, b) => (minimize() ? b.value - a.value : a.value - b.value));
  footTrials = order.map((p) => p.trial);
  const n = order.length;
  window.xbo.footprint = { trials: footTrials, points: order.map((p) => [p.x, p.y]), explained: res.explained };
  setNote('footprint-note', `${res.trials.length} complete trials${words} mapped by the principal components of their configurations (each parameter on [0, 1], log where it is searched on a log scale; ` +
    `the two axes carry ${pct(res.explained[0] + res.explained[1])} of the spread). Grey: ${res.uniform.length} configurations drawn uniformly from the space, on the same axes; ` +
    'where grey lies without trials the study never searched. Trials by rank, pale the worst, dark the best (drawn last); click a point for its trial.');
  chart('footprint-chart').setOption({
    aria: { enabled: true }, animation: false,
    grid: { left: 60, right: 20, top: 40, bottom: 60 },
    legend: { data: ['uniform configurations', 'trials'], top: 0 },
    xAxis: { type: 'value', scale: true, name: axisName(res, 0), nameLocation: 'middle', nameGap: 30, nameTextStyle: { fontSize: 11 }, axisLabel: { formatter: (v) => num(v) } },
    yAxis: { type: 'value', scale: true, name: axisName(res, 1), nameLocation: 'middle', nameGap: 40, nameTextStyle: { fontSize: 11 }, axisLabel: { formatter: (v) => num(v) } },
    tooltip: { trigger: 'item', formatter: (q) => (q.seriesName === 'trials' ? `trial ${q.data.trial}<br>value ${q.data.v}` : 'a uniformly drawn configuration') },
    series: [
      // Small and grey; the trials are outlined, so that the palest of them
      // still stands out from the uniform points.
      { name: 'uniform configurations', type: 'scatter', symbolSize: 4, itemStyle: { color: '#c8c8c8' }, data: res.uniform, silent: true },
      { name: 'trials', type: 'scatter', symbolSize: 9, itemStyle: { color: PALE_TO_DARK[3], borderColor: '#08306b', borderWidth: 1 },
        data: order.map((p, i) => ({ value: [p.x, p.y], trial: p.trial, v: p.value,
          itemStyle: { color: PALE_TO_DARK[Math.round((n > 1 ? i / (n - 1) : 1) * (PALE_TO_DARK.length - 1))] } })) },
    ],
  }, true);
  $('footprint-chart').setAttribute('aria-label', `Map of ${n} evaluated configurations and ${res.uniform.length} uniform ones; ${axisName(res, 0)}; ${axisName(res, 1)}`);
}

onChart('footprint-chart', (c) => c.on('click', (q) => { if (q.seriesName === 'trials' && q.data) openTrial(q.data.trial); }));
