"""What every app stands on, and none of them owns: the error tree, ids, the database
(backend, SQLite functions, helpers), the change feeds and their retention, batch purges, rate
limits, the request log, logs, metrics, the embedded Celery broker and the deployment checks.

It imports none of the apps, nor the API framework (pyproject.toml, import-linter).
"""
