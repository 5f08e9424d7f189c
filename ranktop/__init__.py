"""ranktop: a live terminal console of every rank of a distributed GPU training job.

The code lives in ``ranktop.tui`` (the console, its sources and its headless core),
``ranktop.widgets`` and ``ranktop.config`` (the shipped configuration); this package only
makes ``python -m ranktop`` the same as the ``ranktop`` command.
"""
