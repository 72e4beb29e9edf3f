// The xbo dashboard: one page, everything read from the JSON API
// (docs/api.md). Trials come from GET /api/studies/{s}/events?since=v, polled,
// so the page follows workers live; explanations are fetched on demand.
//
// The page has views (web/README.md): Overview, Explanations, History,
// Compare, and the view of one trial. The URL hash names the study, the
// view and the trial (#study=s&view=history, #study=s&trial=7). Only the
// shown view is drawn when trials arrive; the others are drawn when shown.
import { $, api, esc, fillObjectiveSelects, fmt, resizeCharts, sortedTrials, state, status, usable } from './core.js';
import { autoRecompute, forgetExplanations, renderAllFreshness } from './freshness.js';
import { fillTableControls, renderTable } from './table.js';
import { renderParallel, renderSummary, renderTrace } from './overview.js';
import { renderPairs, renderSlices } from './slices.js';
import { renderFootprint } from './footprint.js';
import { forgetLPI } from './lpi.js';
import { forgetAblation } from './ablation.js';
import { renderPareto } from './pareto.js';
import { explainLeading, fillParamSelects, fillPathsPanel, proposeTrial, renderBobax } from './explain.js';
import { followBudgets, loadBudgets, resetBudget } from './budgets.js';
import { renderCurves, renderEDF, renderTimeline } from './history.js';
import { renderCompare } from './compare.js';
import { forgetTrialView, renderTrial } from './trial.js';
import { initActions, loadAccess, showStudyActions } from './actions.js';
import { refreshTradeoff, resetTradeoff, tradeoffTrial } from './tradeoff.js';

const POLL_MS = 1500;
const EXPLAIN_AUTO_MAX = 10000; // above this many complete trials, explanations wait for a click
const VIEWS = ['overview', 'explain', 'history', 'compare', 'trial'];

// What each view draws from the trials.
const DRAW = {
  overview: (all) => { renderPareto(all); renderTrace(all); renderTable(all); renderParallel(all); drawPlotsLater(); },
  explain: (all) => { renderBobax(all); followBudgets(); },
  history: (all) => { renderTimeline(all); renderEDF(all); renderCurves(all); },
  compare: () => renderCompare(),
  trial: () => { renderTrial(state.selected); forgetLPI(state.selected); forgetAblation(state.selected); },
};
// Views whose drawing is older than the trials they would show.
const stale = new Set(VIEWS);

// ---------------------------------------------------------------- studies

// The Overview's plots of the trials (slices, two parameters, footprint)
// are drawn after its first paint: the trace, the parallel coordinates and
// the table appear as fast as without them (a 10,000-trial study's first
// render), the plots a frame later. Their time is kept in
// window.xbo.timings['overview:plots'].
let plotsPending = false;
function drawPlotsLater() {
  if (plotsPending) return;
  plotsPending = true;
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
    plotsPending = false;
    if (!state.study) return;
    const t0 = performance.now();
    const all = sortedTrials();
    renderSlices(all);
    renderPairs(all);
    renderFootprint(all);
    window.xbo.timings['overview:plots'] = performance.now() - t0;
  }, 0)));
}

function trialCount(s) { return Object.values(s.counts || {}).reduce((a, b) => a + b, 0); }

async function loadStudies() {
  const { studies } = await api('/api/studies');
  state.studies = studies || [];
  const ul = $('studies');
  ul.innerHTML = '';
  for (const s of state.studies) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.study = s.name;
    // A study with several objectives has a front, not one best value.
    const objectives = s.space && Array.isArray(s.space.objectives) ? s.space.objectives.length : 1;
    b.innerHTML = `<strong>${esc(s.name)}</strong><br><small>${trialCount(s)} trials · ${objectives > 1 ? `${objectives} objectives` : s.best === undefined || s.best === null ? 'no value yet' : `best ${fmt(s.best)}`}</small>`;
    b.setAttribute('aria-current', String(!!state.study && state.study.name === s.name));
    b.addEventListener('click', () => { location.hash = `study=${encodeURIComponent(s.name)}`; });
    li.appendChild(b);
    ul.appendChild(li);
  }
  if (!state.studies.length) status('no studies yet: create one with POST /api/studies or xbo study create');
}

