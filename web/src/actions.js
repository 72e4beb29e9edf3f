// Acting on a study from the page, when the server allows writes: the
// study's note and a trial's note (PUT …/note), marking a running trial
// failed (POST …/tell {"state": "failed"}), deleting the study (DELETE,
// after its name is typed in a dialog). GET /api/health says whether the
// server takes writes ("writes": false under xbo serve --read-only: none of
// these controls is shown) and whether they need the token ("token"): the
// page then asks for it once, in a dialog, and keeps it in sessionStorage,
// so it lasts as long as the tab and is sent only to this server.
//
// Every text a person wrote is put on the page as text (textContent), never
// as markup.
import { $, api, state, studyURL } from './core.js';

const TOKEN_KEY = 'xbo-token';
export const access = { writes: false, token: false };
window.xbo.access = access;

// loadAccess reads what the server allows and shows or hides every control
// that writes (class "writes"). A server that cannot say is taken as
// read-only: controls that would fail are not offered.
export async function loadAccess() {
  try {
    const h = await api('/api/health');
    access.writes = h.writes === true;
    access.token = h.token === true;
  } catch {
    access.writes = false;
  }
  for (const el of document.querySelectorAll('.writes')) el.hidden = !access.writes;
  document.body.dataset.writes = String(access.writes);
}

// ------------------------------------------------------------ the token

let tokenWait = null;

// askToken shows the token dialog and resolves when a token is given; it
// rejects when the dialog is cancelled. Concurrent writes share one dialog.
function askToken(why) {
  if (tokenWait) return tokenWait;
  const dlg = $('token-dialog');
  $('token-why').textContent = why;
  $('token-input').value = '';
  tokenWait = new Promise((resolve, reject) => {
    const done = (ok) => {
      dlg.removeEventListener('close', onClose);
      $('token-form').removeEventListener('submit', onSubmit);
      tokenWait = null;
      if (ok) resolve(); else reject(new Error('no token given: nothing was changed'));
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const tok = $('token-input').value.trim();
      if (!tok) { $('token-input').focus(); return; }
      sessionStorage.setItem(TOKEN_KEY, tok);
      dlg.removeEventListener('close', onClose);
      dlg.close();
      done(true);
    };
    const onClose = () => done(false); // Escape or Cancel
    dlg.addEventListener('close', onClose);
    $('token-form').addEventListener('submit', onSubmit);
    dlg.showModal();
  });
  return tokenWait;
}
$('token-cancel').addEventListener('click', () => $('token-dialog').close());

const TOKEN_WHY = 'This server accepts changes only with its token (xbo serve --token). It is kept in this browser tab only, until the tab is closed.';

function send(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const tok = sessionStorage.getItem(TOKEN_KEY);
  if (tok) headers.Authorization = `Bearer ${tok}`;
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

// write sends one write and returns the answer's JSON ({} for 204). With a
// token required and none kept, or the kept one refused, it asks for it.
export async function write(method, path, body) {
  if (access.token && !sessionStorage.getItem(TOKEN_KEY)) await askToken(TOKEN_WHY);
  let r = await send(method, path, body);
  if (r.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    await askToken('The server refused that token: enter it again. ' + TOKEN_WHY);
    r = await send(method, path, body);
  }
  const out = r.status === 204 ? {} : await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(out.error || `${r.status} ${r.statusText}`);
  return out;
}

// ------------------------------------------------------------ notes

function showNote(id, note) {
  $(`${id}-text`).textContent = note || '';
  $(id).hidden = !note;
}

function say(id, text, isError) {
  const el = $(id);
  el.textContent = text;
  el.classList.toggle('error', !!isError);
}

// noteEditor wires an Edit button to its form: the form opens with the
// stored note, Save writes it (save returns the stored note), Cancel and
// Save close it and give the focus back to the button.
function noteEditor(prefix, current, save, msg) {
  const button = $(`${prefix}-edit`), form = $(`${prefix}-form`), input = $(`${prefix}-input`);
  const hide = () => { form.hidden = true; button.setAttribute('aria-expanded', 'false'); };
  const close = () => { hide(); button.focus(); };
  button.addEventListener('click', () => {
    if (!form.hidden) { close(); return; }
    input.value = current();
    form.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    input.focus();
  });
  $(`${prefix}-cancel`).addEventListener('click', close);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const save$ = $(`${prefix}-save`);
    save$.disabled = true;
    say(msg, 'saving…');
    try {
      const note = await save(input.value);
      close();
      say(msg, note ? 'note saved' : 'note cleared');
    } catch (err) {
      say(msg, `the note was not saved: ${err.message}`, true);
    } finally {
      save$.disabled = false;
    }
  });
  return { close: hide };
}

