package redisquota

import (
	"context"

	"github.com/redis/go-redis/v9"
	"github.com/steadyhttp/steady/ratelimit"
)

// quotaScript keeps one quota for a fleet, on Redis' clock (ADR 201). It
// knows the window the servers last reported (remaining, reset), the quota
// itself when announced or learned (limit, window), and the slots already
// given out in windows ahead.
//
// In turn it: rolls the window forward when its reset has passed (with a
// known quota the new window starts with its limit, less the slots already
// promised in it; without one, nothing is known until a response says);
// records what a response said (its reset converted to Redis time through
// the age the caller measured; a reset within 1.1 s of the known one is the
// same window, since resets are often sent in whole seconds, and only lowers
// what remains, as the server has not yet counted requests in flight, and
// a reset earlier than the known one, with quota left, replaces a stored
// reset more than a window later, which the API contradicts); then
// takes back permits a holder returned unused, if their window is still
// the current one; then grants permits: freely while nothing is known, a quarter of what remains
// (at least one) while the window has quota, and once it is spent, slots
// spaced window/(4·limit) apart in the windows ahead, or one permit at the
// reset when the quota is not known.
//
// KEYS[1] quota hash; ARGV want, observed, remaining, reset ms, limit,
// window ms, age ms, permits returned, their window, requests sent
// unleased. Reply: count, start ms,
// interval ms, TTL ms, window.
var quotaScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local TOL = 1100
local want = tonumber(ARGV[1])
local s = redis.call('HMGET', KEYS[1], 'rem', 'reset', 'lim', 'win', 'ahead', 'estl', 'estw', 'wid', 'r0')
local rem, reset = tonumber(s[1]), tonumber(s[2])
local lim, win, ahead = tonumber(s[3]) or 0, tonumber(s[4]) or 0, tonumber(s[5]) or 0
local estl, estw = s[6] ~= '0', s[7] ~= '0'
local wid = tonumber(s[8]) or 0
local r0 = tonumber(s[9]) or 0
if rem == nil or reset == nil then rem, reset = nil, nil end

if reset ~= nil and now >= reset then
  if lim > 0 and win > 0 then
    local n = math.floor((now - reset) / win) + 1
    local inwin = math.min(math.max(ahead - (n - 1) * lim, 0), lim)
    rem = lim - inwin
    ahead = math.max(ahead - n * lim, 0)
    reset = reset + n * win
  else
    rem, reset, ahead = nil, nil, 0
  end
  wid = wid + 1
end

if ARGV[2] == '1' then
  local r, rt, l, w, age = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
  if l > 0 then
    lim, estl = l, false
  elseif estl and r + 1 > lim then
    lim = r + 1
  end
  if w > 0 then win, estw = w, false end
  if rt > 0 then
    local rs = now - age + rt
    -- The response that opened its window (one request of the limit spent)
    -- dates the window better than a reset in whole seconds: it began
    -- before the response arrived.
    local opener = lim > 0 and win > 0 and not estl and not estw and r == lim - 1
    if opener then rs = math.min(rs, now - age + win) end
    if reset == nil then
      rem, reset, wid, r0 = r, rs, wid + 1, r
    elseif math.abs(rs - reset) <= TOL then
      rem = math.min(rem, r)
      if opener then reset = rs end
    elseif rs > reset then
      if estw and (win == 0 or rs - reset < win) then
        win = rs - reset
      end
      rem, reset, ahead, wid, r0 = math.max(r - ahead, 0), rs, 0, wid + 1, r
    elseif rs > now and r > 0 and (win == 0 or reset - rs > win) then
      -- Fresher news from the API: a stored reset more than a window past
      -- the one the API counts to is not its window (ADR 291).
      rem, reset, ahead, wid, r0 = r, rs, 0, wid + 1, r
    end
  end
end

-- A process that sent requests before it knew of the quota, and whose
-- answer came after the one the window's count rests on, sent them
-- uncounted there.
local unl = tonumber(ARGV[10])
if unl > 0 and reset ~= nil and ARGV[2] == '1' and tonumber(ARGV[3]) < r0 then
  rem = math.max(rem - unl, 0)
end

local ret, epoch = tonumber(ARGV[8]), tonumber(ARGV[9])
if ret > 0 and epoch == wid and reset ~= nil then
  rem = rem + ret
  if lim > 0 then rem = math.min(rem, lim) end
end

local count, start, iv, ttl = 0, 0, 0, 0
if want > 0 then
  if reset == nil then
    count, ttl = want, 2000
  elseif rem > 0 then
    count = math.min(want, math.max(1, math.floor(rem / 4)))
    rem = rem - count
    ttl = reset - now
  elseif lim > 0 and win > 0 then
    iv = math.max(math.floor(win / (4 * lim)), 1)
    local w = math.floor(ahead / lim)
    local j = ahead % lim
    count = math.min(want, lim - j, math.max(1, math.floor(lim / 10)))
    local first = reset + w * win + j * iv
    start = first - now
    ttl = reset + (w + 1) * win - (first + (count - 1) * iv)
    ahead = ahead + count
  else
    count, start, ttl = 1, reset - now, 1000
  end
end

if reset == nil then
  redis.call('HDEL', KEYS[1], 'rem', 'reset')
else
  redis.call('HSET', KEYS[1], 'rem', tostring(math.floor(rem)), 'reset', tostring(math.floor(reset)))
end
redis.call('HSET', KEYS[1], 'lim', tostring(math.floor(lim)), 'win', tostring(math.floor(win)), 'ahead', tostring(math.floor(ahead)),
  'estl', estl and '1' or '0', 'estw', estw and '1' or '0', 'wid', tostring(math.floor(wid)), 'r0', tostring(math.floor(r0)))
local keep = 120000
if reset ~= nil then keep = keep + math.max(reset - now, 0) end
if lim > 0 then keep = keep + math.ceil(ahead / lim) * win end
redis.call('PEXPIRE', KEYS[1], math.floor(keep))
return {count, math.floor(start), iv, math.floor(ttl), wid}
`)

// TakeQuota implements [ratelimit.Leaser].
func (s *Store) TakeQuota(ctx context.Context, key string, c ratelimit.LeaseCall) (ratelimit.Lease, error) {
	observed := 0
	if c.Observed {
		observed = 1
	}
	q := c.Seen
	v, err := s.run(ctx, quotaScript, []string{s.quotaKey(key)},
		max(c.Want, 0), observed, max(q.Remaining, 0), max(millis(q.Reset), 0),
		max(q.Limit, 0), max(millis(q.Window), 0), max(millis(c.Age), 0), max(c.Returned, 0), c.Epoch, max(c.Unleased, 0))
	if err != nil {
		return ratelimit.Lease{}, err
	}
	xs, err := toInt64s(v, 5)
	if err != nil {
		return ratelimit.Lease{}, err
	}
	return ratelimit.Lease{Count: clamp(xs[0], c.Want), Start: duration(xs[1]), Interval: duration(xs[2]), TTL: duration(xs[3]), Epoch: xs[4]}, nil
}
