package main

import "github.com/schollz/progressbar/v3"

// progress draws a bar on stderr for long work, only when stderr is a
// terminal. The bar is made at the first update, because some runners learn
// their total only then; set has the shape of the progress callbacks of the
// bench, explain and report packages.
type progress struct {
	env  *cliEnv
	desc string
	bar  *progressbar.ProgressBar
}

func newProgress(env *cliEnv, desc string) *progress {
	return &progress{env: env, desc: desc}
}

// set reports done of total units of work.
func (p *progress) set(done, total int) {
	if !p.env.isTerminal {
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.env.stderr),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

// describe replaces the text beside the bar (e.g. the current step).
func (p *progress) describe(desc string) {
	p.desc = desc
	if p.bar != nil {
		p.bar.Describe(desc)
	}
}

// finish clears the bar, if one was drawn.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// clear takes the bar off the terminal so that a line can be printed; the
// next update draws it again.
func (p *progress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}
