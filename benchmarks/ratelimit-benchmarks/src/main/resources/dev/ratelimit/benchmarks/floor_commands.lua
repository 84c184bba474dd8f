--[[
floor_commands.lua: the commands of an exact request window alone, for ScriptCost. It takes the
stores' keys and arguments (sliding_window.lua's layout, exact request windows only) and runs the
commands an allowed decision of an exact log cannot do without: TIME once, then per window
ZREMRANGEBYSCORE (drop what has left), ZCARD (the count), ZRANGE 0 0 (the oldest entry, for the
decision's reset), ZADD and EXPIRE; the Redis tests pin all of them but ZRANGE for every window. No
argument checks, no decision, no branch: what an allowed decision costs Redis at the least with these
data structures. Answers {1, now, -1, 0, used_1, oldest_1, ...}.
]]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local id = ARGV[3]
local fmt = string.format -- integer text: cheaper for Redis than a number argument ('%.17g')
local score = fmt('%d', now)
local result = {1, now, -1, 0, 0, 0, 0, 0}
for i = 1, #KEYS do
  local key, length = KEYS[i], tonumber(ARGV[2 + 4 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', now - length))
  result[3 + 2 * i] = redis.call('ZCARD', key)
  result[4 + 2 * i] = tonumber(redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')[2] or '0')
  redis.call('ZADD', key, 'NX', score, id)
  redis.call('EXPIRE', key, fmt('%d', math.ceil(length / 1000) + 1))
end
for i = 2 * #KEYS + 5, 8 do
  result[i] = nil
end
return result
