"""One line of `memoryweb chat`: remember a statement or answer a question."""

from accounts.permissions import Principal
from memoryweb.errors import Forbidden
from memories.models import Episode, Fact, Scope
from retrieval.answer import answer
from retrieval.intents import is_question


def chat_turn(*, scope: Scope, principal: Principal, speaker: str, line: str, may_write: bool) -> str:
    """The reply to one line. `/remember TEXT` and `/ask TEXT` force what the text would decide."""
    if line.startswith("/remember "):
        return _remember(scope=scope, principal=principal, speaker=speaker, text=line[len("/remember "):], may_write=may_write)
    if line.startswith("/ask "):
        return _ask(scope=scope, speaker=speaker, question=line[len("/ask "):])
    if line.startswith("/"):
        return "Commands: /remember TEXT, /ask QUESTION, /quit."
    if is_question(line):
        return _ask(scope=scope, speaker=speaker, question=line)
    return _remember(scope=scope, principal=principal, speaker=speaker, text=line, may_write=may_write)


def _remember(*, scope: Scope, principal: Principal, speaker: str, text: str, may_write: bool) -> str:
    from memories.services.ingest import remember

    if not may_write:
        raise Forbidden(f"You may read scope {scope.slug!r} but not write to it.")
    result = remember(scope=scope, text=text, speaker=speaker, actor=principal, source="chat")
    stored = result.episodes[0]
    episode = Episode.objects.in_scope(scope).get(public_id=stored.episode_id)
    facts = list(Fact.objects.in_scope(scope).filter(source_episode=episode).order_by("id"))
    lines = [f"Remembered ({stored.status})."]
    lines += [f"  learned: {f.sentence} [{f.attribute} = {f.value}]" for f in facts]
    return "\n".join(lines)


def _ask(*, scope: Scope, speaker: str, question: str) -> str:
    reply = answer(scope=scope, question=question, speaker=speaker)
    lines = [reply.text]
    if reply.facts_used:
        lines.append("Facts used:")
        for item in reply.facts_used:
            interval = f"{item.valid_from.date() if item.valid_from else '?'} → {item.valid_to.date() if item.valid_to else 'now'}"
            lines.append(f"  - {item.text} ({item.status}, {interval})")
    return "\n".join(lines)
