-- The fleet's rows changed since a reader's cursor, or all of them when its epoch is not the
-- one Redis holds (Redis forgot everything, or the reader has none yet) or the counter went
-- back (Redis restarted from an older snapshot), or the reader's cursor is below the floor: the
-- log dropped a forgotten id's entry this reader had not read yet (forgetWorker.lua). Atomic,
-- so the cursor matches the rows.
-- KEYS[1] = workers:epoch, KEYS[2] = workers:seq, KEYS[3] = workers:changes,
-- KEYS[4] = workers:rows, KEYS[5] = workers:index, KEYS[6] = workers:floor
-- ARGV[1] = the reader's epoch ('' asks for all rows), ARGV[2] = its cursor
-- Returns {epoch or nil, seq, index size, 'all', {id, row, ...}} or {epoch, seq, index size, 'changed', ids, rows (nil: gone)}
local epoch = redis.call('get', KEYS[1])
local seq = tonumber(redis.call('get', KEYS[2]) or '0')
local count = redis.call('scard', KEYS[5])
local cursor = tonumber(ARGV[2]) or 0
local floor = tonumber(redis.call('get', KEYS[6]) or '0')
if (not epoch) or epoch ~= ARGV[1] or seq < cursor or cursor < floor then
  return {epoch, seq, count, 'all', redis.call('hgetall', KEYS[4])}
end
local ids = redis.call('zrangebyscore', KEYS[3], '(' .. cursor, '+inf')
local rows = {}
-- unpack() has a stack limit: HMGET in chunks.
for i = 1, #ids, 1000 do
  local chunk = redis.call('hmget', KEYS[4], unpack(ids, i, math.min(i + 999, #ids)))
  for j = 1, #chunk do rows[#rows + 1] = chunk[j] end
end
return {epoch, seq, count, 'changed', ids, rows}
