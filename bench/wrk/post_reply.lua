-- POST /api/v1/tickets/{id}/respostas as the customer, spread over the ticket ids given after "--".
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

local ids, n = {}, 0

function init(args)
  ids = split_args(args)
end

function request()
  n = n + 1
  local ticket = ids[((n * 7 + id) % #ids) + 1]
  local body = '{"mensagem":"Alguma novidade? (' .. id .. "-" .. n .. ')"}'
  return wrk.format("POST", "/api/v1/tickets/" .. ticket .. "/respostas", nil, body)
end
