package breaker

// Entries returns how many hosts and keys b tracks.
func Entries(b *Breaker) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}
