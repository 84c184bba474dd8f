--[[
floor_call.lua: the cost of the script call alone, for ScriptCost. It takes the stores' keys and
arguments (sliding_window.lua's layout) and answers a reply of the same shape as an allowed
reservation, {1, 0, -1, 0, used_1, reset_1, ...}, running no command and recording nothing: what
Redis spends on an EVALSHA with these keys and arguments before the script does any work.
]]

local n = (#ARGV - 5) / 4
local result = {1, 0, -1, 0}
for i = 1, n do
  result[3 + 2 * i] = 0
  result[4 + 2 * i] = 0
end
return result
