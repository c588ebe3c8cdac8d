package paginate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNotXML: a page of an [XMLCursor] walk is not well-formed XML.
var ErrNotXML = errors.New("not well-formed XML")

// XMLCursor follows a cursor in an XML body, as S3's ListObjectsV2 does:
// the text of the element at tokenPath (slash-separated from the root,
// such as "ListBucketResult/NextContinuationToken") is set as the query
// parameter param (such as "continuation-token") on the URL of the page it
// came from. The items are the elements at itemsPath (default: the token's
// parent and "Contents", as S3 names them), each delivered in Page.Items as
// the exact bytes of its XML element: XML, not JSON, whatever the field's
// type says. The walk ends on a page with no token or an empty one, with no
// items, or whose IsTruncated (beside the token) is false. Pages are not
// read as JSON: Options.Items must be "" (the default) or [NoItems].
func XMLCursor(tokenPath, param, itemsPath string) Next {
	if itemsPath == "" {
		if i := strings.LastIndexByte(tokenPath, '/'); i >= 0 {
			itemsPath = tokenPath[:i+1] + "Contents"
		} else {
			itemsPath = "Contents"
		}
	}
	return xmlStyle{token: tokenPath, param: param, items: itemsPath}
}

type xmlStyle struct{ token, param, items string }

func (x xmlStyle) validate() error {
	for _, p := range []string{x.token, x.items} {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
			return optionsError(fmt.Sprintf("XMLCursor path %q is not a slash-separated element path", p))
		}
	}
	return checkParam("XMLCursor", x.param)
}

// truncatedPath is where S3 says whether more pages follow: IsTruncated
// beside the token.
func (x xmlStyle) truncatedPath() string {
	if i := strings.LastIndexByte(x.token, '/'); i >= 0 {
		return x.token[:i+1] + "IsTruncated"
	}
	return "IsTruncated"
}

// xmlPage is what an XMLCursor walk reads from one page.
type xmlPage struct {
	items     []json.RawMessage
	token     string
	truncated string // IsTruncated's text, trimmed; "" when absent
}

// readXML reads body in one pass of encoding/xml, keeping each element at
// x.items as its bytes (sharing body's memory) and the text at the token
// and IsTruncated paths.
func (x xmlStyle) readXML(body []byte) (xmlPage, error) {
	var out xmlPage
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	trunc := x.truncatedPath()
	var path []string
	var text *string
	rootDone := false
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			if !rootDone {
				return out, fmt.Errorf("%w: it ends inside an element, or holds none", ErrNotXML)
			}
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("%w: %v", ErrNotXML, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if rootDone {
				return out, fmt.Errorf("%w: a second root element <%s>", ErrNotXML, t.Name.Local)
			}
			path = append(path, t.Name.Local)
			text = nil
			switch p := strings.Join(path, "/"); p {
			case x.items:
				if err := d.Skip(); err != nil {
					return out, fmt.Errorf("%w: %v", ErrNotXML, err)
				}
				end := d.InputOffset()
				out.items = append(out.items, json.RawMessage(body[off:end:end]))
				path = path[:len(path)-1]
				rootDone = len(path) == 0
			case x.token: // the last one counts, as encoding/xml decodes it
				out.token, text = "", &out.token
			case trunc:
				out.truncated, text = "", &out.truncated
			}
		case xml.EndElement:
			path = path[:len(path)-1]
			text, rootDone = nil, len(path) == 0
		case xml.CharData:
			if text != nil {
				*text += string(t)
			}
		}
	}
}

// next returns the token to send for the page after one read as pg, or ""
// when pg is the last page.
func (pg xmlPage) next() string {
	tok := strings.TrimSpace(pg.token)
	if tok == "" || len(pg.items) == 0 || strings.EqualFold(strings.TrimSpace(pg.truncated), "false") {
		return ""
	}
	return tok
}

func (x xmlStyle) NextLink(p *Page) (string, error) {
	pg := p.xml
	if pg == nil {
		read, err := x.readXML(p.Body)
		if err != nil {
			return "", err
		}
		pg = &read
	}
	tok := pg.next()
	if tok == "" {
		return "", nil
	}
	base := p.requested
	if base == nil {
		base = p.URL
	}
	if base == nil {
		return "", fmt.Errorf("%w: the page has no URL to set the token on", ErrBadLink)
	}
	return withQuery(base, x.param, tok).String(), nil
}
