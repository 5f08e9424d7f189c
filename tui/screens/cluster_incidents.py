"""The cluster screen's anomaly panel: one row per incident (its root, what it explains, what
to do), and the keys that visit the rows, open an incident whole, say what to do about
them, go to when one began and take a restart off the panel."""

from __future__ import annotations

from textual import on

from ...widgets.anomaly_list import AnomalyList, Row
from ..core.advice.advise import action_on
from ..core.advice.incidents import Incident
from ..core.analysis import Analysis
from ..core.detect.detectors import Anomaly
from ..core.detect.restarts import KIND as RESTART
from . import cluster_lines
from .advice import AdviceScreen
from .cluster_state import ClusterState
from .hints import key_for
from .incident_detail import IncidentScreen, incident_on


class IncidentPanel(ClusterState):
    """What the cluster screen (``cluster.ClusterScreen``) does with its anomaly panel."""

    anomalies: tuple[Anomaly, ...] = ()
    incidents: tuple[Incident, ...] = ()  # the panel's rows: one per root
    current_incident: int | None = None
    dismissed: set[tuple[float, int]]  # restarts taken off the panel

    def _show_anomalies(self, analysis: Analysis) -> None:
        previous = self._current_key()
        self.anomalies = analysis.anomalies
        # the restarts on record follow the active incidents, as resolved rows of their own
        self.incidents = (*analysis.incidents, *(
            Incident(r.anomaly) for r in analysis.restarts if r.key not in self.dismissed))
        keys = [incident.key for incident in self.incidents]
        self.current_incident = (keys.index(previous) if previous in keys
                                 else self._incident_holding(previous))
        self._draw_anomalies()
        marked = frozenset(a.rank for a in self.anomalies if a.rank is not None)
        for panel in self.panels:
            panel.heatmap.set_marks(marked)

    def _incident_holding(self, key: tuple[str, int | None] | None) -> int | None:
        """The row whose incident holds ``key`` under another root: the same trouble, seen
        at another moment or folded anew."""
        if key is None:
            return None
        return next((index for index, incident in enumerate(self.incidents)
                     if any(a.key == key for a in incident.members)), None)

    def _current_key(self) -> tuple[str, int | None] | None:
        if self.current_incident is None or self.current_incident >= len(self.incidents):
            return None
        return self.incidents[self.current_incident].key

    def _draw_anomalies(self) -> None:
        if not self.query("#anomalies"):
            return  # the maps are being laid out anew: the panel is drawn once they are
        rows = [Row(i.severity, self._describe(i), i.pending) for i in self.incidents]
        box = self.query_one("#anomalies", AnomalyList)
        visit = f"{key_for(self, 'anomaly.next')} / {key_for(self, 'anomaly.previous')}"
        counts = cluster_lines.count_by_severity(self.incidents)
        advice = key_for(self, "advice.open")
        box.border_title = (f"anomalies ({counts}): {visit} to visit, {advice} what to do"
                            if rows else "anomalies")
        box.set_rows(rows, self.current_incident, self._verdict_when_clear())

    def _verdict_when_clear(self) -> tuple[str, bool]:
        """What the panel says without a row: that it waits, before the first answer."""
        if self.waiting_since is None:
            return self.analysis.verdict_when_clear
        return cluster_lines.waiting_text(self.status.name,
                                          self.app.clock() - self.waiting_since), False

    def _describe(self, incident: Incident) -> str:
        """"rank 37 gpu-node-004 GPU 5  thermal → straggler 1.29x: GPU 88 °C, …": where,
        the root and what it explains, then the root's own text; first, what to do about
        it, where the advice acts on its node or GPU."""
        root = incident.root
        where = "the whole job"
        if root.rank is not None and root.rank < len(self.rank_map):
            rank = self.rank_map.ranks[root.rank]
            where = f"rank {rank.rank} {rank.place}"
        # The hold goes before the summary, so a long summary cut with … never hides it.
        held = (f" ({root.held:.0f} s of {root.confirm_after:.0f} s)"
                if root.pending and not root.awaiting else "")
        if root.kind == RESTART:
            return f"✓ resolved · {where}  {incident.headline}: {root.summary}"
        return f"{self._advice(incident)}{where}  {incident.headline}{held}: {root.summary}"

    def _advice(self, incident: Incident) -> str:
        """"⇒ drain the node · " before a root whose node or GPU the advice acts on."""
        rank = incident.root.rank
        action = (action_on(self.analysis.actions, rank, self.rank_map)
                  if rank is not None and not incident.pending else None)
        return f"⇒ {action.short} · " if action is not None and action.on_gpu else ""

    def action_next_anomaly(self, step: int) -> None:
        if not self.incidents:
            self.app.notify("No active anomalies.", timeout=3)
            return
        if self.current_incident is None:
            index = 0 if step > 0 else len(self.incidents) - 1
        else:
            index = (self.current_incident + step) % len(self.incidents)
        self._visit(index)

    @on(AnomalyList.Selected)
    def _anomaly_clicked(self, event: AnomalyList.Selected) -> None:
        self._visit(event.index)

    def _visit(self, index: int) -> None:
        self.current_incident = index
        self._draw_anomalies()
        rank = self.incidents[index].rank
        if rank is not None:
            self.select(rank)

    def _chosen_incident(self) -> Incident | None:
        """The highlighted row's incident, else the one on the cursor's rank, else the
        first (None, after saying so, when there is none)."""
        if not self.incidents:
            self.app.notify("No active anomalies.", timeout=3)
            return None
        index = self.current_incident
        if index is not None and index < len(self.incidents):
            return self.incidents[index]
        return incident_on(self.incidents, self.cursor) or self.incidents[0]

    def action_incident_detail(self) -> None:
        chosen = self._chosen_incident()
        if chosen is None:
            return
        frame = self.analysis.frame
        now = frame.time if frame is not None else self.app.clock()
        self.app.push_screen(IncidentScreen(chosen, self.rank_map, now))

    def action_advice(self) -> None:
        if self.waiting_since is not None:  # not even "no advice" before anything is known
            self.app.notify(self._verdict_when_clear()[0], timeout=4, markup=False)
            return
        self.app.push_screen(AdviceScreen(self.analysis.actions))

    def action_since(self) -> None:
        chosen = self._chosen_incident()
        if chosen is not None:
            self.app.go_to_start(chosen.root.since)

    def action_dismiss_restart(self) -> None:
        """Take the highlighted restart's row off the panel."""
        index = self.current_incident
        chosen = self.incidents[index] if index is not None and index < len(self.incidents) \
            else None
        restart = next((r for r in self.analysis.restarts
                        if chosen is not None and r.anomaly == chosen.root), None)
        if restart is None:
            self.app.notify("Only a restart's row can be dismissed: select it with "
                            f"{key_for(self, 'anomaly.next')}.", timeout=4, markup=False)
            return
        self.dismissed.add(restart.key)
        self.current_incident = None
        self._show_anomalies(self.analysis)
