package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// giteaIssues is how many issues the repository holds: 10 pages of 20.
// Each is created by its own request, which takes most of the test.
const giteaIssues = 200

// startGitea starts Gitea (built by .ci/deps/gitea) on SQLite in a
// temporary directory, listening on addr, with root as the URL its links
// name (the cutting proxy's), and fills a public repository steady/rows
// with giteaIssues issues through its CLI and API.
func startGitea(t *testing.T, addr, root string) {
	t.Helper()
	bin := findProgram(t, "STEADY_GITEA", "gitea", ".ci/deps/gitea", cacheBin("gitea-v1.27.3"))
	dir := t.TempDir()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// A build without bindata reads its locales and templates from here
	// (.ci/deps/gitea puts them beside the binary).
	static := bin + "-static"
	if _, err := os.Stat(filepath.Join(static, "options")); err != nil {
		t.Fatalf("%s has no locales beside it in %s: %v; .ci/deps/gitea puts them there", bin, static, err)
	}
	host, port, _ := splitAddr(t, addr)
	ini := fmt.Sprintf(`APP_NAME = steady
RUN_USER = %s
RUN_MODE = prod
WORK_PATH = %[2]s
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = %[3]s
HTTP_PORT = %[4]s
ROOT_URL = http://%[5]s/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = %[6]s

[database]
DB_TYPE = sqlite3
PATH = %[2]s/gitea.db

[repository]
ROOT = %[2]s/repos

[security]
INSTALL_LOCK = true
SECRET_KEY = steady-test-secret-not-a-key
INTERNAL_TOKEN = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJuYmYiOjE3MDAwMDAwMDB9.c3RlYWR5LXRlc3Qtbm90LWEta2V5LXh4eHh4eHh4eHh4
PASSWORD_HASH_ALGO = pbkdf2_hi

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[cron]
ENABLED = false

[mailer]
ENABLED = false

[log]
MODE = console
LEVEL = error

[api]
DEFAULT_PAGING_NUM = 20
MAX_RESPONSE_ITEMS = 50
`, me.Username, dir, host, port, root, static)
	conf := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(conf, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GITEA_WORK_DIR="+dir, "HOME="+dir, "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true")
	gitea := func(args ...string) {
		cmd := exec.Command(bin, append(args, "--config", conf)...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gitea %v: %v\n%s", args, err, out)
		}
	}
	gitea("migrate")
	const pass = "steady-test-password-1"
	gitea("admin", "user", "create", "--admin", "--username", "steady", "--password", pass,
		"--email", "steady@example.invalid", "--must-change-password=false")
	cmd := exec.Command(bin, "web", "--config", conf)
	cmd.Dir, cmd.Env = dir, env
	startChild(t, "gitea", cmd, answers("http://"+addr+"/api/v1/version", 200))

	api := func(method, path string, body any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, "http://"+addr+"/api/v1"+path, bytes.NewReader(b))
		req.SetBasicAuth("steady", pass)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return
		}
		defer res.Body.Close()
		msg, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Errorf("%s %s: %s %s", method, path, res.Status, msg)
		}
	}
	api(http.MethodPost, "/user/repos", map[string]any{"name": "rows", "private": false})
	if t.Failed() {
		t.FailNow()
	}
	// Issues are numbered in the order they are created: one at a time.
	for i := 1; i <= giteaIssues; i++ {
		api(http.MethodPost, "/repos/steady/rows/issues", map[string]any{"title": "issue " + strconv.Itoa(i), "body": "row " + strconv.Itoa(i)})
		if t.Failed() {
			t.FailNow()
		}
	}
}

// Gitea's API pages by a Link header (first, prev, next, last) built from
// its ROOT_URL, and announces X-Total-Count; a repository's issues come
// newest first, by creation time and then number.
func TestRealGiteaIssues(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	addr := freeAddr(t)
	c := newCutter(t, addr)
	startGitea(t, addr, c.addr)
	want := make([]string, giteaIssues)
	for i := range want {
		want[i] = strconv.Itoa(giteaIssues - i)
	}
	harvestCut(t, c, "http://"+c.addr+"/api/v1/repos/steady/rows/issues?state=all&type=issues&limit=20&page=1",
		[]string{"--pages", "link", "--items", ""},
		func(out []byte) { checkOnce(t, "uncut run", jsonlIDs(t, out, "number"), want, true) })
}
