"""scripts/notedex: a forkserver worker re-importing the launcher does not run the CLI again (a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_launcher_does_not_run_the_cli_when_a_worker_re_imports_it() -> None:
    """The daemon parses large batches in a forkserver pool; each worker re-imports the script
    the daemon was started from as ``__mp_main__``. Running the CLI there again made a first
    index under the daemon fail (the worker exited: "a daemon is already running")."""
    launcher = Path(__file__).resolve().parents[2] / "scripts" / "notedex"
    code = (
        "import runpy, sys; sys.argv = ['notedex', 'daemon']; "
        f"runpy.run_path({str(launcher)!r}, run_name='__mp_main__'); print('imported only')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "imported only"
