"""The raw bytes the console writes to a real terminal hold none of the escape sequences
smuggled into host labels and alert texts, while the text around them still shows, with
each control made visible as "�"."""

from __future__ import annotations

from tests.faults.conftest import JOB, RANKS
from tests.faults.proxy import TERMINAL_ESCAPES
from tests.pty_console import PtyConsole

# Single characters that must never reach the terminal from data: ESC is excluded as the
# console's own output is made of escape sequences; the sequences themselves are checked.
FORBIDDEN_CHARACTERS = "\x9b\x9c\x9d\x00\u202e\u2066"


def run_console(proxy, tmp_path, *keys: str, shown: str = "") -> str:
    """The raw bytes of a console that was sent ``keys``, once ``shown`` is on screen (the
    rank screen's alerts load in a worker: a fixed pause is not enough on a busy machine)."""
    console = PtyConsole.ranktop("--prometheus", proxy.url, "--job", JOB, "--refresh", "1",
                                 "--alertmanager", proxy.url, size=(160, 50),
                                 env={"XDG_STATE_HOME": str(tmp_path)})
    try:
        assert console.wait_for(f"ranks {RANKS}/{RANKS} up"), console.text()[-2000:]
        console.read(1.5)
        for key in keys:
            console.send(key, pause=1.5)
        if shown:
            assert console.wait_for(shown), console.text()[-2000:]
        console.send("\x03", pause=0.5)  # ctrl+c quits from any screen (q goes back)
        status, _ = console.finish()
    finally:
        console.close()
    assert status == 0
    return bytes(console.output).decode("utf-8", "replace")


def assert_nothing_injected(raw: str) -> None:
    for name, sequence in TERMINAL_ESCAPES.items():
        assert sequence not in raw, name
    for start in ("\x1b]52;", "\x1b]8;;https://evil", "\x1b]2;pwned", "\x1b[2J"):
        assert start not in raw, repr(start)
    assert not set(FORBIDDEN_CHARACTERS) & set(raw)


def test_escapes_in_host_labels_never_reach_the_terminal(proxy, tmp_path):
    proxy.set("escapes")
    raw = run_console(proxy, tmp_path)
    assert_nothing_injected(raw)
    shown = PtyConsole.strip(raw)
    assert "�]52;c;b3duZWQ=�" in shown  # the host's text, its controls made visible


def test_escapes_and_actions_in_an_alert_never_reach_the_terminal(proxy, tmp_path):
    proxy.set("alertmanager")
    raw = run_console(proxy, tmp_path, "\r", shown="Ackno")  # open rank 0: its alerts
    assert_nothing_injected(raw)
    shown = PtyConsole.strip(raw)
    assert "[@click=app.quit]Acknowledge[/]" in shown or "[@click=app.quit]Ackno" in shown
    assert "GpuHot�]2;pwned�\\" in shown
