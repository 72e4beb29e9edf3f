// The trials table: every trial with its duration and fail reason, sortable
// by any column, filtered by state, value range and one parameter, with a
// column chooser; a row opens the trial view.
import {
  $, KNOWN_STATES, choiceIndex, constrained, durationMs, esc, feasible, fmt, fmtDuration, fmtValue, multiObjective, objectiveValues, objectives,
  openTrial, param, params, sortedTrials, state, stateColour, violated,
} from './core.js';
import { exact } from './format.js';

const PAGE = 50;
const hidden = new Set(); // column keys the user switched off

// Columns; text ones are aligned left, numbers right. A study with several
// objectives has a column per objective instead of "value"; a constrained
// study a feasibility column.
function columns() {
  const values = multiObjective()
    ? objectives().map((o, k) => ({ key: `o:${k}`, label: `${o.name} (${o.direction === 'maximize' ? 'max' : 'min'})` }))
    : [{ key: 'value', label: 'value' }];
  return [
    { key: 'number', label: '#' }, { key: 'state', label: 'state', text: true }, ...values,
    ...(constrained() ? [{ key: 'feasible', label: 'feasible', text: true }] : []),
    { key: 'duration', label: 'duration' },
    ...params().map((p) => ({ key: 'p:' + p.name, label: p.name + (p.log ? ' (log)' : ''), text: p.type === 'categorical' })),
    { key: 'acquisition', label: 'chosen by', text: true }, { key: 'worker', label: 'worker', text: true }, { key: 'fail_reason', label: 'fail reason', text: true },
  ];
}
function cell(t, key) {
  if (key.startsWith('p:')) return t.params[key.slice(2)];
  if (key.startsWith('o:')) { const v = objectiveValues(t); return v ? v[Number(key.slice(2))] : undefined; }
  if (key === 'duration') return durationMs(t);
  if (key === 'feasible') return feasibility(t);
  return t[key];
}
// feasibility is "yes", or "no" and the constraints broken, for a complete
// trial or one that reported constraint values; nothing before a result.
function feasibility(t) {
  if (t.state !== 'complete' && !Array.isArray(t.constraints)) return undefined;
  return feasible(t) ? 'yes' : `no: ${violated(t).join(', ')}`;
}
// compareCells orders numbers, then booleans, then text; missing values last.
const typeRank = (v) => ({ number: 0, boolean: 1, string: 2 }[typeof v] ?? 3);
function compareCells(x, y) {
  const rx = typeRank(x), ry = typeRank(y);
  if (rx !== ry) return rx - ry;
  if (rx === 0 || rx === 1) return x === y ? 0 : x < y ? -1 : 1;
  return String(x).localeCompare(String(y));
}
function missing(v) { return v === undefined || v === null || (typeof v === 'number' && Number.isNaN(v)); }

