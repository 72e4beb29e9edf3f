// The Compare view: the best-so-far traces of two or more studies on one
// chart, each in its own study's direction, with a table of their bests.
import {
  $, EDGE_AXIS, SERIES_COLOURS, api, bestSoFar, chart, esc, feasible, fmt, multiObjective, objectiveValues, objectives, setNote, state, studyURL, usable,
} from './core.js';
import { frontMask, hypervolumeTrace, referencePoint } from './pareto.js';
import { exact } from './format.js';

const PAGE = 10000; // trials per request (the API's limit)
const MAX_TRIALS = 100000; // complete trials read per study
// Complete trials of other studies, refetched when their count changes.
const cache = new Map();

function countOf(s) { return Object.values(s.counts || {}).reduce((a, b) => a + b, 0); }
// A listed study's objectives ({name, direction}) and constraint count, from its space.
function objectivesOf(s) {
  const sp = s.space || {};
  return Array.isArray(sp.objectives) && sp.objectives.length ? sp.objectives.map((o) => ({ name: o.name, direction: o.direction === 'maximize' ? 'maximize' : 'minimize' }))
    : [{ name: 'value', direction: sp.objective === 'maximize' ? 'maximize' : 'minimize' }];
}
function constraintsOf(s) { return s.space && Array.isArray(s.space.constraints) ? s.space.constraints.length : 0; }
function objectivesText(os) { return os.map((o) => `${o.direction} ${o.name}`).join(', '); }

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
    const os = objectivesOf(s);
    return `<label><input type="checkbox" value="${esc(s.name)}"${self || chosen.includes(s.name) ? ' checked' : ''}${self ? ' disabled' : ''}> ${esc(s.name)} <small>(${esc(os.length > 1 ? `${os.length} objectives` : s.direction)}, ${countOf(s)} trials)</small></label>`;
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
  // A log axis of best values means nothing for hypervolumes.
  $('compare-log').closest('label').hidden = multiObjective();
  if (multiObjective()) return compareFronts(ticket, chosen);
  const names = [state.study.name, ...chosen];
  const lines = [];
  try {
    for (const name of names) {
      const s = state.studies.find((x) => x.name === name);
      if (!s && name !== state.study.name) { lines.push({ name, missing: true }); continue; }
      // A study with several objectives has no best-so-far trace to overlay.
      if (s && name !== state.study.name && objectivesOf(s).length > 1) { lines.push({ name, missing: true, why: `${name} has several objectives (open it to compare fronts)` }); continue; }
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
      // Infeasible trials are never best (GET …/best).
      const nc = constraintsOf(name === state.study.name ? state.study : s);
      const { line, best } = bestSoFar(done, minimizeIt, (t) => feasible(t, nc));
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
    lines.filter((l) => l.missing).map((l) => ` ${l.why || `No study ${l.name}`}.`).join(''));
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
    drawn.map((l) => `<tr data-study="${esc(l.name)}"><th scope="row">${esc(l.name)}</th><td>${l.minimizeIt ? 'minimize' : 'maximize'}</td><td>${l.n}${l.total > l.n ? ` (of ${l.total}, the first read)` : ''}</td><td data-x="${l.best ?? ''}"${exact(l.best)}>${fmt(l.best)}</td><td>${l.at ?? ''}</td></tr>`).join('') + '</tbody>';
}

