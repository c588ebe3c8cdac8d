package chunk

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// maxMultiURLs bounds a cross product, which grows as the product of the
// lists' part counts: past a million URLs the caller is better served by an
// error than by running out of memory.
const maxMultiURLs = 1 << 20

// PlanMulti splits several list parameters at once. Each list is cut into
// contiguous parts and the plan is their cross product: one URL for every
// combination of one part from each list, so every combination of values
// is asked for exactly once. Parameters are written in name order after
// base's own query, and URLs are ordered with the first name varying
// slowest. A parameter with an empty list is left out.
//
// Parts are found by repeatedly halving (by encoded length) the largest
// part of the list whose largest part is longest (the first name on a
// tie), until the longest possible URL fits; then each list is re-packed
// greedily into the room the others leave. With one list the plan is
// [PlanWith]'s; with several it is small but, unlike PlanWith's, not
// promised to be the fewest URLs. Errors are those of PlanWith; a value that cannot fit even
// next to the longest value of every other list is a [*ValueError], and a
// plan of more than 1,048,576 URLs is refused with [ErrInvalid].
func PlanMulti(base *url.URL, lists map[string][]string, opt Options) ([]*url.URL, error) {
	budget, sep, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	if base == nil {
		return nil, fmt.Errorf("chunk: a base URL is required: %w", ErrInvalid)
	}
	names, err := sortedNames(lists)
	if err != nil {
		return nil, err
	}
	q, err := baseQuery(base, names)
	if err != nil {
		return nil, err
	}
	if err := baseFits(base, budget); err != nil {
		return nil, err
	}
	ls, heads, err := newLists(names, lists, q, sep, opt.Repeat)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		u := *base
		return []*url.URL{&u}, nil
	}
	fixed := fixedLength(base, heads)
	if err := longestFit(ls, lists, fixed, budget); err != nil {
		return nil, err
	}
	most, err := opt.valueRoom(q, len(ls))
	if err != nil {
		return nil, err
	}
	parts := halveToFit(ls, fixed, budget, most)
	repack(ls, parts, budget-fixed, most)
	return crossProduct(base, q, ls, parts)
}

