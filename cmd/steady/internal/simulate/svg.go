package simulate

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Chart geometry, in SVG user units.
const (
	svgWidth, svgHeight = 820, 440
	plotLeft, plotTop   = 80, 50
	plotRight           = 640 // the legend sits to the right
	plotBottom          = 380
)

// palette has colours that stay distinct for most kinds of colour vision;
// policies beyond it reuse them with a dash pattern.
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"}

// WriteOutageSVG writes a chart of res: the attempts reaching the service in
// each second, one line per policy, over the outage (shaded) and the
// service's capacity (dashed). It is plain SVG 1.1 text that a browser
// opens directly.
func WriteOutageSVG(w io.Writer, res OutageResult) error {
	ew := &errWriter{w: w}
	cfg := res.Config
	bins := 0
	peak := cfg.Capacity * Bin.Seconds()
	for _, r := range res.Runs {
		bins = max(bins, len(r.Load))
		for _, v := range r.Load {
			peak = max(peak, float64(v))
		}
	}
	bins = max(bins, 1)
	yMax, yStep := niceScale(peak)
	xMax := float64(bins) * Bin.Seconds()
	_, xStep := niceScale(xMax)
	x := func(sec float64) float64 { return plotLeft + sec/xMax*(plotRight-plotLeft) }
	y := func(v float64) float64 { return plotBottom - v/yMax*(plotBottom-plotTop) }

	ew.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	title := fmt.Sprintf("Load on the service: %d clients at %s requests/s, down for %s s from %s s",
		cfg.Clients, trimFloat(cfg.Rate), trimFloat(cfg.Down.Seconds()), trimFloat(cfg.Before.Seconds()))
	ew.printf("<title>%s</title>\n", escape(title))
	ew.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	ew.printf(`<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", plotLeft, escape(title))

	// The outage, shaded, behind everything else.
	down0, down1 := x(cfg.Before.Seconds()), x((cfg.Before + cfg.Down).Seconds())
	ew.printf(`<rect x="%s" y="%d" width="%s" height="%d" fill="#eeeeee"/>`+"\n",
		coord(down0), plotTop, coord(down1-down0), plotBottom-plotTop)
	ew.printf(`<text x="%s" y="%d" text-anchor="middle" fill="#666666">service down</text>`+"\n",
		coord((down0+down1)/2), plotTop+16)

	writeAxes(ew, x, y, xMax, xStep, yMax, yStep)

	// Capacity.
	cy := coord(y(cfg.Capacity * Bin.Seconds()))
	ew.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#666666" stroke-dasharray="6 4"/>`+"\n", plotLeft, cy, plotRight, cy)
	ew.printf(`<text x="%d" y="%s" text-anchor="end" fill="#666666" dy="-4">capacity</text>`+"\n", plotRight-4, cy)

	// One line per policy, a point at the middle of each bin, and its
	// legend entry.
	for i, r := range res.Runs {
		colour, dash := palette[i%len(palette)], ""
		if i >= len(palette) {
			dash = ` stroke-dasharray="2 3"`
		}
		var pts strings.Builder
		for b, v := range r.Load {
			if b > 0 {
				pts.WriteByte(' ')
			}
			pts.WriteString(coord(x((float64(b) + 0.5) * Bin.Seconds())))
			pts.WriteByte(',')
			pts.WriteString(coord(y(float64(v))))
		}
		ew.printf(`<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"><title>%s</title></polyline>`+"\n",
			colour, dash, pts.String(), escape(r.Policy))
		ly := plotTop + 10 + 36*i
		ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n",
			plotRight+20, ly, plotRight+44, ly, colour, dash)
		ew.printf(`<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", plotRight+50, ly, escape(r.Policy))
		ew.printf(`<text x="%d" y="%d" dominant-baseline="middle" font-size="10" fill="#666666">%s</text>`+"\n",
			plotRight+50, ly+14, legendNote(r))
	}
	ew.printf("</svg>\n")
	return ew.err
}

// writeAxes draws the axes with their ticks, labels and grid; x and y map
// seconds and load to the picture's coordinates.
func writeAxes(ew *errWriter, x, y func(float64) float64, xMax, xStep, yMax, yStep float64) {
	ew.printf(`<g stroke="#000000" stroke-width="1">` + "\n")
	ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	ew.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	ew.printf("</g>\n")
	for i := 0; float64(i)*xStep <= xMax*(1+1e-9); i++ {
		t := float64(i) * xStep
		px := coord(x(t))
		ew.printf(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#000000"/>`+"\n", px, plotBottom, px, plotBottom+5)
		ew.printf(`<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", px, plotBottom+19, tickLabel(t))
	}
	for i := 0; float64(i)*yStep <= yMax*(1+1e-9); i++ {
		v := float64(i) * yStep
		py := coord(y(v))
		ew.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#dddddd"/>`+"\n", plotLeft, py, plotRight, py)
		ew.printf(`<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-8, py, siFormat(v))
	}
	ew.printf(`<text x="%d" y="%d" text-anchor="middle">time (s)</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+42)
	ew.printf(`<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">attempts reaching the service per second</text>`+"\n",
		(plotTop+plotBottom)/2, (plotTop+plotBottom)/2)
}

// legendNote says under a policy's name how the service fared, which the
// load alone does not show: a service can be busy with refusals.
func legendNote(r OutageRun) string {
	if !r.Recovered {
		return "never recovered"
	}
	return "recovered after " + strconv.FormatInt(int64(r.Recovery/time.Second), 10) + " s"
}

// niceScale returns an axis maximum at or above v and a tick step of 1, 2
// or 5 times a power of ten, giving four to nine ticks.
func niceScale(v float64) (top, step float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1, 0.2
	}
	raw := v / 8
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

// siFormat writes an axis value compactly: 250000 as 250k.
func siFormat(v float64) string {
	switch {
	case v >= 1e6:
		return tickLabel(v/1e6) + "M"
	case v >= 1e3:
		return tickLabel(v/1e3) + "k"
	}
	return tickLabel(v)
}

// tickLabel writes a tick value without the float noise of a multiple of a
// step such as 0.1.
func tickLabel(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// coord writes a coordinate with one decimal: enough for a screen, and it
// keeps the file small.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
