package store

import "time"

// importedTimes are an imported trial's creation, start and finish in
// microseconds: the source's, each missing one filled from the others so
// that created ≤ started ≤ finished holds as for a trial run here, and the
// import's instant when the source has none. A trial without a start time
// keeps none (it never ran here either).
func importedTimes(t ImportedTrial, now time.Time) (created int64, started *int64, finished int64) {
	fin := t.Finished
	if fin.IsZero() {
		fin = now
		if !t.Started.IsZero() && t.Started.After(now) {
			fin = t.Started
		}
	}
	cr := t.Created
	if cr.IsZero() {
		cr = t.Started
	}
	if cr.IsZero() || cr.After(fin) {
		cr = fin
	}
	if !t.Started.IsZero() {
		s := micros(t.Started)
		if t.Started.Before(cr) {
			s = micros(cr)
		}
		if t.Started.After(fin) {
			s = micros(fin)
		}
		started = &s
	}
	return micros(cr), started, micros(fin)
}
