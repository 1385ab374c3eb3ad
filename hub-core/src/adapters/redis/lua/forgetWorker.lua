-- Forget a worker. ARGV[2] = '0' (DELETE /admin/workers/:id): its hash, online and owner keys
-- and its index entry. ARGV[2] = '1' (the index's lazy clean-up after its hash expired with
-- WORKER_FORGET_S): only the index entry, and only while the hash is still gone — a worker
-- linking again meanwhile has just written its owner key, and a claim its hash.
-- KEYS[1] = workers index, KEYS[2] = worker hash, KEYS[3] = :online, KEYS[4] = :owner
-- ARGV[1] = worker id, ARGV[2] = '1' for the clean-up
if ARGV[2] == '1' then
  if redis.call('exists', KEYS[2]) == 1 then return 0 end
  return redis.call('srem', KEYS[1], ARGV[1])
end
local existed = redis.call('del', KEYS[2], KEYS[3], KEYS[4])
local indexed = redis.call('srem', KEYS[1], ARGV[1])
if existed + indexed > 0 then return 1 end
return 0
