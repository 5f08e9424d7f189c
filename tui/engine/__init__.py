"""The engine: the one room between the headless core and the screens.

It owns the source(s), the pipeline (``pipeline.Pipeline``: poll, analysis, hang triage in
its worker), the rank data a rank screen asks for (``rank_data.RankData``) and the cluster
maps' levels (``maps.MapBoard``, which keeps each map's last levels). The UI talks to it
through one small interface, ``client.EngineClient``, whose requests are typed in
``protocol``, and gets back plain frozen values:

- ``snapshot.Snapshot`` per poll, past moment or bundle: the ``Analysis`` with a ``version``
  that grows by one per live analysis, a ``rank_map_version`` that changes with the rank map
  (``snapshot.RankMapVersions``: an equal map keeps its number, live or past), and the
  cluster maps' levels planned for the ``maps.MapGeometry`` the screen gave (what each map
  lays out, as data; sent only when it changed). The app tells what is new by these
  numbers, never by which object it holds, and a poll is one request.
- answers to a rank's requests: its logs, alerts, earlier history and GPU model.

Two engines answer the same interface:

- ``threaded.ThreadEngine`` in the UI's process, its blocking work in threads: the demo
  (and its fake clock), the tests, a console on NVML alone.
- ``process.ProcessEngine``, the default wherever Prometheus is polled (the console and
  `ranktop report`): a ``ThreadEngine`` in a spawned child (``serve.serve``) answers requests
  over a pipe, several at once. The UI's process then does no HTTP, no decoding, no
  analysis. Per poll only the snapshot crosses, without the job's history (the rank screen
  asks for its rank's share: ``rank_history``) and without the rank map unless it changed.
  Versions are renumbered on the UI's side, so they keep growing across a restart. When
  the child dies, requests fail with ``client.EngineStopped``; the app says so in a
  notification and calls ``restart``, the screen keeping its last poll meanwhile.
  ``bench/engine_messages.py`` measures the bytes per message. The pipe is ``link.Link``:
  no message over ``link.MESSAGE_BYTES`` crosses either way (a line says why instead), and
  a blocking request not answered in ``link.ANSWER_SECONDS`` raises ``client.EngineSilent``.
  A rank's logs are opened and read in the child too (``remote_log``): the rank screen
  holds ``RemoteLog``s whose reads are requests, answered in pages of at most
  ``remote_log.PAGE_BYTES``, and closing one releases the child's files.

Layers: the core imports no engine; the engine imports no screen, widget, app or Textual;
screens and widgets import no source.
"""
