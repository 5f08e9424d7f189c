"""HTTP servers the tests start in a thread of their own."""

from __future__ import annotations

import socketserver
import threading

# How often a serving thread looks for shutdown(): at the default, 0.5 s, every test that
# stopped a server waited half a second for it.
SHUTDOWN_POLL_SECONDS = 0.01


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """``server`` serving from a daemon thread, which ``server.shutdown()`` ends at once."""
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_SECONDS,),
                              daemon=True)
    thread.start()
    return thread
