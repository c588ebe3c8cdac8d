// Package steadytest is a realistic, deterministic flaky API server, for
// testing HTTP clients against the failures of the real internet without
// the internet.
//
// [NewServer] starts a [Server] on 127.0.0.1 serving a collection of
// [ServerOptions.Rows] rows with ids 1..N. Each row's content is a pure
// function of its id ([RowFor]), so a harvest can be checked row by row
// without storing the collection. [ItemsPath] serves it in pages: the page
// size is the limit query parameter (default 100, larger values clamped to
// [ServerOptions.MaxLimit], anything else a 400), and the next page is named
// in the way [ServerOptions.Style] says: an RFC 8288 Link header
// ([LinkHeader]), a links array in the body ([JSONLinks]) or an opaque cursor
// ([Cursor]). Next links are absolute URLs built from the request's Host.
// Other styles leave the next request to the client, as real servers do:
// json-server 0.17's _start/_limit ([Offset]) and _page/_limit
// ([PageLimit]), json-server 1.x's _page/_per_page with page counts in the
// body ([PerPage]), PostgREST's Range and Content-Range ([Range]), and S3's
// ListObjectsV2 XML with continuation tokens ([S3]). Faults apply to them
// all; [RepeatNext] makes such a server ignore its paging parameter.
// [LookupPath] returns rows by id for chunked queries and answers 414 to a
// request target longer than [ServerOptions.MaxURLBytes]. An optional API key
// ([ServerOptions.KeyValue]) is checked, or only recorded, and never logged.
//
// [Faults] make requests fail: error statuses with Retry-After in seconds or
// as an HTTP-date, hangs before the headers, stalls mid-body, resets before
// or during the body, truncated bodies, slow drips, redirects to another
// host, hostile next links, and a request [Quota] with rate-limit headers.
// A fault is chosen per request by a script keyed by arrival number, by a
// rule function, or by a draw from a weighted [Chance] mix. The draw hashes
// the seed, the page requested and how many times that page was requested
// before, so the same seed fails the same requests the same way however
// concurrent requests interleave. [Mild] and [Harsh] are ready-made mixes.
//
// Every wait (hangs, stalls, drips, quota windows) uses the time package,
// so inside a testing/synctest bubble it is virtual and exact; serve the
// [Handler] over in-memory connections there. A hang or stall ends when its
// [Fault.For] elapses, when the client gives up, or when the server is
// closed: [Server.Close] releases every waiting handler before it waits for
// them, so no goroutine outlives it.
//
// [Server.Requests] returns the log: method, target, headers, whether the
// key was present, which page attempt it was, the fault applied and the
// status sent. [NewHandler] gives the same server as an [http.Handler] to
// serve on a listener of your own.
package steadytest
