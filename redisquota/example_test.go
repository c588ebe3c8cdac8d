package redisquota_test

import (
	"fmt"
	"net/http"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
	"github.com/steadyhttp/steady/retry"
)

// Every process of a fleet opens the same Redis under the same namespace
// and puts both its retry budget and its pacing on the store. Nothing is
// sent to Redis until the first request needs it; if Redis is down the
// processes pace and budget alone, and OnChange hears it once.
func ExampleOpen() {
	store, client, err := redisquota.Open("redis://127.0.0.1:6379/0?name=harvest-eu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	store.OnChange = func(err error) {
		if err != nil {
			fmt.Println("sharing paused:", err)
		}
	}
	tr := retry.New(nil, retry.Policy{
		Pacer:  &ratelimit.SharedPacer{Leaser: store},
		Budget: &budget.Budget{Store: store},
	})
	defer tr.CloseIdleConnections() // hands back unused permits
	_ = &http.Client{Transport: tr}
	fmt.Println("ready")
	// Output: ready
}
