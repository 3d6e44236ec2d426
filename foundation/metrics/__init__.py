"""Prometheus metrics (docs/operations.md, "Metrics").

`directory` gives each server (a gunicorn master, a Celery worker) a prometheus_client
multiprocess directory of its own and imports neither Django nor prometheus_client: it must
run before prometheus_client is first imported. `instruments` holds the counters and
histograms, `middleware` times requests, `exposition` renders a scrape behind METRICS_TOKEN and `view` answers the
web's GET /metrics with it,
`worker` wires a Celery worker (its directory, its own /metrics port, task failures).
"""
