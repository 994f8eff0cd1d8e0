if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) then
  return {0, 0, '0', 'duplicate'}
end
local pv = redis.call('INCRBY', KEYS[2], 1)
redis.call('PFADD', KEYS[3], ARGV[2])
local uv = redis.call('PFCOUNT', KEYS[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pub = redis.call('HGET', KEYS[4], 'publishedAt')
if pub then
  pub = tonumber(pub)
else
  pub = now
  redis.call('HSET', KEYS[4], 'publishedAt', now)
end
local hours = (now - pub) / 3600000
if hours < 0 then hours = 0 end
local score = (1.0 * pv + 1.2 * uv) / ((hours + 2) ^ 1.5)
redis.call('ZADD', KEYS[5], score, ARGV[1])
return {pv, uv, string.format('%.17g', score), 'counted'}