// compareFronts compares studies with several objectives by the
// hypervolume of their feasible fronts after each trial, against one
// reference point for all of them (the rule of pareto.js over the feasible
// trials of every study drawn), so the curves measure the same volume.
// Only studies with the open study's objectives (names and directions)
// can be compared this way; the others are named in the note.
async function compareFronts(ticket, chosen) {
  const os = objectives();
  const key = JSON.stringify(os);
  const runs = [], skipped = [];
  try {
    for (const name of [state.study.name, ...chosen]) {
      const self = name === state.study.name;
      const s = self ? state.study : state.studies.find((x) => x.name === name);
      if (!s) { skipped.push(`No study ${name}.`); continue; }
      if (JSON.stringify(objectivesOf(s)) !== key) { skipped.push(`${name} has other objectives (${objectivesText(objectivesOf(s))}): not comparable.`); continue; }
      let done, total;
      if (self) {
        done = [...state.trials.values()].filter(usable).sort((a, b) => a.number - b.number);
        total = done.length;
      } else {
        const r = await completeTrials(s);
        done = r.trials.filter(usable);
        total = r.total;
      }
      done = done.filter((t) => { const v = objectiveValues(t); return v && v.length === os.length && v.every(Number.isFinite); });
      const nc = constraintsOf(s);
      runs.push({ name, done, total, isFeasible: (t) => feasible(t, nc) });
    }
  } catch (e) {
    if (ticket === drawing) setNote('compare-note', `comparison: ${e.message}`, true);
    return;
  }
  if (ticket !== drawing) return;
  const ref = referencePoint(runs.flatMap((r) => r.done.filter(r.isFeasible).map(objectiveValues)), os);
  for (const r of runs) {
    r.trace = ref ? hypervolumeTrace(r.done, ref, os, r.isFeasible) : [];
    const feas = r.done.filter(r.isFeasible);
    r.front = frontMask(feas.map(objectiveValues), os).filter(Boolean).length;
    r.hv = r.trace.length ? r.trace[r.trace.length - 1][1] : null;
  }
  window.xbo.compare = runs.map((r) => ({ name: r.name, hypervolume: r.hv, front: r.front, n: r.done.length, points: r.trace.length }));
  window.xbo.compareRef = ref;
  const refText = ref ? os.map((o, k) => `${o.name} = ${fmt(ref[k])}`).join(', ') : '';
  setNote('compare-note', (chosen.length ? '' : 'Tick another study with the same objectives to overlay its hypervolume. ') +
    `Hypervolume of each study's feasible Pareto front after each trial (${objectivesText(os)}), against one reference point for every study drawn` +
    (ref ? ` (${refText}: each objective's worst feasible value over these studies moved 10% of their range further)` : '') + '. ' + skipped.join(' '));
  chart('compare-chart').setOption({
    aria: { enabled: true }, animation: false,
    title: ref ? { text: `reference point: ${refText}`, left: 'center', top: 22, textStyle: { fontSize: 12, fontWeight: 'normal' } } : undefined,
    legend: { data: runs.map((r) => r.name), top: 0 },
    tooltip: { trigger: 'axis', valueFormatter: fmt },
    grid: { left: 70, right: 20, top: 50, bottom: 45 },
    xAxis: { type: 'value', name: 'trial number', nameLocation: 'middle', nameGap: 26, min: 0, ...EDGE_AXIS },
    yAxis: { type: 'value', name: 'hypervolume (higher is better)', nameLocation: 'middle', nameGap: 50, min: 0, axisLabel: { formatter: fmt } },
    dataZoom: [{ type: 'inside' }],
    series: runs.map((r, i) => ({ name: r.name, type: 'line', step: 'end', showSymbol: false, data: r.trace.map((p) => [p[0], p[1]]), color: SERIES_COLOURS[i % SERIES_COLOURS.length], lineStyle: { width: 2, type: i % 2 ? 'dashed' : 'solid' } })),
  }, true);
  $('compare-data').innerHTML = '<thead><tr><th scope="col">study</th><th scope="col">objectives</th><th scope="col">complete trials</th><th scope="col">Pareto front</th><th scope="col">hypervolume</th></tr></thead><tbody>' +
    runs.map((r) => `<tr data-study="${esc(r.name)}"><th scope="row">${esc(r.name)}</th><td>${esc(objectivesText(os))}</td><td>${r.done.length}${r.total > r.done.length ? ` (of ${r.total}, the first read)` : ''}</td><td data-v="front">${r.front}</td><td data-x="${r.hv ?? ''}"${exact(r.hv)}>${fmt(r.hv)}</td></tr>`).join('') + '</tbody>';
}
