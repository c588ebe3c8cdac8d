package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/otelsteady"
)

// The command's telemetry (issue 25): with the standard OpenTelemetry
// variables, a run's spans and metrics reach an OTLP/HTTP receiver as one
// trace, no key among them; without them nothing is dialed; a dead
// collector never holds the exit.

const otelKey = "otel-k3y-9b1d-never-exported"

// collector is an OTLP/HTTP receiver: it keeps every request's raw body
// and the spans and metric names decoded from them.
type collector struct {
	srv   *httptest.Server
	conns atomic.Int64 // connections accepted

	mu       sync.Mutex
	raw      [][]byte
	spans    []*tracepb.Span
	metrics  []string
	services map[string]bool // the service.name of every resource
}

func newCollector(t *testing.T, w *wiretest.Watch) *collector {
	c := &collector{services: map[string]bool{}}
	c.srv = httptest.NewUnstartedServer(w.Handler(http.HandlerFunc(c.serve)))
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a POST of application/x-protobuf", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw = append(c.raw, body)
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					c.services[kv.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.metrics = append(c.metrics, m.Name)
				}
			}
		}
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// runTraced runs the built program with env over a copy of the
// environment that has no STEADY_* or OTEL_* variable, and fails the test
// if the program has not ended after 30 s: long enough never to be a
// timing assertion, short enough to catch an exit held by telemetry.
func runTraced(t *testing.T, env []string, args ...string) (code int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEADY_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after 30s (stderr %q)", args, errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %v: %v", args, err)
	}
	code = cmd.ProcessState.ExitCode()
	checkUserWords(t, args, code, errb.String())
	return code, errb.String()
}

// keyedAPI serves two pages of items to requests carrying otelKey as the
// appid parameter, a name that does not look like a key's, so only the
// value redaction keeps it out of the spans' URLs. Its first request is
// answered 503, so the first page is re-sent after a wait.
func keyedAPI(t *testing.T, w *wiretest.Watch) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	var srv *httptest.Server
	srv = w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Query().Get("appid") != otelKey {
			http.Error(rw, "key required", http.StatusUnauthorized)
			return
		}
		if n == 1 {
			http.Error(rw, "busy", http.StatusServiceUnavailable)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("page") == "" {
			rw.Header().Set("Link", fmt.Sprintf(`<%s/items?page=2>; rel="next"`, srv.URL))
			io.WriteString(rw, `{"data":[{"id":1},{"id":2}]}`)
			return
		}
		io.WriteString(rw, `{"data":[{"id":3}]}`)
	}))
	w.Key(credentials.Key{Query: "appid", Value: otelKey, Hosts: []string{"http://" + srv.Listener.Addr().String()}})
	return srv, &calls
}

