"""The offline extractor: English rules, no model. The embedded default's extractor.

It reads first-person statements ("I moved from San Francisco to New York") and simple
third-person ones ("Caroline lives in Boston") about where people live, where they work and as
what, what they like, their family and pets, and "my X is Y" details, and resolves dates ("in March
2024", "last week", "since 2019") against the time the text was said. It aims for precision:
questions, plans, hypotheticals and small talk give no facts rather than wrong ones, and nothing
it is given makes it raise.

How it reads, in order: normalise quotes and contractions, split into sentences (questions are
skipped), split sentences into clauses at conjunctions and commas that start a new subject, take
date phrases out of each clause, find the clause's subject (I / we → the speaker; a capitalised
name; "my sister Anna"; he/she → the last name mentioned; we / our → the team in a team's scope),
then match the predicate against the rules below, each of which gives one or more atomic facts.
Team knowledge (tools by function, ownership, reporting lines, decisions, schedules, dates) is
`rules/team.py`; a correction ("Correction: I moved to Munich, not Berlin", "Actually, it's Porto,
not Lisbon") marks its facts with the value it corrects (`ExtractedFact.corrects`).
"""

import logging
import re
from collections.abc import Iterable
from datetime import UTC, datetime

from memories.extraction.offline.amend import amended
from memories.extraction.offline.clauses import known_people, normalise, read_sentence, sentences
from memories.extraction.offline.context import Context
from memories.extraction.offline.dates import year_named
from memories.extraction.offline.moves import place_read
from memories.extraction.offline.switches import gone_names, switch_read
from memories.extraction.offline.facts import MAX_FACTS, entities_of, episode_importance, facts_deduped
from memories.extraction.offline.words import NOT_NAMES
from memories.extraction.schemas import Extraction, ExtractedFact
from memories.extraction.vocabulary import REPLACEMENT_ATTRIBUTE

__all__ = ["MAX_FACTS", "extract"]

log = logging.getLogger(__name__)


def extract(*, text: str, speaker: str, occurred_at: datetime, team: str | None = None, people: Iterable[str] = ()) -> Extraction:
    """Entities, atomic facts, importance and (if the text says when) occurred_at. Never raises.
    `team`: the team whose scope this is; "we" / "our" then mean the team, not the speaker.
    `people`: who else speaks in this scope; their names are names even typed in lowercase
    ("priya reports to ines", `clauses.names_capitalised`)."""
    speaker_name = (speaker or "").strip() or "user"
    if occurred_at.tzinfo is None:
        occurred_at = occurred_at.replace(tzinfo=UTC)
    ctx = Context(speaker=speaker_name, occurred_at=occurred_at, tz=occurred_at.tzinfo, team=(team or "").strip() or None,
                  people=known_people([speaker_name, *people]))
    ctx.subject_kinds[speaker_name] = "person"
    if ctx.team:
        ctx.subject_kinds[ctx.team] = "organization"
    for sentence in _self_corrected(sentences(_years_named(normalise(text or ""), occurred_at))):
        if len(ctx.facts) >= MAX_FACTS:
            break
        said_before, dated_before = len(ctx.facts), ctx.event_at
        try:
            read_sentence(sentence, ctx)
            if len(ctx.facts) == said_before:
                ctx.event_at = dated_before  # "Tomasz is just on call this week": a date in a sentence that states nothing dates nothing
        except Exception:  # one odd sentence must not cost the rest (the raw text is kept anyway)
            log.warning("offline extractor failed on a sentence; skipped", exc_info=True)
    facts = _gone_replaced(_household(facts_deduped(ctx.facts)[:MAX_FACTS], ctx), normalise(text or ""), ctx)
    if ctx.team and not any(f.attribute in {"uses", REPLACEMENT_ATTRIBUTE} or f.attribute.endswith(("_tool", "_place")) for f in facts):
        facts += switch_read(normalise(text or ""), ctx, topic=ctx.label)[: MAX_FACTS - len(facts)]
    if ctx.team and not any(f.attribute in {"uses", REPLACEMENT_ATTRIBUTE, "lives_in", "lived_in", "works_at"} or f.attribute.endswith(("_tool", "_place"))
                            for f in facts):
        facts += place_read(normalise(text or ""), ctx)[: MAX_FACTS - len(facts)]
    return Extraction(
        entities=entities_of(facts, ctx),
        facts=facts,
        importance=episode_importance(facts, text or ""),
        occurred_at=ctx.event_at,
        location=None,
    )


def _years_named(text: str, said: datetime) -> str:
    """"This year's hackathon is in Eindhoven", said in 2026: "The 2026 hackathon is in Eindhoven", the event of that
    year, as a question names it ("when is the 2026 hackathon?"); next and last year's likewise."""
    def year(m: re.Match) -> str:
        the = "The" if m[0][0].isupper() else "the"
        return f"{the} {year_named(m[1], said.year)}"
    return re.sub(r"\b(this|next|last)\s+year'?s(?=\s+[a-z])", year, text, flags=re.I)


