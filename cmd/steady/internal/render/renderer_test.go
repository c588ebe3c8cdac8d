package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

func TestAutoChoice(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		r    render.Renderer
		want string
	}{
		{"quiet", render.Auto(f, render.Options{Quiet: true}), "discard"},
		{"nil writer", render.Auto(nil, render.Options{}), "discard"},
		{"file that is no terminal", render.Auto(f, render.Options{}), "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			switch tt.r.(type) {
			case *render.Plain:
				got = "plain"
			case *render.Terminal:
				got = "terminal"
			default:
				if tt.r == render.Discard {
					got = "discard"
				}
			}
			if got != tt.want {
				t.Errorf("Auto chose %q (%T), want %q", got, tt.r, tt.want)
			}
			if err := tt.r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

func TestDiscard(t *testing.T) {
	render.Discard.Report(event.Event{Kind: event.Stopped})
	if err := render.Discard.Close(); err != nil {
		t.Errorf("Discard.Close() = %v", err)
	}
}
