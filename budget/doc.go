// Package budget bounds re-sends across every request that shares a
// [Budget], so retries cannot multiply load when a service is weakest.
//
// A Budget is a token bucket: each first attempt deposits a share of a
// token ([Budget.Deposit]), each re-send withdraws one ([Budget.Withdraw]),
// and a floor of re-sends a second keeps a client with little traffic able
// to ride out a blip. Time is a parameter; a nil *Budget allows every
// re-send.
//
// A fleet of processes shares one bucket through a [Store] (the redisquota
// module implements one on Redis): first attempts are credited in batches
// and re-sends leased a few at a time, every call has a short deadline
// ([StoreTimeout]), and while the store fails or is slow the in-process
// bucket answers.
package budget
