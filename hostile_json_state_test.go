package steady_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/internal/wiretest"
)

// A state file that saves a next link holding the key, written by
// encoding/json, holds the key's & as \u0026 (and a " or \ escaped): the
// watch every output-file test relies on (Watch.Dir) must still find it,
// as written and in each real encoder's form. Planted in a watched
// directory, each is a finding.
func TestHostileKeyInAJSONStateFile(t *testing.T) {
	for _, e := range append(realEncodings[:len(realEncodings):len(realEncodings)],
		struct{ name, js, form string }{"as written", "", reservedKey},
		struct{ name, js, form string }{"with a quote and a backslash", "", `KEY"qu\ote<&>`}) {
		t.Run(e.name, func(t *testing.T) {
			state, err := json.Marshal(map[string]any{"next": "https://api.example.gov/v/" + e.form + "/items?page=2", "rows": 100})
			if err != nil {
				t.Fatal(err)
			}
			var found []wiretest.Leak
			t.Run("plant", func(t *testing.T) {
				w := wiretest.For(t)
				w.Secret(reservedKey, `KEY"qu\ote<&>`)
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "rows.jsonl.state.json"), state, 0o600); err != nil {
					t.Fatal(err)
				}
				w.Dir(dir)
				found = w.Findings()
				w.Forget()
			})
			if len(found) != 1 || !strings.HasSuffix(found[0].Where, "rows.jsonl.state.json") {
				t.Errorf("the watch found %+v in a state file holding %s; want the file", found, state)
			}
		})
	}
}
