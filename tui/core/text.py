"""A log line made safe to display, and its kind.

Log lines are untrusted bytes: any process of the job can write anything into them, and
nothing may reach the terminal as a control. ``sanitise`` makes one line displayable:

- invalid UTF-8 becomes U+FFFD "�";
- a carriage return starts the line over, as on a terminal: only the text after the last
  ``\\r`` is kept, so a progress bar shows its latest state (CRLF endings lose the CR);
- escape sequences are removed whole: CSI (``ESC [`` ... final byte, or U+009B), OSC, DCS,
  SOS, PM and APC strings ended by BEL or ST, other ``ESC`` sequences, and a lone ESC. An
  unterminated string loses only its introducer, so its text stays visible;
- every other control character (C0 except TAB, DEL, C1, and the line and paragraph
  separators U+2028/U+2029) becomes "�", which shows that something was there;
- bidi controls (U+202A..U+202E, U+2066..U+2069, and the marks U+200E, U+200F, U+061C)
  are removed, so no text can be made to read in another order;
- TABs become spaces (stops every 8 columns);
- a line longer than ``max_line_chars`` is cut there and ends with "… [N more characters]"
  (for a line of megabytes N is counted on the raw bytes, so it is close, not exact).

The text is plain: show it as ``rich.text.Text``, never as markup ("[rank3]:" is no tag).

``plain`` does the same for a short string from outside that is not a log line: a label
value, an alert's summary, an error body, a file name. There every control character,
ESC and bidi control included (and a lone surrogate, which JSON can carry and no terminal
can take), becomes "�" rather than vanishing, so a hostile value
shows that it held something, and nothing of it reaches the terminal as a control.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .watchdog import DUMP_WRITTEN, WAIT_TIMEOUT

NAMED_RANKS = 5  # ranks a summary names before "... (+N)"

_UNSAFE_BYTES = re.compile(rb"[^\x20-\x7e]")
_CONTINUATION = bytes(range(0x80, 0xC0))
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]?"
)
_LINE_BREAKS = r"\u2028\u2029"
_BIDI_CHARS = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(rf"[\x00-\x08\x0a-\x1f\x7f-\x9f{_LINE_BREAKS}]")  # TAB is kept
_BIDI = re.compile(rf"[{_BIDI_CHARS}]")
# Every control (TAB too), bidi override and lone surrogate (JSON can hold them): no
# terminal can take them from a label.
_UNPRINTABLE = re.compile(rf"[\x00-\x1f\x7f-\x9f{_LINE_BREAKS}{_BIDI_CHARS}\ud800-\udfff]")
PLAIN_CHARS = 256

# The NCCL line of data-contracts §3.1 (TRACE lines add milliseconds since init), after any
# number of launcher prefixes (mpirun "[1] ", srun -l "3: ", torchrun "[default0]:" or
# "[rank3]: ", pdsh "host: ").
_LAUNCHER = r"(?:\[\d+\] |\d+: |\[\w+\d+\]: ?|[\w.-]+: )*"
# How a line starts, after the launcher prefixes: an NCCL line, another NCCL line (version,
# CALL), or a glog line without brackets ("E1206 18:44:12.715298 48211 file.cc:89]").
_HEAD = re.compile(
    _LAUNCHER + r"(?:(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\] )?"
    r"[^:\s]+:\d+:\d+ \[\d+\] (?:[\d.]+ )?(?:\S+:\d+ (?:\([^)]*\) )?)?"
    r"NCCL (?P<level>INFO|WARN|TRACE)\b"
    r"|(?P<other>NCCL version \d|[^:\s]+:\d+:\d+ NCCL CALL )"
    r"|(?P<glog>[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w./-]+:\d+\]))"
)
# "Some NCCL operations have failed or timed out" is not among them: it is what PyTorch
# says after a failure or a timeout, before taking the process down ("error"). gloo's and
# nccl2's timeouts are, and so is the Flight Recorder's dump written after one.
_WATCHDOG = (
    r"Watchdog caught collective operation timeout|timed out in blocking wait"
    r"|Timeout at NCCL work|watchdog got stuck|Heartbeat monitor timed out"
    r"|failed collective not found|detected by watchdog"
    rf"|{WAIT_TIMEOUT.pattern}|{DUMP_WRITTEN.pattern}"
)
# Network trouble whatever the line; the transports named on their own are news only
# outside NCCL INFO lines, which name NET/IB for every channel at start-up.
_NET_TROUBLE = (
    r"Connection (?:reset|refused|closed)|remote process exited|network error|Broken pipe"
    r"|ibv_\w|Got completion from peer|port error"
)
_NET = r"NET/(?:IB|Socket|OFI)|socket|Socket"
# NCCL's proxy service thread says this whenever a communicator is torn down: routine.
_ROUTINE_INFO = "[Service thread] Connection closed"
# A process going down: the C++ runtime's last words, which repeat the exception (a
# watchdog timeout included) that brought it down. Errors, whatever the message they repeat.
_CRASH = r"terminate called |\bwhat\(\): |Exception raised from "
# No \b before these words: it would keep the regex engine from skipping ahead.
_ERROR = (
    r"\[[EF](?:\d{4} [\d:.]+)? [\w./-]+:\d+\]"
    r"|Traceback \(most recent call last\)|Error:|Exception:|RuntimeError"
    r"|ERROR(?<!\wERROR)(?!\w)|CUDA error|CUDA_ERROR_|cudaError|CUBLAS_STATUS_(?!SUCCESS)"
    r"|NCCL error|illegal memory access|Some NCCL operations have failed or timed out"
)
_WATCHDOG_RE, _NET_TROUBLE_RE, _NET_RE, _ERROR_RE, _CRASH_RE = (
    re.compile(pattern) for pattern in (_WATCHDOG, _NET_TROUBLE, _NET, _ERROR, _CRASH))


def sanitise(raw: bytes, max_chars: int = 4000) -> str:
    """The bytes of one line as text that is safe to display (see the module docstring)."""
    return clean(raw.removesuffix(b"\n"), max_chars)


def plain(text: str, max_chars: int = PLAIN_CHARS) -> str:
    """A string from outside made safe to show on one line (see the module docstring)."""
    if not text.isprintable():  # the fast path: most values hold no control at all
        text = _UNPRINTABLE.sub("\ufffd", text)
    if len(text) > max_chars:
        return f"{text[:max_chars]}… [{len(text) - max_chars} more characters]"
    return text


def classify(text: str) -> str:
    """The kind of a sanitised line: watchdog, net, nccl_warn, error, nccl_info or plain.

    Checked in that order, so a WARN about NET/IB is "net". NCCL INFO lines that only name a
    transport ("via NET/IB/0", one per channel at start-up) stay "nccl_info"; they are "net"
    only when they tell of trouble (connection reset, ibv_ failure, ...), and NCCL's
    "[Service thread] Connection closed" at teardown is no trouble. A process's crash lines
    (``terminate called ...``, ``what(): ...``, ``Exception raised from ...``) are "error"
    even when they repeat a watchdog message: the watchdog line itself came before them.
    PyTorch's ``[rankN]: `` repeat of a traceback's last line is what its error says: gloo's
    ``Timed out waiting ...`` is "watchdog", its ``Connection closed by peer`` "net", a
    ``ValueError`` of the job's own "error".
    """
    if _CRASH_RE.search(text):
        return "error"
    head = _HEAD.match(text)
    level = head.group("level") if head else None
    if _WATCHDOG_RE.search(text):
        return "watchdog"
    if level == "INFO" and _ROUTINE_INFO in text:
        return "nccl_info"
    if _NET_TROUBLE_RE.search(text) or (level in (None, "WARN") and _NET_RE.search(text)):
        return "net"
    if level == "WARN":
        return "nccl_warn"
    if _ERROR_RE.search(text) or (head and head.group("glog")):
        return "error"
    return "nccl_info" if head else "plain"


def byte_limit(max_chars: int) -> int:
    # Room for multi-byte characters and colour codes before a line is cut.
    return max_chars * 8 + 64


def count_chars(raw: bytes) -> int:
    return len(raw.translate(None, _CONTINUATION))  # UTF-8 continuation bytes start no character


def _after_last_cr(raw: bytes) -> bytes:
    end = len(raw.rstrip(b"\r"))
    start = raw.rfind(b"\r", 0, end)
    return raw[start + 1:end]


def clean(raw: bytes, max_chars: int, dropped: int = 0) -> str:
    raw = _after_last_cr(raw)
    limit = byte_limit(max_chars)
    if len(raw) > limit:
        dropped += count_chars(raw[limit:])
        raw = raw[:limit]
    if _UNSAFE_BYTES.search(raw) is None:
        return _cut(raw.decode("ascii"), max_chars, dropped)
    text = _ESCAPES.sub("", raw.decode("utf-8", "replace"))
    text = _BIDI.sub("", _CONTROLS.sub("\ufffd", text))
    return _cut(text, max_chars, dropped)


def _cut(text: str, max_chars: int, dropped: int) -> str:
    if len(text) > max_chars:
        dropped += len(text) - max_chars
        text = text[:max_chars]
    if "\t" in text:
        text = text.expandtabs(8)
        if len(text) > max_chars:
            dropped += len(text) - max_chars
            text = text[:max_chars]
    return f"{text}… [{dropped} more characters]" if dropped else text


def clean_lines(raws: list[bytes], max_chars: int) -> list[str]:
    """``clean`` for many lines at once: one decode when all are short printable ASCII."""
    if not raws:
        return []
    joined = b" ".join(raws)  # a space: a newline would be an unsafe byte
    if max(map(len, raws)) <= max_chars and _UNSAFE_BYTES.search(joined) is None:
        return [raw.decode("ascii") for raw in raws]
    return [clean(raw, max_chars) for raw in raws]


def ranks_named(ranks: Sequence[int], with_noun: bool = True) -> str:
    """"ranks 1, 2, 3, 4, 5, ... (+3)": the first few of ``ranks`` and how many more."""
    shown = ", ".join(str(r) for r in ranks[:NAMED_RANKS])
    more = f", ... (+{len(ranks) - NAMED_RANKS})" if len(ranks) > NAMED_RANKS else ""
    if not with_noun:
        return shown + more
    return f"{'rank' if len(ranks) == 1 else 'ranks'} {shown}{more}"
