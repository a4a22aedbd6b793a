"""Plain-text rendering of recall items and answers, shared by the CLI doors."""

from retrieval.search import RecallItem


def _day(moment) -> str:
    return moment.date().isoformat() if moment else ""


def item_line(rank: int, item: RecallItem) -> str:
    if item.kind == "fact":
        interval = f"{_day(item.valid_from) or '?'} → {_day(item.valid_to) or 'now'}"
        head = f"fact, {item.status}, {interval}"
    else:
        where = item.source.get("session") and f"{item.source['session']}/{item.source.get('turn')}"
        head = ", ".join(x for x in (item.kind, _day(item.occurred_at), item.speaker, where) if x)
    lanes = " ".join(f"{name[:3]} {value:.2f}" for name, value in item.lanes.items())
    why = "; ".join(item.why[:4])
    return f"{rank:>2}. [{head}] {item.text}\n    score {item.score:.3f} ({lanes}) — {why}"


def items_text(items: list[RecallItem]) -> str:
    return "\n".join(item_line(rank, item) for rank, item in enumerate(items, start=1)) or "(nothing found)"
