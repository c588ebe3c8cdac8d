package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/steadyhttp/steady/paginate"
)

// isXMLStyle reports whether a walk's items are XML elements, not JSON.
func isXMLStyle(n paginate.Next) bool {
	return strings.HasPrefix(paginate.Spelling(n), "xml:")
}

// xmlSink turns each item of an XML walk, one element such as S3's
// Contents, into a JSON object of its child elements (ADR 0325) before the
// sink below writes it, so every output format takes them.
type xmlSink struct {
	sink
	buf rawRows
}

func (s *xmlSink) writePage(page int, items rows) error {
	var err error
	if s.buf, err = xmlItemsJSON(s.buf[:0], page, items); err != nil {
		return err
	}
	return s.sink.writePage(page, s.buf)
}

// xmlItemsJSON appends to buf each XML item of page as its JSON object.
func xmlItemsJSON(buf rawRows, page int, items rows) (rawRows, error) {
	for i, it := range items.All() {
		v, err := xmlObject(it)
		if err != nil {
			return buf, fmt.Errorf("item %d of page %d is not an XML element: %w", i+1, page, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return buf, err
		}
		buf = append(buf, b)
	}
	return buf, nil
}

// xmlObject reads one element: its child elements become the keys of an
// object (in their order, a repeated name an array), text-only children
// strings, and the element's own text when it has no children a string.
func xmlObject(b []byte) (any, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok {
			return xmlElement(dec, se)
		}
	}
}

// orderedObject is a JSON object that keeps its keys in document order.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func xmlElement(dec *xml.Decoder, start xml.StartElement) (any, error) {
	var text strings.Builder
	obj := &orderedObject{vals: map[string]any{}}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			v, err := xmlElement(dec, t)
			if err != nil {
				return nil, err
			}
			name := t.Name.Local
			switch old, seen := obj.vals[name]; {
			case !seen:
				obj.keys = append(obj.keys, name)
				obj.vals[name] = v
			default:
				list, ok := old.([]any)
				if !ok {
					list = []any{old}
				}
				obj.vals[name] = append(list, v)
			}
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if len(obj.keys) == 0 {
				return text.String(), nil
			}
			return obj, nil
		}
	}
}