func TestHarvestExportsOneTrace(t *testing.T) {
	w := wiretest.For(t)
	col := newCollector(t, w)
	api, calls := keyedAPI(t, w)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	code, errText := runTraced(t, []string{
		"STEADY_API_KEY=" + otelKey,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.srv.URL,
		"OTEL_SERVICE_NAME=harvest-test",
	}, "harvest", "-q", "--key-query", "appid", api.URL+"/items", "--items", "data", "-o", out)
	w.Text("stderr", errText)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errText)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	var root *tracepb.Span
	traces := map[string]bool{}
	var attempts []*tracepb.Span
	for _, s := range col.spans {
		traces[string(s.TraceId)] = true
		switch {
		case s.Name == "steady harvest":
			if root != nil {
				t.Errorf("two root spans")
			}
			root = s
		case s.Kind == tracepb.Span_SPAN_KIND_CLIENT:
			attempts = append(attempts, s)
		}
	}
	if len(col.services) != 1 || !col.services["harvest-test"] {
		t.Errorf("service names %v, want OTEL_SERVICE_NAME's harvest-test", col.services)
	}
	if len(traces) != 1 {
		t.Errorf("%d trace ids, want one trace for the run", len(traces))
	}
	if root == nil {
		t.Fatalf("no root span among %d spans", len(col.spans))
	}
	if len(root.ParentSpanId) != 0 {
		t.Errorf("the run's span has a parent")
	}
	if got := int64(len(attempts)); got != calls.Load() {
		t.Errorf("%d attempt spans, the API saw %d requests", got, calls.Load())
	}
	resends, waits := 0, 0
	for _, s := range attempts {
		if !bytes.Equal(s.ParentSpanId, root.SpanId) {
			t.Errorf("attempt span %q is not a child of the run's span", s.Name)
		}
		for _, kv := range s.Attributes {
			if kv.Key == "http.request.resend_count" && kv.Value.GetIntValue() == 1 {
				resends++
			}
		}
		for _, e := range s.Events {
			if e.Name == otelsteady.EventWait {
				waits++
			}
		}
	}
	if resends != 1 {
		t.Errorf("%d attempt spans with http.request.resend_count 1, want the one re-send", resends)
	}
	if waits != 1 {
		t.Errorf("%d %s events, want the wait before the re-send", waits, otelsteady.EventWait)
	}
	if !strings.Contains(strings.Join(col.metrics, " "), "steady.attempts") {
		t.Errorf("metrics received: %q, want steady.attempts among them", col.metrics)
	}
	// The wire check: the receiver's host accepts no key, so wiretest
	// fails the test if one reached it; the payloads are texts too, looked
	// through for the key in every encoding.
	for i, b := range col.raw {
		if bytes.Contains(b, []byte(otelKey)) || bytes.Contains(b, []byte(url.QueryEscape(otelKey))) {
			t.Errorf("export %d holds the key", i)
		}
		w.Text(fmt.Sprintf("otlp export %d", i), string(b))
	}
}

// A collector that is gone (a closed port) or silent (it accepts and never
// answers) costs at most the shutdown bound: the harvest succeeds, the
// process ends, and the failure is told once.
func TestDeadCollectorDoesNotHoldTheExit(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	held.Go(func() {
		var conns []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				break
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
	})
	defer held.Wait()
	defer silent.Close()
	for _, tc := range []struct{ name, addr string }{{"closed port", closed.Addr().String()}, {"silent", silent.Addr().String()}} {
		t.Run(tc.name, func(t *testing.T) { exitsWithin(t, "http://"+tc.addr) })
	}
}

func exitsWithin(t *testing.T, dead string) {
	w := wiretest.For(t)
	api, _ := keyedAPI(t, w)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	binary(t) // built before the clock starts
	start := time.Now()
	code, errText := runTraced(t, []string{"STEADY_API_KEY=" + otelKey, "OTEL_EXPORTER_OTLP_ENDPOINT=" + dead},
		"harvest", "-q", "--key-query", "appid", api.URL+"/items", "--items", "data", "-o", out)
	w.Text("stderr", errText)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errText)
	}
	t.Logf("stderr: %s", errText)
	if n := strings.Count(errText, "telemetry not delivered"); n != 1 {
		t.Errorf("stderr tells the lost export %d times, want once: %q", n, errText)
	}
	t.Logf("ended after %v (bound %v)", time.Since(start).Round(time.Millisecond), telemetryShutdown)
}

// Without an endpoint, or with the SDK or both exporters turned off,
// nothing is dialed.
func TestNoTelemetryWithoutTheVariables(t *testing.T) {
	w := wiretest.For(t)
	col := newCollector(t, w)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"no variables", nil},
		{"service name only", []string{"OTEL_SERVICE_NAME=x"}},
		{"sdk disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.srv.URL, "OTEL_SDK_DISABLED=true"}},
		{"exporters none", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.srv.URL, "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, _ := keyedAPI(t, wiretest.For(t))
			out := filepath.Join(t.TempDir(), "items.jsonl")
			env := append([]string{"STEADY_API_KEY=" + otelKey}, tc.env...)
			if code, errText := runTraced(t, env, "harvest", "-q", "--key-query", "appid", api.URL+"/items", "--items", "data", "-o", out); code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errText)
			}
		})
	}
	if n := col.conns.Load(); n != 0 {
		t.Errorf("the receiver accepted %d connections, want none", n)
	}
}

