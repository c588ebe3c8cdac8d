// Package steady makes HTTP API clients survive the real internet.
//
// A [Client] wires the layers together: a tuned [net/http.Transport] with sane
// timeouts, the credentials transport that sends an API key only to the
// hosts that accept it ([credentials.Key]), and the retrying transport
// ([retry.Transport]) with its two bounds, attempts and silence. [Client.HTTP]
// returns the whole stack as an [*http.Client] for any generated API client;
// [Client.Do] and [Client.GetJSON] add typed status errors ([*StatusError],
// [*RateLimitError], [*TooLargeError]); [Client.Pages] walks paginated
// collections behind one next-link policy; [FanOut] runs many sub-requests
// with bounded concurrency and resumable failures.
//
// Settings come from plain [Options], or from the environment with [FromEnv]
// (STEADY_RETRIES, STEADY_STALL_TIMEOUT, STEADY_CONCURRENT, STEADY_API_KEY, or
// a prefix of the caller's choosing). Nothing is printed: events go to
// [Options.Reporter].
package steady
