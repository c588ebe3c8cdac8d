package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// mapServerRows is how many features the layer holds.
const mapServerRows = 1234

// mapServerMap reads the path of the mapfile /etc/mapserver.conf names
// STEADY (.ci/deps/mapserver writes it): Debian's MapServer 8.0 reads no
// other configuration, and serves an OGC API only for a mapfile its MAPS
// name.
func mapServerMap(t *testing.T) string {
	t.Helper()
	conf, err := os.ReadFile("/etc/mapserver.conf")
	m := regexp.MustCompile(`(?m)^\s*STEADY\s+"([^"]+)"`).FindSubmatch(conf)
	if err != nil || m == nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("/etc/mapserver.conf names no STEADY map (%v); .ci/deps/mapserver writes it", err)
		}
		t.Skip("/etc/mapserver.conf names no STEADY map; .ci/deps/mapserver writes it; skipping outside CI")
	}
	return string(m[1])
}

// startMapServer writes a GeoJSON layer of mapServerRows points and the
// STEADY mapfile serving it by the OGC API, then serves MapServer's own
// mapserv CGI program on l through net/http/cgi, a process a request as a
// web server runs it. root is the address the API names in its links (the
// cutting proxy's).
func startMapServer(t *testing.T, l net.Listener, root string) {
	t.Helper()
	mapserv := findProgram(t, "STEADY_MAPSERV", "mapserv", ".ci/deps/mapserver", "/usr/lib/cgi-bin/mapserv")
	mapfile := mapServerMap(t)
	dir := filepath.Dir(mapfile)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The mapfile's path is fixed: one test at a time on the machine.
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	type feature struct {
		Type     string         `json:"type"`
		Geometry map[string]any `json:"geometry"`
		Props    map[string]any `json:"properties"`
	}
	feats := make([]feature, mapServerRows)
	for i := range feats {
		id := i + 1
		feats[i] = feature{Type: "Feature",
			Geometry: map[string]any{"type": "Point", "coordinates": []float64{-10 + float64(id)/1000, 40 + float64(id)/2000}},
			Props:    map[string]any{"fid": id, "name": fmt.Sprintf("place %d, ünïcödé", id)}}
	}
	data, err := json.Marshal(map[string]any{"type": "FeatureCollection", "features": feats})
	if err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(dir, "rows.geojson")
	if err := os.WriteFile(layer, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`MAP
  NAME "steady"
  EXTENT -180 -90 180 90
  PROJECTION "init=epsg:4326" END
  WEB
    METADATA
      "oga_enable_request" "*"
      "oga_onlineresource" "http://%s/mapserv/steady/ogcapi"
      "ows_title" "steady"
      "oga_html_template_directory" "/usr/share/mapserver/ogcapi/templates/html-plain/"
    END
  END
  LAYER
    NAME "rows"
    TYPE POINT
    STATUS ON
    TEMPLATE "void"
    EXTENT -180 -90 180 90
    CONNECTIONTYPE OGR
    CONNECTION %q
    PROJECTION "init=epsg:4326" END
    METADATA
      "ows_title" "rows"
      "gml_include_items" "all"
      "gml_featureid" "fid"
    END
  END
END
`, root, layer)
	if err := os.WriteFile(mapfile, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: &cgi.Handler{Path: mapserv, Root: "/mapserv"}}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	if !answers("http://"+l.Addr().String()+"/mapserv/steady/ogcapi/collections/rows/items?f=json&limit=1", 200)() {
		t.Fatal("MapServer does not serve the rows collection")
	}
}

// MapServer's OGC API Features pages its items by JSON links with rel
// next, and announces numberMatched. Each request starts mapserv anew, so
// the pages are large: seven of them.
func TestRealMapServerOGCAPI(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := newCutter(t, l.Addr().String())
	startMapServer(t, l, c.addr)
	harvestCut(t, c, "http://"+c.addr+"/mapserv/steady/ogcapi/collections/rows/items?f=json&limit=200",
		[]string{"--pages", "json-links", "--items", "features"},
		func(out []byte) {
			checkOnce(t, "uncut run", jsonlIDs(t, out, "id"), seqIDs(1, mapServerRows), true)
			for i, line := range splitLines(out) {
				var f struct {
					Geometry   struct{ Coordinates []float64 }
					Properties struct{ Name string }
				}
				if err := json.Unmarshal(line, &f); err != nil {
					t.Fatal(err)
				}
				id := i + 1
				if f.Properties.Name != "place "+strconv.Itoa(id)+", ünïcödé" || len(f.Geometry.Coordinates) != 2 {
					t.Fatalf("feature %d is %s", id, line)
				}
			}
		})
}
