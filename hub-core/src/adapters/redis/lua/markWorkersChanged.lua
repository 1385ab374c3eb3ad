-- Log that workers' rows changed, after the rows are written (publishWorkers' pipeline) so a
-- reader that sees the mark also sees the row. One sequence number per batch: a reader asks
-- for every id marked past its cursor (readFleetChanges).
-- KEYS[1] = workers:epoch, KEYS[2] = workers:seq, KEYS[3] = workers:changes
-- ARGV[1] = an epoch to set where none is (a Redis that restarted empty), ARGV[2..] = worker ids
redis.call('set', KEYS[1], ARGV[1], 'NX')
local seq = redis.call('incr', KEYS[2])
for i = 2, #ARGV do
  redis.call('zadd', KEYS[3], seq, ARGV[i])
end
return seq
