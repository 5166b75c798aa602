"""Tessera's Airflow wiring: the plugin, the dag policy and the macros."""
