package paginate

import (
	"encoding/json"
	"iter"
	"math/bits"
)

// Items are the items of one page, in order, each the exact JSON text of
// one array element (for [XMLCursor], of one XML element). They share
// memory with the page's body rather than copying it.
//
// An item boundary costs one bit for each byte of the page, however small
// the items are, instead of a slice header per item (ADR 0345): Items keep
// a bitmap of the bytes where an item starts, and find where each ends by
// stepping back from the next one over the comma and white space between.
// So items are read in order, with [Items.All]; [Items.Len] is known at
// once. The zero value holds no items.
type Items struct {
	data   []byte   // the text the items lie in: the body, or for XMLCursor a buffer of its own
	starts []uint64 // bit k set: an item starts at data[k]
	loose  []uint64 // bit i set: item i holds white space outside its strings; nil when none does
	close  int      // where the last item's array closes: the index of its ']'
	lo     int      // where the first item starts
	base   int      // the first item's index in the whole array (for loose)
	n      int
}

// Len returns how many items there are.
func (it Items) Len() int { return it.n }

// All yields each item with its index, from 0. An item shares memory with
// the body and must not be modified.
func (it Items) All() iter.Seq2[int, json.RawMessage] {
	return func(yield func(int, json.RawMessage) bool) {
		s := it.lo
		for i := range it.n {
			next := it.nextStart(s + 1)
			e := next
			for e > s && isGap(it.data[e-1]) {
				e--
			}
			if !yield(i, json.RawMessage(it.data[s:e:e])) {
				return
			}
			s = next
		}
	}
}

// Compact reports whether item i holds no white space outside its strings,
// so that it already is what [json.Compact] would make of it.
func (it Items) Compact(i int) bool {
	k := it.base + i
	return k>>6 >= len(it.loose) || it.loose[k>>6]&(1<<(k&63)) == 0
}

// Slice returns items i to j-1, as s[i:j] would; it panics if the bounds
// are out of range.
func (it Items) Slice(i, j int) Items {
	if i < 0 || j < i || j > it.n {
		panic("paginate: Items.Slice bounds out of range")
	}
	s := it.lo
	for range i {
		s = it.nextStart(s + 1)
	}
	it.lo, it.base, it.n = s, it.base+i, j-i
	if it.n == 0 {
		it.lo = it.close
	}
	return it
}

// nextStart returns the first item start at or after k, or close when none
// is left.
func (it Items) nextStart(k int) int {
	if k >= it.close {
		return it.close
	}
	w := k >> 6
	word := it.starts[w] &^ (1<<(k&63) - 1)
	for word == 0 {
		w++
		if w >= len(it.starts) {
			return it.close
		}
		word = it.starts[w]
	}
	return min(w<<6+bits.TrailingZeros64(word), it.close)
}

// isGap reports whether c can lie between two items of an array.
func isGap(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// itemsOf keeps list as Items, copied into one buffer with a comma between
// items. Each item must be nonempty and neither begin nor end with a comma
// or white space.
func itemsOf(list []json.RawMessage) Items {
	size := len(list)
	for _, b := range list {
		size += len(b)
	}
	data := make([]byte, 0, size)
	it := Items{starts: make([]uint64, size/64+1), n: len(list)}
	for i, b := range list {
		if i > 0 {
			data = append(data, ',')
		}
		it.starts[len(data)>>6] |= 1 << (len(data) & 63)
		data = append(data, b...)
	}
	it.data, it.close = data, len(data)
	if it.n == 0 {
		it.lo = it.close
	}
	return it
}
