"""Run ``notedex`` with permission blips injected at the system-call boundary (a test driver).

``python -m tests.system.blip LOCKS ARGS...`` runs ``notedex ARGS...`` in this process with
``os.open`` and ``os.scandir`` raising EACCES for a vault path while ``LOCKS/<name>`` exists,
where ``<name>`` is the path's last segment: the test makes and removes those files to start
and end a blip. As root the kernel would read a ``chmod 000`` file anyway (tests/privileges.py),
and the daemon cannot drop privileges here (the interpreter may live where ``nobody`` cannot
reach), so this bites for real in CI, as root too.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any


def install(locks: str) -> None:
    real_open, real_scandir = os.open, os.scandir

    def check(path: Any) -> None:
        if isinstance(path, int):
            return
        name = os.path.basename(os.fsdecode(path).rstrip("/"))
        if name and os.path.exists(os.path.join(locks, name)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

    def fake_open(path: Any, *args: Any, **kwargs: Any) -> int:
        check(path)
        return real_open(path, *args, **kwargs)

    def fake_scandir(path: Any = ".") -> Any:
        check(path)
        return real_scandir(path)

    os.open = fake_open  # type: ignore[assignment]
    os.scandir = fake_scandir  # type: ignore[assignment]


def main() -> int:
    install(sys.argv[1])
    from notedex.cli import main as notedex_main

    return notedex_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
