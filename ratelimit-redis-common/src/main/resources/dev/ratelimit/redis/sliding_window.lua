#!lua flags=
--[[
sliding_window.lua: reserve, settle or peek one request in sliding-window logs, all windows at once,
all or nothing, in one atomic step of Redis.

KEYS          every window's key(s), in evaluation order (scope by scope, each scope's windows
              shortest first), all in one hash slot in cluster mode:
                exact requests  one sorted set: score = time in epoch ms, member = entry id
                exact amounts   two keys: a sorted set of '<amount>:<entry id>' members ('+' appended
                                for an overrun charged when settling), and the sum of their amounts
                precision       one string: a ring of steps (see the precision section below)
              then, when a settlement is marked (ARGV[5] below), the scope's set of settled entry
              ids (scored by when their mark lapses)
              then, when the request takes or releases a lease, the lease's sorted set (entry ids
              scored by the end of their lease), in the slot of the scope holding it
ARGV[1]       'r' reserve, 's' settle, 'p' peek (every window's state, nothing recorded);
              'l' renew a lease, 'c' count leases (KEYS[1] the lease set, no windows)
ARGV[2]       now in epoch milliseconds, or '' (empty) to take the server's TIME
ARGV[3]       the entry id: unique to the reservation among all callers
ARGV[4]       reserve: the lease's cap, '' for no lease; settle: the reservation's time, as its
              reserve call returned it, or '' with a cancel whose reservation may never have been
              recorded (its reply was lost): the cancel then applies only when an exact window holds
              the entry, at that entry's time, and otherwise only releases the lease
ARGV[5]       reserve and renew: the lease in ms, '' for none; settle: '1' to cancel, '0' to commit,
              either followed by ':<ms>' to mark the settlement in the settled set for that long:
              while marked, settling the same entry id again (a retry, or a commit after a cancel)
              changes nothing
ARGV[6 + s(i-1)] ..
              window i, s = 4 arguments each (5 to settle): length in ms, limit, amount, precision
              (see below), and to settle the amount it settles to. amount is '' in a request
              window (each request counts 1) and in any other window the amount of its unit (tokens,
              micro-dollars...) the request reserves; '' again for the settled amount of a request
              window. precision is the step in ms (0 exact) or, for a calendar window,
              'c<t0>:<t1>[:<t2>...]': ascending epoch ms starts of consecutive calendar periods,
              computed by the client in the window's zone (the script knows no zones); the period
              counted is the [t(j), t(j+1)) that holds now, an error when none does. With a time in
              ARGV[2] the client sends that period's two bounds; without one, the periods before,
              around and after its own clock's now, and the server's TIME picks among them (exact
              while the two clocks differ by less than a period: about a day at the shortest)

Reserve replies integers: {status, now, index, retry_ms, used_1, reset_1, ..., used_n, reset_n}
  status      1 allowed: recorded in every window (index -1, retry_ms 0);
              0 rejected by window index (0-based), the first where used + need > limit (need = 1
                in request windows, max(amount, 1) in others); retry_ms is the time until enough
                leaves it for the same request to fit; nothing is recorded;
              2 too large: the request alone needs more than window index's limit (retry_ms 0);
                nothing is recorded;
              3 lease refused: every window has room but the lease's cap is held (index -1,
                retry_ms 0; used_i and reset_i without the request); nothing is recorded
  used_i      window i's sum (after recording when allowed); -1 when not evaluated
  reset_i     ms until window i's oldest entry leaves it (0 when empty; -1 when not evaluated)
Peek replies {1, now, -1, 0, used_1, reset_1, ...}. Settle replies {1}. Renew replies {1} when the
lease was held and is renewed, {0} otherwise; count replies {the leases held}.
]]

