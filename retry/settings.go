package retry

import "github.com/steadyhttp/steady/config"

// FromSettings returns p with the retry settings of s applied: MaxAttempts
// from s.Retries (re-sends after the first attempt) and StallTimeout from
// s.StallTimeout, where the settings' 0 ("disabled") becomes the policy's
// negative value. A read timeout left at its default is shortened to the
// stall budget: a read silent for longer than the budget allows could never
// be followed by a re-send anyway. The other fields of p are kept.
func FromSettings(p Policy, s config.Settings) Policy {
	p.MaxAttempts = s.Retries + 1
	p.StallTimeout = s.StallTimeout
	if s.StallTimeout == 0 {
		p.StallTimeout = -1
	}
	if p.ReadTimeout == 0 && s.StallTimeout > 0 && s.StallTimeout < config.DefaultReadTimeout {
		p.ReadTimeout = s.StallTimeout
	}
	return p
}
