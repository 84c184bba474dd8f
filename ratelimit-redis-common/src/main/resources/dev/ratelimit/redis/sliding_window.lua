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
              'l' renew a lease, 'c' count leases (KEYS[1] the lease set, no windows);
              'x' exchange budget leases: return one and take the next (see below)
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
              while the two clocks differ by less than a period: about a day at the shortest).
              A budget lease's window (a slice of a shared budget one instance spends locally) is
              exact and sliding, precision 'l<D>' in a window of an amount and 'l<D>:<count>' in a
              request window: to reserve, the call records the lease there stamped at its end, now +
              D (D at most 1000 ms), so it counts from now until now + D + length; in a request window
              as <count> members (0 to 1000), the entry id then '<id>#2' ... '<id>#<count>', and the
              window needs room for all of them. To settle (return the lease, with ARGV[4] its stamp),
              the settled amount of a request window is the count kept: the members beyond it go; a
              window of an amount settles as any other (the kept part stays at the stamp). A store
              keeps every key at least a second past now + length (see EXPIRE below), so a later
              call's expiry never drops a lease stamped at most a second ahead
Exchange ('x', a budget lease returned and the next taken in one call, its windows all lease
              windows, KEYS the windows' keys then the budget's settled set): ARGV[3] is the new
              lease's entry id, ARGV[4] '<stamp>:<entry id>' of the lease returned, ARGV[5] how long
              its return is marked (ms); each window has s = 6 arguments: length, limit, amount and
              precision of the new lease as to reserve, then the returned lease's weight there (its
              count in a request window) and what it keeps of it. The return is applied first, as a
              marked settle of it would be (nothing when it is marked already: returned before), then
              the new lease is reserved against what is left; the reply is the reserve's

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
-- * A reservation records a ring in its newest step as it reads it (nothing else to do there), and
--   takes the request back out of that step when a later window or the lease cap rejects, or a later
--   ring window's numbers do not parse: within the one atomic step, so the request leaves the ring as
--   it found it.
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
-- Redis's and struct's functions as locals: a global's field costs two table reads at every call
local call, spack, sunpack = redis.call, struct.pack, struct.unpack
local op = ARGV[1]
local now
if ARGV[2] == '' then
  local time = call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end
-- leases: renew ('l') and count ('c') touch the lease set alone
if op == 'l' or op == 'c' then
  local key = KEYS[1]
  call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', now))
  if op == 'c' then
    return {call('ZCARD', key)}
  end
  local ttl = tonumber(ARGV[5])
  -- XX INCR 0 answers nil (false) for a member not held: a released or passed lease stays gone
  if ttl == nil or not call('ZADD', key, 'XX', 'INCR', '0', ARGV[3]) then
    return {0}
  end
  call('ZADD', key, 'XX', fmt('%d', now + ttl), ARGV[3])
  call('EXPIRE', key, fmt('%d', math.ceil(ttl / 1000) + 1), 'GT')
  return {1}
