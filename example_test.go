package steady_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

func ExampleClient_GetJSON() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 3})
	defer srv.Close()

	c, err := steady.New(steady.Options{BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()
	var rows []steadytest.Row
	err = c.GetJSON(context.Background(), "items", url.Values{"limit": {"2"}}, &rows)
	fmt.Println(len(rows), rows[0].ID, err)

	err = c.GetJSON(context.Background(), "nowhere", nil, new(any))
	var se *steady.StatusError
	fmt.Println(errors.As(err, &se), se.StatusCode)
	// Output:
	// 2 1 <nil>
	// true 404
}

func ExampleClient_Walk() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 250, Style: steadytest.JSONLinks})
	defer srv.Close()

	c, _ := steady.New(steady.Options{BaseURL: srv.URL})
	defer c.CloseIdleConnections()
	walk, err := c.Walk("items", url.Values{"limit": {"100"}}, paginate.Options{Next: paginate.JSONLinks, Items: "features"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for page, err := range walk.All(context.Background()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("page", page.Number, "items", page.Items.Len())
	}
	s := walk.Summary()
	fmt.Println(s.Items, s.Complete)
	// Output:
	// page 1 items 100
	// page 2 items 100
	// page 3 items 50
	// 250 true
}

func ExampleFanOut() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1000})
	defer srv.Close()

	c, _ := steady.New(steady.Options{BaseURL: srv.URL, Concurrency: 4})
	defer c.CloseIdleConnections()
	offsets := []int{0, 100, 200, 300}
	firsts, err := steady.FanOut(context.Background(), c, offsets, fanout.Options{},
		func(ctx context.Context, off int) (int, error) {
			var rows []steadytest.Row
			q := url.Values{"limit": {"100"}, "offset": {strconv.Itoa(off)}}
			if err := c.GetJSON(ctx, "items", q, &rows); err != nil {
				return 0, err
			}
			return rows[0].ID, nil
		})
	fmt.Println(firsts, err)
	// Output: [1 101 201 301] <nil>
}

// A copy of a client that shares its connections, here to make one call
// without retry.
func ExampleClient_With() {
	c, _ := steady.New(steady.Options{})
	once := c.With(func(o *steady.Options) { o.Policy.MaxAttempts = 1 })
	fmt.Println(once.Options().Policy.MaxAttempts, c.Options().Policy.MaxAttempts)
	// Output: 1 0
}

// The settings of a client library's users, under the library's own prefix.
func ExampleFromEnv() {
	_, err := steady.FromEnv("EXAMPLEAPI", steady.Options{Policy: retry.Policy{MaxAttempts: 3}})
	fmt.Println(err)
	// Output: <nil>
}
