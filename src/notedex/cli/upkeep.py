"""The handlers that keep the index: `index`, `daemon` and `service` (`status`, a query, is
``cli.listings``'). Off the query path: these commands load ``typing`` anyway.
"""

from typing import TYPE_CHECKING

from notedex.cli.handlers import _config, _report, refresh
from notedex.errors import EXIT_OK

if TYPE_CHECKING:
    import argparse

# The handlers the command table names (``cli.commands.Command.handler``).
__all__ = ["cmd_daemon", "cmd_index", "cmd_service"]


def cmd_index(args: "argparse.Namespace") -> int:
    cfg = _config(args)
    report = refresh(cfg, full=args.full, force=True).report
    assert report is not None
    _report(
        args,
        report,
        lambda: (
            f"added {report['added']}, changed {report['changed']}, removed {report['removed']}, "
            f"moved {report['moved']}, unchanged {report['unchanged']} (rehashed {report['rehashed']}), "
            f"errors {report['errors']}, {report['seconds']:.2f}s"
        ),
    )
    return EXIT_OK


def cmd_daemon(args: "argparse.Namespace") -> int:
    from notedex.daemon.service import run_daemon

    cfg = _config(args)
    return run_daemon(cfg, poll=args.poll)


def cmd_service(args: "argparse.Namespace") -> int:
    from notedex.daemon.install import service_command, service_failure
    from notedex.error_kinds import ServiceManagerFailed

    cfg = _config(args)
    data = service_command(cfg, args.action, dry_run=args.dry_run)
    failure = service_failure(data)
    if failure is not None:
        raise ServiceManagerFailed(failure)
    _report(args, data, lambda: data["text"])
    return EXIT_OK
