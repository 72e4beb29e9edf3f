// The trial view's "Why it was proposed" (issue 45 item 4). A trial a model
// chose is explained with that model: the surrogate the optimizer had fitted
// on the trials complete when the trial was asked, which the engine's
// desirability paths rebuild for every model-chosen proposal (GET
// explain/paths, each proposal with its own iteration's surrogate and
// units). Today's surrogate has seen the trial's own result and every later
// one, so it can only say how the model sees the configuration now. A
// trial no model chose (initial design, random, enqueued, imported), and
// every trial of a study whose proposals cannot be replayed (several
// objectives, constraints), is explained with today's surrogate (GET
// explain/shapley), and the note says what that shows instead.
import { constrained, multiObjective, setNote, state, unitsOf } from './core.js';
import { explainGET } from './freshness.js';
import { NOT_PROPOSALS, drawShapley, explainTrial } from './shapley.js';

// The engine explains the latest proposals: its default count is what the
// desirability-paths panel asks for, so the two share the engine's cached
// answer; an older trial needs more, up to the engine's limit.
const PATHS_DEFAULT = 50;
const PATHS_MAX = 500;

// notReplayed says why trial t is not explained with a proposing model
// ('' when it is).
function notReplayed(t) {
  if (multiObjective() || constrained()) {
    return `(a study with ${multiObjective() ? 'several objectives' : 'constraints'} has no single model per proposal to replay)`;
  }
  if (!t.acquisition || NOT_PROPOSALS.has(t.acquisition)) return `(no model chose it: ${t.acquisition || 'no acquisition recorded'})`;
  return '';
}

function todaysModel(panel, n, stillWanted, why) {
  return explainTrial(panel, n, stillWanted, {
    lead: `${why}, explained with today's surrogate, fitted on every usable trial (its own result included): how the model sees this configuration now, not why it was proposed`,
  });
}

// explainProposal draws trial n's explanation in the panel while
// stillWanted(); it returns the answer drawn (with proposer set when it is
// the proposing model's) or null.
export async function explainProposal(panel, n, stillWanted) {
  const t = state.trials.get(n);
  if (!t) return null;
  const why = notReplayed(t);
  if (why) return todaysModel(panel, n, stillWanted, why);
  const later = [...state.trials.values()].filter((x) => x.number >= n && x.acquisition && !NOT_PROPOSALS.has(x.acquisition)).length;
  const k = Math.min(PATHS_MAX, Math.max(PATHS_DEFAULT, later));
  const gen = state.gen;
  setNote(`${panel}-note`, `explaining trial ${n} with the model that proposed it (replaying the optimizer's proposals)…`);
  try {
    const p = await explainGET(panel, `explain/paths${k > PATHS_DEFAULT ? `?proposals=${k}` : ''}`);
    if (!p || gen !== state.gen || !stillWanted()) return null;
    const step = p.steps.find((s) => s.trial === n);
    if (!step) return todaysModel(panel, n, stillWanted, `(the replay of the optimizer's proposals has none for trial ${n}${p.note ? `: ${p.note}` : ''})`);
    const units = step.units === 'objective' ? unitsOf(0) : `the optimizer's ${step.units}-warped model's units, ordered as the objective`;
    const r = { trial: n, point: step.point, explanation: step.explanation, proposer: { observed: step.observed, units: step.units, acquisition: step.acquisition } };
    drawShapley(panel, r, {
      lead: `explained with the model that proposed it: the surrogate fitted on the ${step.observed} trials complete when trial ${n} was asked, rebuilt as the desirability paths rebuild it (${units})`,
      units,
    });
    return r;
  } catch (e) {
    if (gen === state.gen && stillWanted()) setNote(`${panel}-note`, `trial ${n} with its proposing model: ${e.message}`, true);
    return null;
  }
}
