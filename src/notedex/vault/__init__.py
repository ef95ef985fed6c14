"""Pure reading of a vault: which files count, what each note says. No database here."""
