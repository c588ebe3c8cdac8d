package steadytest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// styledItems serves a page in one of the styles whose client computes the
// next request ([Offset], [PageLimit], [PerPage], [Range]) or reads it from
// XML ([S3]).
func (x *exchange) styledItems() {
	h := x.h
	offset, limit, ok := x.styledParams()
	if !ok {
		return
	}
	page := pageKey("items", strconv.Itoa(offset), strconv.Itoa(limit))
	if !x.admit(Call{Seq: x.entry.Seq, Path: ItemsPath, Offset: offset, Limit: limit}, page) {
		return
	}
	token := ""
	switch x.fault.Kind {
	case ForeignNext, UserinfoNext:
		x.fault = Fault{} // no link to corrupt
	case RepeatNext:
		// A server that ignores the paging parameter: the same page again,
		// or for S3 the token that was sent.
		if h.opt.Style == S3 {
			token = x.r.URL.Query().Get("continuation-token")
		} else {
			offset = 0
		}
	}
	if h.opt.Style == Range && offset >= h.opt.Rows && h.opt.Rows > 0 {
		x.w.Header().Set("Content-Range", "*/"+strconv.Itoa(h.opt.Rows))
		x.fail(http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable",
			"the range starts at "+strconv.Itoa(offset)+", past the "+strconv.Itoa(h.opt.Rows)+" rows")
		return
	}
	if !x.preface() {
		return
	}
	start, end := min(offset, h.opt.Rows), min(offset+limit, h.opt.Rows)
	buf := getBuf()
	defer putBuf(buf)
	b := x.styledBody((*buf)[:0], start, end, limit, token)
	*buf = b
	x.deliver(b)
}

// styledParams reads the first row and the page size the request asks for,
// answering 400 (or 416 for a bad Range) and reporting false when one is bad.
func (x *exchange) styledParams() (offset, limit int, ok bool) {
	h, q := x.h, x.r.URL.Query()
	num := func(name string, def, least int) int {
		if !ok || !q.Has(name) {
			return def
		}
		n, good := parseCount(q.Get(name))
		if !good || n < least {
			x.badParam(&paramError{"invalid_" + strings.TrimPrefix(name, "_"),
				fmt.Sprintf("%s must be a whole number from %d, got %q", name, least, truncate(q.Get(name)))})
			ok = false
		}
		return n
	}
	ok = true
	switch h.opt.Style {
	case Offset:
		offset = num("_start", 0, 0)
		limit = num("_limit", h.opt.DefaultLimit, 1)
		if q.Has("_end") && !q.Has("_limit") {
			limit = num("_end", offset+h.opt.DefaultLimit, offset+1) - offset
		}
	case PageLimit, PerPage:
		sizeParam := map[Style]string{PageLimit: "_limit", PerPage: "_per_page"}[h.opt.Style]
		p := num("_page", 1, 1)
		limit = min(num(sizeParam, h.opt.DefaultLimit, 1), h.opt.MaxLimit) // pages of the size served
		offset = min((p-1)*limit, countCap)
	case S3:
		limit = num("max-keys", h.opt.DefaultLimit, 1)
		if c := q.Get("continuation-token"); ok && q.Has("continuation-token") {
			var err error
			if offset, err = decodeCursor(c); err != nil {
				x.badParam(err)
				return 0, 0, false
			}
		}
	case Range:
		return x.rangeParams()
	}
	return offset, min(limit, h.opt.MaxLimit), ok
}

