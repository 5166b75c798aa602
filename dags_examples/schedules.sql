-- Declared schedules shared by the declared_* example DAGs (loaded by declared_sql_pipelines.py).

-- Daily at 06:00 New York time, with the retry policy: 3 retries 5 minutes apart,
-- each attempt limited to an hour (so a fire can take up to 4 hours in all).
SCHEDULE daily_etl
  CRON '0 6 * * *'
  TIMEZONE 'America/New_York'
  RETRIES 3
  RETRY_DELAY 300
  TIMEOUT 3600;

-- Hourly, never overlapping itself, ahead of other work, with two alert routes.
SCHEDULE hourly_sync
  CRON '0 * * * *'
  DESCRIPTION 'Hourly data synchronization'
  MAX_CONCURRENT 1
  PRIORITY 10
  NOTIFY 'ops-team@example.com', 'data-eng@example.com'
  WEBHOOK 'https://hooks.slack.example.com/services/T00/B00/xxx';

-- Daily at 03:00 UTC, one copy on every node of the deployment ([tessera] nodes).
SCHEDULE distributed_refresh
  CRON '0 3 * * *'
  TARGET_NODES ALL
  TIMEOUT 7200
  RETRIES 1;

-- Created switched off; once switched on, every missed Sunday 01:00 runs, oldest first.
SCHEDULE weekly_archive
  CRON '0 1 * * 0'
  TIMEZONE 'Europe/London'
  CATCHUP true
  INACTIVE;

-- The three source loads the fan-in step waits for.
SCHEDULE apc_daily CRON '0 4 * * *' TIMEZONE 'Europe/Oslo';
SCHEDULE norled_daily CRON '30 4 * * *' TIMEZONE 'Europe/Oslo';
SCHEDULE mpc_daily CRON '0 5 * * *' TIMEZONE 'Europe/Oslo' RETRIES 2 RETRY_DELAY 600;

-- Rebuilds the cross-source fact once all three loads have finished a fire it has not
-- seen yet (finished, not necessarily succeeded); names any load quiet for over 26 h.
SCHEDULE gold_cross_source
  AFTER 'apc_daily', 'norled_daily', 'mpc_daily'
  PARENT_FRESHNESS 26
  DESCRIPTION 'Runs behind the three source loads';
