// Freshness (web/README.md): an explanation that arrives names the usable
// trials it describes; when the study has more, its panel says it is stale.
// PDP and importance recompute by themselves when their last computation
// took at most EXPLAIN_AUTO_MS, at most once per EXPLAIN_AUTO_EVERY_MS; the
// other panels (and slower explanations) wait for their button.
import { $, api, setNote, state, studyURL, usable } from './core.js';

const EXPLAIN_AUTO_MS = 3000;
const EXPLAIN_AUTO_EVERY_MS = 15000;
const STATUS_POLL_MS = 500;

// The panels whose explanations carry a freshness line (elements
// `${panel}-note`, `${panel}-fresh`, `${panel}-warning`), how to recompute
// each, and whether it may recompute by itself.
const panels = {};
export function freshPanel(panel, refresh, auto, button) { panels[panel] = { refresh, auto, button }; }
export function freshPanels() { return Object.keys(panels); }

function countUsable() { let n = 0; for (const t of state.trials.values()) if (usable(t)) n++; return n; }

function surrogateText(s) {
  if (!s) return '';
  const model = s.kind === 'forest' ? `forest of ${s.trees} trees` : `GP (${s.kernel})`;
  if (!s.approximate) return `${model} on ${s.conditioned_on} trials`;
  return `${model}, approximate: mean on ${s.conditioned_on}, uncertainty on ${s.variance_conditioned_on || s.conditioned_on} of ${s.trials} trials`;
}

// explainGET fetches an explanation for a panel, shows the engine's progress
// while it computes and records what the answer describes. It returns null
// when another request for the panel was made meanwhile: only the newest
// answer is drawn, whatever order the answers arrive in.
export async function explainGET(panel, path) {
  const study = state.study.name;
  const started = performance.now();
  const token = {};
  state.computing[panel] = token;
  const note = `${panel}-note`;
  const base = $(note).textContent;
  const watch = setInterval(async () => {
    try {
      const st = await api('/api/explain/status');
      if (state.computing[panel] !== token) return;
      const mine = (st.computing || []).filter((c) => c.study === study);
      if (!mine.length) return;
      const c = mine[0];
      setNote(note, `${base} ${c.waiting ? 'waiting for a free slot' : c.step}${c.total > 1 ? ` (${c.done}/${c.total})` : ''}, ${c.seconds.toFixed(1)} s`);
    } catch (e) { /* progress is best effort */ }
  }, STATUS_POLL_MS);
  try {
    const r = await api(studyURL(path));
    if (state.computing[panel] !== token) return null; // a newer request for the panel was made
    // An explanation at a budget counts other trials than the usable ones:
    // it is stale once more trials are usable than when it was asked for.
    const trials = r.budget ? countUsable() : r.trials;
    state.explained[panel] = { trials, fingerprint: r.fingerprint, version: state.version, ms: performance.now() - started, at: Date.now(), about: r };
    return r;
  } finally {
    clearInterval(watch);
    if (state.computing[panel] === token) delete state.computing[panel];
    renderFreshness(panel);
  }
}

// renderFreshness writes the panel's freshness line: the trials and study
// version the explanation describes, its surrogate, the sampling bias, and
// whether newer trials make it stale.
export function renderFreshness(panel) {
  const el = $(`${panel}-fresh`);
  if (!el) return;
  const e = state.explained[panel];
  if (!e) {
    el.textContent = '';
    el.dataset.stale = 'false';
    el.classList.remove('stale');
    return;
  }
  const a = e.about;
  const now = countUsable();
  const stale = now > e.trials;
  const bias = a.sampling_bias;
  const parts = [a.budget
    ? `describes the values at budget ${a.budget.step} of ${a.budget.trials} trials, ${a.budget.pruned} of them pruned (study version ${e.version})`
    : `describes ${e.trials} usable trials (study version ${e.version})`];
  // The API names the objective explained in a study with several.
  if (a.objective) parts.push(`objective ${a.objective}`);
  if (a.surrogate) parts.push(surrogateText(a.surrogate));
  const check = a.model_check;
  if (check) parts.push(`model check: ${check.status}`);
  if (bias) parts.push(`sampling bias: ${bias.level}`);
  let text = parts.join(' · ');
  if (stale) {
    const auto = panels[panel].auto && e.ms <= EXPLAIN_AUTO_MS;
    text = `Stale (${now - e.trials} newer trial${now - e.trials === 1 ? '' : 's'}; ${auto ? 'recomputing shortly' : `press ${panels[panel].button}`}): ` + text;
  }
  el.textContent = text;
  el.dataset.stale = String(stale);
  el.classList.toggle('stale', stale);
  const warn = $(`${panel}-warning`);
  if (warn) {
    const lines = [];
    if (check && check.status !== 'ok') lines.push(`Model check (${check.status}): ${check.reading}`);
    const ex = a.extrapolation;
    if (ex && ex.beyond && ex.beyond.length) lines.push(`Extrapolation: ${ex.reading}`);
    if (a.extrapolated && a.extrapolated.length) lines.push(`Extrapolation: the curves of ${a.extrapolated.join(', ')} rest on the model's prior more than with uniformly random trials, so their importance is mostly the model's extrapolation.`);
    if (bias && bias.warning) lines.push(bias.warning);
    warn.textContent = lines.join(' ');
  }
}
export function renderAllFreshness() { for (const k of Object.keys(panels)) renderFreshness(k); }
export function forgetExplanations() { for (const k of Object.keys(state.explained)) delete state.explained[k]; renderAllFreshness(); }

// autoRecompute refreshes stale panels that are cheap to recompute, at most
// once per EXPLAIN_AUTO_EVERY_MS each.
export function autoRecompute() {
  const now = countUsable();
  for (const [panel, p] of Object.entries(panels)) {
    const e = state.explained[panel];
    if (!p.auto || !e || state.computing[panel] || now <= e.trials) continue;
    if (e.ms > EXPLAIN_AUTO_MS || Date.now() - e.at < EXPLAIN_AUTO_EVERY_MS) continue;
    p.refresh();
  }
}
