package chunk

import (
	"fmt"
	"net/url"
	"strings"
)

// sepLiteral holds the separator characters written into the query as they
// are. Each is legal unescaped in a query (RFC 3986, section 3.4) and has no
// meaning to form decoding; "&", "=", "+" and ";" do, so they are escaped
// along with everything else. A comma left literal costs one byte where
// %2C costs three, which for 2,000 short ids is thousands of bytes.
const sepLiteral = ",:/@!$'()*"

// escapeSeparator percent-encodes sep except for the characters in
// sepLiteral.
func escapeSeparator(sep string) string {
	var b strings.Builder
	for i := 0; i < len(sep); i++ {
		c := sep[i]
		if strings.IndexByte(sepLiteral, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(url.QueryEscape(sep[i : i+1]))
	}
	return b.String()
}

// list is one list parameter ready to be packed: its values encoded once,
// with prefix sums of their lengths so any run's length costs O(1).
type list struct {
	param string
	head  string   // encoded name and "=", written once per URL
	join  string   // between two values: the separator, or "&name="
	enc   []string // encoded values
	pre   []int    // pre[i] is the total length of enc[:i]
}

// newList validates and encodes values for param. sep is "" for a repeated
// parameter.
func newList(param string, values []string, sep string, repeat bool) (*list, error) {
	l := &list{
		param: param,
		head:  url.QueryEscape(param) + "=",
		enc:   make([]string, len(values)),
		pre:   make([]int, len(values)+1),
	}
	if repeat {
		l.join = "&" + l.head
	} else {
		l.join = escapeSeparator(sep)
	}
	for i, v := range values {
		switch {
		case v == "":
			return nil, &ValueError{Param: param, Value: v, Index: i, Err: ErrEmptyValue}
		case !repeat && strings.Contains(v, sep):
			return nil, &ValueError{Param: param, Value: v, Index: i, Err: ErrContainsSeparator}
		}
		l.enc[i] = url.QueryEscape(v)
		l.pre[i+1] = l.pre[i] + len(l.enc[i])
	}
	return l, nil
}

// cost is the length of values i..j-1 written together, j > i.
func (l *list) cost(i, j int) int {
	return l.pre[j] - l.pre[i] + (j-i-1)*len(l.join)
}

// write appends values i..j-1, head included.
func (l *list) write(b *strings.Builder, i, j int) {
	b.WriteString(l.head)
	for k := i; k < j; k++ {
		if k > i {
			b.WriteString(l.join)
		}
		b.WriteString(l.enc[k])
	}
}

// longest returns the index of the longest encoded value, the first on ties.
func (l *list) longest() int {
	best := 0
	for i, e := range l.enc {
		if len(e) > len(l.enc[best]) {
			best = i
		}
	}
	return best
}

// baseQuery returns base's raw query followed by "&" when parameters are to
// be appended, after checking that none of params is already there. The
// base query is kept byte for byte: re-encoding it would reorder or
// re-escape what the caller wrote.
func baseQuery(base *url.URL, params []string) (string, error) {
	q := base.RawQuery
	for _, part := range strings.Split(q, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		for _, p := range params {
			if name == p {
				return "", fmt.Errorf("chunk: parameter %q: %w", p, ErrParamPresent)
			}
		}
	}
	if q != "" && !strings.HasSuffix(q, "&") {
		q += "&"
	}
	return q, nil
}

// fixedLength is the length of base's String() with rawQuery as its query:
// everything in a planned URL but the values. String() writes RawQuery
// verbatim, so a URL's length is this plus the length of the values written.
func fixedLength(base *url.URL, rawQuery string) int {
	u := *base
	u.RawQuery = rawQuery
	return len(u.String())
}
