// The Compare view: the best-so-far traces of two or more studies on one
// chart, each in its own study's direction, with a table of their bests.
import { $, EDGE_AXIS, SERIES_COLOURS, api, bestSoFar, chart, esc, fmt, setNote, state, studyURL, usable } from './core.js';

const PAGE = 10000; // trials per request (the API's limit)
const MAX_TRIALS = 100000; // complete trials read per study
// Complete trials of other studies, refetched when their count changes.
const cache = new Map();

function countOf(s) { return Object.values(s.counts || {}).reduce((a, b) => a + b, 0); }

async function completeTrials(s) {
  const n = countOf(s);
  const hit = cache.get(s.name);
  if (hit && hit.count === n) return hit;
  const trials = [];
  let total = Infinity;
  for (let offset = 0; offset < Math.min(total, MAX_TRIALS); offset += PAGE) {
    const r = await api(studyURL(`trials?state=complete&offset=${offset}&limit=${PAGE}`, s.name));
    trials.push(...(r.trials || []));
    total = r.total;
    if (!r.trials || r.trials.length < PAGE) break;
  }
  const entry = { count: n, trials, total };
  cache.set(s.name, entry);
  return entry;
}

// compareWith is the studies chosen besides the open one (the hash's `with`).
export function compareWith() {
  return new URLSearchParams(location.hash.slice(1)).getAll('with').filter((n) => n !== state.study.name);
}

function setCompareHash(names) {
  const h = new URLSearchParams();
  h.set('study', state.study.name);
  h.set('view', 'compare');
  for (const n of names) h.append('with', n);
  location.hash = h.toString();
}

// fillCompareChoices lists every study as a checkbox, the open one fixed.
function fillCompareChoices(chosen) {
  const box = $('compare-studies');
  box.innerHTML = '<legend>Studies on the chart</legend>' + state.studies.map((s) => {
    const self = s.name === state.study.name;
    return `<label><input type="checkbox" value="${esc(s.name)}"${self || chosen.includes(s.name) ? ' checked' : ''}${self ? ' disabled' : ''}> ${esc(s.name)} <small>(${esc(s.direction)}, ${countOf(s)} trials)</small></label>`;
  }).join('');
}
$('compare-studies').addEventListener('change', () => {
  setCompareHash([...document.querySelectorAll('#compare-studies input:checked:not(:disabled)')].map((i) => i.value));
});

$('compare-log').addEventListener('change', () => renderCompare());

let drawing = 0;
export async function renderCompare() {
  const ticket = ++drawing;
  const chosen = compareWith();
  fillCompareChoices(chosen);
  const names = [state.study.name, ...chosen];
  const lines = [];
  try {
    for (const name of names) {
      const s = state.studies.find((x) => x.name === name);
      if (!s && name !== state.study.name) { lines.push({ name, missing: true }); continue; }
      let done, total;
      if (name === state.study.name) { // the open study is live already
        done = [...state.trials.values()].filter(usable).sort((a, b) => a.number - b.number);
        total = done.length;
      } else {
        const r = await completeTrials(s);
        done = r.trials.filter(usable);
        total = r.total;
      }
      const minimizeIt = (name === state.study.name ? state.study.direction : s.direction) !== 'maximize';
      const { line, best } = bestSoFar(done, minimizeIt);
      lines.push({ name, line, best, minimizeIt, n: done.length, total, at: line.length > 1 ? line[line.length - 2][0] : null });
    }
  } catch (e) {
    if (ticket === drawing) setNote('compare-note', `comparison: ${e.message}`, true);
    return;
  }
  if (ticket !== drawing) return;
  const drawn = lines.filter((l) => !l.missing);
  window.xbo.compare = drawn.map((l) => ({ name: l.name, best: l.best, n: l.n, points: l.line.length }));
  const mixed = new Set(drawn.map((l) => l.minimizeIt)).size > 1;
  const positive = drawn.every((l) => l.line.every((p) => p[1] > 0));
  $('compare-log').disabled = !positive;
  const log = positive && $('compare-log').checked;
  setNote('compare-note', (names.length < 2 ? 'Tick another study to overlay its best-so-far trace. ' : '') +
    `Best value so far against trial number, each study in its own direction${mixed ? ' (the studies do not share a direction: compare with care)' : ''}; values in each study's units.` +
    lines.filter((l) => l.missing).map((l) => ` No study ${l.name}.`).join(''));
  chart('compare-chart').setOption({
    aria: { enabled: true }, animation: false,
    legend: { data: drawn.map((l) => l.name), top: 0 },
    tooltip: { trigger: 'axis', valueFormatter: fmt },
    grid: { left: 70, right: 20, top: 30, bottom: 45 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26, min: 0, ...EDGE_AXIS },
    yAxis: { type: log ? 'log' : 'value', name: 'best value so far (study units)', nameLocation: 'middle', nameGap: 50, scale: true, axisLabel: { formatter: fmt } },
    dataZoom: [{ type: 'inside' }],
    series: drawn.map((l, i) => ({ name: l.name, type: 'line', step: 'end', showSymbol: false, data: l.line, color: SERIES_COLOURS[i % SERIES_COLOURS.length], lineStyle: { width: 2, type: i % 2 ? 'dashed' : 'solid' } })),
  }, true);
  $('compare-data').innerHTML = '<thead><tr><th scope="col">study</th><th scope="col">direction</th><th scope="col">complete trials</th><th scope="col">best</th><th scope="col">at trial</th></tr></thead><tbody>' +
    drawn.map((l) => `<tr data-study="${esc(l.name)}"><th scope="row">${esc(l.name)}</th><td>${l.minimizeIt ? 'minimize' : 'maximize'}</td><td>${l.n}${l.total > l.n ? ` (of ${l.total}, the first read)` : ''}</td><td data-x="${l.best ?? ''}">${fmt(l.best)}</td><td>${l.at ?? ''}</td></tr>`).join('') + '</tbody>';
}
