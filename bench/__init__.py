"""`make bench`: load the service as production runs it, against a bare Django reference.

Nothing here is part of the product: the product never imports this package.
"""
