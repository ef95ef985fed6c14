"""All SQL lives here, split by job: schema, the read side (connect, read, fulltext) and the writer side."""
