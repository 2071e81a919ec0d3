"""The trace store: one DuckDB file per run (store.py), batched ingestion of rollout files
(ingest.py), the queries later stages read (queries.py) and the read-only SQL tool (sql_tool.py)."""
