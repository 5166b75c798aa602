"""The /tessera REST API and the Schedules page's data: routes, models and the domain answers behind them."""

URL_PREFIX = "/tessera"
"""Where Airflow's API server mounts the app (:mod:`.mount`), and so the ``servers`` its OpenAPI document names."""