-- A calendar window is an exact window (kinds 0 and 1 below) whose entries count from its period's
-- start instead of for a length: an entry recorded before the start has left (trimmed like one at or
-- before now - length), and every entry leaves at the period's end, where retries, resets and the
-- key's expiry point. One log per window, trimmed at the period start: the key is the same in every
-- period, so a call that takes the server's TIME names it before the time is known. A settlement
-- counts in its reservation's period: an overrun is scored at the reservation's time, and none is
-- charged once that period has ended.

-- What the calls do beyond their replies:
-- * Once a window rejects, a later window longer than it is left alone (no command runs on its keys)
--   and reported as not evaluated.
-- * A lease is taken only with an allowed reservation: after every window, before recording.
-- * A cancel removes the request from request windows and its amount from the others; a commit
--   replaces each other window's amount by the settled one (a refund while the entry is in the
--   window, an overrun charged at now, never rejected); an entry that has left its window is left
--   alone. Settling releases the lease named last among KEYS (ZREM by entry id: a second release
--   frees nothing).
-- * A marked settlement is applied once: the first settlement of an entry id records the id in the
--   scope's settled set; any later one within the mark changes nothing (a retry after a reply was
--   lost, a commit after a cancel). Unmarked settlements of request windows are idempotent as they
--   are (ZREM), and so are refunds of exact amounts (by member); overruns and precision windows are
--   not, so the client marks every settlement that touches a window of an amount.
-- * A renewal extends a held lease to now + ARGV[5]; a released or passed lease is not brought back.
--   A lease whose end has passed (end <= now) is dropped by the next call on its set; the set
--   expires a second after its latest lease ends.

-- No flags on the #!lua line (Redis 7.0 or later) declares a script that writes: Redis checks
-- maxmemory before it starts and refuses it under OOM, instead of letting its first write (a
-- removal, allowed under OOM) open the way for the rest.
-- Numbers go to redis.call as integer text, fmt('%d', x), and constants as strings ('0'): Redis
-- formats a Lua number argument with '%.17g', several times the cost of '%d'.
local fmt = string.format
local op = ARGV[1]
local now
if ARGV[2] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end
-- leases: renew ('l') and count ('c') touch the lease set alone
if op == 'l' or op == 'c' then
  local key = KEYS[1]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', now))
  if op == 'c' then
    return {redis.call('ZCARD', key)}
  end
  local ttl = tonumber(ARGV[5])
  -- XX INCR 0 answers nil (false) for a member not held: a released or passed lease stays gone
  if ttl == nil or not redis.call('ZADD', key, 'XX', 'INCR', '0', ARGV[3]) then
    return {0}
  end
  redis.call('ZADD', key, 'XX', fmt('%d', now + ttl), ARGV[3])
  redis.call('EXPIRE', key, fmt('%d', math.ceil(ttl / 1000) + 1), 'GT')
  return {1}
