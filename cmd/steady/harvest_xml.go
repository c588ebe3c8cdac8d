package main

// autoXMLSink is the sink of a --pages auto harvest: its pages go to the
// output as they are, or, once auto proved an XML listing (the walk's
// items are then XML elements), through an xmlSink as an explicit xml:
// style's do. The flag is set before the XML walk's first page is
// yielded, and read as each page is written.
type autoXMLSink struct {
	sink
	xml *xmlSink
	on  *bool
}

func (s *autoXMLSink) writePage(page int, items rows) error {
	if *s.on {
		return s.xml.writePage(page, items)
	}
	return s.sink.writePage(page, items)
}
