"""AFTER fan-in: release of child runs, parent freshness, AfterSensor and its trigger."""
