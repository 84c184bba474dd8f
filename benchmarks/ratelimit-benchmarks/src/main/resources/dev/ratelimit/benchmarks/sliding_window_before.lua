#!lua flags=
--[[
sliding_window.lua: reserve or settle one request in sliding-window logs, all windows at once,
all or nothing. The whole script is one atomic step of Redis.

Three kinds of window, each kept under its own key(s):
  exact requests  a sorted set: score = time in epoch ms, member = the request's entry id.
                  The count is ZCARD.
  exact tokens    a sorted set whose members are '<weight>:<entry id>' (settling above the estimate
                  adds '<weight>:<entry id>+' at the time of settling), and a string key holding
                  the sum of the weights present. Two keys.
  precision       a string: a ring of steps. 24-byte header (sum, lowest live step, highest
                  recorded step; little-endian doubles) then one 16-byte slot per step (step
                  number, weight), slot = step mod slots. Entries within one step are one weighted
                  entry recorded as if at the end of the step, (step + 1) * precision, so it leaves
                  the window at most one step late and never early. Requests count 1 per entry.
                  Memory is fixed by the window's length and precision, not by traffic.

KEYS          every window's key(s), in evaluation order (scope by scope, each scope's windows
              shortest first): one key per window, two (sorted set, sum) for exact token windows.
              In cluster mode all keys must hash to one slot (the key codec tags them).
ARGV[1]       'r' to reserve, 's' to settle, 'p' to peek (report every window's state, record nothing)
ARGV[2]       now in epoch milliseconds, or '' (empty) to take the server's TIME
ARGV[3]       the entry id: unique to the reservation among all callers
ARGV[4]       tokens reserved (the estimate): charged to token windows; request windows count 1
ARGV[5]       settle: the reservation's time as its reserve call returned it ('' when reserving)
ARGV[6]       settle: the tokens actually used, or -1 to cancel ('' when reserving)
ARGV[7 + 4(i-1)] .. ARGV[10 + 4(i-1)]
              window i: length in ms, limit, unit (0 requests, 1 tokens), precision in ms (0 exact)

Reserve returns integers only: {status, now, index, retry_ms, used_1, reset_1, ..., used_n, reset_n}
  status 1    allowed: the request is recorded in every window; index is -1, retry_ms 0.
  status 0    rejected by window index (0-based): the first window where used + need > limit, with
              need = 1 for request windows and max(tokens, 1) for token windows (so a token window
              that is used up rejects even a request that reserves no tokens). retry_ms is the time
              until enough weight leaves that window for the same request to fit; at now + retry_ms
              it fits if nothing else arrived. Nothing is recorded.
  status 2    too large: the request alone reserves more tokens than window index allows; it can
              never fit. Nothing is recorded; retry_ms is 0.
  used_i, reset_i
              each window's sum after this call and the ms until its oldest entry leaves it (0 when
              empty); on rejection the state without this request.
Peek returns what reserve returns for an allowed request, {1, now, -1, 0, used_1, reset_1, ...},
without recording anything (it drops entries that have left their windows, as every call does).
Settle returns {1}. Cancel removes the request from request windows and its estimate from token
windows; a commit replaces the estimate of token windows by the actual count: a refund where the
entry is still in the window, an overrun charged at now (never rejected). Settling does nothing to
an entry that has already left its window.

Keys expire one second after their last entry leaves the window, so idle users cost no memory.
An entry scored exactly now - length has left its window.
Needs Redis 7.0 or later: the #!lua line declares a script that writes (no flags), so Redis checks
maxmemory before it starts and refuses it with an OOM error when memory is full, instead of letting
its first write (a removal, allowed under OOM) open the way for the rest.
]]

local RESERVE, SETTLE, PEEK = 'r', 's', 'p'
local HEADER, SLOT = 24, 16

