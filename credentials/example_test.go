package credentials_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/steadyhttp/steady/credentials"
)

func ExampleNewTransport() {
	key := credentials.Key{
		Header: "X-Api-Key",
		Value:  "k-123",
		Hosts:  []string{"api.example.gov"},
	}
	// The inner transport stands in for the network and shows what would be
	// sent.
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		fmt.Printf("%-40s X-Api-Key=%q\n", r.URL, r.Header.Get("X-Api-Key"))
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	client := &http.Client{Transport: credentials.NewTransport(inner, key)}

	for _, u := range []string{
		"https://api.example.gov/x",
		"http://api.example.gov/x",
		"https://api.example.gov.evil.com/x",
		"https://other.example.gov/x",
	} {
		resp, err := client.Get(u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		resp.Body.Close()
	}
	// Output:
	// https://api.example.gov/x                X-Api-Key="k-123"
	// http://api.example.gov/x                 X-Api-Key=""
	// https://api.example.gov.evil.com/x       X-Api-Key=""
	// https://other.example.gov/x              X-Api-Key=""
}

func ExampleNewTransport_loopback() {
	// A local test server over plain http receives the key only because the
	// entry says http:// explicitly.
	key := credentials.Key{Query: "api_key", Value: "k-123", Hosts: []string{"http://127.0.0.1:8080"}}
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		fmt.Println(r.URL)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	rt := credentials.NewTransport(inner, key)
	for _, u := range []string{"http://127.0.0.1:8080/x?q=1", "http://127.0.0.1:9090/x?q=1&api_key=hand"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	// Output:
	// http://127.0.0.1:8080/x?q=1&api_key=k-123
	// http://127.0.0.1:9090/x?q=1
}

func ExampleKey_Validate() {
	key := credentials.Key{Header: "X-Api-Key", Value: "k-123", Hosts: []string{"http://api.example.gov"}}
	fmt.Println(key.Validate())
	// Output:
	// credentials: invalid key: Hosts[0]: "http://api.example.gov": plain http is allowed only for loopback hosts (127.0.0.0/8, ::1, localhost); use https
}

func ExampleKey_Accepts() {
	key := credentials.Key{Header: "X-Api-Key", Value: "k-123", Hosts: []string{"api.example.gov"}}
	for _, s := range []string{"https://API.example.gov/x", "https://api.example.gov.evil.com/x"} {
		u, _ := url.Parse(s)
		fmt.Println(s, key.Accepts(u))
	}
	// Output:
	// https://API.example.gov/x true
	// https://api.example.gov.evil.com/x false
}

func ExampleRedactURL() {
	u, _ := url.Parse("https://user:hunter2@api.example.gov/items?page=2&api_key=k-123&limit=10")
	fmt.Println(credentials.RedactURL(u))
	// Output:
	// https://REDACTED@api.example.gov/items?page=2&api_key=REDACTED&limit=10
}

func ExampleCheckQuery() {
	err := credentials.CheckQuery(url.Values{"limit": {"10"}, "api_key": {"k-123"}})
	var ce *credentials.CredentialParamError
	if errors.As(err, &ce) {
		fmt.Println(ce.Name)
		fmt.Println(err)
	}
	// Output:
	// api_key
	// credentials: refusing query parameter "api_key": it looks like a credential; configure a credentials.Key with Query "api_key" and the hosts that accept it instead
}
