"""Read-only answers from the index. Stdlib only: this is the hot path of every query."""
