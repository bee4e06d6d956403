"""Complete a decision payload from the MPLP Confirm object that rides along with it.

Runtimes send decisions in several shapes: the payload of docs/architecture.md §3, ``{plan_id,
confirm_id, decided_by_role, reason?, confirm?}``, seed 002 §4.3's ``{confirm_id, plan_id,
decided_by}``, or little more than the Confirm itself. This fills the fields the payload lacks, on
the raw JSON, before validation: the payload's own fields always win.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fill_from_confirm", "last_decision"]


def last_decision(confirm: Any) -> dict[str, Any]:
    """Return the Confirm's last decision record as a dict (empty when it has none)."""
    decisions = confirm.get("decisions") if isinstance(confirm, dict) else None
    if isinstance(decisions, list) and decisions and isinstance(decisions[-1], dict):
        return decisions[-1]
    return {}


def _from_confirm(confirm: Any) -> dict[str, Any]:
    """Return what the Confirm says about the payload fields (only what it has)."""
    if not isinstance(confirm, dict):
        return {}
    decision = last_decision(confirm)
    found = {
        "confirm_id": confirm.get("confirm_id"),
        "decided_by_role": decision.get("decided_by_role"),
        "reason": decision.get("reason"),
    }
    if confirm.get("target_type") == "plan":
        found["plan_id"] = confirm.get("target_id")
    return {key: value for key, value in found.items() if value is not None}


def fill_from_confirm(data: Any) -> Any:
    """Return the payload with ``decided_by`` and the Confirm's fields filled in (a copy)."""
    if not isinstance(data, dict):
        return data  # validation will say what is wrong
    filled = dict(data)
    if filled.get("decided_by_role") is None and filled.get("decided_by") is not None:
        filled["decided_by_role"] = filled["decided_by"]
    for key, value in _from_confirm(filled.get("confirm")).items():
        if filled.get(key) is None:
            filled[key] = value
    return filled
