package simulate

import (
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// stream returns a generator for one independent part of a run. Every part
// (a trial of a policy at a client count, the arrivals of one client, ...)
// draws from its own PCG stream, named by the labels, so adding a policy or
// reordering the list changes no other part's numbers, and two policies that
// share a name face exactly the same network and arrivals.
func stream(seed uint64, name string, labels ...uint64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	s := h.Sum64()
	for _, l := range labels {
		s = mix(s ^ mix(l))
	}
	return rand.New(rand.NewPCG(seed, s))
}

// mix is the splitmix64 finalizer: it spreads nearby labels apart.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// network draws one-way delays from a normal distribution truncated to
// positive values: a delay of zero or less is drawn again. With the mean
// five deviations above zero a redraw happens about once in three million.
type network struct {
	mean, stddev float64 // nanoseconds
}

func newNetwork(mean, stddev time.Duration) network {
	return network{mean: float64(mean), stddev: float64(stddev)}
}

func (n network) delay(r *rand.Rand) time.Duration {
	for {
		d := time.Duration(n.mean + n.stddev*r.NormFloat64())
		if d > 0 {
			return d
		}
	}
}

// exponential draws the gap to the next arrival of a Poisson process with
// the given rate a second.
func exponential(r *rand.Rand, perSecond float64) time.Duration {
	return time.Duration(r.ExpFloat64() / perSecond * float64(time.Second))
}
