// A paginated API behind express-rate-limit, for the tests of pacing.
//
//   node server.js '{"rows":70,"page":1,"limiters":[{"limit":20,"windowMs":2000,"headers":"draft-8"}]}'
//
// It listens on 127.0.0.1 on a port of the system's choosing and prints
// "listening PORT" once ready. GET /items?offset=N&limit=M answers a JSON
// array of rows {"id": i+1} with a Link to the next page, behind every
// limiter configured, in order. A limiter is {limit, windowMs, headers, name,
// retryAfter}: headers is "draft-6", "draft-7", "draft-8", "legacy"
// (X-RateLimit-*) or "none" (no rate-limit fields and no Retry-After: a
// bare 429); retryAfter false strips the Retry-After of its 429s.
// With "total": true each page says the rows in all in X-Total-Count.
// GET /stats (not limited) answers {"served": n, "refused": n}. It exits
// when its standard input closes, so a test that dies leaves nothing behind.
'use strict'

const express = require('express')
const { rateLimit } = require('express-rate-limit')

const cfg = JSON.parse(process.argv[2] || '{}')
const rows = cfg.rows ?? 100
const stats = { served: 0, refused: 0 }

const app = express()
app.disable('x-powered-by')
app.set('etag', false)

for (const l of cfg.limiters ?? []) {
  const headers = l.headers ?? 'draft-8'
  const opts = {
    windowMs: l.windowMs ?? 2000,
    limit: l.limit ?? 20,
    standardHeaders: headers === 'legacy' || headers === 'none' ? false : headers,
    legacyHeaders: headers === 'legacy',
    handler: (req, res, next, options) => {
      stats.refused++
      if (l.retryAfter === false) res.removeHeader('Retry-After')
      res.status(options.statusCode).json({ error: 'too many requests' })
    },
  }
  if (l.name) opts.identifier = l.name
  app.use('/items', rateLimit(opts))
}

app.get('/items', (req, res) => {
  const offset = Math.max(0, parseInt(req.query.offset ?? '0', 10) || 0)
  const limit = Math.min(1000, Math.max(1, parseInt(req.query.limit ?? String(cfg.page ?? 1), 10) || 1))
  const page = []
  for (let i = offset; i < Math.min(rows, offset + limit); i++) page.push({ id: i + 1 })
  if (offset + limit < rows) {
    res.set('Link', `</items?offset=${offset + limit}&limit=${limit}>; rel="next"`)
  }
  if (cfg.total) res.set('X-Total-Count', String(rows))
  stats.served++
  res.json(page)
})

app.get('/stats', (req, res) => res.json(stats))

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`)
})
process.stdin.on('end', () => process.exit(0))
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()
