"""What the daemon's multiprocessing forkserver imports at its start (its preload): the parse
pool's code, and the rule that the forkserver ends with the daemon (issue 13.15).

The forkserver is the parent of every pool worker; each worker ends with its parent
(``pool.die_with_parent``), so a daemon killed mid-parse leaves no process behind. Only the
forkserver imports this module: importing it elsewhere would tie that process to its parent.
"""

from __future__ import annotations

from notedex.indexing.pool import die_with_parent

die_with_parent()
