-- Runs bench/lib/wrk-count.lua the way wrk does (wg/wrk, SCRIPTING and
-- src/wrk.c): one Lua environment per thread plus a main one; setup(thread)
-- in the main environment for each thread, whose thread:get(name) reads a
-- global of that thread's environment; response(status, headers, body) in
-- the thread's environment for every response; done(summary, latency,
-- requests) in the main environment at the end. Used by
-- bench/test-counting.sh when luajit or lua is installed.
--
-- The run it replays: 2 threads, 500,000 responses, of which 100,000 with
-- status 200 and 400,000 with 500 or 404; 12 read errors and 7 timeouts;
-- 5 s. Usage: luajit wrk-lua-harness.lua path/to/wrk-count.lua

local script = assert(arg[1], "usage: wrk-lua-harness.lua SCRIPT")

local function environment()
  local env = setmetatable({}, { __index = _G })
  local chunk
  if setfenv then -- Lua 5.1 / LuaJIT, as in wrk
    chunk = assert(loadfile(script))
    setfenv(chunk, env)
  else
    chunk = assert(loadfile(script, "t", env))
  end
  chunk()
  return env
end

local main = environment()
local plan = {
  { [200] = 60000, [500] = 150000 },
  { [200] = 40000, [404] = 250000 },
}
local workers = {}
for i = 1, #plan do
  local env = environment()
  workers[i] = env
  main.setup({ get = function(_, name) return env[name] end })
end
for i, counts in ipairs(plan) do
  for status, n in pairs(counts) do
    for _ = 1, n do
      workers[i].response(status, {}, "")
    end
  end
end
main.done({
  duration = 5000000,
  requests = 500000,
  bytes = 64004096,
  errors = { connect = 0, read = 12, write = 0, timeout = 7, status = 400000 },
}, nil, nil)
