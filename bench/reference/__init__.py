"""The bare reference: plain Django views doing the SQL of the product's hot paths.

No DRF, no authentication, no envelope, no middleware: what the same work
costs with nothing but Django, served by the same gunicorn command line.
"""
