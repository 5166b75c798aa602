"""What a person may ask tessera to do to a DAG: refresh it now, preview a backfill, pause it with a note."""
