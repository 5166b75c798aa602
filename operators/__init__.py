"""Tessera operators: what a run does with its schedule."""
