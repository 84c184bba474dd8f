--[[
sliding_window.lua: one check of an exact sliding-window log, all windows at once, all or nothing.

Each window is a sorted set of the requests recorded in it: score = time in epoch milliseconds,
member = a name unique to that request. The whole script is one atomic step of Redis.

KEYS[i]       the sorted set of window i, shortest window first (i = 1..n). In cluster mode all
              keys must hash to one slot (the key codec gives them the user's hash tag).
ARGV[1]       now in epoch milliseconds, or '' (empty) to take the server's TIME
ARGV[2]       permits: entries the request records in every window, at least 1. Counts are
              entry counts, so a request of k permits is k entries: sums stay exact.
ARGV[3]       member base, unique to this call among all callers; the entries recorded are named
              <base> when permits = 1, else <base>#1 .. <base>#<permits>
ARGV[2 + 2i]  window i length in milliseconds
ARGV[3 + 2i]  window i limit

Returns integers only:
  rejected  {0, i - 1, count_i, retry_ms}
            the first window i (0-based in the reply) where count + permits > limit, its count,
            and the milliseconds until its oldest entry leaves it (oldest + length - now; the
            window length when the window is empty, i.e. permits alone exceed the limit).
            Nothing was written: only entries that had already left a window were dropped.
  allowed   {1, used_1, reset_1, ..., used_n, reset_n}
            every window's count after recording and the milliseconds until its oldest entry
            leaves it; each key expires window length + 1 s after this call.

An entry scored exactly now - length has left its window, so a rejection at now with
retry_ms = r is followed by room at now + r.
Needs Redis 5 or later when ARGV[1] is '' (effects replication lets TIME precede writes).
]]

local n = #KEYS
if n == 0 or #ARGV ~= 3 + 2 * n then
  return redis.error_reply('ERR sliding_window: expected 3 + 2 * #KEYS arguments, got ' .. #ARGV)
end

local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local permits = tonumber(ARGV[2])
local base = ARGV[3]
if now == nil or permits == nil or permits < 1 then
  return redis.error_reply('ERR sliding_window: bad now or permits')
end

-- Scores and bounds go to Redis as integer text: Lua's default number format keeps only 14 digits.
local function int(x)
  return string.format('%d', x)
end

local counts, oldest = {}, {}
for i = 1, n do
  local key = KEYS[i]
  local length = tonumber(ARGV[2 + 2 * i])
  local limit = tonumber(ARGV[3 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - length))
  local count = redis.call('ZCARD', key)
  local first = nil
  if count > 0 then
    first = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
  end
  if count + permits > limit then
    local retry = length
    if first ~= nil then
      retry = first + length - now
    end
    return {0, i - 1, count, retry}
  end
  counts[i] = count
  oldest[i] = first
end

local score = int(now)
local result = {1}
for i = 1, n do
  local key = KEYS[i]
  local length = tonumber(ARGV[2 + 2 * i])
  if permits == 1 then
    redis.call('ZADD', key, score, base)
  else
    -- In chunks: unpack() of thousands of arguments would overflow Lua's C stack.
    local j = 1
    while j <= permits do
      local args = {}
      local last = math.min(permits, j + 499)
      for k = j, last do
        args[#args + 1] = score
        args[#args + 1] = base .. '#' .. k
      end
      redis.call('ZADD', key, unpack(args))
      j = last + 1
    end
  end
  redis.call('EXPIRE', key, math.ceil(length / 1000) + 1)
  local first = oldest[i]
  if first == nil or first > now then
    first = now
  end
  result[#result + 1] = counts[i] + permits
  result[#result + 1] = first + length - now
end
return result
