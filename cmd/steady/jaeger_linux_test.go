package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/steadytest"
)

// The command's telemetry against a real Jaeger (issue 25): a harvest
// whose pages are cut, refused with 503 and answered 429 with a
// Retry-After reaches Jaeger's OTLP/HTTP receiver as one trace, and
// Jaeger's query API returns the run's span, every attempt under it with
// http.request.resend_count on the re-sends, and each wait as a span event.

// jaegerVersion is the release .ci/deps/jaeger builds.
const jaegerVersion = "v1.76.0"

// jaegerBinary finds Jaeger: STEADY_JAEGER, the cache .ci/deps/jaeger
// builds into, or jaeger on PATH. Missing, it fails the test under CI and
// skips it elsewhere.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STEADY_JAEGER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("STEADY_JAEGER=%s: %v", p, err)
		}
		return p
	}
	cache := os.Getenv("STEADY_CI_CACHE")
	if home, err := os.UserHomeDir(); cache == "" && err == nil {
		cache = filepath.Join(home, ".cache", "steady-ci")
	}
	if cache != "" {
		p := filepath.Join(cache, "jaeger-"+jaegerVersion, "jaeger")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p
	}
	const how = "jaeger " + jaegerVersion + " is not built (.ci/deps/jaeger builds it; STEADY_JAEGER names it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(how)
	}
	t.Skip(how + "; skipping outside CI")
	return ""
}

// jaegerServer is one Jaeger process on 127.0.0.1: spans kept in memory,
// an OTLP/HTTP receiver and the query API, each on a free port.
type jaegerServer struct {
	otlp, query string // host:port
	*child
}

// jaegerConfig is the collector configuration of the test's Jaeger: the
// OTLP/HTTP receiver into the memory store, the query API over it, no
// internal metrics endpoint, every listener on 127.0.0.1.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

func startJaeger(t *testing.T) *jaegerServer {
	t.Helper()
	bin := jaegerBinary(t)
	dir := t.TempDir()
	s := &jaegerServer{otlp: freeAddr(t), query: freeAddr(t)}
	conf := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, jaegerConfig, s.query, freeAddr(t), s.otlp), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+conf)
	cmd.Dir = dir
	s.child = startChild(t, "jaeger", cmd, s.listening)
	return s
}

// listening reports whether the query API answers and the receiver
// accepts connections: polling is the only way to learn that another
// process listens.
func (s *jaegerServer) listening() bool {
	resp, err := http.Get("http://" + s.query + "/api/services")
	if err != nil {
		return false
	}
	resp.Body.Close()
	c, err := net.DialTimeout("tcp", s.otlp, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return resp.StatusCode == http.StatusOK
}

// The query API's answer, as much of it as the test reads.
type jaegerTraces struct {
	Data []struct {
		TraceID string       `json:"traceID"`
		Spans   []jaegerSpan `json:"spans"`
	} `json:"data"`
}

type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []jaegerKV `json:"tags"`
	Logs []struct {
		Fields []jaegerKV `json:"fields"`
	} `json:"logs"`
}

