// The Importance panel (GET explain/importance), the first answer of the
// Explanations view: which parameters matter. Parameters are ranked by
// their total effect (everything a parameter takes part in, its main
// effect and its interactions; gp-sobol), with the main effect (the
// parameter alone) beside it: a parameter that acts only through
// interactions has a main effect near 0 and must not be ranked last.
// Without total effects (forest-fanova) the ranking is by main effect.
import { $, C, chart, esc, groupedErrorBars, setNote, state, withObjective } from './core.js';
import { explainGET } from './freshness.js';
import { budgetText, withBudget } from './budgets.js';
import { interval, num, pct } from './format.js';

const TOP_PAIRS = 5;

// ranked is the parameters in the panel's order, each with its main and
// (when the method gives it) total effect, and the top pairs.
export function ranked(r) {
  const hasTotal = !!r.total && Object.keys(r.total).length > 0;
  const params = Object.entries(r.main).map(([k, e]) => ({ k, main: e, total: hasTotal ? r.total[k] : null }));
  const key = (p) => (p.total ? p.total.fraction : p.main.fraction);
  params.sort((a, b) => key(b) - key(a) || b.main.fraction - a.main.fraction || a.k.localeCompare(b.k));
  const pairs = Object.entries(r.pairs || {}).map(([k, e]) => ({ k: k.replace(',', ' × '), ...e })).sort((a, b) => b.fraction - a.fraction).slice(0, TOP_PAIRS);
  return { params, pairs, hasTotal };
}

// spread is an effect's whisker: the 95% interval (gp-sobol) or ± one
// standard deviation across trees (forest-fanova), clipped at 0.
function spread(e) { return Array.isArray(e.ci95) ? [e.ci95[0], e.ci95[1]] : [Math.max(0, e.fraction - e.std), e.fraction + e.std]; }
function effectText(e) { const [lo, hi] = spread(e); return `${pct(e.fraction)} ${interval(lo, hi, pct)}`.trim(); }

export async function refreshImportance() {
  if (!state.study) return null;
  const good = $('good-region').checked;
  const gen = state.gen;
  setNote('importance-note', 'computing…');
  try {
    const r = await explainGET('importance', withObjective('importance', withBudget('explain/importance' + (good ? '?cap_quantile=0.25' : ''))));
    if (!r || gen !== state.gen) return null;
    window.xbo.importance = r;
    drawImportance(r, good);
    return r;
  } catch (e) {
    setNote('importance-note', `importance: ${e.message}`, true);
    return null;
  }
}

function drawImportance(r, good) {
  const { params, pairs, hasTotal } = ranked(r);
  const ci = params.length > 0 && Array.isArray(params[0].main.ci95);
  const how = ci ? 'whiskers: 95% intervals from the GP\'s posterior samples' : 'whiskers: ± one standard deviation across trees';
  setNote('importance-note', `${good ? 'good region (values capped at the top-25% quantile)' : 'whole space'}; ${r.budget ? budgetText(r) + '; ' : ''}${r.method}; ` +
    (hasTotal ? 'ranked by total effect (the parameter with all its interactions), main effect (alone) beside it' : 'ranked by main effect (the method gives no total effect)') +
    `; ${how}; fractions of a total variance of ${num(r.total_variance)}`);
  // The bars: total then main per parameter; each bar says its value, so
  // a whisker over a bar of height 0 is read against a written 0.0%.
  const bars = hasTotal ? [{ name: 'total effect', color: C.blue, of: (p) => p.total }, { name: 'main effect', color: C.sky, of: (p) => p.main }] : [{ name: 'main effect', color: C.blue, of: (p) => p.main }];
  const whiskers = bars.flatMap((b, k) => params.map((p, j) => [j, ...spread(b.of(p)), k, pct(b.of(p).fraction)]));
  const top = Math.max(0.01, ...whiskers.map((w) => w[2]));
  chart('importance-chart').setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: bars.map((b) => b.name), top: 0 },
    tooltip: { trigger: 'axis', valueFormatter: pct },
    grid: { left: 60, right: 20, top: 30, bottom: 70 },
    xAxis: { type: 'category', data: params.map((p) => p.k), axisLabel: { rotate: params.length > 4 ? 30 : 0, interval: 0 }, name: hasTotal ? 'parameter (by total effect)' : 'parameter (by main effect)', nameLocation: 'middle', nameGap: 55 },
    // The whiskers decide the top, so none is clipped.
    yAxis: { type: 'value', name: 'fraction of variance', nameLocation: 'middle', nameGap: 45, min: 0, max: Math.min(1.15, 1.15 * top),
      axisLabel: { formatter: (v) => (v <= 1 ? `${num(100 * v)}%` : ''), showMaxLabel: false } },
    series: [
      ...bars.map((b) => ({ name: b.name, type: 'bar', color: b.color, data: params.map((p) => b.of(p).fraction) })),
      groupedErrorBars(ci ? '95% interval' : '± sd', whiskers, bars.length),
    ],
  }, true);
  $('importance-pairs').textContent = pairs.length ? `Largest interactions (pairs): ${pairs.map((p) => `${p.k} ${effectText(p)}`).join('; ')}.` : '';
  const cell = (e, name) => (e ? `<td data-v="${name}" data-x="${e.fraction}" title="${e.fraction}">${pct(e.fraction)}</td><td>${interval(...spread(e), pct)}</td>` : '<td>—</td><td></td>');
  $('importance-data').innerHTML = '<thead><tr><th scope="col">effect</th><th scope="col">total</th><th scope="col">interval</th><th scope="col">main (alone)</th><th scope="col">interval</th></tr></thead><tbody>' +
    params.map((p) => `<tr data-param="${esc(p.k)}"><th scope="row">${esc(p.k)}</th>${cell(p.total, 'total')}${cell(p.main, 'fraction')}</tr>`).join('') +
    pairs.map((p) => `<tr data-pair="${esc(p.k)}"><th scope="row">${esc(p.k)}</th><td></td><td></td>${cell(p, 'pair')}</tr>`).join('') + '</tbody>';
}

$('good-region').addEventListener('change', refreshImportance);
$('importance-objective').addEventListener('change', refreshImportance);
$('importance-refresh').addEventListener('click', refreshImportance);
