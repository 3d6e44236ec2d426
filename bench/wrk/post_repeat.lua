-- POST /api/v1/tickets with one fixed body whose external_id already exists (200, no new ticket).
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

local body

function init(args)
  body = '{"assunto":"Pedido repetido","descricao":"Mesmo pedido, enviado de novo.","external_id":"'
    .. args[1] .. '","solicitante":{"nome":"Cliente Repetido","external_id":"bench-repeat-customer"}}'
end

function request()
  return wrk.format("POST", nil, nil, body)
end
