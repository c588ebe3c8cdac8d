package progress_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/steadyhttp/steady/progress"
)

func TestAutoChoice(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		r    progress.Renderer
		want string
	}{
		{"quiet", progress.Auto(f, progress.Options{Quiet: true}), "discard"},
		{"nil writer", progress.Auto(nil, progress.Options{}), "discard"},
		{"file that is no terminal", progress.Auto(f, progress.Options{}), "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			switch tt.r.(type) {
			case *progress.Plain:
				got = "plain"
			case *progress.Terminal:
				got = "terminal"
			default:
				if tt.r == progress.Discard {
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
	progress.Discard.Report(progress.Event{Kind: progress.Stopped})
	if err := progress.Discard.Close(); err != nil {
		t.Errorf("Discard.Close() = %v", err)
	}
}
