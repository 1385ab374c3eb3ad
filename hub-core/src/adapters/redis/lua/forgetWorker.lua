-- Forget a worker. ARGV[2] = '0' (DELETE /admin/workers/:id): its hash, online and owner keys
-- and its index entry. ARGV[2] = '1' (the index's lazy clean-up after its hash expired with
-- WORKER_FORGET_S): only the index entry, and only while the hash is still gone — a worker
-- linking again meanwhile has just written its owner key, and a claim its hash.
-- Either way, when it was forgotten its compact row goes too and the change is logged, so
-- every hub's incremental fleet read drops it (readFleetChanges).
-- A forgotten id's entry in the change log is dropped ARGV[3] ms later (workers:forgotten notes
-- when each id was forgotten), so the log holds the live fleet, not every id there ever was;
-- workers:floor keeps the highest change dropped, and a reader whose cursor is below it reads
-- every row instead (readFleetChanges), so no reader keeps a ghost of a worker it missed.
-- KEYS[1] = workers index, KEYS[2] = worker hash, KEYS[3] = :online, KEYS[4] = :owner,
-- KEYS[5] = workers:rows, KEYS[6] = workers:seq, KEYS[7] = workers:changes,
-- KEYS[8] = workers:forgotten, KEYS[9] = workers:floor
-- ARGV[1] = worker id, ARGV[2] = '1' for the clean-up, ARGV[3] = how long (ms) a forgotten id stays in the log
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local forgotten = 0
if ARGV[2] == '1' then
  if redis.call('exists', KEYS[2]) == 1 then return 0 end
  forgotten = redis.call('srem', KEYS[1], ARGV[1])
else
  local existed = redis.call('del', KEYS[2], KEYS[3], KEYS[4])
  local indexed = redis.call('srem', KEYS[1], ARGV[1])
  if existed + indexed > 0 then forgotten = 1 end
end
if forgotten == 1 then
  redis.call('hdel', KEYS[5], ARGV[1])
  redis.call('zadd', KEYS[7], redis.call('incr', KEYS[6]), ARGV[1])
  redis.call('zadd', KEYS[8], now, ARGV[1])
end
-- Drop the log entries of ids forgotten long enough ago (a bounded batch a call), unless the id
-- has a row again (it linked again: its entry is its latest change, not the forgetting).
local due = redis.call('zrangebyscore', KEYS[8], '-inf', now - (tonumber(ARGV[3]) or 0), 'LIMIT', 0, 500)
if #due > 0 then
  local floor = tonumber(redis.call('get', KEYS[9]) or '0')
  for i = 1, #due do
    local id = due[i]
    if redis.call('hexists', KEYS[5], id) == 0 then
      local s = tonumber(redis.call('zscore', KEYS[7], id))
      if s then
        redis.call('zrem', KEYS[7], id)
        if s > floor then floor = s end
      end
    end
    redis.call('zrem', KEYS[8], id)
  end
  redis.call('set', KEYS[9], floor)
end
return forgotten
