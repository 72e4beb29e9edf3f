// Budgets (GET explain/budgets): a study whose trials reported intermediate
// values can be explained at a budget (a step). The selector adds budget=N
// to the PDP and importance requests; the section below the explanations
// says first, in words, whether the ranking at a low budget predicts the
// final one (the engine's reading), and gives the rank correlations
// between every pair of budgets on request. The engine defines which
// trials and values count; the page only shows its answers.
import { $, api, esc, setNote, state, studyURL, withObjective } from './core.js';
import { interval, numSpan } from './format.js';

function budgetParam() { const b = $('explain-budget').value; return b === '' ? '' : `budget=${encodeURIComponent(b)}`; }
// withBudget appends the selected budget to an explanation's path.
export function withBudget(path) { const b = budgetParam(); return b ? path + (path.includes('?') ? '&' : '?') + b : path; }
// budgetText says which budget and trials an explanation used ('' for the final values).
export function budgetText(r) {
  const b = r && r.budget;
  return b ? `at budget ${b.step}: ${b.trials} trials (${b.pruned} pruned; ${b.left_out} finished trials left out)` : '';
}

// The explanations that a change of budget recomputes (explain.js).
let onChange = () => {};
export function onBudgetChange(fn) { onChange = fn; }

function hasCurves() {
  for (const t of state.trials.values()) if ((t.state === 'complete' || t.state === 'pruned') && (t.intermediate || []).length) return true;
  return false;
}

const CAPTION = '<caption>Rank correlation of the trials\' values between budgets</caption>';

export function resetBudget() {
  $('explain-budget').innerHTML = '<option value="">final values</option>';
  $('budgets-data').innerHTML = CAPTION;
  $('budgets-table-summary').textContent = 'Rank correlations between budgets';
  setNote('budgets-note', '');
  $('budgets-reading').textContent = '';
  window.xbo.budgets = null;
}

// The table follows a running study: when its trials changed it is asked
// again, at most every BUDGETS_EVERY_MS (the engine answers from its cache
// while the curves stay the same).
const BUDGETS_EVERY_MS = 15000;
let budgetsAsked = { version: -1, at: 0 };
let budgetsTimer = null;
export function followBudgets() {
  if (!state.study || state.version === budgetsAsked.version) return;
  const wait = BUDGETS_EVERY_MS - (Date.now() - budgetsAsked.at);
  if (wait > 0) {
    // A change inside the interval is picked up when it ends, even if no
    // other change comes to call this again (the last trial of a study).
    if (!budgetsTimer) budgetsTimer = setTimeout(() => { budgetsTimer = null; followBudgets(); }, wait);
    return;
  }
  loadBudgets();
}

export async function loadBudgets() {
  if (!state.study) return;
  budgetsAsked = { version: state.version, at: Date.now() };
  $('budget-panel').hidden = !hasCurves();
  if ($('budget-panel').hidden) return;
  const gen = state.gen;
  setNote('budgets-note', 'computing…');
  try {
    const r = await api(studyURL(withObjective('budgets', 'explain/budgets')));
    if (gen !== state.gen) return;
    window.xbo.budgets = r;
    const sel = $('explain-budget'), current = sel.value;
    sel.innerHTML = '<option value="">final values</option>' + r.steps.map((s) =>
      `<option value="${s.step}"${s.trials < r.min_trials ? ' disabled' : ''}>${s.step} (${s.trials} trials${s.pruned ? `, ${s.pruned} pruned` : ''})</option>`).join('');
    if (r.steps.some((s) => String(s.step) === current)) sel.value = current;
    // The engine's reading is the summary; how it was measured goes with
    // the table, which is shown on request.
    $('budgets-reading').textContent = r.reading;
    setNote('budgets-note', `${r.curves} finished trials with intermediate values, ${r.final} complete; ${Math.round(r.level * 100)}% intervals; `
      + `a trial's value at a budget is ${r.rule}${r.steps_total > r.steps.length ? `; ${r.steps.length} of ${r.steps_total} budgets listed` : ''}`);
    $('budgets-table-summary').textContent = `Rank correlations between budgets (${r.pairs.length} pairs of budgets)`;
    const cell = (c, name) => (c ? `<td data-v="${name}" data-x="${c.value}">${numSpan(c.value)}</td><td>${interval(c.lower, c.upper)}</td>` : '<td>—</td><td></td>');
    $('budgets-data').innerHTML = CAPTION
      + '<thead><tr><th scope="col">budgets</th><th scope="col">trials</th><th scope="col">Spearman</th><th scope="col">interval</th>'
      + '<th scope="col">Kendall</th><th scope="col">interval</th>'
      + '<th scope="col" title="Spearman among the better half of the trials by the later value: does the budget rank the good ones among themselves?">better half: trials</th>'
      + '<th scope="col">Spearman</th><th scope="col">interval</th><th scope="col">note</th></tr></thead><tbody>'
      + r.pairs.map((p) => {
        const b = p.better_half;
        const better = b ? `<td data-v="better-trials">${b.trials}</td>${cell(b.spearman, 'better-spearman')}` : '<td></td><td>—</td><td></td>';
        const note = [p.note, b && b.note ? `better half: ${b.note}` : ''].filter(Boolean).join('; ');
        return `<tr><th scope="row">${esc(p.label)}</th><td data-v="trials">${p.trials}</td>${cell(p.spearman, 'spearman')}${cell(p.kendall, 'kendall')}${better}<td>${esc(note)}</td></tr>`;
      }).join('')
      + '</tbody>';
  } catch (e) {
    if (gen === state.gen) setNote('budgets-note', `budgets: ${e.message}`, true);
  }
}
$('budgets-refresh').addEventListener('click', loadBudgets);
$('budgets-objective').addEventListener('change', loadBudgets);
$('explain-budget').addEventListener('change', () => onChange());
