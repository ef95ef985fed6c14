"""Run ``notedex`` as under a watchdog release ``daemon.inotify`` was not checked against (a driver).

``python -m tests.system.unchecked_watchdog RELEASE ARGS...`` runs ``notedex ARGS...`` in this
process with watchdog reporting ``RELEASE`` as its version: the daemon's version gate
(``daemon.watcher._native_observer``) then watches with watchdog's own ``InotifyObserver``, as
it would beside a newer watchdog in a user's environment. Everything else is the installed
watchdog, unchanged.
"""

from __future__ import annotations

import sys


def main() -> int:
    import watchdog.version

    watchdog.version.VERSION_STRING = sys.argv[1]
    from notedex.cli import main as notedex_main

    return notedex_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
