"""The record of a clean close of the index (``<index>.clean-stop``): what the index files were
when the last writer closed them cleanly, so that the daemon's next start may skip its
``PRAGMA quick_check`` (which reads every page: seconds at 1M notes, issue 35) while they are
still exactly those files.

Written by the daemon's clean stop (``daemon.recovery``) and by a one-shot writer that
committed and closed (`notedex index`, a query's refresh: ``indexing.freshness``); read and
removed by the daemon's start. Any other end (a crash, an error) writes nothing, and any write
to the index or its -wal since (another writer, a copy, damage) makes the record not match.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CLEAN_STOP_SUFFIX = ".clean-stop"


def _stamp(db: Path) -> str | None:
    """The index and its -wal as they are: (device, inode, size, mtime) each, or None when
    the index is missing. Any write to either changes it; an empty -wal (a reader's open makes
    one) is as good as none."""
    parts: list[str] = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(f"{db}{suffix}")
        except FileNotFoundError:
            if not suffix:
                return None
            parts.append("-")
        else:
            if suffix and st.st_size == 0:
                parts.append("-")
                continue
            parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return " ".join(parts)


def record_clean_close(db: Path) -> None:
    """After the writer committed and closed: what the index files are now. Raises
    ``OSError`` when the record cannot be written (only a slower next start: the check runs)."""
    stamp = _stamp(db)
    if stamp is None:
        return
    marker = f"{db}{CLEAN_STOP_SUFFIX}"
    temp = f"{marker}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(stamp + "\n")
        os.replace(temp, marker)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def unchanged_since_clean_close(db: Path) -> bool:
    """Whether the index files are exactly as the last clean close left them. The record is
    used once: it is removed here, whatever the answer."""
    marker = f"{db}{CLEAN_STOP_SUFFIX}"
    try:
        with open(marker, encoding="ascii") as handle:
            recorded = handle.read().strip()
    except (OSError, ValueError):
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(marker)
    return bool(recorded) and recorded == _stamp(db)