end
local stride = op == 's' and 5 or 4
local n = (#ARGV - 5) / stride
if now == nil or n < 0 or n ~= math.floor(n) or (op ~= 'r' and op ~= 's' and op ~= 'p') then
  return redis.error_reply('ERR sliding_window: bad arguments')
end
local id = ARGV[3]

-- A reservation that takes a lease names its set last among KEYS, its cap in ARGV[4] and its lease
-- in ARGV[5]; a settlement that releases one names the set last. lease_full drops the leases that
-- have passed and tells whether the cap is held; lease_take records the request's lease.
local lease_key, lease_full, lease_take = false, nil, nil
if op == 'r' and ARGV[4] ~= '' then
  lease_key = KEYS[#KEYS]
  local cap, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
  if cap == nil or ttl == nil then
    return redis.error_reply('ERR sliding_window: bad lease arguments')
  end
  local held = 0
  lease_full = function()
    redis.call('ZREMRANGEBYSCORE', lease_key, '-inf', fmt('%d', now))
    held = redis.call('ZCARD', lease_key)
    return held >= cap
  end
  lease_take = function()
    redis.call('ZADD', lease_key, fmt('%d', now + ttl), id)
    -- a new set has no expiry for GT to compare with; a held one keeps its latest lease's
    if held == 0 then
      redis.call('EXPIRE', lease_key, fmt('%d', math.ceil(ttl / 1000) + 1))
    else
      redis.call('EXPIRE', lease_key, fmt('%d', math.ceil(ttl / 1000) + 1), 'GT')
    end
  end
end


-- The common case, a reservation in exact request windows only, runs here without the general
-- machinery below (no tables per window, no helpers): one sorted set per window, entry ids scored
-- by time, counted by ZCARD. An entry scored exactly now - length has left its window. The general
-- path's exact request windows (trim, and the reservation below) do the same with the same commands.
if op == 'r' and #KEYS == n + (lease_key and 1 or 0) then
  local simple = true
  for i = 1, n do
    local a = 1 + 4 * i
    if ARGV[a + 3] ~= '' or ARGV[a + 4] ~= '0' then
      simple = false
      break
    end
  end
  if simple then
    -- sized for one or two windows up front (growing a table rehashes it)
    local result = {1, now, -1, 0, 0, 0, 0, 0}
    local lengths = {}
    -- once a window rejects (status ~= 1), only windows no longer than it (bound) are read
    local status, bound = 1, 0
    for i = 1, n do
      local a = 1 + 4 * i
      local length = tonumber(ARGV[a + 1])
      lengths[i] = length
      if status == 1 or length <= bound then
        local key = KEYS[i]
        redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', now - length))
        local used = redis.call('ZCARD', key)
        local reset = 0
        if used > 0 then
          local oldest = tonumber(redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')[2])
          reset = math.max(0, oldest + length - now)
          if status == 1 then
            local limit = tonumber(ARGV[a + 2])
            if limit < 1 then
              status, bound = 2, length
              result[1], result[3] = 2, i - 1
            elseif used + 1 > limit then
              -- room returns when the entry that frees the excess leaves (the oldest when one must)
              local excess = used + 1 - limit
              local leaves = oldest
              if excess > 1 then
                local at = fmt('%d', excess - 1)
                leaves = tonumber(redis.call('ZRANGE', key, at, at, 'WITHSCORES')[2])
              end
              status, bound = 0, length
              result[1], result[3], result[4] = 0, i - 1, math.max(1, leaves + length - now)
            end
          end
        elseif status == 1 and tonumber(ARGV[a + 2]) < 1 then
          status, bound = 2, length
          result[1], result[3] = 2, i - 1
        end
        result[3 + 2 * i] = used
        result[4 + 2 * i] = reset
      else
        result[3 + 2 * i] = -1
        result[4 + 2 * i] = -1
      end
    end
    if status == 1 and lease_key and lease_full() then
      status, result[1] = 3, 3
    end
    if status == 1 then
      local score = fmt('%d', now)
      for i = 1, n do
        local key, length = KEYS[i], lengths[i]
        -- an entry id names one entry: recording it again changes nothing
        local used = result[3 + 2 * i] + redis.call('ZADD', key, 'NX', score, id)
        redis.call('EXPIRE', key, fmt('%d', math.ceil(length / 1000) + 1)) -- leaves at now + length
        result[3 + 2 * i] = used
        if used > 0 and result[4 + 2 * i] == 0 then
          result[4 + 2 * i] = length -- the new entry is the oldest
        end
      end
      if lease_key then
        lease_take()
      end
    end
    if n == 1 then
      result[7], result[8] = nil, nil
    elseif n == 0 then -- a lease alone: a concurrency cap over a user whose windows are all in shadow
      result[5], result[6], result[7], result[8] = nil, nil, nil, nil
    end
    return result
  end
end

-- A key expires one second after the last entry it holds leaves its window, so idle users cost no
-- memory: every EXPIRE and SET EX below sets ceil((leaves - now) / 1000) + 1 seconds (never early),
-- written out at each place (a shared function would be allocated on every call).

-- Window i's parameters and key(s). kind: 0 exact requests, 1 exact amounts, 2 precision (ring).
-- amount: what the request reserves in the window (1 in a request window); settled: what it
-- settles to (settle only).
local windows = {}
local k = 1
local weighted, rings = false, false
-- windows of one unit carry the same amount text: parsed once (Lua interns strings, so the
-- comparison is cheap) and checked when parsed
local last_text, last_amount = '', 1
for i = 1, n do
  local a = 5 + stride * (i - 1)
  local step = tonumber(ARGV[a + 4])
  local cal, start, stop = false, 0, 0
  if step == nil then
    -- a calendar window: 'c' and ascending period starts; the period counted is the one holding now
    local spec, from, to = ARGV[a + 4], nil, nil
    if string.sub(spec, 1, 1) == 'c' then
      local previous = nil
      for bound in string.gmatch(spec, '%d+') do
        bound = tonumber(bound)
        if previous and previous <= now and now < bound then
          from, to = previous, bound
        end
        previous = bound
      end
    end
    if not from then
      return redis.error_reply('ERR sliding_window: no calendar period of window ' .. i .. ' holds now')
    end
    cal, step, start, stop = true, 0, from, to
  end
  local text = ARGV[a + 3]
  local counts = text ~= ''
  local amount = 1
  if counts then
    if text ~= last_text then
      last_amount = tonumber(text)
      if last_amount == nil or last_amount < 0 then
        return redis.error_reply('ERR sliding_window: bad amount for window ' .. i)
      end
      last_text = text
    end
    amount = last_amount
  end
  local w = {
    key = KEYS[k], length = tonumber(ARGV[a + 1]), limit = tonumber(ARGV[a + 2]), counts = counts,
    amount = amount, step = step, kind = 0, used = 0, oldest = false, sumkey = false,
    cal = cal, start = start, stop = stop,
  }
  -- entries at or before the cutoff have left the window
  if cal then
    w.cutoff = start - 1
  else
    w.cutoff = now - w.length
  end
  if stride == 5 then
    local settled = 1
    if counts then
      settled = tonumber(ARGV[a + 5])
      if settled == nil or settled < 0 then
        return redis.error_reply('ERR sliding_window: bad settled amount for window ' .. i)
      end
    end
    w.settled = settled
  end
  if step > 0 then
    w.kind = 2
    rings = true
  elseif counts then
    w.kind = 1
    w.sumkey = KEYS[k + 1]
    weighted = true
    k = k + 1
  end
  k = k + 1
  windows[i] = w
end
-- a settled set (a marked settlement), then a lease set come after the windows' keys: the lease
-- taken by a reservation, released by a settlement
local cancel, mark_key, mark_ms = false, false, nil
if op == 's' then
  local flag, ms = string.match(ARGV[5], '^([01]):?(%d*)$')
  if flag == nil or (tonumber(ARGV[4]) == nil and not (ARGV[4] == '' and flag == '1')) then
    return redis.error_reply('ERR sliding_window: bad settle arguments')
  end
  cancel = flag == '1'
  if ms ~= '' then
    mark_key, mark_ms = KEYS[k], tonumber(ms)
  end
  local after = k + (mark_key and 1 or 0)
  if #KEYS == after then
    lease_key = KEYS[after]
  end
elseif op == 'p' then
  lease_key = false
end
if k - 1 + (mark_key and 1 or 0) + (lease_key and 1 or 0) ~= #KEYS then
  return redis.error_reply('ERR sliding_window: expected ' .. (k - 1) .. ' keys, got ' .. #KEYS)
end

---------------------------------------------------------------------------------------------------
-- exact windows of an amount (tokens, micro-dollars...): one weighted member per reservation and a sum

local weighted_trim, weighted_save
if weighted then
  -- Drops the members that have left; the sum is written back by weighted_save (or with the next add).
  weighted_trim = function(w)
    local first = redis.call('ZRANGE', w.key, '0', '0', 'WITHSCORES')
    if #first == 0 then
      w.used = 0
      return
    end
    local cutoff = w.cutoff
    local sum = tonumber(redis.call('GET', w.sumkey) or '0')
    local oldest = tonumber(first[2])
    if oldest <= cutoff then
      local gone = redis.call('ZRANGEBYSCORE', w.key, '-inf', fmt('%d', cutoff))
      for j = 1, #gone do
        sum = sum - tonumber(string.match(gone[j], '^(%d+):'))
      end
      redis.call('ZREMRANGEBYSCORE', w.key, '-inf', fmt('%d', cutoff))
      if sum <= 0 then
        sum = 0
      end
      w.dirty = true
      oldest = false
      if sum > 0 then
        oldest = tonumber(redis.call('ZRANGE', w.key, '0', '0', 'WITHSCORES')[2])
      end
    end
    w.used = sum
    w.oldest = oldest
  end

  weighted_save = function(w)
    if w.dirty then
      if w.used <= 0 then
        redis.call('DEL', w.sumkey)
      else
        redis.call('SET', w.sumkey, fmt('%d', w.used), 'KEEPTTL')
      end
    end
  end
end

---------------------------------------------------------------------------------------------------
-- precision windows: a ring of steps in one string. A 24-byte header (sum, lowest live step, highest
-- recorded step; little-endian doubles), then one 16-byte slot per step (step number, weight), slot =
-- step mod slots. Entries within one step are one weighted entry recorded as if at the end of the
-- step, (step + 1) * precision, so it leaves the window at most one step late and never early.
-- A request counts 1, or its amount in a window of another unit. Memory is fixed by the window's
-- length and precision, not by traffic.

local HEADER, SLOT = 24, 16
local HEADER_LAST = '23' -- HEADER - 1, as text
local ring_walk, ring_trim, ring_add, ring_save_header, ring_create, ring_expire
if rings then
  -- Walks the live steps from step `first` (count slots, in step order, read 64 at a time after the
  -- first). With a cutoff: stops at the first live step at or above it, returning that step, its
  -- weight and the weight of the live steps below it. With an excess: stops where the weights seen
  -- reach it, returning that step. Returns nil when it finds none.
  ring_walk = function(w, first, count, cutoff, excess)
    local s, run, seen = first, 1, 0
    while count > 0 do
      local index = s % w.slots
      run = math.min(count, w.slots - index, run)
      local from = HEADER + SLOT * index
      local bytes = redis.call('GETRANGE', w.key, fmt('%d', from), fmt('%d', from + SLOT * run - 1))
      for j = 0, run - 1 do
        local at = 1 + SLOT * j
        if at + SLOT - 1 <= #bytes then
          local step, wt = struct.unpack('<dd', bytes, at)
          if step == s + j and wt > 0 then
            if cutoff then
              if step >= cutoff then
                return step, wt, seen
              end
              seen = seen + wt
            else
              seen = seen + wt
              if seen >= excess then
                return step
              end
            end
          end
        end
      end
      s = s + run
      count = count - run
      run = 64
    end
    return nil, 0, seen
  end

  -- Loads the ring, drops the steps that have left the window, and moves `lo` to the oldest live one;
  -- `held` is the weight of step lo.
  ring_trim = function(w)
    w.slots = math.ceil(w.length / w.step) + 1
    local header = redis.call('GETRANGE', w.key, '0', HEADER_LAST)
    local cutoff = math.floor((now - w.length) / w.step) -- steps at or below cutoff - 1 have left
    local current = math.floor(now / w.step)
    if #header < HEADER then
      w.used, w.lo, w.hi, w.held, w.fresh = 0, current, current, 0, true
      return
    end
    local sum, lo, hi = struct.unpack('<ddd', header)
    local lo0 = lo
    local held = 0
    if cutoff > hi then
      sum, lo = 0, current
    else
      local live, wt, dropped = ring_walk(w, lo, hi - lo + 1, cutoff)
      sum = sum - dropped
      -- no live weight left (cancels can empty steps): the ring starts again at the current step, so
      -- the next entry is neither recorded a step late nor reported as leaving from an empty step
      lo = live or current
      held = wt
    end
    if sum < 0 then
      sum = 0
    end
    w.used, w.lo, w.hi, w.held = sum, lo, hi, held
    if lo ~= lo0 then
      w.dirty = true
    end
  end

  ring_save_header = function(w)
    redis.call('SETRANGE', w.key, '0', struct.pack('<ddd', w.used, w.lo, w.hi))
  end

  -- Adds `amount` (may be negative, never below what the step holds) to step s; returns what it added.
  -- A step above hi has never been recorded (its slot holds an older step), and step lo's weight is
  -- known from the trim: only other steps are read.
  ring_add = function(w, s, amount)
    local offset = HEADER + SLOT * (s % w.slots)
    local held = 0
    if s == w.lo then
      held = w.held
    elseif s <= w.hi then
      local bytes = redis.call('GETRANGE', w.key, fmt('%d', offset), fmt('%d', offset + SLOT - 1))
      if #bytes == SLOT then
        local step, wt = struct.unpack('<dd', bytes)
        if step == s then
          held = wt
        end
      end
    end
    if held + amount < 0 then
      amount = -held
    end
    redis.call('SETRANGE', w.key, fmt('%d', offset), struct.pack('<dd', s, held + amount))
    w.used = w.used + amount
    if s > w.hi then
      w.hi = s
      w.moved = true
    end
    if s < w.lo then
      w.lo = s
    end
    if s == w.lo then
      w.held = held + amount
    end
    return amount
  end

  ring_create = function(w)
    -- Allocate the whole ring at once (a SETRANGE past the end of a missing key allocates exactly
    -- that length, zero-filled): growing it write by write would over-allocate up to twice.
    redis.call('SETRANGE', w.key, fmt('%d', HEADER + SLOT * w.slots - 1), '\0')
  end

  -- The expiry depends only on hi: it is set when the ring is created and whenever hi moves.
  ring_expire = function(w)
    -- the ring's newest step leaves at (hi + 1) * step + length
    redis.call('EXPIRE', w.key, fmt('%d', math.ceil(((w.hi + 1) * w.step + w.length - now) / 1000) + 1))
  end
end

---------------------------------------------------------------------------------------------------

-- Drops what has left window w and reads its use (and, for exact windows, its oldest entry).
local function trim(w)
  local kind = w.kind
  if kind == 0 then
    redis.call('ZREMRANGEBYSCORE', w.key, '-inf', fmt('%d', w.cutoff))
    local used = redis.call('ZCARD', w.key)
    w.used = used
    if used > 0 then
      w.oldest = tonumber(redis.call('ZRANGE', w.key, '0', '0', 'WITHSCORES')[2])
    end
  elseif kind == 1 then
    weighted_trim(w)
  else
    ring_trim(w)
  end
end

-- Writes back what a trim changed, for a call that records nothing in w.
local function save(w)
  if w.dirty then
    if w.kind == 2 then
      ring_save_header(w)
    elseif w.kind == 1 then
      weighted_save(w)
    end
  end
end

-- Reply: {status, now, index, retry} then each window's use and ms until its oldest entry leaves
-- (-1, -1 for a window not evaluated).
local function state(status, index, retry)
  local result = {status, now, index, retry}
  for i = 1, n do
    local w = windows[i]
    local used, reset = w.used, 0
    if w.skipped then
      used, reset = -1, -1
    elseif used > 0 then
      if w.kind == 2 then
        reset = (w.lo + 1) * w.step + w.length - now
      elseif w.cal then
        reset = w.stop - now
      elseif w.oldest then
        reset = math.max(0, w.oldest + w.length - now)
      end
    end
    result[4 + 2 * i - 1] = used
    result[4 + 2 * i] = reset
  end
  return result
end

if op == 'p' then
  for i = 1, n do
    local w = windows[i]
    trim(w)
    save(w)
  end
  return state(1, -1, 0)
end

if op == 'r' then
  -- once a window rejects (status ~= 1), only windows no longer than it (bound) are read
  local status, index, retry, bound = 1, -1, 0, 0
  for i = 1, n do
    local w = windows[i]
    if status ~= 1 and w.length > bound then
      w.skipped = true -- no command runs on its keys: save and state leave it alone
    else
      trim(w)
    end
    if status == 1 then
      local need = w.amount
      if need > w.limit then
        status, index, bound = 2, i - 1, w.length
      else
        if need < 1 then
          need = 1
        end
        if w.used + need > w.limit then
          -- room returns when enough weight has left: the entry that frees the excess leaves
          local excess = w.used + need - w.limit
          local leaves
          if w.cal then
            leaves = w.stop -- every entry of the period leaves at its end
          elseif w.kind == 0 then
            if excess == 1 then
              leaves = w.oldest + w.length
            else
              local at = fmt('%d', excess - 1)
              leaves = tonumber(redis.call('ZRANGE', w.key, at, at, 'WITHSCORES')[2]) + w.length
            end
          elseif w.kind == 1 then
            -- the member at which the running sum of weights, oldest first, reaches the excess
            -- (inline: a helper would be allocated on every call, and only a rejection needs it)
            leaves = now + w.length
            local freed, from = 0, 0
            while from >= 0 do
              local page = redis.call('ZRANGE', w.key, fmt('%d', from), fmt('%d', from + 63), 'WITHSCORES')
              from = #page == 0 and -1 or from + 64
              for j = 1, #page, 2 do
                freed = freed + tonumber(string.match(page[j], '^(%d+):'))
                if freed >= excess then
                  leaves, from = tonumber(page[j + 1]) + w.length, -1
                  break
                end
              end
            end
          else
            local s = ring_walk(w, w.lo, w.hi - w.lo + 1, nil, excess)
            leaves = s and ((s + 1) * w.step + w.length) or (now + w.length)
          end
          status, index, retry, bound = 0, i - 1, math.max(1, leaves - now), w.length
        end
      end
    end
  end
  if status == 1 and lease_key and lease_full() then
    status = 3
  end
  if status ~= 1 then
    for i = 1, n do
      save(windows[i])
    end
    return state(status, index, retry)
  end
  local score = fmt('%d', now)
  for i = 1, n do
    local w = windows[i]
    local kind = w.kind
    -- the entry leaves at now + length, or at the calendar period's end
    local leaves = w.cal and w.stop or now + w.length
    if kind == 0 then
      -- an entry id names one entry: recording it again changes nothing
      w.used = w.used + redis.call('ZADD', w.key, 'NX', score, id)
      redis.call('EXPIRE', w.key, fmt('%d', math.ceil((leaves - now) / 1000) + 1))
      if not w.oldest then
        w.oldest = now
      end
    elseif kind == 1 then
      local amount = w.amount
      if amount > 0 and redis.call('ZADD', w.key, 'NX', score, fmt('%d', amount) .. ':' .. id) == 1 then
        local seconds = fmt('%d', math.ceil((leaves - now) / 1000) + 1)
        w.used = w.used + amount
        redis.call('EXPIRE', w.key, seconds)
        redis.call('SET', w.sumkey, fmt('%d', w.used), 'EX', seconds)
        if not w.oldest then
          w.oldest = now
        end
      else
        weighted_save(w)
      end
    else
      local amount = w.amount
      if amount > 0 then
        if w.fresh then
          ring_create(w)
        end
        ring_add(w, math.max(math.floor(now / w.step), w.lo), amount)
        ring_save_header(w)
        if w.fresh or w.moved then
          ring_expire(w)
        end
      else
        save(w)
      end
    end
  end
  if lease_key then
    lease_take()
  end
  return state(1, -1, 0)
end

-- settle
local reserved = tonumber(ARGV[4])
if mark_key then
  redis.call('ZREMRANGEBYSCORE', mark_key, '-inf', fmt('%d', now))
  if redis.call('ZADD', mark_key, 'NX', fmt('%d', now + mark_ms), id) == 0 then
    return {1} -- settled before: a retry or a second settlement changes nothing
  end
  -- a new set has no expiry for GT to compare with; a held one keeps its latest mark's
  if redis.call('ZCARD', mark_key) == 1 then
    redis.call('EXPIRE', mark_key, fmt('%d', math.ceil(mark_ms / 1000) + 1))
  else
    redis.call('EXPIRE', mark_key, fmt('%d', math.ceil(mark_ms / 1000) + 1), 'GT')
  end
end
if reserved == nil then
  -- a cancel in doubt: the reservation counts only where an exact window holds its entry, whose
  -- score is the reservation's time (for the precision windows' step); found nowhere, it was never
  -- recorded (or has left every exact window) and only the lease is released. ZADD XX INCR 0 reads
  -- a member's score (nil when absent) and changes nothing, within the commands the ACL allows
  for i = 1, n do
    local w = windows[i]
    local score = false
    if w.kind == 0 then
      score = redis.call('ZADD', w.key, 'XX', 'INCR', '0', id)
    elseif w.kind == 1 and w.amount > 0 then
      score = redis.call('ZADD', w.key, 'XX', 'INCR', '0', fmt('%d', w.amount) .. ':' .. id)
    end
    if score then
      reserved = tonumber(score)
      break
    end
  end
  if reserved == nil then
    if lease_key then
      redis.call('ZREM', lease_key, id)
    end
    return {1}
  end
end
for i = 1, n do
  local w = windows[i]
  local estimate, target = w.amount, w.settled
  if cancel then
    target = 0
  end
  if w.kind == 0 then
    if cancel then
      redis.call('ZREM', w.key, id)
    end
  elseif w.kind == 1 then
    if target < estimate and estimate > 0 then
      if redis.call('ZREM', w.key, fmt('%d', estimate) .. ':' .. id) == 1 then
        if target > 0 then
          redis.call('ZADD', w.key, fmt('%d', reserved), fmt('%d', target) .. ':' .. id)
        end
        local left = redis.call('DECRBY', w.sumkey, fmt('%d', estimate - target))
        if left <= 0 then
          redis.call('DEL', w.sumkey)
        end
      end
    elseif target > estimate and not w.cal then
      local seconds = fmt('%d', math.ceil(w.length / 1000) + 1)
      redis.call('ZADD', w.key, fmt('%d', now), fmt('%d', target - estimate) .. ':' .. id .. '+')
      redis.call('INCRBY', w.sumkey, fmt('%d', target - estimate))
      redis.call('EXPIRE', w.key, seconds)
      redis.call('EXPIRE', w.sumkey, seconds)
    elseif target > estimate and reserved >= w.start then
      -- a calendar window charges the overrun in the reservation's period, while it lasts
      local seconds = fmt('%d', math.ceil((w.stop - now) / 1000) + 1)
      redis.call('ZADD', w.key, fmt('%d', reserved), fmt('%d', target - estimate) .. ':' .. id .. '+')
      redis.call('INCRBY', w.sumkey, fmt('%d', target - estimate))
      redis.call('EXPIRE', w.key, seconds)
      redis.call('EXPIRE', w.sumkey, seconds)
    end
  elseif target ~= estimate then
    trim(w)
    if target < estimate then
      local s = math.floor(reserved / w.step)
      if not w.fresh and s >= w.lo and s <= w.hi then
        ring_add(w, s, target - estimate)
        ring_save_header(w)
      else
        save(w)
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
if lease_key then
  redis.call('ZREM', lease_key, id) -- by entry id: a second release frees nothing
end
return {1}