// The exporters' own default endpoint is localhost:4318: a run that names
// no endpoint dials nothing there either.
func TestNoTelemetryToTheDefaultEndpoint(t *testing.T) {
	binary(t) // skipped under -short before anything is started
	l, err := net.Listen("tcp", "127.0.0.1:4318")
	if err != nil {
		t.Skipf("the default OTLP/HTTP port is in use: %v", err)
	}
	var conns atomic.Int64
	done := make(chan struct{})
	defer func() { l.Close(); <-done }()
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	w := wiretest.For(t)
	api, _ := keyedAPI(t, w)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	code, errText := runTraced(t, []string{"STEADY_API_KEY=" + otelKey, "OTEL_SERVICE_NAME=x"},
		"harvest", "-q", "--key-query", "appid", api.URL+"/items", "--items", "data", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errText)
	}
	l.Close()
	<-done
	if n := conns.Load(); n != 0 {
		t.Errorf("port 4318 accepted %d connections, want none", n)
	}
}

func TestTelemetryWanted(t *testing.T) {
	for _, tc := range []struct {
		name            string
		env             map[string]string
		traces, metrics bool
	}{
		{"nothing", nil, false, false},
		{"service name", map[string]string{"OTEL_SERVICE_NAME": "x"}, false, false},
		{"endpoint", map[string]string{envEndpoint: "http://c:4318"}, true, true},
		{"blank endpoint", map[string]string{envEndpoint: " "}, false, false},
		{"traces endpoint", map[string]string{envTracesEndpoint: "http://c:4318/v1/traces"}, true, false},
		{"metrics endpoint", map[string]string{envMetricsEndpoint: "http://c:4318/v1/metrics"}, false, true},
		{"disabled", map[string]string{envEndpoint: "http://c:4318", envDisabled: "TRUE"}, false, false},
		{"disabled false", map[string]string{envEndpoint: "http://c:4318", envDisabled: "false"}, true, true},
		{"traces none", map[string]string{envEndpoint: "http://c:4318", envTracesExporter: "none"}, false, true},
		{"metrics none", map[string]string{envEndpoint: "http://c:4318", envMetricsExporter: "none"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, metrics := telemetryWanted(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if traces != tc.traces || metrics != tc.metrics {
				t.Errorf("got traces %v metrics %v, want %v %v", traces, metrics, tc.traces, tc.metrics)
			}
		})
	}
}

// Ctrl-C ends the run's span too: its trace reaches the collector with the
// exit code of an interrupted run.
func TestInterruptedRunExportsItsSpan(t *testing.T) {
	w := wiretest.For(t)
	col := newCollector(t, w)
	arrived := make(chan struct{}, 1)
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte("{\"first\":\n"))
		rw.(http.Flusher).Flush()
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer api.Close()
	cmd := exec.Command(binary(t), "get", "-q", api.URL)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEADY_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+col.srv.URL)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-ended
		t.Fatalf("no request within 30s: %s", errb.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-ended
		t.Fatalf("still running 30s after Ctrl-C: %s", errb.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, s := range col.spans {
		if s.Name != "steady get" {
			continue
		}
		for _, kv := range s.Attributes {
			if kv.Key == "process.exit.code" && kv.Value.GetIntValue() == exitInterrupted {
				if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
					t.Errorf("the interrupted run's span has status %v", s.Status)
				}
				return
			}
		}
	}
	t.Errorf("no span of the run with process.exit.code %d among %d spans", exitInterrupted, len(col.spans))
}
