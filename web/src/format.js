// How the dashboard writes numbers for people (issue 45): three significant
// digits by default, intervals as [a, b], fractions as percentages whose
// sign never contradicts the words around them. The exact number stays in
// the API's JSON, in the data attributes the tests read (data-x) and on
// hover (the title attribute of numSpan). Every view formats through this
// module, and the HTML report's Go helpers (report/format.go) follow the
// same rules, so one quantity reads the same on the page and in the report.

// Beyond these magnitudes a number is written in exponent form: 123456 as
// 1.23e+5, 0.000617 as 6.17e-4.
const BIG = 1e5;
const SMALL = 1e-3;
const DIGITS = 3;

// num writes a number to three significant digits. Whole numbers below
// 10⁵ are written in full: they are counts, steps, integer parameters and
// levels, which rounding would make wrong (a batch size of 1024 is not
// 1020). Anything that is not a number is written as text.
export function num(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '';
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < BIG) return String(v);
  if (a >= BIG || a < SMALL) {
    // toExponential keeps trailing zeros (1.00e+5): the mantissa is trimmed
    // as a plain number would be.
    const [m, e] = v.toExponential(DIGITS - 1).split('e');
    return `${Number(m)}e${e}`;
  }
  return String(Number(v.toPrecision(DIGITS)));
}

// numSpan is num(v) in a span whose title holds the exact number, for the
// places (tables, notes) where a reader may want every digit.
export function numSpan(v, attrs = '') {
  const text = num(v);
  if (typeof v !== 'number' || text === String(v)) return `<span${attrs}>${text}</span>`;
  return `<span${attrs} title="${v}">${text}</span>`;
}

// exact is a title attribute with every digit of v, for an element that
// shows num(v): '' when v is no number or num(v) already is every digit.
export function exact(v) { return typeof v === 'number' && num(v) !== String(v) ? ` title="${v}"` : ''; }

// interval writes [a, b]; an interval whose ends are equal (an exact
// Shapley value, a degenerate band) is no interval and is written as ''.
export function interval(lo, hi, f = num) {
  if (lo === hi) return '';
  return `[${f(lo)}, ${f(hi)}]`;
}

// pct writes a fraction (0.361) as a percentage with one decimal (36.1%),
// as the CLI's importance table does; -0 is written as 0.
export function pct(f) {
  if (f === null || f === undefined || !Number.isFinite(f)) return '';
  const p = 100 * f;
  const s = Math.abs(p) >= 100 ? p.toFixed(0) : p.toFixed(1);
  return `${/^-0(\.0)?$/.test(s) ? s.slice(1) : s}%`;
}

// plus writes "+ x" or "− |x|", so that a sum reads "0.294 − 0.294" and
// never "0.294 + -0.294".
export function plus(v) { return v < 0 ? `− ${num(-v)}` : `+ ${num(v)}`; }

// moreOrLess says how much larger a relative change is in words that carry
// its sign: 0.27 → "27% more", -0.27 → "27% less" (never "-27% more").
export function moreOrLess(rel, more = 'more', less = 'less') {
  return `${Math.round(100 * Math.abs(rel))}% ${rel < 0 ? less : more}`;
}

// fmtValue shows a parameter or attribute value by its JSON type: numbers
// as num does, strings as they are, booleans, null and objects as JSON.
export function fmtValue(v) {
  if (v === undefined) return '';
  if (typeof v === 'number') return num(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

// Durations to three significant digits below a minute, then in minutes
// and hours.
export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toPrecision(DIGITS))} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - 60 * m)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
export function fmtInstant(ms) { return new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC'); }
