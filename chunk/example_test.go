package chunk_test

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/steadyhttp/steady/chunk"
)

func ExamplePlan() {
	base, _ := url.Parse("https://waterservices.example.gov/nwis/dv/?format=json")
	sites := []string{"01646500", "01647000", "01648000", "01649500", "01651000"}

	urls, err := chunk.Plan(base, "sites", sites, 90)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range urls {
		fmt.Println(len(u.String()), u)
	}
	// Output:
	// 87 https://waterservices.example.gov/nwis/dv/?format=json&sites=01646500,01647000,01648000
	// 78 https://waterservices.example.gov/nwis/dv/?format=json&sites=01649500,01651000
}

func ExamplePlanWith() {
	base, _ := url.Parse("https://api.example.org/v1/items")
	urls, _ := chunk.PlanWith(base, "id", []string{"a b", "c/d", "e"}, chunk.Options{Repeat: true, MaxURLBytes: 50})
	for _, u := range urls {
		fmt.Println(u)
	}
	// Output:
	// https://api.example.org/v1/items?id=a+b&id=c%2Fd
	// https://api.example.org/v1/items?id=e
}

func ExamplePlanMulti() {
	base, _ := url.Parse("https://api.example.org/v1/series")
	urls, _ := chunk.PlanMulti(base, map[string][]string{
		"site":  {"100", "200", "300", "400"},
		"param": {"temp", "flow"},
	}, chunk.Options{MaxURLBytes: 65})
	for _, u := range urls {
		fmt.Println(u)
	}
	// Output:
	// https://api.example.org/v1/series?param=temp,flow&site=100,200
	// https://api.example.org/v1/series?param=temp,flow&site=300,400
}

func ExampleValueError() {
	base, _ := url.Parse("https://api.example.org/v1/items")
	_, err := chunk.Plan(base, "id", []string{"a", "b,c"}, 0)

	var ve *chunk.ValueError
	if errors.As(err, &ve) {
		fmt.Println(ve.Index, ve.Value, errors.Is(err, chunk.ErrContainsSeparator))
	}
	fmt.Println(err)
	// Output:
	// 1 b,c true
	// chunk: id value 1 "b,c": value contains the separator
}
