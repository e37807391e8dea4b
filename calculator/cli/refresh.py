"""``python -m calculator sheets refresh --from FILE|URL|genai-prices|litellm [--read-on DATE] [--json] [--write]``.

Reads genai-prices' data.json or LiteLLM's model cost map (:mod:`calculator.catalog.price_lists`), or the
list an installed package bundles, and prints, per offer of ours whose prices differ, the proposed new
version as old -> new per field, with our version's source and date beside the list's; ``--write`` appends
exactly the versions shown. A refresh never adds offers (list models no offer of ours matches are counted,
not proposed: ``sheets import-genai-prices`` proposes new offers) and never makes a sheet worse: offers
retired here, and offers the list dates no later than our newest reading, are reported with nothing
proposed, and a long-context tier of ours the list lacks is kept and named.
"""

from __future__ import annotations

import argparse
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

from calculator.catalog.genai_prices import DiffEntry, WriteResult, write_proposals
from calculator.catalog.price_lists import INSTALLED, Refresh, installed_list, parse_list, read_list, refresh
from calculator.catalog.prices import DEFAULT_SHEETS_DIR, load_price_sheets
from calculator.cli import console
from calculator.cli.extras import _short, _value_json, _version_prices

__all__ = ["refresh_json", "run_refresh"]

_BASIS_SHOWN = {
    "given": "given with --read-on",
    "the list's data": "the latest date its data says a price was checked",
}


def _proposal_json(e: DiffEntry) -> dict[str, Any]:
    assert e.proposal is not None
    source = e.proposal.version.source
    return {
        "provider": e.provider,
        "offer_id": e.offer_id,
        "model": e.model,
        "list_model": e.genai_id,
        "effective": e.write_effective.isoformat() if e.write_effective else None,
        "changes": [{"field": c.field, "old": _value_json(c.old), "new": _value_json(c.new)} for c in e.changes],
        "old": _version_prices(e.old),
        "new": _version_prices(e.proposal.version),
        "kept_from_ours": list(e.proposal.kept),
        "list_deprecated": e.proposal.deprecated,
        "source": {
            "url": source.url,
            "document": source.document,
            "read": source.read.isoformat(),
            "note": source.note,
        },
        "old_source": _old_source(e),
        "note": e.proposal.version.note,
        "writable": e.writable,
        "reason": e.reason,
    }


def _old_source(e: DiffEntry) -> dict[str, Any] | None:
    """Our version's source, and the newest day any version of the offer was read."""
    if e.old is None:
        return None
    return {
        "url": e.old.source.url,
        "document": e.old.source.document,
        "read": e.old.source.read.isoformat(),
        "newest_read": e.ours_read.isoformat() if e.ours_read else None,
    }


def _held_json(e: DiffEntry) -> dict[str, Any]:
    """An offer the refresh reports and proposes nothing for (retired here, or the list is not newer)."""
    return {
        "provider": e.provider,
        "offer_id": e.offer_id,
        "model": e.model,
        "list_model": e.genai_id,
        "changes": [{"field": c.field, "old": _value_json(c.old), "new": _value_json(c.new)} for c in e.changes],
        "list_read": e.proposal.version.source.read.isoformat() if e.proposal else None,
        "old_source": _old_source(e),
        "reason": e.reason,
    }


def refresh_json(result: Refresh, sheets_dir: Path, written: list[WriteResult] | None) -> dict[str, Any]:
    price_list, text = result.price_list, result.price_list.text
    return {
        "list": {
            "format": price_list.format,
            "name": price_list.name,
            "location": text.location,
            "url": text.url,
            "read": text.read.isoformat() if text.read else None,
            "read_basis": text.read_basis,
            "last_modified": text.last_modified.isoformat() if text.last_modified else None,
        },
        "sheets": str(sheets_dir),
        "as_of": result.report.as_of.isoformat(),
        "counts": {
            "changed": len(result.proposals),
            "same": len(result.same),
            "missing": len(result.missing),
            "unmatched": sum(result.unmatched.values()),
            "retired": len(result.retired),
            "older": len(result.older),
        },
        "proposals": [_proposal_json(e) for e in result.proposals],
        "tiers_kept": result.tiers_kept,
        "retired": [_held_json(e) for e in result.retired],
        "older": [_held_json(e) for e in result.older],
        "same": [
            {"provider": e.provider, "offer_id": e.offer_id, "model": e.model, "list_model": e.genai_id}
            for e in result.same
        ],
        "missing": [
            {"provider": e.provider, "offer_id": e.offer_id, "model": e.model, "reason": e.reason}
            for e in result.missing
        ],
        "unmatched": {
            "our_providers": result.unmatched,
            "providers_without_sheet": result.other_providers,
            "not_token_priced": price_list.not_token_priced,
            "duplicates": price_list.duplicates,
        },
        "written": None
        if written is None
        else [{"provider": w.provider, "path": str(w.path), "versions_added": list(w.versions_added)} for w in written],
    }


def _shown(value: Any) -> str:
    """A price as the sheets write it (2.50, 0.125), anything else as text."""
    if not isinstance(value, Decimal):
        return _short(value)
    whole, _, cents = format(value.normalize(), "f").partition(".")
    return f"{whole}.{cents.ljust(2, '0')}"


