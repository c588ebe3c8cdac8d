// Package recipes holds the README's recipes for wrapping third-party API
// clients in steady's transport, each run against a real or faithful
// server on 127.0.0.1: go-github against a fake GitHub that announces its
// quota in x-ratelimit-* headers, answers a secondary-limit 403 and cuts
// bodies mid-way; the AWS SDK for Go v2 against versitygw, an
// S3-compatible server the tests start, behind a proxy that cuts
// connections mid-body and mid-upload.
//
// It is a module of its own, holding tests only, so that the SDKs stay out
// of the library's go.mod.
//
//	cd recipes && go test -race -count=1 ./...
package recipes
