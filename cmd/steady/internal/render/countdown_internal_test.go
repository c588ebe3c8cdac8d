package render

import (
	"testing"
	"time"
)

func TestCountdown(t *testing.T) {
	for _, tc := range []struct {
		planned, elapsed, want time.Duration
	}{
		{12 * time.Second, 0, 12 * time.Second},
		{12 * time.Second, time.Millisecond, 12 * time.Second}, // drawn at once: whole
		{12 * time.Second, 150 * time.Millisecond, 11900 * time.Millisecond},
		{12 * time.Second, 12 * time.Second, 0},
		{12 * time.Second, time.Minute, 0},
		{time.Second, -time.Second, time.Second}, // a clock stepped back
		{2 * time.Minute, 500 * time.Millisecond, 2 * time.Minute},
		{2 * time.Minute, 1500 * time.Millisecond, 119 * time.Second},
	} {
		if got := countdown(tc.planned, tc.elapsed); got != tc.want {
			t.Errorf("countdown(%v, %v) = %v, want %v", tc.planned, tc.elapsed, got, tc.want)
		}
	}
}
