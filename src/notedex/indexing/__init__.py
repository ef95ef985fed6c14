"""Writer-side orchestration, no SQL: reconcile, the parse pool, applying a change set and
the one freshness policy. The SQL it drives lives in store/."""
