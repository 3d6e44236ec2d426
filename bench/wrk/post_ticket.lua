-- POST /api/v1/tickets, a new ticket each time: external_id = run tag, thread id, counter.
-- Requesters come back (50 customers per thread), as a partner's customers do.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

local tag, n, extra = "run", 0, ""

-- args[2]: a JSON fragment the body ends with (`,"tags":[...]`), for the create with tags.
function init(args)
  tag = args[1] or tag
  extra = args[2] or extra
end

function request()
  n = n + 1
  local ext = tag .. "-" .. id .. "-" .. n
  local customer = id .. "-" .. (n % 50)
  local body = '{"assunto":"Pedido ' .. ext .. ' atrasado","descricao":"O pedido ' .. ext
    .. ' não chegou no prazo combinado.","prioridade":"media","external_id":"' .. ext
    .. '","solicitante":{"nome":"Cliente ' .. customer .. '","email":"cliente-' .. customer
    .. '@bench.example","external_id":"bench-' .. tag .. '-' .. customer .. '"}' .. extra .. '}'
  return wrk.format("POST", nil, nil, body)
end