end
local stride = op == 's' and 5 or op == 'x' and 6 or 4
local n = (#ARGV - 5) / stride
if now == nil or n < 0 or n ~= math.floor(n) or (op ~= 'r' and op ~= 's' and op ~= 'p' and op ~= 'x') then
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
    call('ZREMRANGEBYSCORE', lease_key, '-inf', fmt('%d', now))
    held = call('ZCARD', lease_key)
    return held >= cap
  end
  lease_take = function()
    call('ZADD', lease_key, fmt('%d', now + ttl), id)
    -- a new set has no expiry for GT to compare with; a held one keeps its latest lease's
    if held == 0 then
      call('EXPIRE', lease_key, fmt('%d', math.ceil(ttl / 1000) + 1))
    else
      call('EXPIRE', lease_key, fmt('%d', math.ceil(ttl / 1000) + 1), 'GT')
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
        call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', now - length))
        local used = call('ZCARD', key)
        local reset = 0
        if used > 0 then
          local oldest = tonumber(call('ZRANGE', key, '0', '0', 'WITHSCORES')[2])
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
                leaves = tonumber(call('ZRANGE', key, at, at, 'WITHSCORES')[2])
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
        local used = result[3 + 2 * i] + call('ZADD', key, 'NX', score, id)
        call('EXPIRE', key, fmt('%d', math.ceil(length / 1000) + 1)) -- leaves at now + length
        result[3 + 2 * i] = used
        if used > 0 and (result[4 + 2 * i] == 0 or result[4 + 2 * i] > length) then
          result[4 + 2 * i] = length -- the new entry is the oldest (a lease's may be stamped ahead)
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
-- memory: every EXPIRE and SET EX below sets ceil((leaves - now) / 1000) + 1 seconds (never early).

-- What a call costs Redis is mostly its call()s, then tonumber() and string.format() (each a
-- sizeable fraction of a command): numbers are parsed once per distinct argument text (windows of one
-- length, limit, unit or precision share them). Integer texts are formatted each time: most values
-- (the time, a sum, an expiry) occur once a call, and remembering them cost more than it saved
-- (callgrind: requests + tokens exact 238,487 -> 230,866 instructions without it; (a), (b) unchanged).
local nums = {}
-- the number an argument spells, or false
local function num(text)
  local v = nums[text]
  if v == nil then
    v = tonumber(text) or false
    nums[text] = v
  end
  return v
end
-- x as integer text, for redis.call
local function int(x)
  return fmt('%d', x)
end

-- Window i's parameters, key(s) and state, one positional table per window (a table built whole
-- costs a fraction of one filled by name), indexed by literal numbers (named locals would be upvalues
-- of every function below, which costs each call more than the rest of a window's bookkeeping):
--  [1] key              [2] length (ms)     [3] limit          [4] amount (1 in a request window)
--  [5] step (0 exact)   [6] kind: 0 exact requests, 1 exact amounts, 2 precision (ring)
--  [7] used             [8] oldest entry's time (exact windows), false when none read; a ring's current step
--  [9] sum key (exact amounts)              [10] calendar window  [11] period start  [12] period end
--  [13] cutoff: entries at or before it have left   [14] settled amount (settle only)
--  [15] dirty: a trim changed what save writes      [16] skipped: not evaluated after a rejection
--  rings: [17] slots  [18] lo  [19] hi  [20] weight of step lo, false when not read  [21] fresh
--  [22] hi moved  [23] weight of step hi  [24] the lowest step still in the window
-- sized up front (for 4, 8 or 16 windows): a table filled key by key is rehashed each time it doubles
local windows
if n <= 4 then
  windows = {false, false, false, false}
elseif n <= 8 then
  windows = {false, false, false, false, false, false, false, false}
else
  windows = {
    false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false,
  }
end
local k = 1
local weighted, rings = false, false
local argv, keys = ARGV, KEYS -- (locals: a global is a table read)
-- a reservation's rings may go without a table (see the reserve below): false in windows until then
local lean = op == 'r'
for i = 1, n do
  local a = 5 + stride * (i - 1)
  -- parsed once per distinct text (inline: the lookup alone is cheaper than a call)
  local text = argv[a + 4]
  local step = 0 -- an exact window, the usual case, needs no lookup
  if text ~= '0' then
    step = nums[text]
    if step == nil then
      step = num(text)
    end
  end
  if lean and step and step > 0 then
    -- a ring of a reservation: its table is made when it is reserved, and only when it must be (the
    -- reserve below records a ring in its newest step without one); its other numbers are parsed and
    -- checked there, and a bad one takes back what the reserve recorded before it
    windows[i] = false
    rings = true
    k = k + 1
  else
    local cal, start, stop = false, 0, 0
    local ahead, count = false, false
    if not step then
      local d, c = string.match(text, '^l(%d+):?(%d*)$')
      if d then
        -- a budget lease: an exact window whose entry is stamped d ms ahead (see the header)
        ahead, step = tonumber(d), 0
        count = c ~= '' and tonumber(c) or false
      end
    end
    if not step then
      -- a calendar window: 'c' and ascending period starts; the period counted is the one holding now
      local spec, from, to = text, nil, nil
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
    text = argv[a + 3]
    local amount = 1
    local counts = text ~= ''
    if counts then
      amount = nums[text]
      if amount == nil then
        amount = num(text)
      end
      if not amount or amount < 0 then
        return redis.error_reply('ERR sliding_window: bad amount for window ' .. i)
      end
    end
    text = argv[a + 1]
    local length = nums[text]
    if length == nil then
      length = num(text)
    end
    text = argv[a + 2]
    local limit = nums[text]
    if limit == nil then
      limit = num(text)
    end
    if ahead and ahead > 1000 then
      -- every key outlives now + length by a second: a lease stamped further ahead could be dropped
      return redis.error_reply('ERR sliding_window: a lease of window ' .. i .. ' is longer than 1000 ms')
    end
    if count then
      if counts or count > 1000 then
        return redis.error_reply('ERR sliding_window: bad lease count for window ' .. i)
      end
      amount = count -- a lease of `count` requests: that many members in a request window
    end
    if op == 'x' and not ahead then
      return redis.error_reply('ERR sliding_window: window ' .. i .. ' of an exchange is not a lease window')
    end
    local settled = 1
    if stride == 5 and (counts or count) then
      settled = num(argv[a + 5])
      if not settled or settled < 0 then
        return redis.error_reply('ERR sliding_window: bad settled amount for window ' .. i)
      end
    end
    local cutoff = cal and start - 1 or now - length
    if step > 0 then
      rings = true
      windows[i] = {
        keys[k], length, limit, amount, step, 2, 0, false, false, cal, start, stop, cutoff, settled,
        false, false, 0, 0, 0, false, false, false, 0, 0,
      }
    elseif counts then
      weighted = true
      windows[i] = {
        keys[k], length, limit, amount, step, 1, 0, false, keys[k + 1], cal, start, stop, cutoff, settled,
        false, false,
      }
      k = k + 1
    else
      windows[i] = {
        keys[k], length, limit, amount, step, 0, 0, false, false, cal, start, stop, cutoff, settled,
        false, false,
      }
    end
    k = k + 1
    if ahead then
      windows[i][25], windows[i][26] = ahead, count
    end
    if op == 'x' then
      -- the returned lease's weight and what it keeps
      local weight, kept = num(argv[a + 5]), num(argv[a + 6])
      if not weight or not kept or weight < 0 or kept < 0 or (count and weight > 1000) then
        return redis.error_reply('ERR sliding_window: bad returned lease for window ' .. i)
      end
      windows[i][27], windows[i][14] = weight, math.min(kept, weight)
    end
  end
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
elseif op == 'x' then
  mark_key, mark_ms = KEYS[k], tonumber(ARGV[5])
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
  -- The oldest members are read a page at a time, their weights subtracted until one still counts,
  -- which is the new oldest: one read in the usual case, where at most one member has left.
  weighted_trim = function(w)
    local key = w[1]
    -- (ZRANGEBYSCORE rather than ZRANGE 0 1: the same page, and the ACL rule names the command for
    -- the windows of an amount, which alone run it)
    local page = call('ZRANGEBYSCORE', key, '-inf', '+inf', 'WITHSCORES', 'LIMIT', '0', '2')
    if #page == 0 then
      w[7] = 0
      return
    end
    local cutoff = w[13]
    local sum = tonumber(call('GET', w[9]) or '0')
    local oldest = tonumber(page[2])
    if oldest <= cutoff then
      local gone, from = 0, 0
      oldest = false
      while true do
        for j = 1, #page, 2 do
          local score = tonumber(page[j + 1])
          if score > cutoff then
            oldest = score
            break
          end
          gone = gone + tonumber(string.match(page[j], '^(%d+):'))
        end
        if oldest or #page < (from == 0 and 4 or 128) then
          break
        end
        from = from + (from == 0 and 2 or 64)
        page = call('ZRANGE', key, int(from), int(from + 63), 'WITHSCORES')
      end
      call('ZREMRANGEBYSCORE', key, '-inf', int(cutoff))
      sum = sum - gone
      if sum <= 0 then
        sum, oldest = 0, false
      end
      w[15] = true
    end
    w[7] = sum
    w[8] = oldest
  end

  weighted_save = function(w)
    if w[15] then
      if w[7] <= 0 then
        call('DEL', w[9])
      else
        call('SET', w[9], int(w[7]), 'KEEPTTL')
      end
    end
  end
end

---------------------------------------------------------------------------------------------------
-- precision windows: a ring of steps in one string. A 40-byte header (sum, lowest live step lo,
-- highest recorded step hi, -2, base: the weight of the steps below hi; little-endian doubles), then
-- one 16-byte slot per step (step number, weight), slot = step mod slots. Step hi's weight, sum - base,
-- lives in the header alone (its slot is written when hi moves on), so a reservation in the newest
-- step reads the header and writes its first 8 bytes, the sum, only.
-- Entries within one step are one weighted entry recorded as if at the end of the step,
-- (step + 1) * precision, so it leaves the window at most one step late and never early. A request
-- counts 1, or its amount in a window of another unit. Memory is fixed by the window's length and
-- precision, not by traffic. The lowest live step holds weight (a cancel that empties it moves it on),
-- unless the ring holds none.
-- Rings of the layouts before are read as they were: a 40-byte header (sum, lo, hi, -1, the weight
-- of step hi), rewritten in this layout by the next call that saves it; and a 24-byte header (sum,
-- lo, hi; every step's weight in its slot; bytes 24-31 are slot 0's step, never negative), rewritten
-- whole when first read.

local HEADER, SLOT = 40, 16
local HEADER_LAST = '39' -- HEADER - 1, as text
local ring_walk, ring_trim, ring_add, ring_save_header, ring_create, ring_expire, ring_advance
if rings then
  -- Walks the live steps from step `first` (count slots, in step order, read 64 at a time after the
  -- first), step hi's weight taken from the header. With a cutoff: stops at the first live step at or
  -- above it, returning that step, its weight and the weight of the live steps below it. With an
  -- excess: stops where the weights seen reach it, returning that step. Returns nil when it finds none.
  ring_walk = function(w, first, count, cutoff, excess)
    local s, run, seen = first, 1, 0
    local slots, hi = w[17], w[19]
    while count > 0 do
      local index = s % slots
      run = math.min(count, slots - index, run)
      local bytes = ''
      if not (run == 1 and s == hi) then
        local from = HEADER + SLOT * index
        bytes = call('GETRANGE', w[1], int(from), int(from + SLOT * run - 1))
      end
      for j = 0, run - 1 do
        local at = 1 + SLOT * j
        local step, wt = s + j, 0
        if step == hi then
          wt = w[23]
        elseif at + SLOT - 1 <= #bytes then
          local found
          found, wt = sunpack('<dd', bytes, at)
          if found ~= step then
            wt = 0
          end
        end
        if wt > 0 then
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
      s = s + run
      count = count - run
      run = 64
    end
    return nil, 0, seen
  end

  -- Loads the ring's header, drops the steps that have left the window, and moves `lo` to the oldest
  -- live one; `held` is the weight of step lo, false when not read (nothing left the window).
  -- (header: the one the reserve read already, if it did)
  ring_trim = function(w, header)
    local key, step, length = w[1], w[5], w[2]
    header = header or call('GETRANGE', key, '0', HEADER_LAST)
    -- floors and ceilings by arithmetic (x - x % 1 is floor(x)): a math.* call costs several times more
    local q = length / step
    local slots = q - q % 1 + 1 -- ceil(length / step) + 1
    if slots - 1 < q then
      slots = slots + 1
    end
    w[17] = slots
    q = (now - length) / step
    local cutoff = q - q % 1 -- steps at or below cutoff - 1 have left
    q = now / step
    local current = q - q % 1
    w[24], w[8] = cutoff, current
    local size = #header
    if size < 24 then
      w[7], w[18], w[19], w[20], w[23], w[21] = 0, current, current, 0, 0, true
      return
    end
    local sum, lo, hi, mark, hw
    if size == HEADER then
      local last
      sum, lo, hi, mark, last = sunpack('<ddddd', header)
      if mark == -2 then
        hw = sum - last
      elseif mark == -1 then
        -- the 40-byte layout before (its last double the weight of step hi): read as it, written in
        -- this one by the next save
        mark, hw = -2, last
        w[15] = true
      end
      if mark == -2 and lo >= cutoff and cutoff <= hi then
        -- the usual case: nothing has left the window (lo stays)
        if sum < 0 then
          sum = 0
        end
        w[7], w[18], w[19], w[23] = sum, lo, hi, hw
        if lo == hi then
          w[20] = hw
        elseif lo > hi then
          w[20] = 0 -- emptied by a cancel (see below)
        end
        return
      end
    end
    local migrated = mark ~= -2
    if migrated then
      -- the layout before: rewritten whole, once
      local old = call('GET', key)
      sum, lo, hi = sunpack('<ddd', old)
      local found, wt = sunpack('<dd', old, 25 + SLOT * (hi % slots))
      hw = found == hi and wt or 0
      call('SET', key, spack('<ddddd', sum, lo, hi, -2, sum - hw) .. string.sub(old, 25), 'KEEPTTL')
    end
    local lo0 = lo
    local held = false
    w[19], w[23] = hi, hw
    if cutoff > hi then
      sum, lo, held = 0, current, 0
      w[23] = 0
    elseif lo < cutoff or migrated then
      -- (a ring of the layout before may start at an emptied step: walked once)
      local live, wt, dropped = ring_walk(w, lo, hi - lo + 1, cutoff)
      sum = sum - dropped
      -- no live weight left (cancels can empty steps): the ring starts again at the current step, so
      -- the next entry is neither recorded a step late nor reported as leaving from an empty step
      lo = live or current
      held = wt
    elseif lo == hi then
      held = hw
    elseif lo > hi then
      -- emptied by a cancel (ring_advance moved lo to the step of that moment): nothing is held
      held = 0
    end
    if sum < 0 then
      sum = 0
    end
    w[7], w[18], w[20] = sum, lo, held
    if lo ~= lo0 then
      w[15] = true
    end
  end

  ring_save_header = function(w)
    call('SETRANGE', w[1], '0', spack('<ddddd', w[7], w[18], w[19], -2, w[7] - w[23]))
  end

  -- Adds `amount` (may be negative, never below what the step holds) to step s; returns what it added.
  -- Step hi's weight is in the header, step lo's known from the trim when it read it; a step above hi
  -- has never been recorded (its slot holds an older step): only other steps are read. When hi moves
  -- on, the step it leaves is written to its slot (unless it has left the window).
  ring_add = function(w, s, amount)
    local hi, lo = w[19], w[18]
    local held = 0
    if s == hi then
      held = w[23]
    elseif s == lo and w[20] then
      held = w[20]
    elseif s < hi then
      local offset = HEADER + SLOT * (s % w[17])
      local bytes = call('GETRANGE', w[1], int(offset), int(offset + SLOT - 1))
      if #bytes == SLOT then
        local step, wt = sunpack('<dd', bytes)
        if step == s then
          held = wt
        end
      end
    end
    if held + amount < 0 then
      amount = -held
    end
    local total = held + amount
    if s > hi then
      if not w[21] and hi >= w[24] then
        call('SETRANGE', w[1], int(HEADER + SLOT * (hi % w[17])), spack('<dd', hi, w[23]))
      end
      w[19], w[23], w[22] = s, total, true
    elseif s == hi then
      w[23] = total
    else
      call('SETRANGE', w[1], int(HEADER + SLOT * (s % w[17])), spack('<dd', s, total))
    end
    w[7] = w[7] + amount
    -- a lo that holds no weight means an empty ring (see ring_advance): it starts at the step written
    if s < lo or w[20] == 0 then
      w[18] = s
    end
    if s == w[18] then
      w[20] = total
    end
    return amount
  end

  -- After a cancel or refund emptied step lo: lo moves to the oldest live step, or to the current one
  -- when none holds weight.
  ring_advance = function(w)
    if w[20] == 0 and w[18] <= w[19] then
      local live, wt = ring_walk(w, w[18], w[19] - w[18] + 1, w[18])
      w[18], w[20] = live or math.floor(now / w[5]), wt
    end
  end

  ring_create = function(w)
    -- Allocate the whole ring at once (a SETRANGE past the end of a missing key allocates exactly
    -- that length, zero-filled): growing it write by write would over-allocate up to twice.
    call('SETRANGE', w[1], int(HEADER + SLOT * w[17] - 1), '\0')
  end

  -- The expiry depends only on hi: it is set when the ring is created and whenever hi moves.
  ring_expire = function(w)
    -- the ring's newest step leaves at (hi + 1) * step + length
    call('EXPIRE', w[1], int(math.ceil(((w[19] + 1) * w[5] + w[2] - now) / 1000) + 1))
  end
end

---------------------------------------------------------------------------------------------------

-- Drops what has left window w and reads its use (and, for exact windows, its oldest entry).
local function trim(w)
  local kind = w[6]
  if kind == 0 then
    local key = w[1]
    call('ZREMRANGEBYSCORE', key, '-inf', int(w[13]))
    local used = call('ZCARD', key)
    w[7] = used
    if used > 0 then
      w[8] = tonumber(call('ZRANGE', key, '0', '0', 'WITHSCORES')[2])
    end
  elseif kind == 1 then
    weighted_trim(w)
  else
    ring_trim(w)
  end
end

-- Writes back what a trim changed, for a call that records nothing in w.
local function save(w)
  if w[15] then
    if w[6] == 2 then
      ring_save_header(w)
    elseif w[6] == 1 then
      weighted_save(w)
    end
  end
end

-- Reply: {status, now, index, retry} then each window's use and ms until its oldest entry leaves
-- (-1, -1 for a window not evaluated). A reservation passes the reply its rings recorded without a
-- table (false in windows) filled in already.
local function state(status, index, retry, result)
  if result then
    result[1], result[2], result[3], result[4] = status, now, index, retry
  else
    result = {status, now, index, retry}
  end
  for i = 1, n do
    local w = windows[i]
    if w then
      local used, reset = w[7], 0
      if w[16] then
        used, reset = -1, -1
      elseif used > 0 then
        if w[6] == 2 then
          reset = (w[18] + 1) * w[5] + w[2] - now
        elseif w[10] then
          reset = w[12] - now
        elseif w[8] then
          reset = math.max(0, w[8] + w[2] - now)
        end
      end
      result[3 + 2 * i] = used
      result[4 + 2 * i] = reset
    end
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

if op == 'x' then
  -- the return first, as a marked settle of the returned lease at its stamp: its members beyond
  -- what it keeps go from request windows, its amount drops to what it keeps in the others
  local stamp, old = string.match(ARGV[4], '^(%d+):(.+)$')
  if not stamp or not mark_ms or old == id then
    return redis.error_reply('ERR sliding_window: bad exchange arguments')
  end
  call('ZREMRANGEBYSCORE', mark_key, '-inf', int(now))
  if call('ZADD', mark_key, 'NX', int(now + mark_ms), old) == 1 then
    if call('ZCARD', mark_key) == 1 then
      call('EXPIRE', mark_key, int(math.ceil(mark_ms / 1000) + 1))
    else
      call('EXPIRE', mark_key, int(math.ceil(mark_ms / 1000) + 1), 'GT')
    end
    for i = 1, n do
      local w = windows[i]
      local weight, kept = w[27], w[14]
      if w[6] == 0 then
        local gone = {}
        for j = kept + 1, weight do
          gone[#gone + 1] = j == 1 and old or (old .. '#' .. j)
        end
        if #gone > 0 then
          call('ZREM', w[1], unpack(gone))
        end
      elseif kept < weight and call('ZREM', w[1], int(weight) .. ':' .. old) == 1 then
        if kept > 0 then
          call('ZADD', w[1], stamp, int(kept) .. ':' .. old)
        end
        if call('DECRBY', w[9], int(weight - kept)) <= 0 then
          call('DEL', w[9])
        end
      end
    end
  end
  op = 'r'
end

if op == 'r' then
  -- once a window rejects (status ~= 1), only windows no longer than it (bound) are read
  local status, index, retry, bound = 1, -1, 0, 0
  -- the reply, sized up front as windows above (for 2, 6 or 14 windows); nil ends it where they do
  local result
  if n <= 2 then
    result = {1, now, -1, 0, nil, nil, nil, nil}
  elseif n <= 6 then
    result = {1, now, -1, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
  else
    result = {
      1, now, -1, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
      nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    }
  end
  local upto, bad = n, false -- (a malformed ring: the windows before it are undone, see below)
  local kk = 1 -- window i's first key
  for i = 1, n do
    local w = windows[i]
    local header = nil
    if w then
      kk = kk + (w[9] and 2 or 1)
    else
      -- A ring without a table (see the parse above). In the usual case (nothing has left the window,
      -- the newest step recorded is the current one, and the request fits) it is recorded here, before
      -- the later windows are read, and taken back (below) if one of them rejects or is malformed:
      -- the script is atomic, so no caller sees it in between. Otherwise it gets its table, as any
      -- window.
      local a = 1 + 4 * i
      local key = keys[kk]
      kk = kk + 1
      -- its numbers, parsed and checked before anything is written in it (the parse left them; inline,
      -- as there: a call per window costs more than its lookups)
      local text = argv[a + 3]
      local amount = 1
      if text ~= '' then
        amount = nums[text]
        if amount == nil then
          amount = num(text)
        end
      end
      if not amount or amount < 0 then
        upto, bad = i - 1, 'ERR sliding_window: bad amount for window ' .. i
        break
      end
      text = argv[a + 1]
      local length = nums[text]
      if length == nil then
        length = num(text)
      end
      text = argv[a + 2]
      local limit = nums[text]
      if limit == nil then
        limit = num(text)
      end
      if not length or not limit then
        upto, bad = i - 1, 'ERR sliding_window: bad length or limit for window ' .. i
        break
      end
      local step = nums[argv[a + 4]] -- (parsed above)
      if status == 1 and amount > 0 and amount <= limit then
        header = call('GETRANGE', key, '0', HEADER_LAST)
        if #header == HEADER then
          local sum, lo, hi, mark = sunpack('<dddd', header) -- (base only when full, below)
          local q = now / step
          -- step lo leaves at reset: it is still in the window (lo >= the cutoff of ring_trim) while
          -- reset > 0
          local reset = (lo + 1) * step + length - now
          if mark == -2 and hi == q - q % 1 and lo <= hi and reset > 0 and sum >= 0 then
            if sum + amount <= limit then
              sum = sum + amount
              call('SETRANGE', key, '0', spack('<d', sum)) -- (step hi's weight, sum - base, grows with it)
              local r = 2 * i
              result[3 + r] = sum
              result[4 + r] = reset
              w = nil
            else
              local current = q - q % 1
              q = (now - length) / step
              local cutoff = q - q % 1
              local base = sunpack('<d', header, 33)
              -- full: its table as ring_trim would leave it, for the rejection below (no trim again)
              q = length / step
              local slots = q - q % 1 + 1
              if slots - 1 < q then
                slots = slots + 1
              end
              w = {
                key, length, limit, amount, step, 2, sum, current, false, false, 0, 0, now - length, 1, false,
                false, slots, lo, hi, lo == hi and sum - base or false, false, false, sum - base, cutoff,
              }
              windows[i] = w
              header = true
            end
          end
        end
      end
      if w == false then
        w = {
          key, length, limit, amount, step, 2, 0, false, false, false, 0, 0, now - length, 1, false, false,
          0, 0, 0, false, false, false, 0, 0,
        }
        windows[i] = w
      end
    end
    if w then
      local length = w[2]
      if status ~= 1 and length > bound then
        w[16] = true -- no command runs on its keys: save and state leave it alone
      elseif w[6] == 2 then
        if header ~= true then -- (true: read and trimmed above)
          ring_trim(w, header) -- (trim's dispatch inline: a call less per ring)
        end
      else
        trim(w)
      end
      if status == 1 then
        local need, limit = w[4], w[3]
        if need > limit then
          status, index, bound = 2, i - 1, length
        else
          if need < 1 then
            need = 1
          end
          if w[7] + need > limit then
            -- room returns when enough weight has left: the entry that frees the excess leaves
            local excess = w[7] + need - limit
            local kind = w[6]
            local leaves
            if w[10] then
              leaves = w[12] -- every entry of the period leaves at its end
            elseif kind == 0 then
              if excess == 1 then
                leaves = w[8] + length
              else
                local at = int(excess - 1)
                leaves = tonumber(call('ZRANGE', w[1], at, at, 'WITHSCORES')[2]) + length
              end
            elseif kind == 1 then
              -- the member at which the running sum of weights, oldest first, reaches the excess
              -- (inline: a helper would be allocated on every call, and only a rejection needs it)
              leaves = now + length
              local freed, from = 0, 0
              while from >= 0 do
                local page = call('ZRANGE', w[1], int(from), int(from + 63), 'WITHSCORES')
                from = #page == 0 and -1 or from + 64
                for j = 1, #page, 2 do
                  freed = freed + tonumber(string.match(page[j], '^(%d+):'))
                  if freed >= excess then
                    leaves, from = tonumber(page[j + 1]) + length, -1
                    break
                  end
                end
              end
            else
              local s = ring_walk(w, w[18], w[19] - w[18] + 1, nil, excess)
              leaves = s and ((s + 1) * w[5] + length) or (now + length)
            end
            status, index, retry, bound = 0, i - 1, math.max(1, leaves - now), length
          end
        end
      end
    end
  end
  if bad then
    status = -1
  elseif status == 1 and lease_key and lease_full() then
    status = 3
  end
  if status ~= 1 then
    -- windows 1..upto as a reservation that records nothing leaves them: what their trims changed
    -- saved, and each ring recorded above taken back out of its newest step (its reply without it)
    kk = 1
    for i = 1, upto do
      local w = windows[i]
      if w then
        save(w)
        kk = kk + (w[9] and 2 or 1)
      else
        local a = 1 + 4 * i
        local text = argv[a + 3]
        local amount = text == '' and 1 or nums[text]
        local key = keys[kk]
        kk = kk + 1
        local sum = sunpack('<d', call('GETRANGE', key, '0', '7')) - amount
        call('SETRANGE', key, '0', spack('<d', sum))
        result[3 + 2 * i] = sum
        if sum <= 0 then
          result[4 + 2 * i] = 0
        end
      end
    end
    if bad then
      return redis.error_reply(bad)
    end
    return state(status, index, retry, result)
  end
  local score = int(now)
  local members = {}
  for i = 1, n do
    local w = windows[i]
    local kind = w and w[6]
    if not w then
      -- a ring recorded in the reserve loop
    elseif kind == 2 then
      local amount = w[4]
      if amount <= 0 then
        save(w)
      else
        local s, lo, hi = w[8], w[18], w[19] -- w[8]: the current step (ring_trim)
        if s < lo then
          s = lo
        end
        if s == hi and not w[21] then
          -- the usual case: the newest step, whose weight the header holds (ring_add inline)
          local total, sum = w[23] + amount, w[7] + amount
          if w[20] == 0 then
            lo = s -- lo held no weight: the ring starts at the step written
          end
          w[7], w[18], w[23] = sum, lo, total
          call('SETRANGE', w[1], '0', spack('<ddddd', sum, lo, hi, -2, sum - total))
        else
          if w[21] then
            ring_create(w)
          end
          ring_add(w, s, amount)
          ring_save_header(w)
          if w[21] or w[22] then
            ring_expire(w)
          end
        end
      end
    else
      -- the entry leaves at now + length, or at the calendar period's end
      local leaves = w[10] and w[12] or now + w[2]
      local score, at = score, now
      if w[25] then
        -- a budget lease: stamped at its end, so it counts until then plus the length
        at = now + w[25]
        score, leaves = int(at), at + w[2]
      end
      if kind == 0 and w[26] == 0 then
        save(w) -- a lease of no requests records nothing here
      elseif kind == 0 and w[26] then
        -- a lease of requests: members id, id#2 ... id#count, all at the lease's stamp
        local args = {'NX', score, id}
        for j = 2, w[26] do
          args[#args + 1] = score
          args[#args + 1] = id .. '#' .. j
        end
        w[7] = w[7] + call('ZADD', w[1], unpack(args))
        call('EXPIRE', w[1], int(math.ceil((leaves - now) / 1000) + 1))
        if not w[8] or at < w[8] then
          w[8] = at -- (a lease stamped ahead may be the oldest before)
        end
      elseif kind == 0 then
        -- an entry id names one entry: recording it again changes nothing
        w[7] = w[7] + call('ZADD', w[1], 'NX', score, id)
        call('EXPIRE', w[1], int(math.ceil((leaves - now) / 1000) + 1))
        if not w[8] or at < w[8] then
          w[8] = at -- (a lease stamped ahead may be the oldest before)
        end
      elseif kind == 1 then
        local amount = w[4]
        local member = members[amount]
        if amount > 0 and not member then
          member = int(amount) .. ':' .. id
          members[amount] = member
        end
        if amount > 0 and call('ZADD', w[1], 'NX', score, member) == 1 then
          local seconds = int(math.ceil((leaves - now) / 1000) + 1)
          w[7] = w[7] + amount
          call('EXPIRE', w[1], seconds)
          call('SET', w[9], int(w[7]), 'EX', seconds)
          if not w[8] or at < w[8] then
            w[8] = at -- (a lease stamped ahead may be the oldest before)
          end
        else
          weighted_save(w)
        end
      end
    end
  end
  if lease_key then
    lease_take()
  end
  return state(1, -1, 0, result)
end

-- settle
local reserved = tonumber(ARGV[4])
if mark_key then
  call('ZREMRANGEBYSCORE', mark_key, '-inf', fmt('%d', now))
  if call('ZADD', mark_key, 'NX', fmt('%d', now + mark_ms), id) == 0 then
    return {1} -- settled before: a retry or a second settlement changes nothing
  end
  -- a new set has no expiry for GT to compare with; a held one keeps its latest mark's
  if call('ZCARD', mark_key) == 1 then
    call('EXPIRE', mark_key, fmt('%d', math.ceil(mark_ms / 1000) + 1))
  else
    call('EXPIRE', mark_key, fmt('%d', math.ceil(mark_ms / 1000) + 1), 'GT')
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
    if w[6] == 0 then
      score = call('ZADD', w[1], 'XX', 'INCR', '0', id)
    elseif w[6] == 1 and w[4] > 0 then
      score = call('ZADD', w[1], 'XX', 'INCR', '0', fmt('%d', w[4]) .. ':' .. id)
    end
    if score then
      reserved = tonumber(score)
      break
    end
  end
  if reserved == nil then
    if lease_key then
      call('ZREM', lease_key, id)
    end
    return {1}
  end
end
for i = 1, n do
  local w = windows[i]
  local estimate, target = w[4], w[14]
  if cancel then
    target = 0
  end
  local kind = w[6]
  if kind == 0 and w[26] then
    -- a lease of requests returned: keep `target` of its members, give the others back
    local gone = {}
    for j = math.max(target, 0) + 1, w[26] do
      gone[#gone + 1] = j == 1 and id or (id .. '#' .. j)
    end
    if #gone > 0 then
      call('ZREM', w[1], unpack(gone))
    end
  elseif kind == 0 then
    if cancel then
      call('ZREM', w[1], id)
    end
  elseif kind == 1 then
    if target < estimate and estimate > 0 then
      if call('ZREM', w[1], fmt('%d', estimate) .. ':' .. id) == 1 then
        if target > 0 then
          call('ZADD', w[1], fmt('%d', reserved), fmt('%d', target) .. ':' .. id)
        end
        local left = call('DECRBY', w[9], fmt('%d', estimate - target))
        if left <= 0 then
          call('DEL', w[9])
        end
      end
    elseif target > estimate and not w[10] then
      local seconds = fmt('%d', math.ceil(w[2] / 1000) + 1)
      call('ZADD', w[1], fmt('%d', now), fmt('%d', target - estimate) .. ':' .. id .. '+')
      call('INCRBY', w[9], fmt('%d', target - estimate))
      call('EXPIRE', w[1], seconds)
      call('EXPIRE', w[9], seconds)
    elseif target > estimate and reserved >= w[11] then
      -- a calendar window charges the overrun in the reservation's period, while it lasts
      local seconds = fmt('%d', math.ceil((w[12] - now) / 1000) + 1)
      call('ZADD', w[1], fmt('%d', reserved), fmt('%d', target - estimate) .. ':' .. id .. '+')
      call('INCRBY', w[9], fmt('%d', target - estimate))
      call('EXPIRE', w[1], seconds)
      call('EXPIRE', w[9], seconds)
    end
  elseif target ~= estimate then
    trim(w)
    if target < estimate then
      local s = math.floor(reserved / w[5])
      if not w[21] and s >= w[18] and s <= w[19] then
        ring_add(w, s, target - estimate)
        ring_advance(w)
        ring_save_header(w)
      else
        save(w)
      end
    else
      if w[21] then
        ring_create(w)
      end
      ring_add(w, math.max(math.floor(now / w[5]), w[18]), target - estimate)
      ring_save_header(w)
      ring_expire(w)
    end
  end
end
if lease_key then
  call('ZREM', lease_key, id) -- by entry id: a second release frees nothing
end
return {1}