def _cite(url: str | None, document: str | None) -> str:
    return f"{document} ({url})" if url and document else (url or document or "-")


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def _print_text(result: Refresh, sheets_dir: Path, written: list[WriteResult] | None) -> None:
    price_list, text = result.price_list, result.price_list.text
    basis = _BASIS_SHOWN.get(text.read_basis, text.read_basis)
    dated = text.read.isoformat() if text.read else "undated"
    print(f"{price_list.name}: {text.location}, dated {dated} ({basis})")
    if text.last_modified and text.read_basis != "HTTP Last-Modified header":
        print(f"The server says it was last modified on {text.last_modified.isoformat()}.")
    print(f"Compared with the sheets in {sheets_dir}, prices in force on {result.report.as_of.isoformat()}.")
    name = price_list.data.list_name
    if not result.proposals:
        print("\nNo offer of ours is priced differently.")
    else:
        print(f"\nOffers priced differently: {len(result.proposals)}, a new version proposed for each.")
    for e in result.proposals:
        assert e.proposal is not None
        version = e.proposal.version
        when = f"effective {e.write_effective.isoformat()}" if e.write_effective else "not writable"
        print(f"\n{e.provider} {e.offer_id} ({name} {e.genai_id}), new version {when}")
        width = max((len(c.field) for c in e.changes), default=0)
        for c in e.changes:
            print(f"    {c.field:<{width}}  {_shown(c.old)} -> {_shown(c.new)}")
        source = version.source
        cited = f"{source.document} ({source.url})" if source.url else source.document
        print(f"    source: {cited}, read {source.read.isoformat()}")
        if e.old is not None:
            print(f"    ours:   {_cite(e.old.source.url, e.old.source.document)}, read {e.old.source.read.isoformat()}")
        if e.proposal.kept:
            print(f"    kept from ours ({name} does not give them): {', '.join(e.proposal.kept)}")
        if e.proposal.deprecated:
            print(f"    {name} marks this model deprecated")
        if e.reason:
            print(f"    not writable: {e.reason}")
    for e in result.retired:
        print(f"\n{e.provider} {e.offer_id}: {e.reason}.")
    if result.older:
        print(f"\nNot newer than our reading, nothing proposed: {len(result.older)}.")
        for e in result.older:
            fields = ", ".join(f"{c.field} {_shown(c.old)} -> {_shown(c.new)}" for c in e.changes)
            said = f"the list says {fields}" if fields else "we have no price in force on the list's date"
            print(f"    {e.provider} {e.offer_id}: {e.reason} ({said})")
    if result.tiers_kept:
        kept = "; ".join(f"{offer} {', '.join(tiers)}" for offer, tiers in result.tiers_kept.items())
        print(f"\nLong-context tiers kept from ours ({name} gives none there): {kept}.")
    print()
    if result.same:
        print(f"Same prices: {len(result.same)} ({', '.join(f'{e.provider} {e.offer_id}' for e in result.same)}).")
    if result.missing:
        print(f"Not in the list: {len(result.missing)} ({'; '.join(e.reason or '' for e in result.missing)}).")
    others = result.other_providers
    summary = []
    if result.unmatched:
        summary.append(
            f"{sum(result.unmatched.values())} models of our providers that no offer matches "
            f"({_counted(result.unmatched)})"
        )
    if others:
        summary.append(f"{sum(others.values())} entries of {len(others)} providers without a sheet here")
    if price_list.not_token_priced:
        summary.append(f"{price_list.not_token_priced} entries not priced per token (embeddings, images, audio ...)")
    if summary:
        print(f"Not compared: {'; '.join(summary)}.")
    if written is None:
        writable = len(result.writable_report.entries)
        if writable:
            sheets = sorted({f"{e.provider}.yaml" for e in result.writable_report.entries})
            print(f"Nothing written. --write would add {writable} new versions to {', '.join(sheets)}.")
        return
    if not written:
        print("Nothing to write.")
    for w in written:
        print(f"Wrote {w.path}: {len(w.versions_added)} new versions ({', '.join(w.versions_added)}).")


def run_refresh(args: argparse.Namespace) -> int:
    """``sheets refresh --from FILE|URL``: the list read and checked before any sheet is compared or written."""
    sheets_dir: Path = getattr(args, "sheets", None) or DEFAULT_SHEETS_DIR
    read_on = getattr(args, "read_on", None)
    if args.from_list in INSTALLED:  # a file of that name is read as ./genai-prices
        price_list = installed_list(args.from_list, read_on)
    else:
        price_list = parse_list(read_list(args.from_list, read_on))
    catalog = load_price_sheets(sheets_dir)
    provider = getattr(args, "provider", None)
    as_of: dt.date | None = getattr(args, "as_of", None)
    result = refresh(catalog, price_list, as_of, providers=[provider] if provider else None, models=args.model)
    written = write_proposals(result.writable_report, sheets_dir) if args.write else None
    if args.json:
        console.emit(refresh_json(result, sheets_dir, written))
    else:
        _print_text(result, sheets_dir, written)
    return 0
