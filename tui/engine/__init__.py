"""The engine: the one room between the headless core and the screens.

It owns the source(s), the pipeline (``pipeline.Pipeline``: poll, analysis, hang triage in
its worker), the rank data a rank screen asks for (``rank_data.RankData``) and the planning
of the cluster maps' levels (``maps.plan_maps``). The UI talks to it through one small
interface, ``client.EngineClient``, and gets back plain frozen values:

- ``snapshot.Snapshot`` per poll: the ``Analysis`` with a ``version`` that grows by one per
  analysis and a ``rank_map_version`` that grows when the rank map changed. The app tells
  what is new by these numbers, never by which object it holds.
- map levels, planned from ``maps.MapGeometry`` values the screen gives (what each map shows
  now, as data); no engine code reads a widget.
- answers to a rank's requests: its logs, alerts, earlier history and GPU model.

``threaded.ThreadEngine`` runs it in the UI's process, with its blocking work in threads.

Layers: the core imports no engine; the engine imports no screen, widget, app or Textual;
screens and widgets import no source.
"""
