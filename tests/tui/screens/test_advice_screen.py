"""The advice on the cluster screen: a short action on a root's row, a key opening the list
of actions with their commands, and a key copying the selected command only when pressed."""

from __future__ import annotations

from ranktop.tui.screens.advice import AdviceScreen

from tests.tui.conftest import make_app, screen_text
from tests.tui.screens.test_incident_rows import panel_rows, watched


async def test_a_roots_row_names_its_action(tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)  # the demo's XID 79, its rank dead
    async with app.run_test(size=(160, 40)) as pilot:
        await watched(app, pilot, 4)
        [row] = panel_rows(app, 455)
        assert "⇒ drain the node · rank 455 gpu-node-056 GPU 7  xid → missing" in row
        [ecc] = panel_rows(app, 128)
        assert "⇒ reset the GPU when idle · rank 128 gpu-node-016 GPU 0  memory" in ecc


async def test_the_advice_key_lists_the_actions_and_copies_only_when_asked(tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await watched(app, pilot, 4)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AdviceScreen)
        text = screen_text(app)
        assert "▶ drain gpu-node-056 (XID 79: GPU has fallen off the bus; recovery action:" in text
        assert "$ scontrol update NodeName=gpu-node-056 State=DRAIN Reason=" in text
        assert "Nothing here is run by ranktop." in text
        assert app.clipboard == ""  # nothing copied by opening it
        await pilot.press("y")  # the selected command only: the drain's first
        await pilot.pause()
        assert app.clipboard.startswith("scontrol update NodeName=gpu-node-056 State=DRAIN")
        assert len(app.clipboard.splitlines()) == 1
        copied = []
        for _ in range(2):  # each of its other commands in turn, the last one included
            await pilot.press("j", "y")
            await pilot.pause()
            copied.append(app.clipboard)
        assert copied == ["kubectl cordon gpu-node-056",
                          "kubectl drain gpu-node-056 --ignore-daemonsets "
                          "--delete-emptydir-data"]
        assert "▸ $ kubectl drain gpu-node-056" in screen_text(app)
        await pilot.press("j")  # the next action: the node whose NVLink errors spread
        await pilot.pause()
        assert "▶ drain gpu-node-037 (NVLink CRC errors +" in screen_text(app)
        await pilot.press("j", "j", "j")  # past its three commands, the ECC GPU's reset
        await pilot.pause()
        assert "▶ reset GPU 0 on gpu-node-016 when idle" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == "ssh gpu-node-016 sudo nvidia-smi --gpu-reset -i 0"
        await pilot.press("g")
        await pilot.pause()
        assert "▶ drain gpu-node-056" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, AdviceScreen)


async def test_the_drain_lists_the_other_job_on_its_node_during_the_hang(tmp_path):
    app = make_app(at=180.0, log_root=tmp_path)  # rank 455 dead, the job hung
    async with app.run_test(size=(160, 40)) as pilot:
        await watched(app, pilot, 4)
        await pilot.press("a")
        await pilot.pause()
        text = screen_text(app)
        assert "▶ drain gpu-node-056 (XID 79" in text
        assert ("also on gpu-node-056: job eval-sweep-7 (GPUs 8, 9): a drain stops it too"
                in text)
        assert "also on gpu-node-016" not in text  # a reset stops no one else


async def test_with_nothing_to_do_the_list_says_so_and_copies_nothing():
    app = make_app(at=2.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 2)
        await pilot.press("a")
        await pilot.pause()
        assert "No advice: no confirmed incident asks for an action." in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == ""


async def test_the_advice_key_is_named_in_the_anomalies_title_and_the_help():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 2)
        assert ": n / N to visit, a what to do" in screen_text(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "What to do about the incidents" in screen_text(app)


async def test_the_restart_says_from_which_checkpoint_and_what_it_costs_during_the_hang(tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)  # rank 455 died at 172 s: the job hangs
    async with app.run_test(size=(200, 40)) as pilot:
        await watched(app, pilot, 4)
        await pilot.press("a")
        await pilot.pause()
        text = screen_text(app)
        assert ("restart the job (stopped by XID 79 on rank 455): resumes from step 120,100 "
                "(checkpoint metric), losing") in text  # the step stands at 120,118
        # priced at the healthy step (1.12 s), not the straggler's slower one before the hang
        assert "18 steps = 2.9 GPU-hours; stopped 8 s: 1.1 GPU-hours idle so far" in text
