"""Tools around the product that the product never imports: the process runner of `make run`, and
what the bench (`bench/`) and the tests (`tests/`) share.
"""
