"""`heph docs`: find missing and stale docstrings offline (check), and write them (fix)."""
