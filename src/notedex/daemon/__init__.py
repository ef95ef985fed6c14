"""The background service: watch the vault, batch changes, hand them to the one writer."""
