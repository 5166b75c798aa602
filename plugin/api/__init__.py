"""The /tessera REST API: its routes and the HTTP layer (the app, inputs, JSON bodies, the mount).

The answers come from the feature packages (fleet, actions, explainer); nothing here decides them.
"""

URL_PREFIX = "/tessera"
"""Where Airflow's API server mounts the app (:mod:`.mount`), and so the ``servers`` its OpenAPI document names."""
