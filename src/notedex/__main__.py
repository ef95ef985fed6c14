import gc

if __name__ == "__main__":
    gc.disable()  # while the CLI loads: see scripts/notedex and notedex.cli.restore_collector

from notedex.cli import main

raise SystemExit(main())
