// Package faults puts steady in front of toxiproxy, a fault-injecting TCP
// proxy, and checks that a page walk either delivers every row exactly once
// or ends with a typed error within its bounds.
//
// It is a module of its own, holding tests only, so that toxiproxy and its
// dependencies stay out of the library's go.mod. The tests build the pinned
// toxiproxy server from source (a tool of this module), start it on
// 127.0.0.1, drive it with its Go client and stop it at the end; nothing
// leaves loopback. See docs/reliability.md for the matrix and its figures.
//
//	cd faults && go test -race -count=1 -run TestMatrix -v
package faults
