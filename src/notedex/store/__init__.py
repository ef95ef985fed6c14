"""All SQL lives here: schema, connections, the writer and reconcile."""
