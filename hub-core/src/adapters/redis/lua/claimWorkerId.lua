-- Take the first candidate worker id that is free or already held by this IP, atomically,
-- so two hubs registering colliding IPs at once cannot hand out one id twice. The rule is
-- domain/worker-id.ts#workerIdFor's (test/integration/worker-id-rule.test.ts runs both on one table).
-- KEYS[1] = workers index set, KEYS[2..n] = worker hashes of the candidate ids (in order)
-- ARGV[1] = lan ip, ARGV[2] = hostname, ARGV[3..n] = candidate ids (same order as KEYS[2..n])
for i = 2, #KEYS do
  local holder = redis.call('hget', KEYS[i], 'lan_ip')
  if (not holder) or holder == ARGV[1] then
    redis.call('hset', KEYS[i], 'lan_ip', ARGV[1], 'hostname', ARGV[2])
    redis.call('sadd', KEYS[1], ARGV[i + 1])
    return ARGV[i + 1]
  end
end
return false