// ------------------------------------------------------------ the study

const studyNote = noteEditor('study-note', () => (state.study && state.study.note) || '', async (text) => {
  const name = state.study.name;
  const st = await write('PUT', studyURL('note', name), { note: text });
  if (state.study && state.study.name === name) {
    state.study.note = st.note || '';
    showNote('study-note', state.study.note);
  }
  return st.note || '';
}, 'study-actions-msg');

// showStudyActions shows a newly opened study's note, with closed forms.
export function showStudyActions() {
  studyNote.close();
  say('study-actions-msg', '');
  showNote('study-note', state.study && state.study.note);
}

let onDeleted = () => {};
// initActions takes what to do once the open study is deleted.
export function initActions(deleted) { onDeleted = deleted; }

$('study-delete').addEventListener('click', () => {
  const name = state.study.name;
  const n = state.trials.size;
  $('delete-what').textContent = `“${name}” and its ${n} trial${n === 1 ? '' : 's'} will be deleted from the server, for every user; this cannot be undone.`;
  $('delete-confirm').value = '';
  $('delete-go').disabled = true;
  say('delete-msg', '');
  $('delete-dialog').showModal();
});
$('delete-confirm').addEventListener('input', () => {
  $('delete-go').disabled = !state.study || $('delete-confirm').value !== state.study.name;
});
$('delete-cancel').addEventListener('click', () => $('delete-dialog').close());
$('delete-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = state.study.name;
  if ($('delete-confirm').value !== name) return;
  $('delete-go').disabled = true;
  say('delete-msg', 'deleting…');
  try {
    await write('DELETE', `/api/studies/${encodeURIComponent(name)}`);
  } catch (err) {
    say('delete-msg', `not deleted: ${err.message}`, true);
    $('delete-go').disabled = false;
    return;
  }
  $('delete-dialog').close();
  onDeleted(name);
});

// ------------------------------------------------------------ a trial

let trialShown = null;

const trialNote = noteEditor('trial-note', () => (state.trials.get(trialShown) || {}).note || '', async (text) => {
  const n = trialShown;
  const t = await write('PUT', studyURL(`trials/${n}/note`), { note: text });
  window.xbo.receive({ trials: [t] });
  return t.note || '';
}, 'trial-actions-msg');

function closeFail() {
  $('trial-fail-form').hidden = true;
  $('trial-fail').setAttribute('aria-expanded', 'false');
}

// renderTrialActions shows a trial's note and offers "Mark failed" while it
// runs. Drawn again for the same trial (trials arrived), it leaves open
// forms as they are: the user may be typing.
export function renderTrialActions(t) {
  const n = t ? t.number : null;
  if (n !== trialShown) {
    trialShown = n;
    trialNote.close();
    closeFail();
    say('trial-actions-msg', '');
  }
  $('trial-actions').hidden = !t;
  if (!t) return;
  showNote('trial-note', t.note);
  const running = t.state === 'running';
  $('trial-fail').hidden = !running;
  if (!running) closeFail();
}

$('trial-fail').addEventListener('click', () => {
  const form = $('trial-fail-form');
  form.hidden = !form.hidden;
  $('trial-fail').setAttribute('aria-expanded', String(!form.hidden));
  $('trial-fail-go').textContent = `Mark trial ${trialShown} failed`;
  if (!form.hidden) { $('trial-fail-reason').value = ''; $('trial-fail-reason').focus(); }
});
$('trial-fail-cancel').addEventListener('click', () => { closeFail(); $('trial-fail').focus(); });
$('trial-fail-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const n = trialShown;
  const reason = $('trial-fail-reason').value.trim() || 'marked failed from the dashboard';
  $('trial-fail-go').disabled = true;
  say('trial-actions-msg', 'marking failed…');
  try {
    const t = await write('POST', studyURL(`trials/${n}/tell`), { state: 'failed', reason });
    closeFail();
    say('trial-actions-msg', `trial ${n} marked failed`);
    window.xbo.receive({ trials: [t] });
    $('trial-note-edit').focus(); // the button pressed is gone
  } catch (err) {
    say('trial-actions-msg', `trial ${n} was not marked failed: ${err.message}`, true);
  } finally {
    $('trial-fail-go').disabled = false;
  }
});
