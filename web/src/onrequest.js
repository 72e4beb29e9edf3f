// Panels of the trial view computed on request (a button) for the trial
// shown, rather than for every trial opened: a trial view is often opened
// only to read its facts, and these explanations cost a surrogate fit.
import { $, setNote, state } from './core.js';

// onRequest wires the panel whose elements are `${panel}-go` (the button),
// `-note`, `-chart` and `-data`: the button fetches the answer for the
// trial shown and draws it, unless another trial was opened meanwhile. It
// returns forget(n), which clears the panel when trial n is shown and the
// panel holds another trial's answer.
export function onRequest(panel, hint, fetchFor, draw) {
  let asked = null;
  const note = `${panel}-note`;
  $(`${panel}-go`).addEventListener('click', async () => {
    const n = state.selected;
    const t = state.trials.get(n);
    if (!t) return;
    asked = n;
    setNote(note, 'computing…');
    let r;
    try {
      r = await fetchFor(t);
    } catch (e) {
      if (asked === n) setNote(note, `not computed: ${e.message}`, true);
      return;
    }
    if (asked === n && state.selected === n) draw(n, r);
  });
  return (n) => {
    if (asked === n) return;
    asked = null;
    $(`${panel}-data`).innerHTML = '';
    const c = window.xbo.charts[`${panel}-chart`];
    if (c) c.clear();
    // No empty axes before the button is pressed: the draw shows the
    // chart again (chartIf).
    $(`${panel}-chart`).hidden = true;
    setNote(note, hint);
  };
}
