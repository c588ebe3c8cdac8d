package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// redacted stands in for the API key wherever a Settings is shown. It is
// the same word the credentials package uses, so one search finds both.
const redacted = "REDACTED"

func (s Settings) keyText() string {
	if s.APIKey == "" {
		return "unset"
	}
	return redacted
}

// String describes s with the API key replaced by REDACTED (or "unset"),
// for instance "retries=4 stall_timeout=1m0s concurrent=32 api_key=unset
// connect_timeout=10s read_timeout=1m0s max_time=0s max_retry_after=1m0s".
func (s Settings) String() string {
	return fmt.Sprintf("retries=%d stall_timeout=%v concurrent=%d api_key=%s connect_timeout=%v read_timeout=%v max_time=%v max_retry_after=%v",
		s.Retries, s.StallTimeout, s.Concurrent, s.keyText(), s.ConnectTimeout, s.ReadTimeout, s.MaxTime, s.MaxRetryAfter)
}

// GoString is the %#v form, shaped like Go syntax but with the key redacted.
func (s Settings) GoString() string {
	return fmt.Sprintf("config.Settings{Retries:%d, StallTimeout:%d, Concurrent:%d, APIKey:%q, ConnectTimeout:%d, ReadTimeout:%d, MaxTime:%d, MaxRetryAfter:%d, Explicit:%#x}",
		s.Retries, int64(s.StallTimeout), s.Concurrent, s.keyText(), int64(s.ConnectTimeout), int64(s.ReadTimeout),
		int64(s.MaxTime), int64(s.MaxRetryAfter), uint8(s.Explicit))
}

// Format makes every fmt verb go through [Settings.String] or
// [Settings.GoString]. Without it, verbs such as %d or %x would print the
// struct's fields, key included.
func (s Settings) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), s.String())
}

// LogValue gives log/slog the settings as a group, key redacted.
func (s Settings) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("retries", s.Retries),
		slog.Duration("stall_timeout", s.StallTimeout),
		slog.Int("concurrent", s.Concurrent),
		slog.String("api_key", s.keyText()),
		slog.Duration("connect_timeout", s.ConnectTimeout),
		slog.Duration("read_timeout", s.ReadTimeout),
		slog.Duration("max_time", s.MaxTime),
		slog.Duration("max_retry_after", s.MaxRetryAfter),
	)
}

// String lists the variables set in v by suffix, joined with "|", such as
// "RETRIES|API_KEY"; "" when none is set.
func (v Var) String() string {
	var names []string
	for _, one := range vars {
		if v.Has(one) {
			names = append(names, one.Suffix())
		}
	}
	return strings.Join(names, "|")
}