def _self_corrected(said: list[str]) -> list[str]:
    """The sentences of a message that corrects itself ("Podcast name is The Harbour Pod. Scratch that, marketing vetoed
    it, it's Tide Talk"; "Saturday paper is 48 pages this week. Correction, 56, not 48"): a sentence as the short
    correction after it says it should have been (`amend.amended`), and the correction no more. A correction that
    names nothing the sentence before it says is read on its own, as from another message."""
    out: list[str] = []
    for sentence in said:
        if out and (meant := amended(out[-1], sentence)) is not None:
            out[-1] = meant
            continue
        out.append(sentence)
    return out


# "Jira's gone", "TeamCity is switched off", "React Native is officially dead", "Sage 50 is read-only": a tool said to be gone.
_GONE = re.compile(r"(?P<old>(?-i:[A-Z])(?:[\w.\-]*\w)?(?:\s+(?:(?-i:[A-Z])(?:[\w.\-]*\w)?|\d+)){0,2}?)(?:\s+(?:page|account|workspace|licen[cs]es?|subscription|instance|group|board|contract|site|server|box|plan))?"
                   r"(?:'s|\s+(?:is|was|has been|got|gets|are|were|will be|goes|went|will go))?\s+(?:\w+ly\s+|now\s+|finally\s+|being\s+)?"
                   r"(?:gone(?!\s+live)|dead|switched off|turned off|shut down|shutting down|retired|decommissioned|deprecated|read-only|closed|closing|"
                   r"cancelled|canceled|deleted|discontinued|archived|ended|expired|lapsed|going away|going too|going as well)\b", re.I)


# "Zettle is live", "Rootly went live", "Deputy is now live": a name said to go live (read only beside one said to be gone).
_LIVE = re.compile(r"(?:^|(?<=[.!?,;]\s)|(?<=\band\s))(?P<new>(?-i:[A-Z])[\w.\-]*(?:\s+(?-i:[A-Z])[\w.\-]*)?)\s+(?:is|has gone|went|has been)\s+(?:now\s+|finally\s+|officially\s+)?live\b", re.I)


def _named(said: str) -> str:
    """The name in words a sentence opened with ("January Dropbox" of "… from 13 January Dropbox is retired")."""
    words = said.split()
    while words and words[0].lower() in NOT_NAMES:
        words = words[1:]
    return " ".join(words)


def _after_gone(fact: ExtractedFact, gone: str, ctx: Context) -> ExtractedFact:
    """A fact of a statement that says `gone` is gone, as a switch from it: a bare `uses` becomes the replacement
    of the gone tool; a team's tool of a function ("Poster printing: Reprographics closed after the move, so we're
    using Doxdirect now") keeps its function and names the gone one as what it replaced."""
    if fact.previous_value is not None or fact.value.casefold() == gone.casefold():
        return fact
    if fact.attribute == "uses":
        return fact.model_copy(update={"attribute": REPLACEMENT_ATTRIBUTE, "previous_value": gone})
    if ctx.team and fact.subject == ctx.team and fact.attribute.endswith("_tool") and gone.casefold() not in fact.value.casefold():
        return fact.model_copy(update={"previous_value": gone})
    return fact


def _gone_replaced(facts: list[ExtractedFact], text: str, ctx: Context) -> list[ExtractedFact]:
    """A tool the team is now on, said with no function, beside another said to be gone ("Jira's
    gone, we've been on Shortcut since Monday"): a switch from the gone one, so the memory puts
    the new tool on the old one's attribute (`REPLACEMENT_ATTRIBUTE`) and the old one is history.
    So is a name said to go live beside it in a team's chat ("Zettle is live, Square is read-only
    from today"), when the statement gave that name no fact of its own."""
    gone = [name for m in _GONE.finditer(text) if (name := _named(m["old"])) and name.split()[0].lower() not in ctx.people]
    if not gone and ctx.team:
        gone = gone_names(text, ctx)  # in lowercase chat: "zoom is cancelled, we use teams for calls from now on"
    if len(gone) != 1:
        return facts
    facts = [_after_gone(f, gone[0], ctx) for f in facts]
    said = {f.value.casefold() for f in facts}
    live = [m["new"] for m in _LIVE.finditer(text) if m["new"].casefold() not in said and m["new"].casefold() != gone[0].casefold()
            and m["new"].split()[0].lower() not in NOT_NAMES]
    if ctx.team and len(live) == 1 and len(facts) < MAX_FACTS:
        facts.append(ExtractedFact(subject=ctx.team, attribute=REPLACEMENT_ATTRIBUTE, value=live[0], object_entity=live[0], object_kind="organization",
                                   sentence=f"We use {live[0]} instead of {gone[0]}.", previous_value=gone[0], confidence=0.8))
    return facts


def _household(facts: list[ExtractedFact], ctx: Context) -> list[ExtractedFact]:
    """A team lives nowhere: "we finally moved to Utrecht" or "we live in Utrecht now", said in a
    team's chat, is the speaker's household (a team's place is its office's, `<thing>_place`)."""
    if not ctx.team:
        return facts
    return [f.model_copy(update={"subject": ctx.speaker}) if f.subject == ctx.team and f.attribute in {"lives_in", "lived_in"} else f
            for f in facts]
