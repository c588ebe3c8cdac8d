package paginate

import "fmt"

// BodyLink follows a next link written in a JSON field of the body: the
// string at the dotted path field (such as "next" or "meta.next_url") is
// the URL of the next page, relative or absolute. A field that is absent,
// null or empty ends the walk; one that holds anything but a string is
// [ErrBadLink].
func BodyLink(field string) Next { return bodyLink{field: field} }

type bodyLink struct{ field string }

func (b bodyLink) jsonPath() []string {
	path, _ := splitPath(b.field, "link field")
	return path
}

func (b bodyLink) validate() error {
	if b.field == "" {
		return optionsError("BodyLink needs a JSON field")
	}
	_, err := splitPath(b.field, "link field")
	return err
}

func (b bodyLink) NextLink(p *Page) (string, error) {
	raw := p.nextJSON
	if raw == nil && p.requested == nil { // a page built by hand, not by a walk
		s := scanner{data: p.Body, items: -1}
		s.paths[1] = b.jsonPath()
		if err := s.scan(2); err != nil {
			return "", fmt.Errorf("%w: the page is not JSON (%s at byte %d)", ErrBadLink, err.msg, err.offset)
		}
		if f := s.found[1]; f.start >= 0 {
			raw = p.Body[f.start:f.end]
		}
	}
	if len(raw) > 0 && raw[0] != '"' && raw[0] != 'n' {
		return "", fmt.Errorf("%w: the field %s holds %s, not a URL", ErrBadLink, b.field, excerpt(raw))
	}
	return cursorValue(raw)
}

func excerpt(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}
