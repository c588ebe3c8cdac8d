package wiretest_test

import "github.com/steadyhttp/steady/progress"

func progressEvent(secret string) progress.Event {
	return progress.Event{Kind: progress.RetryScheduled, URL: "https://x.example/?appid=" + secret}
}
