package redisquota

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/steadyhttp/steady/budget"
)

// budgetWindow is the retry package's budget window, in milliseconds: the
// shared bucket follows the same arithmetic as the in-process one (ADR 9).
const budgetWindow = 10_000

// budgetLeaseTTL is how long leased re-sends stay usable by their holder
// before they go back to the fleet with its next call (ADR 200).
const budgetLeaseTTL = 2 * time.Second

// budgetScript credits first attempts and returned re-sends, tops the
// bucket up to its floor over each window, and grants up to Want re-sends,
// all on Redis' clock. A bucket no one touched for six windows is dropped;
// it comes back full, as it would be had it been kept.
//
// KEYS[1] budget hash; ARGV ratio, floor, max tokens, deposits, returned,
// want, window ms.
var budgetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ratio, floor, maxt = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local dep, ret, want, win = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'ws', 'cred')
local tokens, ws, cred = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
local traffic = dep * ratio
if tokens == nil or ws == nil or cred == nil then
  tokens, ws, cred = maxt, now, 0
else
  if now < ws then ws = now end
  if now - ws >= win then
    local owed = math.max(floor * win / 1000 - cred - traffic, 0)
    tokens = math.min(tokens + traffic + owed, maxt)
    traffic = 0
    ws = ws + win
    if now - ws >= win then
      tokens = math.min(tokens + floor * win / 1000, maxt)
      ws = now
    end
    cred = 0
  end
  local owed = math.max(floor * (now - ws) / 1000 - cred - traffic, 0)
  local credit = traffic + owed
  cred = cred + credit
  tokens = math.min(tokens + credit, maxt)
end
tokens = math.min(tokens + ret, maxt)
local granted = 0
if want > 0 and tokens >= 1 then
  granted = math.min(want, math.floor(tokens))
  tokens = tokens - granted
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ws', string.format('%d', ws), 'cred', string.format('%.17g', cred))
redis.call('PEXPIRE', KEYS[1], win * 6)
return {granted, math.floor(tokens * 1000)}
`)

// TakeBudget implements [budget.Store].
func (s *Store) TakeBudget(ctx context.Context, r budget.Take) (budget.Lease, error) {
	v, err := s.run(ctx, budgetScript, []string{s.budgetKey()},
		fmtFloat(r.Ratio), fmtFloat(r.MinPerSecond), fmtFloat(r.MaxTokens),
		max(r.Deposits, 0), max(r.Returned, 0), max(r.Want, 0), budgetWindow)
	if err != nil {
		return budget.Lease{}, err
	}
	xs, err := toInt64s(v, 2)
	if err != nil {
		return budget.Lease{}, err
	}
	return budget.Lease{Granted: clamp(xs[0], r.Want), TTL: budgetLeaseTTL}, nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
