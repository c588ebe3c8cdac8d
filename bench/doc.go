// Package bench measures steady's retrying transport side by side with the
// bare net/http transport and two peers, on loopback. It is a module of its
// own so that the peers stay out of the library's import graph.
//
//	cd bench && go test -run '^$' -bench . -benchmem
package bench
