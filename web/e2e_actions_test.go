package web_test

// Acting on a study from the page (src/actions.js): the study's note, a
// trial's note, marking a running trial failed, deleting the study after
// its name is typed; the token asked for once when the server needs one;
// none of these controls on a read-only server. Each against a real server
// on a SQLite file (the server's own tests run the notes on PostgreSQL too).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"xbo/client"
	"xbo/server"
	"xbo/store"
)

// actionStudy creates a study of six complete trials and one running one
// (its number returned) through c.
func actionStudy(t *testing.T, c *client.Client, name string) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateStudy(ctx, client.StudySpec{Name: name, Space: json.RawMessage(demoSpace), Optimizer: map[string]any{"strategy": "random", "seed": 4}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Optimize(ctx, name, 6, func(_ context.Context, tr *client.Trial) (float64, error) { return demoObjective(tr) }); err != nil {
		t.Fatal(err)
	}
	tr, err := c.Ask(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Number
}

func (h *harness) click(id string) {
	h.t.Helper()
	h.run("click "+id, 5*time.Second, chromedp.Click(chromedp.CSS("#"+id)))
}

// shown lists which of the elements (ids) are on screen.
func (h *harness) shown(ids ...string) map[string]bool {
	h.t.Helper()
	out := map[string]bool{}
	b, _ := json.Marshal(ids)
	h.eval(`Object.fromEntries(`+string(b)+`.map((id) => [id, document.getElementById(id).offsetParent !== null || document.getElementById(id).closest('dialog[open]') !== null]))`, &out)
	return out
}

func (h *harness) text(id string) string {
	h.t.Helper()
	var s string
	h.eval(`document.getElementById(`+jsString(id)+`).textContent`, &s)
	return s
}

// TestDashboardActions: on a writable server without a token, on SQLite and
// on PostgreSQL, every control that writes is shown, does what it says
// through the API, passes axe-core and is reached by keyboard.
func TestDashboardActions(t *testing.T) {
	// Every write goes through the store: both backends.
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { dashboardActions(t, backend) })
	}
}

