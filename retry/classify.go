package retry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/liveness"
)

// Failure classes, as reported in events.
const (
	classRefused     = "refused"
	classReset       = "reset"
	classTimeout     = "timeout"
	classEOF         = "eof"
	classDNS         = "dns"
	classDNSNotFound = "dns not found"
	classTLS         = "tls"
	classTooLarge    = "body too large"
	classScheme      = "unsupported scheme"
	classMalformed   = "malformed request"
	classTransport   = "transport"
	classWithheld    = "key withheld"
)

// laterReasons are the stop reasons a later try could get past: the
// attempts, the patience or the quota ran out, not the request's right to
// succeed.
var laterReasons = [...]error{ErrExhausted, ErrStalled, ErrRetryAfter, ErrBudget, ErrRateLimited, ErrOverload}

// Transient reports whether the same request, tried again later, might get
// further. It is the one rule that fan-outs, the facade and the command use
// to decide whether work stopped by err can resume. It holds when err
// matches (errors.Is) one of [ErrExhausted], [ErrStalled], [ErrRetryAfter],
// [ErrBudget], [ErrRateLimited] or [ErrOverload], or when an error in its chain has a
// Retryable() bool method that returns true (a status error judged by
// [TransientStatus], a nested fan-out's interruption). Everything else is
// permanent: [ErrNotRetryable], a cancelled or expired context, any error of
// unknown type. It never reads message text.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	for _, reason := range laterReasons {
		if errors.Is(err, reason) {
			return true
		}
	}
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// TransientStatus reports whether a final status may pass when the request
// is tried again later: 408, 425, 429 and every 5xx. It is broader than what
// a transport re-sends at once under [GatewayStatus].
func TransientStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooEarly:
		return true
	}
	return AnyServerError(code)
}

// classify names a failure without a response and reports whether a later
// attempt could survive it. It decides by the types along the error chain and
// by the request itself, never by message text. A failure is re-sent unless
// it is known to be permanent: the request is malformed or its scheme cannot
// be sent, the certificate does not verify, the name does not exist, or the
// body is larger than allowed. Failures of unexported types deep in net/http
// (a broken HTTP/1 connection, an HTTP/2 stream reset) are transient by this
// rule without anyone matching their text.
func classify(err error, req *http.Request) (class string, retryable bool) {
	if errors.Is(err, liveness.ErrBodyTooLarge) {
		return classTooLarge, false
	}
	// The credentials layer refused to send: a key misconfigured, or one
	// that would reach an origin that does not accept it. Every attempt
	// would be refused the same way.
	var leak *credentials.LeakError
	var keyErr *credentials.KeyError
	if errors.As(err, &leak) || errors.As(err, &keyErr) {
		return classWithheld, false
	}
	if req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return classScheme, false
	}
	if req.URL.Host == "" || !validHeader(req.Header) {
		return classMalformed, false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return classDNSNotFound, false
		}
		return classDNS, true
	}
	if isTLSVerification(err) {
		return classTLS, false
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return classRefused, true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return classReset, true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return classEOF, true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return classTimeout, true
	}
	return classTransport, true
}

func isTLSVerification(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError // the peer does not speak TLS
	)
	return errors.As(err, &verify) || errors.As(err, &authority) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &record)
}

// neverSent reports whether the failure proves the request never left: the
// connection could not be dialled (or the name resolved), so no byte of it
// was written. Such a failure may be re-sent even for a POST.
func neverSent(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr)
}

// validHeader reports whether every header name is an RFC 9110 token and no
// value carries a control character other than tab.
func validHeader(h http.Header) bool {
	for name, values := range h {
		if name == "" {
			return false
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				return false
			}
		}
		for _, v := range values {
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
					return false
				}
			}
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