// ------------------------------------------------------------------ routing

function hashArgs() {
  const h = new URLSearchParams(location.hash.slice(1));
  const trial = h.get('trial');
  const n = trial !== null && trial !== '' ? Number(trial) : null;
  const view = Number.isInteger(n) ? 'trial' : (VIEWS.includes(h.get('view')) && h.get('view') !== 'trial' ? h.get('view') : 'overview');
  return { study: h.get('study'), trial: Number.isInteger(n) ? n : null, view };
}

async function route() {
  const { study, trial, view } = hashArgs();
  const name = study || (state.studies[0] && state.studies[0].name);
  if (!name) return;
  if (!state.study || state.study.name !== name) {
    state.view = view; // the view drawn when the trials arrive
    await openStudy(name);
  }
  if (!state.study || state.study.name !== name) return; // another navigation won
  if (trial !== null && trial !== state.selected) {
    state.selected = trial;
    proposeTrial(trial);
    tradeoffTrial(trial); // a Pareto-optimal trial's Shapley values for every objective
    stale.add('trial');
    for (const tr of document.querySelectorAll('#trials-table tbody tr')) tr.setAttribute('aria-selected', String(Number(tr.dataset.number) === trial));
  }
  if (view === 'compare') stale.add('compare'); // its studies may have changed
  showView(view);
}

