package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/config"
)

const secret = "sk-live-7f3a9c"

func TestSettingsNeverShowTheKey(t *testing.T) {
	t.Parallel()
	s := config.Settings{Retries: 2, StallTimeout: 1500 * time.Millisecond, Concurrent: 8, APIKey: secret}
	shown := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X", "%10.3s", "%T %v"} {
		shown[verb] = fmt.Sprintf(verb, s)
		shown["pointer "+verb] = fmt.Sprintf(verb, &s)
		shown["nested "+verb] = fmt.Sprintf(verb, struct{ S config.Settings }{s})
	}
	shown["Sprint"] = fmt.Sprint(s)
	shown["Sprintln"] = fmt.Sprintln(s)

	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("settings", "s", s)
	shown["slog text"] = logged.String()
	logged.Reset()
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("settings", "s", s)
	shown["slog json"] = logged.String()

	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	shown["json"] = string(js)

	hexSecret := fmt.Sprintf("%x", secret)
	for how, text := range shown {
		if strings.Contains(text, secret) || strings.Contains(strings.ToLower(text), hexSecret) {
			t.Errorf("%s shows the key: %s", how, text)
		}
	}
	if got, want := shown["%v"], "retries=2 stall_timeout=1.5s concurrent=8 api_key=REDACTED connect_timeout=0s read_timeout=0s max_time=0s max_retry_after=0s"; got != want {
		t.Errorf("%%v = %q, want %q", got, want)
	}
	if got, want := shown["%#v"], `config.Settings{Retries:2, StallTimeout:1500000000, Concurrent:8, APIKey:"REDACTED", ConnectTimeout:0, ReadTimeout:0, MaxTime:0, MaxRetryAfter:0, Explicit:0x0}`; got != want {
		t.Errorf("%%#v = %q, want %q", got, want)
	}
	if !strings.Contains(shown["slog text"], "s.api_key=REDACTED") {
		t.Errorf("slog text lacks the redacted key: %s", shown["slog text"])
	}
}

func TestSettingsStringWithoutKey(t *testing.T) {
	t.Parallel()
	if got, want := config.Defaults().String(), "retries=4 stall_timeout=1m0s concurrent=32 api_key=unset connect_timeout=10s read_timeout=1m0s max_time=0s max_retry_after=1m0s"; got != want {
		t.Errorf("Defaults().String() = %q, want %q", got, want)
	}
}
