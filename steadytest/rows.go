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

// rowCents is a row's value in hundredths, in [-1,000,000, 1,000,000].
func rowCents(h uint64) int64 { return int64((h>>32)%2_000_001) - 1_000_000 }

// rowValue is a value with at most two decimals in [-10000, 10000].
func rowValue(h uint64) float64 { return float64(rowCents(h)) / 100 }

// appendRow appends the JSON of RowFor(id) to b, byte for byte what
// encoding/json produces, without reflection or allocation: serving pages of
// a thousand rows must not be limited by encoding (docs/adr/0053).
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
	b = appendCents(b, rowCents(h))
	b = append(b, `,"timestamp":"`...)
	b = appendUTC(b, epoch.Unix()+int64(id)*int64(rowStep/time.Second))
	b = append(b, `"}`...)
	return b
}

// appendCents appends cents/100 as strconv formats the float64 with 'f'
// and the shortest precision: no trailing zeros, no "-0". For at most two
// decimals the shortest form is exactly that decimal, since any other
// decimal that short differs from it by at least 0.01.
func appendCents(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	switch frac := cents % 100; {
	case frac == 0:
	case frac%10 == 0:
		b = append(b, '.', byte('0'+frac/10))
	default:
		b = append(b, '.', byte('0'+frac/10), byte('0'+frac%10))
	}
	return b
}

// appendUTC appends the Unix time sec as RFC 3339 in UTC
// (2026-01-01T00:00:37Z), for years 1970 to 9999.
func appendUTC(b []byte, sec int64) []byte {
	days, rem := sec/86400, sec%86400
	y, m, d := civil(days)
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, int(rem/3600))
	b = append(b, ':')
	b = append2(b, int(rem/60%60))
	b = append(b, ':')
	b = append2(b, int(rem%60))
	return append(b, 'Z')
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date, by
// counting 400-year eras from 0000-03-01 so leap days fall at era ends.
func civil(days int64) (year, month, day int) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097                                  // day of era, 0..146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of era, 0..399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of year from March 1
	mp := (5*doy + 2) / 153                                // month from March, 0..11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