// sortedNames returns the parameter names of lists in order, refusing an
// empty one.
func sortedNames(lists map[string][]string) ([]string, error) {
	names := make([]string, 0, len(lists))
	for name := range lists {
		if name == "" {
			return nil, fmt.Errorf("chunk: empty parameter name: %w", ErrInvalid)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// newLists encodes the non-empty lists in name order, and returns them with
// the query every URL starts with: base's query q and each list's head.
func newLists(names []string, lists map[string][]string, q, sep string, repeat bool) ([]*list, string, error) {
	var ls []*list
	heads := q
	for _, name := range names {
		if len(lists[name]) == 0 {
			continue
		}
		l, err := newList(name, lists[name], sep, repeat)
		if err != nil {
			return nil, "", err
		}
		if len(ls) > 0 {
			heads += "&"
		}
		heads += l.head
		ls = append(ls, l)
	}
	return ls, heads, nil
}

// longestFit checks that some URL can carry the longest value of every list
// together, and names the longest of them when none can.
func longestFit(ls []*list, lists map[string][]string, fixed, budget int) error {
	need, worst, worstLen := fixed, 0, -1
	for p, l := range ls {
		n := len(l.enc[l.longest()])
		need += n
		if n > worstLen {
			worst, worstLen = p, n
		}
	}
	if need <= budget {
		return nil
	}
	l := ls[worst]
	i := l.longest()
	return &ValueError{Param: l.param, Value: lists[l.param][i], Index: i, Need: need, Budget: budget, Err: ErrValueTooLong}
}

// halveToFit cuts the lists into parts, halving the longest part that can
// be cut until the URL of every list's largest part fits the budget, then
// the part with the most values until the widest parts together hold at
// most most values.
func halveToFit(ls []*list, fixed, budget, most int) [][]span {
	parts := make([][]span, len(ls))
	for p, l := range ls {
		parts[p] = []span{{0, len(l.enc)}}
	}
	for {
		longest, count, pick, pickPart, pickCost := fixed, 0, -1, -1, -1
		for p, l := range ls {
			j := largestPart(l, parts[p])
			c := l.cost(parts[p][j].start, parts[p][j].end)
			longest += c
			count += widest(parts[p])
			if parts[p][j].end-parts[p][j].start > 1 && c > pickCost {
				pick, pickPart, pickCost = p, j, c
			}
		}
		switch {
		case longest <= budget && count <= most:
			return parts
		case longest <= budget:
			// count > most >= len(ls): some part holds two values or more.
			pick, pickPart = widestPart(parts)
		}
		// pick >= 0: were every largest part a single value, longest would
		// equal the longest values' need, which fits.
		left, right := halve(ls[pick], parts[pick][pickPart])
		parts[pick] = slices.Replace(parts[pick], pickPart, pickPart+1, left, right)
	}
}

// widest returns how many values the widest of parts holds.
func widest(parts []span) int {
	n := 0
	for _, s := range parts {
		n = max(n, s.end-s.start)
	}
	return n
}

// widestPart returns the list and part index of the part holding the most
// values, the first on ties.
func widestPart(parts [][]span) (list, part int) {
	n := -1
	for p, ps := range parts {
		for j, s := range ps {
			if s.end-s.start > n {
				list, part, n = p, j, s.end-s.start
			}
		}
	}
	return list, part
}

// repack re-packs each list greedily into the room its neighbours' largest
// parts leave of free (the budget less the fixed length), and the values
// their widest parts leave of most. Halving fixes how long each list's
// parts may be, not how few there can be. The current parts fit that room,
// so greedy (see pack) needs no more of them, and the new largest and
// widest parts fit it too, so every URL still fits. With one list this is
// exactly PlanWith.
func repack(ls []*list, parts [][]span, free, most int) {
	for p, l := range ls {
		room, values := free, most
		for q, other := range ls {
			if q != p {
				j := largestPart(other, parts[q])
				room -= other.cost(parts[q][j].start, parts[q][j].end)
				values -= widest(parts[q])
			}
		}
		parts[p] = parts[p][:0]
		start := 0
		for _, end := range pack(l, room, values) {
			parts[p] = append(parts[p], span{start, end})
			start = end
		}
	}
}

// crossProduct writes one URL for every combination of one part of each
// list, the first list varying slowest.
func crossProduct(base *url.URL, q string, ls []*list, parts [][]span) ([]*url.URL, error) {
	count := 1
	for _, ps := range parts {
		if count > maxMultiURLs/len(ps) {
			return nil, fmt.Errorf("chunk: the lists need more than %d URLs in a cross product: %w", maxMultiURLs, ErrInvalid)
		}
		count *= len(ps)
	}
	urls := make([]*url.URL, 0, count)
	pos := make([]int, len(ls)) // an odometer over parts, last list fastest
	for range count {
		var b strings.Builder
		b.WriteString(q)
		for p, l := range ls {
			if p > 0 {
				b.WriteByte('&')
			}
			s := parts[p][pos[p]]
			l.write(&b, s.start, s.end)
		}
		u := *base
		u.RawQuery = b.String()
		urls = append(urls, &u)
		for p := len(pos) - 1; p >= 0; p-- {
			if pos[p]++; pos[p] < len(parts[p]) {
				break
			}
			pos[p] = 0
		}
	}
	return urls, nil
}

// A span is the values start..end-1 of a list.
type span struct{ start, end int }

// largestPart returns the index of the part of l that writes longest.
func largestPart(l *list, parts []span) int {
	best, bestCost := 0, -1
	for j, s := range parts {
		if c := l.cost(s.start, s.end); c > bestCost {
			best, bestCost = j, c
		}
	}
	return best
}

// halve cuts s (at least two values) where the longer half is shortest.
func halve(l *list, s span) (span, span) {
	cut, best := s.start+1, -1
	for m := s.start + 1; m < s.end; m++ {
		c := max(l.cost(s.start, m), l.cost(m, s.end))
		if best < 0 || c < best {
			cut, best = m, c
		}
	}
	return span{s.start, cut}, span{cut, s.end}
}
