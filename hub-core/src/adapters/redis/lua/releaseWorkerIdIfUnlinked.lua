-- Give back an id claimed at registration that never linked (its enrollment expired), so
-- registrations that were never used do not hold ids forever. Only if the claim is still this
-- IP's and no heartbeat was ever published under it (a linked worker's hash has last_seen).
-- KEYS[1] = workers index set, KEYS[2] = paprika:worker:{id}
-- ARGV[1] = worker id, ARGV[2] = lan ip the claim was made for
if redis.call('hget', KEYS[2], 'lan_ip') ~= ARGV[2] then return 0 end
if redis.call('hexists', KEYS[2], 'last_seen') == 1 then return 0 end
redis.call('del', KEYS[2])
redis.call('srem', KEYS[1], ARGV[1])
return 1
