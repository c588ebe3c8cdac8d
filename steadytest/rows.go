package steadytest

import (
	"encoding/json"
	"strconv"
	"time"
)

// A Row is one item of the collection. Its JSON form, as served, is exactly
// what encoding/json makes of it:
//
//	{"id":1,"name":"amber kettle #1","value":-1234.56,"timestamp":"2026-01-01T00:00:37Z"}
type Row struct {
	ID        int       `json:"id"`
	Name      string    `json:"name"`
	Value     float64   `json:"value"`
	Timestamp time.Time `json:"timestamp"`
}

// Some words need JSON escaping or are not ASCII, so clients and writers of
// CSV meet quotes, commas, a backslash and multi-byte UTF-8 in real data.
var (
	adjectives = []string{
		"amber", "brisk", "crème", "dusty", "eager", "frosty", "gentle", "hollow",
		"icy", "jolly", "keen", "lucid", "mellow", "naïve", "olive", "proud",
		"quiet", "rusty", "sturdy", "tidy", "umber", "vivid", "wry", "zesty",
	}
	nouns = []string{
		"kettle", "lantern", "widget, large", `"quoted" gadget`, "anvil", "bucket",
		"compass", "drum", "easel", "fiddle", "gauge", `back\slash`, "harp",
		"ingot", "jug", "kite", "ladle", "mallet", "nozzle", "oar", "Zürich map",
	}
	adjectivesJSON = jsonInner(adjectives)
	nounsJSON      = jsonInner(nouns)
)

// epoch is the timestamp of row 0; row id is id*37 seconds later.
var epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

const rowStep = 37 * time.Second

// jsonInner returns each word JSON-encoded without its surrounding quotes.
func jsonInner(words []string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		b, err := json.Marshal(w)
		if err != nil {
			panic(err) // the words are constants above
		}
		out[i] = b[1 : len(b)-1]
	}
	return out
}

// RowFor returns the row with the given id. Its content is a pure function
// of the id, so a test can check every harvested row without storing the
// collection.
func RowFor(id int) Row {
	h := mix64(uint64(id))
	a, n := h%uint64(len(adjectives)), (h>>16)%uint64(len(nouns))
	return Row{
		ID:        id,
		Name:      adjectives[a] + " " + nouns[n] + " #" + strconv.Itoa(id),
		Value:     rowValue(h),
		Timestamp: epoch.Add(time.Duration(id) * rowStep),
	}
}

// rowValue is a value with at most two decimals in [-10000, 10000].
func rowValue(h uint64) float64 {
	cents := int64((h>>32)%2_000_001) - 1_000_000
	return float64(cents) / 100
}

// appendRow appends the JSON of RowFor(id) to b, byte for byte what
// encoding/json produces, without reflection or allocation: serving pages of
// a thousand rows must not be limited by encoding.
func appendRow(b []byte, id int) []byte {
	h := mix64(uint64(id))
	a, n := h%uint64(len(adjectives)), (h>>16)%uint64(len(nouns))
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"name":"`...)
	b = append(b, adjectivesJSON[a]...)
	b = append(b, ' ')
	b = append(b, nounsJSON[n]...)
	b = append(b, " #"...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `","value":`...)
	b = strconv.AppendFloat(b, rowValue(h), 'f', -1, 64)
	b = append(b, `,"timestamp":"`...)
	b = epoch.Add(time.Duration(id)*rowStep).AppendFormat(b, time.RFC3339)
	b = append(b, `"}`...)
	return b
}
