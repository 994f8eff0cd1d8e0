-- The seed's plain HOT.VIEW script: no dedup, no abnormal-traffic check.
-- KEYS: pv counter, uv HyperLogLog, meta hash, board ZSET. ARGV: article, visitor.
-- Used by `make bench` and `make profile` as the second baseline, next to
-- examples/view.lua (the recipe with dedup).
local pv = redis.call('INCRBY', KEYS[1], 1)
redis.call('PFADD', KEYS[2], ARGV[2])
local uv = redis.call('PFCOUNT', KEYS[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pub = redis.call('HGET', KEYS[3], 'publishedAt')
if pub then
  pub = tonumber(pub)
else
  pub = now
  redis.call('HSET', KEYS[3], 'publishedAt', now)
end
local hours = (now - pub) / 3600000
if hours < 0 then hours = 0 end
local score = (1.0 * pv + 1.2 * uv) / ((hours + 2) ^ 1.5)
redis.call('ZADD', KEYS[4], score, ARGV[1])
return {pv, uv, string.format('%.17g', score), 'counted'}
