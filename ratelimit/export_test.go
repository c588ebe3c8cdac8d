package ratelimit

// States returns how many quota states the pacer keeps.
func (p *Pacer) States() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// Locked runs f with the pacer's lock held, to show f takes no lock.
func (p *Pacer) Locked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}
