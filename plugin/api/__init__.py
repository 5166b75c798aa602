"""The /tessera REST API and the Schedules page's data: routes, models and the domain answers behind them."""
