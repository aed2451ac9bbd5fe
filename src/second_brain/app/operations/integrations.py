"""Integrations: what is connected, connect, sync now, disconnect (app/integrations/service.py), and the kinds
there are to connect, as their connectors declare themselves (domain/integrations.ConnectorSpec)."""

from dataclasses import asdict
from typing import Any

from ...domain.errors import InvalidInput
from ...domain.integrations import ConnectorSpec
from ...ports.integrations import Unavailable
from ..brain import Brain
from ..handling import Context
from .inputs import identifier, required, workspaces_for


def integrations(brain: Brain, ctx: Context) -> dict[str, Any]:
    """The integrations of the workspaces the caller can read: status, last sync, counts, last error."""
    return {"ok": True, "integrations": brain.integrations.list(ctx)}


def integration_kinds(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Every kind of integration this brain knows, as its connector declares it (what the dashboard's connect forms
    are made from): its settings in the form's order, which are secrets, whether only the owner may connect it
    (`local`), and whether this deployment runs it (`available`: a notes folder is not on Lambda)."""
    connectors = brain.integrations.connectors
    return {"ok": True, "kinds": [described(connector.spec, not isinstance(connector, Unavailable))
                                  for _, connector in sorted(connectors.items())]}


def connector_specs(brain: Brain) -> list[ConnectorSpec]:
    """Every kind's spec, by kind: what the published schema of POST /integrations is made from."""
    return [connector.spec for _, connector in sorted(brain.integrations.connectors.items())]


def described(spec: ConnectorSpec, available: bool) -> dict[str, Any]:
    return {"kind": spec.kind, "title": spec.title, "source": spec.source, "local": spec.local,
            "available": available, "one_of": list(spec.one_of), "form": asdict(spec.form),
            "fields": [{**asdict(f), "choices": [{"value": value, "label": label} for value, label in f.choices]}
                       for f in spec.fields]}


def connect_integration(brain: Brain, ctx: Context, kind: str | None, name: str | None,
                        settings: dict[str, Any] | None, layer: str | None = None) -> dict[str, Any]:
    """Connect one, into the caller's personal workspace unless the company one is asked for (an admin's, their
    first team); its first sync runs at once."""
    kind = required(kind, "kind").strip()
    if settings is not None and not isinstance(settings, dict):
        raise InvalidInput("settings must be an object")
    if layer == "company" and not ctx.identity.company_workspaces:
        raise InvalidInput("You belong to no team: connect to personal")
    workspace = workspaces_for(ctx, layer)[0] if layer else None
    done = brain.integrations.connect(ctx, kind, (name or kind).strip(), settings or {}, workspace)
    return {"ok": True, **done}


def sync_integration(brain: Brain, ctx: Context, integration_id: str | None) -> dict[str, Any]:
    report = brain.integrations.sync(ctx, identifier(integration_id))
    return {"ok": True, "id": integration_id.strip() if integration_id else "", "sync": report}


def disconnect_integration(brain: Brain, ctx: Context, integration_id: str | None,
                           forget_mirrors: bool | None) -> dict[str, Any]:
    """Stop syncing; the mirrors are kept as ordinary memories unless `forget_mirrors`."""
    return {"ok": True, **brain.integrations.disconnect(ctx, identifier(integration_id), bool(forget_mirrors))}
