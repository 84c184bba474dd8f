-- In-flight slots of one tenant (the gateway's concurrency cap): a sorted set of slot ids scored by
-- the time their lease ends, in milliseconds of the Redis server's clock. A slot whose holder dies
-- is dropped once its lease ends; the key itself expires when no live holder renews it.
--
-- KEYS[1]  the tenant's slot set, ratelimit:inflight:{<tenant>}
-- ARGV[1]  operation: "acquire", "renew", "release" or "count"
-- ARGV[2]  the slot id (acquire, renew, release): unique across gateway processes
-- ARGV[3]  the tenant's cap (acquire)
-- ARGV[4]  the lease in milliseconds (acquire, renew)
-- returns  acquire: 1 when the slot was taken, 0 when the tenant is at its cap;
--          renew, release: 1; count: the live slots
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local op = ARGV[1]
if op == 'count' then
  return redis.call('ZCARD', KEYS[1])
end
if op == 'release' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 1
end
if op == 'acquire' and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
local lease = tonumber(ARGV[4])
if op == 'acquire' then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
else
  -- renew only a slot still held: a renewal racing its release must not bring the slot back
  redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], lease + 1000)
return 1
