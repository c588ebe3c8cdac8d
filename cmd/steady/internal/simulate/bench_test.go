package simulate

import (
	"io"
	"testing"
	"time"
)

// BenchmarkContention runs the five policies at 50 clients, 5 trials each.
func BenchmarkContention(b *testing.B) {
	cfg := ContentionConfig{Clients: []int{50}, Trials: 5}
	for b.Loop() {
		if _, err := Contention(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutage runs the four policies with 100 clients and a 10 s
// outage: about 110,000 requests a policy.
func BenchmarkOutage(b *testing.B) {
	cfg := OutageConfig{Clients: 100, Before: 2 * time.Second, Down: 10 * time.Second, After: 10 * time.Second}
	for b.Loop() {
		if _, err := Outage(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteOutageSVG(b *testing.B) {
	res, err := Outage(OutageConfig{Clients: 10})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := WriteOutageSVG(io.Discard, res); err != nil {
			b.Fatal(err)
		}
	}
}
