from notedex.cli import main

raise SystemExit(main())
