package liveness

import "time"

// Last returns the time data last arrived, with credits applied, for the
// external tests that check the stamp never moves past now.
func (t *Tracker) Last() time.Time { return time.Unix(0, t.last.Load()) }
