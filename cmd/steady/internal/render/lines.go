package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"golang.org/x/term"
)

// frames returns the bar library's output options for w. On a terminal
// every frame starts with a carriage return: the library moves the cursor
// up and clears from where the cursor stands, and when the terminal has
// echoed something after the last frame (the ^C of an interrupt) the
// cursor is no longer in the first column, so without the return the
// echo's width of the old frame would stay on the screen, glued to the
// new one. Anything but a terminal gets the frames as they are.
func frames(w io.Writer) mpb.ContainerOption {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return mpb.WithConsoleWriter(&termWriter{out: f})
	}
	return mpb.WithOutput(w)
}

// termWriter is the bar library's console writer for a terminal: it
// buffers a frame and, on Flush, writes it whole after a carriage return
// and the move back over the previous frame.
type termWriter struct {
	bytes.Buffer
	out  *os.File
	back int // lines of the previous frame
}

func (w *termWriter) IsTerminal() bool { return true }

func (w *termWriter) GetTermSize() (width, height int, err error) {
	return term.GetSize(int(w.out.Fd()))
}

func (w *termWriter) Flush(lines int) error {
	head := []byte{'\r'}
	if w.back > 0 {
		head = fmt.Appendf(head, "\x1b[%dA\x1b[J", w.back)
	}
	frame := append(head, w.Bytes()...)
	w.Reset()
	w.back = lines
	_, err := w.out.Write(frame)
	return err
}

// A Sayer prints whole lines of its own besides the progress it draws:
// above the bars on a terminal, between the progress lines elsewhere.
// The command's own lines (what a harvest detected, how it ended) go
// through it, so that nothing written past the renderer leaves a frame of
// the bars frozen above the live one.
type Sayer interface {
	Say(line string)
}

// Lines returns a writer whose every line r says, when r is a [Sayer];
// fallback otherwise. Text after the last newline is held until the next
// one.
func Lines(r Renderer, fallback io.Writer) io.Writer {
	s, ok := r.(Sayer)
	if !ok {
		return fallback
	}
	return &lineWriter{s: s}
}

type lineWriter struct {
	mu  sync.Mutex
	s   Sayer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.s.Say(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

// Say prints line above the bars; after Close, below the final frame.
func (t *Terminal) Say(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		_, _ = io.WriteString(t.w, line+"\n")
		return
	}
	_, _ = t.p.Write([]byte(line + "\n"))
}

// Say prints line between the progress lines.
func (p *Plain) Say(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.println(line)
}

// Say prints line above the bar; after Close, below its final frame.
func (d *DownloadBar) Say(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_, _ = io.WriteString(d.w, line+"\n")
		return
	}
	_, _ = d.p.Write([]byte(line + "\n"))
}

// Say prints line between the progress lines.
func (d *DownloadLines) Say(line string) { d.events.Say(line) }

// countdown is what is left of a wait of planned after elapsed, rounded up
// to what the status line shows (a tenth of a second below a minute, a
// second above), so that a line drawn at once still shows the wait whole.
func countdown(planned, elapsed time.Duration) time.Duration {
	left := planned - max(elapsed, 0)
	if left <= 0 {
		return 0
	}
	unit := 100 * time.Millisecond
	if left >= time.Minute {
		unit = time.Second
	}
	return (left + unit - 1) / unit * unit
}
