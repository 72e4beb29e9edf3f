package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestReportNotes: the study's note and the trials' notes are in the
// report, as text with their line breaks kept, in the summary, the trials
// table and the JSON; a report without notes has none of it.
func TestReportNotes(t *testing.T) {
	h := trialsHistory(t)
	_, plain := renderReport(t, h)
	if strings.Contains(plain, "study-note") || strings.Contains(plain, "trial-notes") || strings.Contains(plain, "<th>note</th>") {
		t.Fatal("a report without notes shows a note section or column")
	}

	h.Note = "Baseline <script>alert(1)</script>\nsecond line"
	h.Trials[3].Note = "best one & <b>kept</b>"
	h.Trials[24].Note = "OOM\non node 3"
	rep, page := renderReport(t, h)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>kept</b>") {
		t.Fatal("a note became markup")
	}
	if want := `<p class="note" id="study-note"><strong>Study note</strong> Baseline &lt;script&gt;alert(1)&lt;/script&gt;` + "\nsecond line</p>"; !strings.Contains(page, want) {
		t.Errorf("the study note is not\n%s\nin the page", want)
	}
	notes := regexp.MustCompile(`(?s)<table id="trial-notes-table">.*?</table>`).FindString(page)
	for _, want := range []string{
		`<tr data-trial="3"><th>#3</th><td>complete</td><td class="note-text">best one &amp; &lt;b&gt;kept&lt;/b&gt;</td></tr>`,
		`<tr data-trial="24"><th>#24</th><td>failed</td><td class="note-text">OOM` + "\non node 3</td></tr>",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the trial notes table lacks\n%s\nin\n%s", want, notes)
		}
	}
	if strings.Count(notes, "<tr data-trial=") != 2 {
		t.Errorf("the trial notes table has %d rows, want the 2 noted trials", strings.Count(notes, "<tr data-trial="))
	}
	table := regexp.MustCompile(`(?s)<table id="trials-table">.*?</table>`).FindString(page)
	if !strings.Contains(table, `<th>proposed by</th><th>note</th></tr>`) ||
		!strings.Contains(table, `<td>ei</td><td class="note-text">OOM`+"\non node 3</td></tr>") ||
		!strings.Contains(table, `<tr data-trial="0"><th>#0</th>`) || !regexp.MustCompile(`<tr data-trial="0">.*<td class="note-text"></td></tr>`).MatchString(table) {
		t.Errorf("the trials table has no note column with trial 24's note and an empty cell for trial 0:\n%.2000s", table)
	}

	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Note       string      `json:"note"`
			TrialNotes []TrialNote `json:"trial_notes"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := []TrialNote{{3, "complete", "best one & <b>kept</b>"}, {24, "failed", "OOM\non node 3"}}
	if doc.Summary.Note != h.Note || len(doc.Summary.TrialNotes) != 2 || doc.Summary.TrialNotes[0] != want[0] || doc.Summary.TrialNotes[1] != want[1] {
		t.Errorf("JSON summary notes: %q %+v; want %q %+v", doc.Summary.Note, doc.Summary.TrialNotes, h.Note, want)
	}
}