type jaegerKV struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func tag(kvs []jaegerKV, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// traces asks the query API for the traces of service.
func (s *jaegerServer) traces(t *testing.T, service string) jaegerTraces {
	t.Helper()
	resp, err := http.Get("http://" + s.query + "/api/traces?limit=100&lookback=1h&service=" + service)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	var tr jaegerTraces
	if resp.StatusCode == http.StatusNotFound {
		return tr // no trace of the service yet
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query API: %s: %s", resp.Status, body.String())
	}
	if err := json.Unmarshal(body.Bytes(), &tr); err != nil {
		t.Fatalf("query API answer: %v: %s", err, body.String())
	}
	return tr
}

// spanCount is how many spans of service Jaeger holds.
func (tr jaegerTraces) spanCount() int {
	n := 0
	for _, d := range tr.Data {
		n += len(d.Spans)
	}
	return n
}

func TestHarvestTraceInJaeger(t *testing.T) {
	steadyBin := binary(t)
	j := startJaeger(t)

	// Three pages of ten rows; the first page is refused with a 503, the
	// second cut mid-body, the third answered 429 with Retry-After: 1.
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 30, DefaultLimit: 10, Faults: steadytest.Faults{
		Script: map[int]steadytest.Fault{
			1: {Kind: steadytest.Status, Status: http.StatusServiceUnavailable},
			3: {Kind: steadytest.ResetMidBody},
			5: {Kind: steadytest.Status, Status: http.StatusTooManyRequests, RetryAfter: time.Second},
		}}})
	defer srv.Close()

	service := "steady-jaeger-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	cmd := exec.Command(steadyBin, "harvest", "-q", srv.URL+steadytest.ItemsPath, "-o", out)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEADY_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.otlp,
		"OTEL_SERVICE_NAME="+service,
		"OTEL_METRICS_EXPORTER=none", // Jaeger takes traces only
	)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Fatalf("harvest: exit %d, stderr %q", ee.ExitCode(), errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("stderr of a quiet harvest whose telemetry was delivered: %q", errb.String())
	}
	requests := len(srv.Requests())
	if requests != 6 {
		t.Fatalf("the API saw %d requests, want 3 pages and 3 re-sends", requests)
	}

	// The exporter's flush ended with the process; Jaeger stores what it
	// received on its own goroutines, so the query is repeated until every
	// span is there (the run's and one an attempt), or 30 s pass.
	want := requests + 1
	var tr jaegerTraces
	for deadline := time.Now().Add(30 * time.Second); ; {
		tr = j.traces(t, service)
		if tr.spanCount() >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(tr.Data) != 1 {
		t.Fatalf("Jaeger holds %d traces of %s, want the run as one (log:\n%s)", len(tr.Data), service, j.out)
	}
	spans := tr.Data[0].Spans
	if len(spans) != want {
		t.Errorf("the trace has %d spans, want %d: the run's and one for each of the %d attempts", len(spans), want, requests)
	}
	var root *jaegerSpan
	for i := range spans {
		if spans[i].OperationName == "steady harvest" {
			if root != nil {
				t.Fatalf("two spans of the run")
			}
			root = &spans[i]
		}
	}
	if root == nil {
		t.Fatalf("no span of the run among %d", len(spans))
	}
	if len(root.References) != 0 {
		t.Errorf("the run's span has a parent: %+v", root.References)
	}
	if code, _ := tag(root.Tags, "process.exit.code"); code != "0" {
		t.Errorf("the run's span has process.exit.code %q, want 0", code)
	}
	resends := map[string]int{} // resend count -> attempts
	var statuses, waits []string
	for _, s := range spans {
		if s.SpanID == root.SpanID {
			continue
		}
		if s.OperationName != "GET" {
			t.Errorf("attempt span named %q, want GET", s.OperationName)
		}
		if len(s.References) != 1 || s.References[0].RefType != "CHILD_OF" || s.References[0].SpanID != root.SpanID {
			t.Errorf("attempt span %s is not a child of the run's span: %+v", s.SpanID, s.References)
		}
		rc, ok := tag(s.Tags, "http.request.resend_count")
		if !ok {
			rc = "first"
		}
		resends[rc]++
		st, _ := tag(s.Tags, "http.response.status_code")
		statuses = append(statuses, st)
		for _, l := range s.Logs {
			if name, _ := tag(l.Fields, "event"); name == otelsteady.EventWait {
				reason, _ := tag(l.Fields, otelsteady.KeyWaitReason)
				waits = append(waits, reason)
			}
		}
	}
	if resends["first"] != 3 || resends["1"] != 3 || len(resends) != 2 {
		t.Errorf("attempts by http.request.resend_count: %v, want 3 first sends and 3 with resend_count 1", resends)
	}
	// The cut attempt ends without a status: its body broke.
	if got := strings.Join(slices.Sorted(slices.Values(statuses)), " "); got != " 200 200 200 429 503" {
		t.Errorf("attempt statuses %q, want the cut one without a status, the three pages, the 429 and the 503", got)
	}
	if got := strings.Join(slices.Sorted(slices.Values(waits)), " "); got != "backoff backoff server_hint" {
		t.Errorf("wait events by reason: %q, want the backoffs after the 503 and the cut, and the 429's server hint", got)
	}
}