func dashboardActions(t *testing.T, backend string) {
	h := startServerOn(t, backend, server.Config{})
	ctx := context.Background()
	running := actionStudy(t, h.c, "acts")
	// The study shown once acts is deleted has no trial yet: its views
	// must draw without one (the colour scale of the two-parameter plot
	// once threw on an empty study).
	if _, err := h.c.CreateStudy(ctx, client.StudySpec{Name: "next", Space: json.RawMessage(demoSpace)}); err != nil {
		t.Fatal(err)
	}
	h.openBrowser()
	h.run("open acts", 20*time.Second, chromedp.Navigate(h.base+"/#study=acts"))
	h.wait("acts rendered", `document.body.dataset.ready === 'acts'`, 15*time.Second)
	if s := h.shown("study-note-edit", "study-delete", "study-note", "study-note-form"); !s["study-note-edit"] || !s["study-delete"] || s["study-note"] || s["study-note-form"] {
		t.Fatalf("a writable server's study without a note: shown %v; want the edit and delete buttons, no note, no form", s)
	}

	// The study's note: edited in its form, stored, shown as text with its
	// line breaks.
	note := "Baseline run <b>not bold</b>\nsecond line & more"
	h.click("study-note-edit")
	h.wait("note form open", `!document.getElementById('study-note-form').hidden && document.activeElement.id === 'study-note-input'`, 5*time.Second)
	setControl(h, "study-note-input", note, "input")
	h.audit("study note form")
	h.shoot("7-study-note-form")
	h.click("study-note-save")
	h.wait("note saved", `document.getElementById('study-actions-msg').textContent === 'note saved'`, 10*time.Second)
	if st, err := h.c.Study(ctx, "acts"); err != nil || st.Note != note {
		t.Fatalf("the API's study note after saving: %q, %v; want %q", st.Note, err, note)
	}
	var lines int
	h.eval(`(() => { const e = document.getElementById('study-note-text'); return Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)); })()`, &lines)
	if got := h.text("study-note-text"); got != note || lines != 2 {
		t.Fatalf("the page shows the note %q on %d lines; want %q on 2", got, lines, note)
	}
	if s := h.shown("study-note-form"); s["study-note-form"] {
		t.Fatal("the note form stays open after saving")
	}
	// The note is the study's: reading the page again shows it.
	h.run("reload", 20*time.Second, chromedp.Navigate("about:blank"), chromedp.Navigate(h.base+"/#study=acts"))
	h.wait("acts rendered again", `document.body.dataset.ready === 'acts'`, 15*time.Second)
	if got := h.text("study-note-text"); got != note {
		t.Fatalf("after a reload the page shows the note %q, want %q", got, note)
	}
	h.shoot("7-study-note")

	// Mark the running trial failed, with a reason.
	h.run("open the running trial", 20*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=acts&trial=%d", running)))
	h.wait("trial shown", fmt.Sprintf(`document.getElementById('trial-h').textContent === 'Trial %d' && document.getElementById('trial-facts').textContent.includes('running')`, running), 15*time.Second)
	if s := h.shown("trial-note-edit", "trial-fail", "trial-fail-form", "trial-note"); !s["trial-note-edit"] || !s["trial-fail"] || s["trial-fail-form"] || s["trial-note"] {
		t.Fatalf("a running trial without a note: shown %v; want the note and mark-failed buttons only", s)
	}
	h.click("trial-fail")
	h.wait("fail form open", `!document.getElementById('trial-fail-form').hidden && document.activeElement.id === 'trial-fail-reason'`, 5*time.Second)
	setControl(h, "trial-fail-reason", "stuck on node 3", "input")
	h.audit("mark failed form")
	h.shoot("7-trial-fail-form")
	h.click("trial-fail-go")
	h.wait("marked failed", fmt.Sprintf(`document.getElementById('trial-actions-msg').textContent === 'trial %d marked failed'`, running), 10*time.Second)
	tr, err := h.c.Trial(ctx, "acts", running)
	if err != nil || tr.State != "failed" || tr.FailReason != "stuck on node 3" {
		t.Fatalf("the API's trial after marking it failed: %+v, %v", tr, err)
	}
	h.wait("the page shows it failed", `document.querySelector('#trial-facts tr[data-k=state]').textContent.includes('failed') && document.querySelector('#trial-facts tr[data-k=fail_reason]').textContent === 'fail reasonstuck on node 3'`, 10*time.Second)
	if s := h.shown("trial-fail"); s["trial-fail"] {
		t.Fatal("a failed trial still offers to be marked failed")
	}

	// The trial's note.
	h.click("trial-note-edit")
	h.wait("trial note form open", `!document.getElementById('trial-note-form').hidden`, 5*time.Second)
	setControl(h, "trial-note-input", "the node ran out of memory", "input")
	h.click("trial-note-save")
	h.wait("trial note saved", `document.getElementById('trial-note-text').textContent === 'the node ran out of memory'`, 10*time.Second)
	if tr, err := h.c.Trial(ctx, "acts", running); err != nil || tr.Note != "the node ran out of memory" || tr.State != "failed" {
		t.Fatalf("the API's trial after its note: %+v, %v", tr, err)
	}
	h.audit("trial with a note")
	h.shoot("7-trial-note")
	h.reachable("trial actions", "trial-note-edit", "study-note-edit", "study-delete")

	// Deleting the study: Escape leaves it; the button waits for the exact
	// name; then it is gone and the next study is shown.
	h.click("study-delete")
	h.wait("delete dialog open", `document.getElementById('delete-dialog').open && document.activeElement.id === 'delete-confirm'`, 5*time.Second)
	if what := h.text("delete-what"); !strings.Contains(what, "“acts” and its 7 trials") {
		t.Fatalf("the delete dialog says %q", what)
	}
	h.audit("delete dialog")
	h.shoot("7-delete-dialog")
	h.run("Escape", 5*time.Second, chromedp.KeyEvent(kb.Escape))
	h.wait("dialog closed", `!document.getElementById('delete-dialog').open`, 5*time.Second)
	if _, err := h.c.Study(ctx, "acts"); err != nil {
		t.Fatalf("Escape deleted the study: %v", err)
	}
	h.click("study-delete")
	h.wait("delete dialog open again", `document.getElementById('delete-dialog').open`, 5*time.Second)
	var disabled []bool
	for _, typed := range []string{"", "act", "acts "} {
		setControl(h, "delete-confirm", typed, "input")
		var d bool
		h.eval(`document.getElementById('delete-go').disabled`, &d)
		disabled = append(disabled, d)
	}
	setControl(h, "delete-confirm", "acts", "input")
	var d bool
	h.eval(`document.getElementById('delete-go').disabled`, &d)
	if disabled[0] != true || disabled[1] != true || disabled[2] != true || d {
		t.Fatalf("the delete button's disabled state for '', 'act', 'acts ' and 'acts': %v, %v", disabled, d)
	}
	h.click("delete-go")
	h.wait("next study shown", `document.body.dataset.ready === 'next' && !document.getElementById('delete-dialog').open`, 15*time.Second)
	if _, err := h.c.Study(ctx, "acts"); !client.IsStatus(err, 404) {
		t.Fatalf("after deleting, GET the study: %v, want 404", err)
	}
	var listed []string
	h.eval(`[...document.querySelectorAll('#studies button')].map((b) => b.dataset.study + ': ' + b.querySelector('small').textContent)`, &listed)
	if strings.Join(listed, ",") != "next: 0 trials · no value yet" {
		t.Fatalf("after deleting, the page lists %q", listed)
	}
	for _, view := range []string{"history", "explain", "compare", "overview"} {
		h.show(view)
		h.painted()
	}
	h.pageErrors()
}

// TestDashboardActionsToken: with a token on writes, the first write asks
// for it in a dialog, a refused token is asked for again, and the token is
// kept for the tab: the next write does not ask.
func TestDashboardActionsToken(t *testing.T) {
	h := startServerWith(t, server.Config{Token: "sesame"})
	c := client.New(h.base, client.WithToken("sesame"))
	running := actionStudy(t, c, "locked")
	h.openBrowser()
	h.run("open", 20*time.Second, chromedp.Navigate(h.base+"/#study=locked"))
	h.wait("rendered", `document.body.dataset.ready === 'locked'`, 15*time.Second)
	h.click("study-note-edit")
	setControl(h, "study-note-input", "needs the token", "input")
	h.click("study-note-save")
	h.wait("token asked for", `document.getElementById('token-dialog').open && document.activeElement.id === 'token-input'`, 10*time.Second)
	h.audit("token dialog")
	h.shoot("7-token-dialog")
	setControl(h, "token-input", "wrong", "input")
	h.click("token-go")
	h.wait("asked again", `document.getElementById('token-dialog').open && document.getElementById('token-why').textContent.startsWith('The server refused that token')`, 10*time.Second)
	setControl(h, "token-input", "sesame", "input")
	h.click("token-go")
	h.wait("saved", `document.getElementById('study-actions-msg').textContent === 'note saved'`, 10*time.Second)
	if st, err := c.Study(context.Background(), "locked"); err != nil || st.Note != "needs the token" {
		t.Fatalf("the note with the token: %q, %v", st.Note, err)
	}
	var kept string
	h.eval(`sessionStorage.getItem('xbo-token')`, &kept)
	if kept != "sesame" {
		t.Fatalf("sessionStorage keeps the token %q", kept)
	}
	// The next write sends the kept token without asking.
	h.run("open the running trial", 20*time.Second, chromedp.Navigate(h.base+fmt.Sprintf("/#study=locked&trial=%d", running)))
	h.wait("trial shown", `document.getElementById('trial-facts').textContent.includes('running')`, 15*time.Second)
	h.click("trial-fail")
	h.click("trial-fail-go")
	h.wait("marked failed", `document.getElementById('trial-actions-msg').textContent.endsWith('marked failed')`, 10*time.Second)
	var asked bool
	h.eval(`document.getElementById('token-dialog').open`, &asked)
	if tr, err := c.Trial(context.Background(), "locked", running); err != nil || tr.State != "failed" || tr.FailReason != "marked failed from the dashboard" || asked {
		t.Fatalf("a second write: trial %+v, %v; token asked again: %v", tr, err, asked)
	}
	h.pageErrors()
}

// TestDashboardReadOnly: a read-only server's page shows the notes and no
// control that writes.
func TestDashboardReadOnly(t *testing.T) {
	h := startServerWith(t, server.Config{ReadOnly: true})
	ctx := context.Background()
	if _, err := h.st.CreateStudy(ctx, store.NewStudy{Name: "ro", Direction: "minimize", Space: json.RawMessage(demoSpace), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		v := float64(i)
		if _, err := h.st.AddTrial(ctx, "ro", store.NewTrial{Params: map[string]any{"lr": 0.1 * float64(i+1), "mom": 0.5, "opt": "sgd"}, Value: &v, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.st.AddTrial(ctx, "ro", store.NewTrial{Params: map[string]any{"lr": 1.0, "mom": 0.2, "opt": "adam"}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Trial 4 runs: handed out by the store, which the server cannot be asked to do.
	if tr, err := h.st.Ask(ctx, "ro", store.AskRequest{Worker: "w", Now: time.Now()}, func(context.Context, store.AskView) (store.Proposal, error) {
		return store.Proposal{}, fmt.Errorf("the queued trial is handed out first")
	}); err != nil || tr.Number != 4 {
		t.Fatalf("ask: %+v, %v", tr, err)
	}
	if _, err := h.st.SetStudyNote(ctx, "ro", "read me"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.SetTrialNote(ctx, "ro", 1, "second trial's note"); err != nil {
		t.Fatal(err)
	}
	h.openBrowser()
	h.run("open", 20*time.Second, chromedp.Navigate(h.base+"/#study=ro"))
	h.wait("rendered", `document.body.dataset.ready === 'ro' && document.body.dataset.writes === 'false'`, 15*time.Second)
	var writable []string
	const controls = `[...document.querySelectorAll('#study-actions button, #trial-actions button, #study-actions textarea, #trial-actions textarea, #trial-actions input')].filter((e) => e.offsetParent !== null).map((e) => e.id)`
	h.eval(controls, &writable)
	if len(writable) > 0 || h.text("study-note-text") != "read me" {
		t.Fatalf("a read-only server's page shows the controls %v and the note %q", writable, h.text("study-note-text"))
	}
	h.audit("read-only overview")
	h.shoot("7-read-only")
	h.run("open trial 1", 20*time.Second, chromedp.Navigate(h.base+"/#study=ro&trial=1"))
	h.wait("trial shown", `document.getElementById('trial-note-text').textContent === "second trial's note" && !document.getElementById('trial-note').hidden`, 15*time.Second)
	h.eval(controls, &writable)
	if len(writable) > 0 {
		t.Fatalf("a read-only server's trial view shows the controls %v", writable)
	}
	h.run("open the running trial", 20*time.Second, chromedp.Navigate(h.base+"/#study=ro&trial=4"))
	h.wait("running trial shown", `document.getElementById('trial-facts').textContent.includes('running')`, 15*time.Second)
	h.eval(controls, &writable)
	if len(writable) > 0 {
		t.Fatalf("a read-only server's trial view shows the controls %v", writable)
	}
	h.shoot("7-read-only-trial")
	h.pageErrors()
}
