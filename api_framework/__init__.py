"""The API framework every door is built on (DRF): the envelope (renderer, responses, the one
exception handler), JSON parsing, strict fields, pagination, routers, base views, the OpenAPI
pieces, and the views every API answers (health, schema, the envelope for unknown routes).

It imports the foundation, none of the apps (pyproject.toml, import-linter).
"""
