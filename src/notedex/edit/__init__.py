"""Commands that write the vault (ARCHITECTURE "Writing the vault"): ``capture`` creates a note,
``fix`` applies suggestions, ``mv`` moves files and rewrites the links to them. Every write goes
through ``edit.safewrite``; the plans read the index through ``store`` and the vault through
``vault``. Nothing else in notedex writes into a vault."""
