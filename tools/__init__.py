"""What the bench (`bench/`) and the tests (`tests/`) share; the product imports nothing from here."""
