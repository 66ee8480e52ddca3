"""What `agentguard harden --verify` saw: frozen records, and the probe script's reader.

The probe runs inside the hardened container as its main process (a static helper shell
mounted read-only outside the working directory) and prints ``AGP <key> <value>`` lines,
using shell built-ins only. Outside, the engine's record of the same container is read.
``None`` anywhere means "not observed" -- never "fine".
"""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.facts.probe import AgentRun as AgentRun
from agentguard.facts.probe import Expected as Expected
from agentguard.facts.probe import Inside as Inside
from agentguard.facts.probe import MountInfo as MountInfo
from agentguard.facts.probe import Observation as Observation
from agentguard.facts.probe import Outside as Outside

HELPER_DIR = "/.agentguard-probe"
HELPER_PATH = f"{HELPER_DIR}/busybox"  # busybox picks its applet from argv[0]'s name
WRITE_TEST = "/.agentguard-probe-write"

# Shell built-ins only: the helper's `sh` runs it; nothing else from the image is used.
PROBE_SCRIPT = f"""\
echo "AGP begin"
while IFS= read -r l; do
  case "$l" in Uid:*|Gid:*|CapEff:*|CapPrm:*|NoNewPrivs:*) echo "AGP status $l";; esac
done < /proc/self/status
echo "AGP cwd $(pwd)"
for f in ./* ./.[!.]* ./..?*; do
  if [ -e "$f" ] || [ -L "$f" ]; then echo "AGP entry ${{f#./}}"; fi
done
if ( : > {WRITE_TEST} ) 2>/dev/null; then echo "AGP rootfs writable"; else echo "AGP rootfs denied"; fi
while IFS= read -r l; do echo "AGP mount $l"; done < /proc/self/mountinfo
while IFS= read -r l; do echo "AGP net $l"; done < /proc/net/dev
echo "AGP end"
"""
# One connection attempt per address: the helper's nc runs `true` once connected (exit 0),
# fails to connect (exit 1), or is cut off by `timeout` (143: not decided).
_EGRESS = (
    f"{HELPER_PATH} timeout 5 {HELPER_PATH} nc -w 2 {{addr}} {{port}} -e {HELPER_PATH} true "
    "</dev/null >/dev/null 2>&1; "
    "case $? in 0) v=open;; 143) v=undecided;; *) v=blocked;; esac; "
    'echo "AGP egress {addr} $v"\n'
)


def probe_script(egress: Sequence[tuple[str, int]] = ()) -> str:
    """The probe, with a connection attempt to each (address, port) before its end."""
    tries = "".join(_EGRESS.format(addr=a, port=p) for a, p in egress)
    return PROBE_SCRIPT.replace('echo "AGP end"', tries + 'echo "AGP end"')


def _ints(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in text.split())
    except ValueError:
        return None


def _unescape(s: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    for code, ch in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        s = s.replace(code, ch)
    return s


def parse_mountinfo_line(line: str) -> MountInfo | None:
    left, sep, right = line.partition(" - ")
    fields = left.split()
    tail = right.split()
    if not sep or len(fields) < 6 or not tail:
        return None
    return MountInfo(
        mountpoint=_unescape(fields[4]),
        root=_unescape(fields[3]),
        fstype=tail[0],
        options=tuple(fields[5].split(",")),
    )


def parse_probe_output(lines: Sequence[str]) -> Inside:
    status: dict[str, str] = {}
    entries: list[str] = []
    mounts: list[MountInfo] = []
    interfaces: list[str] = []
    egress: list[tuple[str, str]] = []
    cwd = rootfs = None
    begun = ended = False
    for raw in lines:
        if not raw.startswith("AGP "):
            continue
        key, _, value = raw[4:].partition(" ")
        if key == "begin":
            begun = True
        elif key == "end":
            ended = True
        elif key == "status":
            name, _, rest = value.partition(":")
            status[name.strip()] = rest.strip()
        elif key == "cwd":
            cwd = value
        elif key == "entry":
            entries.append(value)
        elif key == "rootfs":
            rootfs = value.strip()
        elif key == "mount":
            m = parse_mountinfo_line(value)
            if m is not None:
                mounts.append(m)
        elif key == "egress":
            addr, _, verdict = value.rpartition(" ")
            egress.append((addr, verdict))
        elif key == "net" and ":" in value:
            interfaces.append(value.split(":", 1)[0].strip())
    return Inside(
        uids=_ints(status["Uid"]) if "Uid" in status else None,
        gids=_ints(status["Gid"]) if "Gid" in status else None,
        cap_eff=status.get("CapEff"),
        cap_prm=status.get("CapPrm"),
        no_new_privs=status.get("NoNewPrivs"),
        cwd=cwd,
        entries=tuple(entries) if ended else None,
        rootfs=rootfs,
        mounts=tuple(mounts) if ended else None,
        interfaces=tuple(interfaces) if ended else None,
        complete=begun and ended,
        egress=tuple(egress) if ended else None,
    )
