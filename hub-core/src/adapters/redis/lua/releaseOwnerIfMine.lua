-- Release a worker's owner key only if this hub wrote it (seed, layer 3). When a link moves
-- from hub A to hub B, A's late unregister must not delete B's ownership.
-- KEYS[1] = paprika:worker:{id}:owner   ARGV[1] = hub id of the caller
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
else
  return 0
end
