package simulate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// svgSummary is what a chart's XML says, read back with encoding/xml.
type svgSummary struct {
	root      xml.Name
	polylines [][]string // points of each polyline
	texts     []string
	titles    int
}

func parseSVG(t *testing.T, data []byte) svgSummary {
	t.Helper()
	var s svgSummary
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth := 0
	var inText, inTitle bool
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				s.root = tok.Name
			}
			depth++
			switch tok.Name.Local {
			case "polyline":
				for _, a := range tok.Attr {
					if a.Name.Local == "points" {
						s.polylines = append(s.polylines, strings.Fields(a.Value))
					}
				}
			case "text":
				inText = true
			case "title":
				inTitle = true
				s.titles++
			}
		case xml.EndElement:
			depth--
			inText, inTitle = false, false
		case xml.CharData:
			if inText && !inTitle {
				s.texts = append(s.texts, string(tok))
			}
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced elements: depth %d at the end", depth)
	}
	return s
}

func TestOutageSVGIsValid(t *testing.T) {
	t.Parallel()
	cfg := smallOutage()
	cfg.Clients = 20 // the shape of the chart, not its numbers
	cfg.Policies = append(OutagePolicies(), OutagePolicy{Name: `a <"quoted"> & odd name`, Policy: retry.Policy{MaxAttempts: 2}})
	res := runOutage(t, cfg)
	var buf bytes.Buffer
	if err := WriteOutageSVG(&buf, res); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 20_000 {
		t.Errorf("the chart is %d bytes; it should stay small", buf.Len())
	}
	s := parseSVG(t, buf.Bytes())
	if s.root.Local != "svg" || s.root.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element is %v, want svg in the SVG namespace", s.root)
	}
	if got, want := len(s.polylines), len(res.Runs); got != want {
		t.Fatalf("%d polylines for %d policies", got, want)
	}
	for i, pts := range s.polylines {
		if len(pts) != len(res.Runs[i].Load) {
			t.Errorf("polyline %d has %d points for %d bins", i, len(pts), len(res.Runs[i].Load))
		}
		for _, p := range pts {
			xs, ys, ok := strings.Cut(p, ",")
			x, errX := strconv.ParseFloat(xs, 64)
			y, errY := strconv.ParseFloat(ys, 64)
			if !ok || errX != nil || errY != nil || x < plotLeft || x > plotRight || y < plotTop || y > plotBottom {
				t.Fatalf("polyline %d: point %q is not inside the plot", i, p)
			}
		}
	}
	all := strings.Join(s.texts, "\n")
	for _, want := range []string{"time (s)", "attempts reaching the service per second", "capacity", "service down",
		"Load on the service", "retry+budget", `a <"quoted"> & odd name`, "0", "20", "recovered after"} {
		if !strings.Contains(all, want) {
			t.Errorf("the chart has no text %q", want)
		}
	}
	if s.titles != len(res.Runs)+1 {
		t.Errorf("%d title elements; want the chart's and one per line", s.titles)
	}
}

func TestOutageSVGOfEmptyResult(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteOutageSVG(&buf, OutageResult{Config: OutageConfig{}.withDefaults()}); err != nil {
		t.Fatal(err)
	}
	if s := parseSVG(t, buf.Bytes()); len(s.polylines) != 0 {
		t.Errorf("%d polylines for no runs", len(s.polylines))
	}
	if strings.Contains(buf.String(), "NaN") || strings.Contains(buf.String(), "Inf") {
		t.Error("the chart of nothing has non-finite coordinates")
	}
}

func TestNiceScale(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		v         float64
		top, step float64
	}{
		{"zero", 0, 1, 0.2},
		{"seconds", 95, 100, 20},
		{"load", 251_787, 300_000, 50_000},
		{"exact", 60_000, 60_000, 10_000},
		{"small", 0.7, 0.7, 0.1},
	}
	for _, c := range cases {
		top, step := niceScale(c.v)
		if math.Abs(top-c.top) > 1e-9*c.top || math.Abs(step-c.step) > 1e-9*c.step {
			t.Errorf("%s: niceScale(%v) = %v, %v; want %v, %v", c.name, c.v, top, step, c.top, c.step)
		}
	}
}

func TestWritersReportWriteErrors(t *testing.T) {
	t.Parallel()
	res := OutageResult{Config: OutageConfig{}.withDefaults(), Runs: []OutageRun{{Policy: "p", Load: []int64{1, 2}}}}
	rows := []ContentionRow{{Policy: "p", Clients: 1, Trials: 1, Calls: 1, Completion: time.Second}}
	for name, write := range map[string]func(io.Writer) error{
		"contention table": func(w io.Writer) error { return WriteContentionTable(w, rows) },
		"outage table":     func(w io.Writer) error { return WriteOutageTable(w, res) },
		"outage chart":     func(w io.Writer) error { return WriteOutageSVG(w, res) },
	} {
		if err := write(failingWriter{}); !errors.Is(err, errDiskFull) {
			t.Errorf("%s: got %v, want the writer's error", name, err)
		}
	}
}

var errDiskFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }
