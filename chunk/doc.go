// Package chunk splits one query whose list parameter is too long for a
// URL into the fewest sub-request URLs that each fit a byte budget.
//
// [Plan] takes a base URL, a parameter name and a list of values, and packs
// the values, in input order and joined with commas, into as few URLs as
// possible. The budget is measured on what is sent: the length of the final
// URL's String(), with every percent-encoded byte counted, the base URL's
// own query parameters and any fragment included. The default budget,
// [DefaultMaxURLBytes], sits under the 8 KiB request-line limit common to
// servers and proxies.
//
// A URL also carries at most [DefaultMaxValues] (1,000) values, however
// short: some servers keep only the first 1,000 parameters of a query
// (Express) and answer for those without an error, so a longer URL would
// lose rows silently. [Options].MaxValues sets another cap or none; with a
// repeated parameter the base URL's own parameters count toward it.
//
// Packing greedily (each URL takes values until the next one would not
// fit) gives the fewest URLs any in-order split can: the argument is in
// pack.go. A value that cannot fit even alone, an empty value, and a value
// containing the separator (the server would split it in two) are refused
// with a [*ValueError] naming the parameter, the value and its index;
// nothing is ever silently dropped or truncated.
//
// [PlanWith] takes [Options]: a budget, another separator (such as "|"), or
// a repeated parameter (?id=a&id=b) instead of a joined one. [PlanMulti]
// splits several list parameters at once into the cross product of their
// parts, halving the longest part until every URL fits; it keeps every
// combination of values but, unlike Plan, does not promise the fewest URLs.
//
// chunk imports only the standard library; its errors quote values and
// parameter names but never the base URL, which may carry a key.
package chunk
