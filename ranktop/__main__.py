"""``python -m ranktop``: the ``ranktop`` command, for where its script is not on PATH."""

# The source folders map onto ranktop.tui at install time (pyproject's package-dir), so a
# static reader of this folder alone cannot follow this one import; Python can.
from ranktop.tui.cli.main import main  # pyright: ignore[reportMissingImports]

raise SystemExit(main())
