// Package paginate walks the pages of an HTTP API and treats every next-page
// link as the untrusted input it is.
//
// [Pages] (or a [Walk], when you want its [Summary]) fetches a first request
// and then each page its [Next] strategy points at: [LinkHeader] for RFC 8288
// Link headers, [JSONLinks] for the links array of OGC API Features and STAC,
// or [Cursor] for a cursor field sent back as a query parameter. Each page is
// yielded as a [Page] whose body is already read, closed and, when
// [Options.Items] says where the items are, checked as JSON and split into
// [Items] in one pass without copying them; an item boundary costs one bit
// of each body byte, so small items cost no more than large ones.
//
// Some APIs name no next page; the client computes it. [Offset] adds each
// page's item count to an offset parameter, [PageNumber] counts pages, and
// [Range] asks for items with Range headers and reads Content-Range, as
// PostgREST does. These stop on an empty page or one shorter than the
// page size ([Range] also at the total its Content-Range announces), check
// the announced total both ways ([ErrTotal]), and refuse a page that
// repeats the items of an earlier one, as a server that ignores the paging
// parameter serves. Their pages can be fetched ahead,
// [Options.Concurrency] at a time, and are still yielded in order.
// [XMLCursor] follows a continuation token in an XML body (S3's
// ListObjectsV2), delivering each item as its XML element, and [BodyLink]
// a URL in a JSON field. [ParseStyle] reads every style as a command line
// spells it, and [Detect] proves from a first page which one a walk needs,
// or says it cannot.
//
// Whatever a strategy finds passes one rule, [Policy.Resolve], before it
// becomes a request: a relative link is resolved
// against the page it came from; a scheme other than http or https, a move
// from https to http and a host the caller did not allow (by default: the
// first request's host) are refused; userinfo is dropped. A link that leads
// to a page already fetched ends the walk with [ErrLoop]. In each case the
// pages received before are yielded first, and the error names the link.
//
// A walk fails loudly rather than ending short: a non-2xx page, a body that
// is not JSON where JSON is expected, a body over [Options.MaxPageBytes], a
// malformed link: each ends the walk with an [*Error] naming the page, its
// redacted URL and the cause, which [errors.Is] matches against the
// package's sentinels. Only the server saying there is no next page, or the
// caps [Options.MaxPages] and [Options.MaxRows], end a walk without error.
// A Link header cut short inside what could have been the next link is a
// malformed link too, not the last page.
//
// Nothing a walk reports quotes a key. URLs in errors and events are
// redacted with [credentials.RedactURL], including the one net/http puts in
// the [*url.Error] of a failed request; and every value in
// [Options.Secrets] (the client's keys) is replaced wherever server text or
// a URL reaches an [*Error] or an event, as written, escaped or in base64,
// through one [credentials.Redactor], with control characters escaped. A
// next link is followed without the parameters that hold a secret, and no
// page is delivered twice: the loop guard compares the links and the final
// URLs after redirects without fragment or secret.
//
// The walk cooperates with the retrying transport without depending on it.
// Each request carries [liveness.WithBodyInAttempt], so that transport reads
// the body inside the attempt and re-sends a page whose body broke off; and
// all pages share the call's [liveness.Tracker], which each page marks, so
// its stall budget measures silence across the walk rather than its length.
// The walk still reads the body itself with the same bound, for clients
// without that transport.
package paginate
