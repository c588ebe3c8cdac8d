package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// envSharedQuota names the store to share quotas through, as --shared-quota.
const envSharedQuota = config.DefaultPrefix + "_SHARED_QUOTA"

// sharedStore is the store a --shared-quota URL opened: one retry budget
// and one set of quotas for every process that names it.
type sharedStore struct {
	budget budget.Store
	quota  ratelimit.Leaser
	close  func() error

	pacer *ratelimit.SharedPacer // this process's, made on first use
}

// sharedStoreOpener opens raw; warn is to be called when the store stops
// answering (with why) and when it answers again (with nil).
type sharedStoreOpener func(raw string, warn func(error)) (*sharedStore, error)

// sharedStoreOpeners open --shared-quota URLs by scheme; redis.go adds the
// Redis store's.
var sharedStoreOpeners = map[string]sharedStoreOpener{}

func addSharedQuotaFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "shared-quota", "",
		"share the retry budget and rate-limit quotas with every process naming this store, redis://HOST:PORT/DB[?name=NAME] (env "+envSharedQuota+")")
}

// openShared opens the store the flag, or else the environment, names; nil
// when neither does. Warnings go to stderr, one per change of the store's
// health.
func openShared(cmd *cobra.Command, flagValue string, stderr io.Writer) (*sharedStore, error) {
	raw, from := flagValue, "--shared-quota"
	if !cmd.Flags().Changed("shared-quota") {
		raw, from = os.Getenv(envSharedQuota), envSharedQuota
	}
	if raw == "" {
		return nil, nil
	}
	shown := credentials.RedactURLString(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, usagef("%s %q: want redis://HOST:PORT/DB", from, shown)
	}
	scheme := strings.ToLower(u.Scheme)
	open, ok := sharedStoreOpeners[scheme]
	if !ok {
		return nil, usagef("%s %q: unknown store; want redis://HOST:PORT/DB", from, shown)
	}
	var mu sync.Mutex
	where := u.Host
	warn := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fmt.Fprintf(stderr, "steady: shared quota at %s does not answer (%s); pacing and the retry budget are this process's own until it does\n",
				where, credentials.Escape(err.Error())) // the store's text, which it controls
			return
		}
		fmt.Fprintf(stderr, "steady: shared quota at %s answers again; sharing resumed\n", where)
	}
	s, err := open(raw, warn)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("%s: %s", from, credentials.Escape(err.Error()))}
	}
	return s, nil
}

// share puts policy on the shared store, if there is one: pacing through
// its quotas, re-sends from its budget.
func (s *sharedStore) share(policy retry.Policy) retry.Policy {
	if s == nil {
		return policy
	}
	if s.pacer == nil {
		s.pacer = &ratelimit.SharedPacer{Leaser: s.quota}
	}
	policy.Pacer = s.pacer
	if policy.Budget == nil {
		policy.Budget = &budget.Budget{}
	}
	policy.Budget.Store = s.budget
	return policy
}

func (s *sharedStore) Close() error {
	if s == nil || s.close == nil {
		return nil
	}
	return s.close()
}