// showView shows one view, lays out its charts (drawn while hidden, they
// have no size) and draws it if trials arrived since it was last drawn.
function showView(view) {
  state.view = view;
  for (const v of VIEWS) {
    const el = $(`view-${v}`);
    el.hidden = v !== view;
  }
  const base = `study=${encodeURIComponent(state.study.name)}`;
  for (const a of document.querySelectorAll('#views a')) {
    const v = a.dataset.view;
    a.href = v === 'trial' ? `#${base}&trial=${state.selected}` : `#${base}&view=${v}`;
    if (v === view) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const tab = $('trial-tab');
  tab.hidden = state.selected === null;
  tab.textContent = state.selected === null ? 'Trial' : `Trial ${state.selected}`;
  const t0 = performance.now();
  resizeCharts($(`view-${view}`)); // before drawing, so that nothing is drawn twice
  draw(view);
  window.xbo.timings[`view:${view}`] = performance.now() - t0;
  document.body.dataset.view = view;
}

function draw(view) {
  if (!stale.has(view) || !state.study || (view === 'trial' && state.selected === null)) return;
  stale.delete(view);
  DRAW[view](sortedTrials());
}

// -------------------------------------------------------------- a study

async function openStudy(name) {
  const gen = ++state.gen;
  state.loadStart = performance.now();
  clearTimeout(state.timer);
  document.body.dataset.ready = '';
  status(`loading ${name}…`);
  const st = await api(`/api/studies/${encodeURIComponent(name)}`);
  if (gen !== state.gen) return;
  state.study = st;
  state.space = st.space;
  $('views').hidden = false;
  $('study-actions').hidden = false;
  showStudyActions();
  state.trials = new Map();
  state.version = 0;
  state.page = 0;
  state.selected = null;
  state.regional = null;
  state.leaf = null;
  state.best = null;
  forgetExplanations();
  forgetTrialView();
  window.xbo.paths = null; // another study's paths must not stay on screen
  window.xbo.shapley = null;
  $('paths-data').innerHTML = '';
  $('proposal-data').innerHTML = '';
  $('proposal-trial').value = '';
  for (const id of ['paths-chart', 'proposal-chart']) if (window.xbo.charts[id]) window.xbo.charts[id].clear();
  $('paths-chart').hidden = true;
  for (const b of document.querySelectorAll('#studies button')) b.setAttribute('aria-current', String(b.dataset.study === name));
  fillParamSelects();
  fillObjectiveSelects();
  fillPathsPanel();
  fillTableControls();
  resetBudget();
  resetTradeoff();
  const ev = await api(`/api/studies/${encodeURIComponent(name)}/events?since=0`);
  if (gen !== state.gen) return;
  merge(ev);
  renderTrials();
  // Two animation frames: the charts have been painted once.
  await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  if (gen !== state.gen) return;
  const ms = performance.now() - state.loadStart;
  window.xbo.timings.firstRender = ms;
  window.xbo.timings.sinceNavigation = performance.now();
  document.body.dataset.ready = name;
  // The first render's time is for the e2e test's log (window.xbo.timings
  // and this attribute), not for the header: a user asked about the study.
  document.body.dataset.firstRenderMs = String(Math.round(ms));
  status(`${name}: ${state.trials.size} trials`);
  const complete = countUsable();
  loadBudgets();
  if (complete >= 3 && complete <= EXPLAIN_AUTO_MAX) {
    // Importance first: the PDP then shows the most important parameter.
    explainLeading();
    refreshTradeoff(); // several objectives only
    // The Proposal panel explains the best trial until another is chosen.
    if (state.selected === null && state.best) proposeTrial(state.best.number);
  } else {
    const why = complete < 3 ? `needs 3 complete trials (has ${complete})` : `${complete} complete trials: press Recompute (fitting a surrogate to this many is slow)`;
    for (const id of ['pdp-note', 'importance-note', 'proposal-note', 'tradeoff-note']) $(id).textContent = why;
    if (state.best && state.selected === null) $('proposal-trial').value = String(state.best.number);
  }
  poll(gen);
}

function countUsable() { let n = 0; for (const t of state.trials.values()) if (usable(t)) n++; return n; }

function merge(ev) {
  for (const t of ev.trials || []) {
    const old = state.trials.get(t.number);
    if (!old || old.version <= t.version) state.trials.set(t.number, t);
  }
  state.version = Math.max(state.version, ev.version || 0);
  return (ev.trials || []).length;
}
// The e2e test hands the page trials in the API's form through the same path.
window.xbo.receive = (ev) => { if (merge(ev) > 0) renderTrials(); };

function poll(gen) {
  state.timer = setTimeout(async () => {
    if (gen !== state.gen) return;
    try {
      const ev = await api(`/api/studies/${encodeURIComponent(state.study.name)}/events?since=${state.version}`);
      if (gen !== state.gen) return;
      if (merge(ev) > 0) {
        renderTrials();
        status(`${state.study.name}: ${state.trials.size} trials (live, version ${state.version})`);
        renderAllFreshness();
      }
      autoRecompute();
    } catch (e) {
      status(`polling failed: ${e.message}; retrying`);
    }
    poll(gen);
  }, POLL_MS);
}

// renderTrials draws the summary and the shown view; the others are drawn
// when shown.
function renderTrials() {
  const all = sortedTrials();
  renderSummary(all);
  for (const v of VIEWS) stale.add(v);
  draw(state.view);
}

// studyDeleted leaves the study deleted from this page: the next study is
// opened, or, with none left, the page says so.
async function studyDeleted(name) {
  state.gen++; // its polling stops
  clearTimeout(state.timer);
  state.study = null;
  await loadStudies();
  const next = state.studies[0];
  if (next) {
    location.hash = `study=${encodeURIComponent(next.name)}`;
    status(`deleted ${name}; showing ${next.name}`);
    return;
  }
  location.hash = '';
  for (const v of VIEWS) $(`view-${v}`).hidden = true;
  $('views').hidden = true;
  $('study-actions').hidden = true;
  $('summary').textContent = '';
  status(`deleted ${name}; no studies left`);
}
initActions(studyDeleted);

// ---------------------------------------------------------------- start

window.addEventListener('hashchange', () => route().catch((e) => status(e.message)));
(async () => {
  try {
    await Promise.all([loadAccess(), loadStudies()]);
    await route();
  } catch (e) {
    status(`error: ${e.message}`);
  }
  setInterval(() => loadStudies().catch(() => {}), 10000);
})();
