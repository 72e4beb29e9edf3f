// The value axis of the charts of trials' values (the optimization trace,
// the intermediate values): a log scale on request, and outliers clipped,
// so that one diverged trial (3.68 among values near 0.3) does not squash
// every other point into a line. Only the worse side is clipped (above for
// a minimized objective, below for a maximized one): the good values are
// what a reader looks for and are always drawn. The clipped points are
// drawn at the axis's edge as triangles and counted in the panel's note.
import { $ } from './core.js';
import { num } from './format.js';

// Tukey's far-out fence: beyond 3 interquartile ranges from the quartiles.
const FENCE = 3;

function quantile(sorted, q) {
  const i = (sorted.length - 1) * q, lo = Math.floor(i), hi = Math.ceil(i);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

// valueScale chooses the axis for values (finite numbers), worse on the
// high side when worseHigh. It returns the axis's type and extent, the
// limit beyond which values are clipped (null: none are), how many are,
// and whether a log axis is possible (every value above 0).
export function valueScale(values, { worseHigh, log, clip }) {
  const logOK = values.length > 0 && values.every((v) => v > 0);
  const useLog = log && logOK;
  const t = useLog ? Math.log10 : (v) => v;
  const back = useLog ? (v) => 10 ** v : (v) => v;
  const sorted = values.map(t).sort((a, b) => a - b);
  let limit = null, clipped = 0;
  if (clip && sorted.length >= 8) {
    const q1 = quantile(sorted, 0.25), q3 = quantile(sorted, 0.75), iqr = q3 - q1;
    if (iqr > 0) {
      const fence = worseHigh ? q3 + FENCE * iqr : q1 - FENCE * iqr;
      clipped = sorted.filter((v) => (worseHigh ? v > fence : v < fence)).length;
      // The axis ends at the last value kept, so nothing kept is cut.
      if (clipped) limit = back(worseHigh ? Math.max(...sorted.filter((v) => v <= fence)) : Math.min(...sorted.filter((v) => v >= fence)));
    }
  }
  const kept = limit === null ? sorted.map(back) : sorted.map(back).filter((v) => (worseHigh ? v <= limit : v >= limit));
  // No values (an empty study): the chart chooses its own extent.
  if (!kept.length) return { type: 'value', min: undefined, max: undefined, limit: null, clipped: 0, logOK };
  let lo = Math.min(...kept), hi = Math.max(...kept);
  if (!useLog) {
    const pad = 0.04 * (hi - lo || Math.abs(hi) || 1);
    // A quantity that is never negative (a loss) gets no negative axis.
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  } else {
    lo /= 1.1;
    hi *= 1.1;
  }
  if (limit !== null) { if (worseHigh) hi = limit; else lo = limit; }
  return { type: useLog ? 'log' : 'value', min: lo, max: hi, limit, clipped, logOK };
}

// isClipped says whether a value lies beyond the scale's limit.
export function isClipped(s, v, worseHigh) { return s.limit !== null && (worseHigh ? v > s.limit : v < s.limit); }

// clipText is the note's words on the clipped points ('' when none);
// where says where they are drawn instead.
export function clipText(s, worseHigh, what = 'point', where = `▲ at the ${worseHigh ? 'top' : 'bottom'} edge`) {
  if (!s.clipped) return '';
  return `; ${s.clipped} ${what}${s.clipped === 1 ? '' : 's'} ${worseHigh ? 'above' : 'below'} ${num(s.limit)} clipped (${where}; untick "clip outliers" to see ${s.clipped === 1 ? 'it' : 'them'})`;
}

// clamp puts a clipped value at the scale's limit.
export function clamp(s, v, worseHigh) { return isClipped(s, v, worseHigh) ? s.limit : v; }

// scaleControls reads a panel's two checkboxes (`${panel}-log`,
// `${panel}-clip`), disables the log one when a log axis is impossible for
// the values and says why in its title.
export function scaleControls(panel, values) {
  const logOK = values.length > 0 && values.every((v) => v > 0);
  const log = $(`${panel}-log`);
  log.disabled = !logOK;
  log.parentElement.title = logOK ? 'logarithmic value axis' : 'a log axis needs every value above 0';
  return { log: log.checked && logOK, clip: $(`${panel}-clip`).checked };
}
