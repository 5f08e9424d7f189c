"""``python -m ranktop``: the ``ranktop`` command, for where its script is not on PATH."""

from ranktop.tui.cli.main import main

raise SystemExit(main())