local op = ARGV[1]
local now
if ARGV[2] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end
local id = ARGV[3]
local tokens = tonumber(ARGV[4])
local n = (#ARGV - 6) / 4
if now == nil or tokens == nil or tokens < 0 or n < 1 or n ~= math.floor(n) or (op ~= RESERVE and op ~= SETTLE and op ~= PEEK) then
  return redis.error_reply('ERR sliding_window: bad arguments')
end

-- Scores and bounds go to Redis as integer text: Lua's default number format keeps only 14 digits.
local function int(x)
  return string.format('%d', x)
end

-- Window i's parameters and key(s).
local windows = {}
local k = 1
for i = 1, n do
  local a = 6 + 4 * (i - 1)
  local w = {
    length = tonumber(ARGV[a + 1]),
    limit = tonumber(ARGV[a + 2]),
    tokens = ARGV[a + 3] == '1',
    step = tonumber(ARGV[a + 4]),
    key = KEYS[k],
  }
  if w.step > 0 then
    w.kind = 'ring'
    w.slots = math.ceil(w.length / w.step) + 1
  elseif w.tokens then
    w.kind = 'weighted'
    w.sumkey = KEYS[k + 1]
    k = k + 1
  else
    w.kind = 'log'
  end
  k = k + 1
  windows[i] = w
end
if k - 1 ~= #KEYS then
  return redis.error_reply('ERR sliding_window: expected ' .. (k - 1) .. ' keys, got ' .. #KEYS)
end

-- The weight a reservation of `tokens` puts in window w.
local function weight(w, t)
  if w.tokens then
    return t
  end
  return 1
end

---------------------------------------------------------------------------------------------------
-- exact request windows: one member per request

local function log_trim(w)
  redis.call('ZREMRANGEBYSCORE', w.key, '-inf', int(now - w.length))
  w.used = redis.call('ZCARD', w.key)
  if w.used > 0 then
    w.oldest = tonumber(redis.call('ZRANGE', w.key, 0, 0, 'WITHSCORES')[2])
  end
end

-- Time at which the entry whose leaving frees `excess` units leaves (the excess-th oldest).
local function log_freeing(w, excess)
  return tonumber(redis.call('ZRANGE', w.key, excess - 1, excess - 1, 'WITHSCORES')[2])
end

---------------------------------------------------------------------------------------------------
-- exact token windows: one weighted member per reservation and a sum

local function member_weight(member)
  return tonumber(string.match(member, '^(%d+):'))
end

local function weighted_trim(w)
  local gone = redis.call('ZRANGEBYSCORE', w.key, '-inf', int(now - w.length))
  local sum = tonumber(redis.call('GET', w.sumkey) or '0')
  if #gone > 0 then
    for _, member in ipairs(gone) do
      sum = sum - member_weight(member)
    end
    redis.call('ZREMRANGEBYSCORE', w.key, '-inf', int(now - w.length))
    if sum <= 0 then
      redis.call('DEL', w.sumkey)
      sum = 0
    else
      redis.call('SET', w.sumkey, int(sum), 'KEEPTTL')
    end
  end
  w.used = sum
  if sum > 0 then
    w.oldest = tonumber(redis.call('ZRANGE', w.key, 0, 0, 'WITHSCORES')[2])
  end
end

local function weighted_freeing(w, excess)
  local freed, from = 0, 0
  while true do
    local page = redis.call('ZRANGE', w.key, from, from + 63, 'WITHSCORES')
    if #page == 0 then
      return nil
    end
    for j = 1, #page, 2 do
      freed = freed + member_weight(page[j])
      if freed >= excess then
        return tonumber(page[j + 1])
      end
    end
    from = from + 64
  end
end

local function weighted_expire(w)
  local seconds = math.ceil(w.length / 1000) + 1
  redis.call('EXPIRE', w.key, seconds)
  redis.call('EXPIRE', w.sumkey, seconds)
end

---------------------------------------------------------------------------------------------------
-- precision windows: a ring of steps in one string

local function ring_offset(w, s)
  return HEADER + SLOT * (s % w.slots)
end

-- Reads `count` consecutive slots from step `first`, calling visit(step, weight) for each live one
-- in step order until visit returns true; returns the step it stopped at, or nil.
local function ring_scan(w, first, count, visit)
  local s = first
  while count > 0 do
    local index = s % w.slots
    local run = math.min(count, w.slots - index, 64)
    local bytes = redis.call('GETRANGE', w.key, HEADER + SLOT * index, HEADER + SLOT * (index + run) - 1)
    for j = 0, run - 1 do
      local at = 1 + SLOT * j
      if at + SLOT - 1 <= #bytes then
        local step, wt = struct.unpack('<dd', bytes, at)
        if step == s + j and wt > 0 and visit(s + j, wt) then
          return s + j
        end
      end
    end
    s = s + run
    count = count - run
  end
  return nil
end

-- Loads the ring, drops the steps that have left the window, and moves `lo` to the oldest live one.
local function ring_trim(w)
  local header = redis.call('GETRANGE', w.key, 0, HEADER - 1)
  local cutoff = math.floor((now - w.length) / w.step) -- steps at or below cutoff - 1 have left
  local current = math.floor(now / w.step)
  if #header < HEADER then
    w.used, w.lo, w.hi, w.fresh = 0, current, current, true
    return
  end
  local sum, lo, hi = struct.unpack('<ddd', header)
  local lo0 = lo
  if cutoff > hi then
    sum, lo = 0, current
  else
    local live = ring_scan(w, lo, hi - lo + 1, function(s, wt)
      if s < cutoff then
        sum = sum - wt
        return false
      end
      return true
    end)
    -- no live weight left (cancels can empty steps): the ring starts again at the current step, so
    -- the next entry is neither recorded a step late nor reported as leaving from an empty step
    lo = live or current
  end
  if sum < 0 then
    sum = 0
  end
  w.used, w.lo, w.hi = sum, lo, hi
  if lo ~= lo0 then
    w.dirty = true
  end
end

local function ring_save_header(w)
  redis.call('SETRANGE', w.key, 0, struct.pack('<ddd', w.used, w.lo, w.hi))
end

-- Adds `amount` (may be negative, never below what the step holds) to step s; returns what it added.
local function ring_add(w, s, amount)
  local offset = ring_offset(w, s)
  local bytes = redis.call('GETRANGE', w.key, offset, offset + SLOT - 1)
  local held = 0
  if #bytes == SLOT then
    local step, wt = struct.unpack('<dd', bytes)
    if step == s then
      held = wt
    end
  end
  if held + amount < 0 then
    amount = -held
  end
  redis.call('SETRANGE', w.key, offset, struct.pack('<dd', s, held + amount))
  w.used = w.used + amount
  if s > w.hi then
    w.hi = s
  end
  if s < w.lo then
    w.lo = s
  end
  return amount
end

local function ring_create(w)
  -- Allocate the whole ring at once: growing it write by write would over-allocate up to twice.
  redis.call('SET', w.key, string.rep('\0', HEADER + SLOT * w.slots))
end

local function ring_expire(w)
  redis.call('PEXPIRE', w.key, int((w.hi + 1) * w.step + w.length - now + 1000))
end

---------------------------------------------------------------------------------------------------

local function trim(w)
  if w.kind == 'log' then
    log_trim(w)
  elseif w.kind == 'weighted' then
    weighted_trim(w)
  else
    ring_trim(w)
  end
end

-- ms until the oldest counted entry leaves the window, 0 when empty.
local function reset_of(w)
  if w.used <= 0 then
    return 0
  end
  if w.kind == 'ring' then
    return (w.lo + 1) * w.step + w.length - now
  end
  if w.oldest == nil then
    return 0
  end
  return math.max(0, w.oldest + w.length - now)
end

local function state(result)
  for i = 1, n do
    result[#result + 1] = windows[i].used
    result[#result + 1] = reset_of(windows[i])
  end
  return result
end

if op == PEEK then
  for i = 1, n do
    local w = windows[i]
    trim(w)
    if w.kind == 'ring' and w.dirty then
      ring_save_header(w)
    end
  end
  return state({1, now, -1, 0})
end

if op == RESERVE then
  local status, index, retry = 1, -1, 0
  for i = 1, n do
    local w = windows[i]
    trim(w)
    if status == 1 then
      local need = weight(w, tokens)
      if need > w.limit then
        status, index = 2, i - 1
      else
        if need < 1 then
          need = 1
        end
        if w.used + need > w.limit then
          -- room returns when enough weight has left: the entry that frees the excess leaves
          local excess = w.used + need - w.limit
          local leaves
          if w.kind == 'log' then
            leaves = log_freeing(w, excess) + w.length
          elseif w.kind == 'weighted' then
            local t = weighted_freeing(w, excess)
            leaves = t and (t + w.length) or (now + w.length)
          else
            local freed = 0
            local s = ring_scan(w, w.lo, w.hi - w.lo + 1, function(_, wt)
              freed = freed + wt
              return freed >= excess
            end)
            leaves = s and ((s + 1) * w.step + w.length) or (now + w.length)
          end
          status, index, retry = 0, i - 1, math.max(1, leaves - now)
        end
      end
    end
  end
  if status ~= 1 then
    for i = 1, n do
      local w = windows[i]
      if w.kind == 'ring' and w.dirty then
        ring_save_header(w)
      end
    end
    return state({status, now, index, retry})
  end
  local score = int(now)
  for i = 1, n do
    local w = windows[i]
    local amount = weight(w, tokens)
    if w.kind == 'log' then
      -- an entry id names one entry: recording it again changes nothing
      w.used = w.used + redis.call('ZADD', w.key, 'NX', score, id)
      redis.call('EXPIRE', w.key, math.ceil(w.length / 1000) + 1)
      if w.oldest == nil then
        w.oldest = now
      end
    elseif w.kind == 'weighted' then
      if amount > 0 and redis.call('ZADD', w.key, 'NX', score, int(amount) .. ':' .. id) == 1 then
        redis.call('INCRBY', w.sumkey, int(amount))
        weighted_expire(w)
        w.used = w.used + amount
        if w.oldest == nil then
          w.oldest = now
        end
      end
    else
      if amount > 0 then
        if w.fresh then
          ring_create(w)
        end
        ring_add(w, math.max(math.floor(now / w.step), w.lo), amount)
        ring_save_header(w)
        ring_expire(w)
      elseif w.dirty then
        ring_save_header(w)
      end
    end
  end
  return state({1, now, -1, 0})
end

-- settle
local reserved = tonumber(ARGV[5])
local actual = tonumber(ARGV[6])
if reserved == nil or actual == nil then
  return redis.error_reply('ERR sliding_window: bad settle arguments')
end
local cancel = actual < 0
for i = 1, n do
  local w = windows[i]
  local estimate = weight(w, tokens)
  local target = cancel and 0 or weight(w, actual)
  if w.kind == 'log' then
    if cancel then
      redis.call('ZREM', w.key, id)
    end
  elseif w.kind == 'weighted' then
    if target < estimate and estimate > 0 then
      if redis.call('ZREM', w.key, int(estimate) .. ':' .. id) == 1 then
        if target > 0 then
          redis.call('ZADD', w.key, int(reserved), int(target) .. ':' .. id)
        end
        local left = redis.call('DECRBY', w.sumkey, int(estimate - target))
        if left <= 0 then
          redis.call('DEL', w.sumkey)
        end
      end
    elseif target > estimate then
      redis.call('ZADD', w.key, int(now), int(target - estimate) .. ':' .. id .. '+')
      redis.call('INCRBY', w.sumkey, int(target - estimate))
      weighted_expire(w)
    end
  elseif target ~= estimate then
    trim(w)
    if target < estimate then
      local s = math.floor(reserved / w.step)
      if not w.fresh and s >= w.lo and s <= w.hi then
        ring_add(w, s, target - estimate)
        ring_save_header(w)
      elseif w.dirty then
        ring_save_header(w)
      end
    else
      if w.fresh then
        ring_create(w)
      end
      ring_add(w, math.max(math.floor(now / w.step), w.lo), target - estimate)
      ring_save_header(w)
      ring_expire(w)
    end
  end
end
return {1}