// numberInput reads a number box: null when empty or not a number.
function numberInput(id) {
  const s = $(id).value.trim();
  if (s === '') return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

// filters reads the filter controls into one predicate.
function filters() {
  const st = $('state-filter').value;
  const vmin = numberInput('value-min'), vmax = numberInput('value-max');
  const p = param($('param-filter').value);
  const pmin = numberInput('param-min'), pmax = numberInput('param-max');
  const choice = $('param-choice').value;
  return (t) => {
    if (st && t.state !== st) return false;
    if (vmin !== null || vmax !== null) {
      if (!Number.isFinite(t.value)) return false;
      if ((vmin !== null && t.value < vmin) || (vmax !== null && t.value > vmax)) return false;
    }
    if (p) {
      const v = t.params[p.name];
      if (v === undefined) return false; // inactive
      if (p.type === 'categorical') {
        if (choice !== '' && choiceIndex(p, v) !== Number(choice)) return false;
      } else if ((pmin !== null && v < pmin) || (pmax !== null && v > pmax)) return false;
    }
    return true;
  };
}

// The state filter lists the known states and any other the study has.
function fillStateFilter(all) {
  const sel = $('state-filter');
  const present = new Set(all.map((t) => t.state));
  const names = [...KNOWN_STATES, ...[...present].filter((s) => !KNOWN_STATES.includes(s)).sort()];
  const want = ['', ...names].join('\n');
  if (sel.dataset.options === want) return;
  const cur = sel.value;
  sel.innerHTML = '<option value="">all</option>' + names.map((s) => `<option>${esc(s)}</option>`).join('');
  sel.dataset.options = want;
  sel.value = names.includes(cur) ? cur : '';
}

// fillTableControls sets the parameter filter and the column chooser for
// the study's space.
export function fillTableControls() {
  hidden.clear();
  $('param-filter').innerHTML = '<option value="">none</option>' + params().map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join('');
  for (const id of ['value-min', 'value-max', 'param-min', 'param-max']) $(id).value = '';
  $('state-filter').value = '';
  // The value range filters the first objective's value.
  for (const el of document.querySelectorAll('.value-word')) el.textContent = multiObjective() ? objectives()[0].name : 'Value';
  showParamFilter();
  $('column-chooser').innerHTML = '<legend>Columns shown</legend>' + columns().map((c) =>
    `<label><input type="checkbox" data-col="${esc(c.key)}" checked${c.key === 'number' ? ' disabled' : ''}> ${esc(c.label)}</label>`).join('');
}

// The parameter filter shows a range for numbers and a level for categories.
function showParamFilter() {
  const p = param($('param-filter').value);
  const cat = !!p && p.type === 'categorical';
  $('param-range').hidden = !p || cat;
  $('param-choice-label').hidden = !cat;
  $('param-choice').innerHTML = '<option value="">any</option>' + (cat ? p.choices.map((c, i) => `<option value="${i}">${esc(fmtValue(c))}</option>`).join('') : '');
}

function stateCell(s) { return `<span class="dot" style="background:${stateColour(s)}" aria-hidden="true"></span>${esc(s)}`; }
function cellHTML(t, c) {
  const v = cell(t, c.key);
  const cls = c.text ? ' class="text"' : '';
  if (c.key === 'state') return `<td${cls}>${stateCell(v)}</td>`;
  if (c.key === 'duration') return `<td data-ms="${v ?? ''}">${fmtDuration(v)}</td>`;
  if (c.key === 'fail_reason') return v ? `<td class="text reason" title="${esc(v)}">${esc(v)}</td>` : '<td></td>';
  if (c.key === 'feasible') return v === undefined ? '<td class="text"></td>' : `<td class="text" data-feasible="${v === 'yes'}">${esc(v)}</td>`;
  return `<td${cls}${exact(v)}>${esc(c.key.startsWith('p:') ? fmtValue(v) : fmt(v))}</td>`;
}

export function renderTable(all) {
  fillStateFilter(all);
  const cols = columns().filter((c) => !hidden.has(c.key));
  $('trials-table').tHead.innerHTML = '<tr>' + cols.map((c) => {
    const sort = state.sortKey === c.key ? (state.sortDir > 0 ? 'ascending' : 'descending') : 'none';
    return `<th scope="col" aria-sort="${sort}"${c.text ? ' class="text"' : ''}><button type="button" data-key="${esc(c.key)}">${esc(c.label)}${sort === 'none' ? '' : sort === 'ascending' ? ' ▲' : ' ▼'}</button></th>`;
  }).join('') + '</tr>';
  const keep = filters();
  const k = state.sortKey, d = state.sortDir;
  const rows = all.filter(keep).sort((a, b) => {
    const x = cell(a, k), y = cell(b, k);
    if (missing(x) || missing(y)) return missing(x) === missing(y) ? a.number - b.number : missing(x) ? 1 : -1;
    return compareCells(x, y) * d || a.number - b.number;
  });
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  state.page = Math.max(0, Math.min(state.page, pages - 1));
  const page = rows.slice(state.page * PAGE, (state.page + 1) * PAGE);
  $('page-info').textContent = `page ${state.page + 1} of ${pages} (${rows.length} of ${all.length} trials)`;
  $('prev-page').disabled = state.page === 0;
  $('next-page').disabled = state.page >= pages - 1;
  $('trials-table').tBodies[0].innerHTML = page.map((t) =>
    `<tr tabindex="0" data-number="${t.number}" aria-selected="${state.selected === t.number}">` +
    cols.map((c) => cellHTML(t, c)).join('') + '</tr>').join('');
}

function again() { renderTable(sortedTrials()); }
function refilter() { state.page = 0; again(); }

$('trials-table').addEventListener('click', (e) => {
  const b = e.target.closest('th button');
  if (b) {
    const k = b.dataset.key;
    state.sortDir = state.sortKey === k ? -state.sortDir : 1;
    state.sortKey = k;
    again();
    const same = document.querySelector(`#trials-table th button[data-key="${CSS.escape(k)}"]`);
    if (same) same.focus();
    return;
  }
  const tr = e.target.closest('tbody tr');
  if (tr) openTrial(tr.dataset.number);
});
$('trials-table').addEventListener('keydown', (e) => {
  const tr = e.target.closest('tbody tr');
  if (!tr) return;
  if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); tr.click(); }
  if (e.key === 'ArrowDown' && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
  if (e.key === 'ArrowUp' && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
});
for (const id of ['state-filter', 'param-choice']) $(id).addEventListener('change', refilter);
for (const id of ['value-min', 'value-max', 'param-min', 'param-max']) $(id).addEventListener('input', refilter);
$('param-filter').addEventListener('change', () => { $('param-min').value = ''; $('param-max').value = ''; showParamFilter(); refilter(); });
$('filters-clear').addEventListener('click', () => {
  for (const id of ['value-min', 'value-max', 'param-min', 'param-max']) $(id).value = '';
  $('state-filter').value = '';
  $('param-filter').value = '';
  showParamFilter();
  refilter();
});
$('column-chooser').addEventListener('change', (e) => {
  const key = e.target.dataset.col;
  if (!key) return;
  if (e.target.checked) hidden.delete(key); else hidden.add(key);
  again();
});
$('prev-page').addEventListener('click', () => { state.page--; again(); });
$('next-page').addEventListener('click', () => { state.page++; again(); });
