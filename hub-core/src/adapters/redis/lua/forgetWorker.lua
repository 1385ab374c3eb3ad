-- Forget a worker. ARGV[2] = '0' (DELETE /admin/workers/:id): its hash, online and owner keys
-- and its index entry. ARGV[2] = '1' (the index's lazy clean-up after its hash expired with
-- WORKER_FORGET_S): only the index entry, and only while the hash is still gone — a worker
-- linking again meanwhile has just written its owner key, and a claim its hash.
-- Either way, when it was forgotten its compact row goes too and the change is logged, so
-- every hub's incremental fleet read drops it (readFleetChanges).
-- KEYS[1] = workers index, KEYS[2] = worker hash, KEYS[3] = :online, KEYS[4] = :owner,
-- KEYS[5] = workers:rows, KEYS[6] = workers:seq, KEYS[7] = workers:changes
-- ARGV[1] = worker id, ARGV[2] = '1' for the clean-up
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
end
return forgotten
