package wiretest_test

import "github.com/steadyhttp/steady/event"

func progressEvent(secret string) event.Event {
	return event.Event{Kind: event.RetryScheduled, URL: "https://x.example/?appid=" + secret}
}
