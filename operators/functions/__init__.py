"""Cursor-carrying functions: spec, fire, store, admission, status, HTTP function, metrics."""
