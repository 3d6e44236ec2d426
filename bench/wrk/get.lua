-- GET, rotating over the paths given after "--" (or the URL's own path).
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

local paths, n = {}, 0

function init(args)
  paths = split_args(args)
end

function request()
  if #paths == 0 then
    return wrk.format("GET")
  end
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1])
end
