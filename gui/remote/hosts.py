"""The machines connected to before, most recent first, and the agent command used with each, kept in the
window's settings so File ▸ Connect to a machine… offers them again. No widgets here.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings

RECENT_KEY = "remote/recent_hosts"  # JSON: [{"host": ..., "agent_command": ...}, ...]
MAX_RECENT = 8


def recent_hosts(settings: QSettings) -> list[tuple[str, str]]:
    """(host, agent command) pairs, most recent first; settings edited by hand or from another version give
    what can be read of them."""
    raw = settings.value(RECENT_KEY, "")
    try:
        entries = json.loads(str(raw)) if raw else []
    except ValueError:
        return []
    found: list[tuple[str, str]] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("host"), str) and entry["host"].strip():
            command = entry.get("agent_command")
            found.append((entry["host"].strip(), command if isinstance(command, str) else ""))
    return found[:MAX_RECENT]


def remember_host(settings: QSettings, host: str, agent_command: str = "") -> None:
    """Put `host` first (once) with the agent command it was reached with."""
    host = host.strip()
    kept = [(h, c) for h, c in recent_hosts(settings) if h != host]
    entries = [(host, agent_command.strip()), *kept][:MAX_RECENT]
    settings.setValue(RECENT_KEY, json.dumps([{"host": h, "agent_command": c} for h, c in entries]))