// rangeParams reads a PostgREST Range header: "a-b" or "a-", in items.
func (x *exchange) rangeParams() (offset, limit int, ok bool) {
	h := x.h
	v := strings.TrimPrefix(strings.TrimSpace(x.r.Header.Get("Range")), "items=")
	if v == "" {
		return 0, h.opt.MaxLimit, true
	}
	as, bs, found := strings.Cut(v, "-")
	a, okA := parseCount(strings.TrimSpace(as))
	b, okB := parseCount(strings.TrimSpace(bs))
	if bs == "" {
		b, okB = a+h.opt.MaxLimit-1, true
	}
	if unit := x.r.Header.Get("Range-Unit"); !found || !okA || !okB || b < a || unit != "" && unit != "items" {
		x.w.Header().Set("Content-Range", "*/"+strconv.Itoa(h.opt.Rows))
		x.fail(http.StatusRequestedRangeNotSatisfiable, "invalid_range", "the Range "+strconv.Quote(truncate(v))+" is not a-b in items")
		return 0, 0, false
	}
	return a, min(b-a+1, h.opt.MaxLimit), true
}

// styledBody appends the body of the page holding rows start..end-1 and
// sets the style's headers.
func (x *exchange) styledBody(b []byte, start, end, limit int, token string) []byte {
	h, hdr := x.h, x.w.Header()
	rows := h.opt.Rows
	hdr.Set("Content-Type", "application/json")
	switch h.opt.Style {
	case Offset, PageLimit:
		hdr.Set("X-Total-Count", strconv.Itoa(rows))
	case Range:
		cr := "*/" + strconv.Itoa(rows)
		if end > start {
			cr = strconv.Itoa(start) + "-" + strconv.Itoa(end-1) + "/" + strconv.Itoa(rows)
		}
		hdr.Set("Content-Range", cr)
		if end-start < rows {
			x.ok = http.StatusPartialContent
		}
	case PerPage:
		return appendPerPage(b, start, end, limit, rows)
	case S3:
		hdr.Set("Content-Type", "application/xml")
		return appendListing(b, start, end, limit, rows, token)
	}
	return appendRows(b, start, end)
}

// appendPerPage appends a json-server 1.x page: page counts around the rows.
func appendPerPage(b []byte, start, end, limit, rows int) []byte {
	page, pages := start/limit+1, (rows+limit-1)/limit
	num := func(b []byte, n int, ok bool) []byte {
		if !ok {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `{"first":1,"prev":`...)
	b = num(b, page-1, page > 1)
	b = append(b, `,"next":`...)
	b = num(b, page+1, page < pages)
	b = append(b, `,"last":`...)
	b = num(b, max(pages, 1), true)
	b = append(b, `,"pages":`...)
	b = num(b, pages, true)
	b = append(b, `,"items":`...)
	b = num(b, rows, true)
	b = append(b, `,"data":`...)
	b = appendRows(b, start, end)
	return append(b, '}')
}

// appendListing appends an S3 ListObjectsV2 result for rows start..end-1;
// token, when set, is the next token to send instead of the true one.
func appendListing(b []byte, start, end, limit, rows int, token string) []byte {
	truncated := end < rows
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>steady</Name><Prefix></Prefix><KeyCount>`...)
	b = strconv.AppendInt(b, int64(end-start), 10)
	b = append(b, "</KeyCount><MaxKeys>"...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, "</MaxKeys><IsTruncated>"...)
	b = strconv.AppendBool(b, truncated)
	b = append(b, "</IsTruncated>"...)
	var row []byte
	for id := start + 1; id <= end; id++ {
		row = appendRow(row[:0], id)
		b = append(b, "<Contents><Key>"...)
		b = append(b, S3Key(id)...)
		b = append(b, "</Key><Size>"...)
		b = strconv.AppendInt(b, int64(len(row)), 10)
		b = append(b, `</Size><ETag>&quot;`...)
		b = strconv.AppendUint(b, mix64(uint64(id)), 16)
		b = append(b, "&quot;</ETag><StorageClass>STANDARD</StorageClass></Contents>"...)
	}
	if truncated {
		if token == "" {
			token = encodeCursor(end)
		}
		b = append(b, "<NextContinuationToken>"...)
		b = append(b, token...)
		b = append(b, "</NextContinuationToken>"...)
	}
	return append(b, "</ListBucketResult>"...)
}

// S3Key is the object key under which the [S3] style lists row id.
func S3Key(id int) string { return fmt.Sprintf("rows/%08d.json", id) }
