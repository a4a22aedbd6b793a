"""Reading a question: the filters and `as_of` it came with, the time window its words name
("last 3 months", "before I moved"), whether it asks about the past or about changes, who "I"
is, the one speaker it names, the entities it names through their aliases, and the text its
vector is made from (`dense_query`: the speakers' names left out)."""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time as dtime
from functools import lru_cache

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from memoryweb.errors import InvalidInput
from memories.extraction.lexicon import FIRST_PERSON
from memories.models import Entity, EntityAlias, Episode, Fact, FactStatus, Scope
from memories.normalize import normalize_name
from memories.services.resolve import entity_canonical
from retrieval.documents import TURN_COLLECTIONS
from retrieval.indexing import MAX_SPEAKERS
from retrieval.intents import asks_changes, asks_history, first_person_words, mentions_first_person, words
from retrieval.models import Collection, IndexState
from retrieval.search.results import KINDS
from retrieval.temporal import TimeWindow, parse_time, resolve_anchor

FILTERS = ("kinds", "speaker", "since", "until")


@dataclass(frozen=True)
class Question:
    scope: Scope
    text: str
    now: datetime
    window: TimeWindow | None
    as_of: datetime | None
    history: bool  # superseded facts count too
    changes: bool  # "what changed": facts that began or ended in the window
    kinds: tuple[str, ...]
    speaker_filter: str = ""
    speaker_entity: Entity | None = None  # whom "I" means, when the question says "I"
    speakers: tuple[str, ...] | None = None  # the scope's speakers (IndexState), None: not read

    @property
    def moment_window(self) -> TimeWindow | None:
        """The window turns, episodes and their documents go by (when they were said), which
        facts' `window` (when they held) may not be: the question's time words narrow them only
        under RETRIEVAL_TIME_WINDOWS=all; filters and "what changed" always do."""
        if self.window is None or settings.RETRIEVAL_TIME_WINDOWS == "all" or self.changes or self.window.phrase == "filters":
            return self.window
        return None


def question_read(
    *, scope: Scope, query: str, filters: dict | None, as_of, include_history: bool, now: datetime | None, speaker: str,
    speakers: tuple[str, ...] | None = None,
) -> Question:
    """The question as the search stages need it; InvalidInput for a bad filter or date.
    `speakers`: the scope's (`scope_speakers`) when the caller has read them already."""
    text = (query or "").strip()
    if not text:
        raise InvalidInput("The query is empty.")
    filters = dict(filters or {})
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise InvalidInput(f"Unknown filter(s): {', '.join(sorted(unknown))}; use {', '.join(FILTERS)}.")
    kinds = kinds_asked(filters)
    now = _aware(now) if now else timezone.now()
    as_of_moment = _as_of(as_of)
    # "I" needs the speaker's entity; found only when the question says "I" or "before I moved".
    me = speaker_entity(scope, speaker) if mentions_first_person(text) else None
    window = _window(scope, text, now=now, filters=filters, me=me)
    return Question(
        scope=scope, text=text, now=now, window=window, as_of=as_of_moment,
        history=include_history or asks_history(text) or as_of_moment is not None,
        changes=window is not None and asks_changes(text), kinds=kinds, speaker_filter=filters.get("speaker") or "",
        speaker_entity=me, speakers=scope_speakers(scope) if speakers is None else speakers,
    )


def kinds_asked(filters: dict) -> tuple[str, ...]:
    """The kinds the `kinds` filter asks for (all when it names none); InvalidInput for others."""
    kinds = tuple(filters.get("kinds") or KINDS)
    if not set(kinds) <= set(KINDS):
        raise InvalidInput(f"kinds must be among {', '.join(KINDS)}.")
    return kinds


def scope_speakers(scope: Scope) -> tuple[str, ...]:
    """The distinct speakers of the scope's indexed turns and episodes (more than MAX_SPEAKERS:
    too many to tell apart, and then none is named)."""
    return tuple(IndexState.objects.filter(scope=scope).values_list("speakers", flat=True).first() or ())


def collections_for(kinds: tuple[str, ...]) -> list[str]:
    """The search collections that hold the kinds asked for."""
    out: list[str] = []
    if "fact" in kinds:
        out.append(Collection.FACT)
    if "episode" in kinds:
        out.append(Collection.EPISODE)
    if "turn" in kinds or "episode" in kinds:
        # Episodes of conversations are found through their turns (and windows).
        out.extend(TURN_COLLECTIONS)
    return out


def named_speaker(scope: Scope, query: str, speakers: tuple[str, ...] | None = None) -> str:
    """The one known speaker the question names (by full or first name), else "". `speakers`:
    the scope's, when read already (`scope_speakers`)."""
    named = speakers_named(scope, query, speakers)
    return named[0] if len(named) == 1 else ""


def speakers_named(scope: Scope, query: str, speakers: tuple[str, ...] | None = None, *, possessive: bool | None = None) -> list[str]:
    """Every known speaker the question names (by full or first name), in the scope's order:
    "What have Jon and Gina both done?" names two. None in a scope with too many speakers to
    tell (MAX_SPEAKERS). `possessive`: whether "Caroline's" names Caroline (None:
    RETRIEVAL_POSSESSIVE_SPEAKER)."""
    state = scope_speakers(scope) if speakers is None else speakers
    if len(state) > MAX_SPEAKERS:
        return []
    found = words(query)
    if settings.RETRIEVAL_POSSESSIVE_SPEAKER if possessive is None else possessive:
        found = [_POSSESSIVE.sub("", w) for w in found]  # "Caroline's" names Caroline
    folded = {w.casefold() for w in found}
    text = " ".join(found).casefold()
    return [
        speaker for speaker in state
        if speaker.casefold() in text and (len(speaker.split()) > 1 or speaker.casefold() in folded)
        or speaker.split()[0].casefold() in folded
    ]


# "what/which" then a plural noun (a word of four letters or more ending in "s", not a verb or
# pronoun that ends so), an adjective allowed between; or "how many".
_NOT_NOUN = r"(?!(?:does|did|do|has|have|had|was|were|is|are|will|would|can|could|this|his|hers|its|yours|us)\b)"
_LIST = re.compile(
    rf"\b(?:how\s+many|(?:what|which)\s+(?:{_NOT_NOUN}[a-z]+\s+)?{_NOT_NOUN}[a-z]{{3,}}s)\b",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
# A question that asks what someone would, might or could do, or is likely to: a conjecture,
# answered from what they said of themselves rather than from one line that states it.
_CONJECTURE = re.compile(r"\b(would|wouldn['’]t|might|could|likely|unlikely|probably|possibly)\b", re.IGNORECASE)


def asks_conjecture(text: str) -> bool:
    """Whether the question asks for a conjecture ("Would Caroline pursue writing?", "What might
    Jon do next?", "Is Tim likely to …?")."""
    return bool(_CONJECTURE.search(text))


# A question that asks when a thing happened or for how long; and the words a line tells a time
# with (relative ones, told days later, as well as dates): retrieval/search/fusion.py: head_preferred.
_WHEN = re.compile(r"^\W*when\b|\bhow\s+long\b|\b(?:what|which)\s+(?:year|month|week|day|date)\b", re.IGNORECASE)
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_MONTHS = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_SPANS = r"(?:days?|nights?|weeks?|weekends?|months?|years?|mornings?|evenings?|afternoons?|summer|winter|spring|autumn)"
_TOLD_TIME = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|recently|lately|{_DAYS}|{_MONTHS}|(?:19|20)\d\d"
    rf"|(?:last|next|this|past|coming)\s+(?:(?:few|couple(?:\s+of)?)\s+)?(?:{_SPANS}|{_DAYS})"
    rf"|(?:\d+|a|an|one|two|three|four|five|six|few|several)\s+{_SPANS})\b",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether the question asks when ("When did Jon lose his job?", "How long ago …", "What year
    …"): its evidence is the line that says when, beside lines about the same thing that do not."""
    return bool(_WHEN.search(text))


def tells_time(text: str) -> bool:
    """Whether a line tells a time: a relative one ("yesterday", "last week", "two days ago"), a
    weekday, a month or a year."""
    return bool(_TOLD_TIME.search(text))


def asks_list(text: str) -> bool:
    """Whether the question asks for several things, whose evidence is told apart ("What books has
    Melanie read?", "Which cities …", "How many times …"): a plural noun right after what/which
    (an adjective may come between), or "how many"."""
    return bool(_LIST.search(text))


def dense_query(q: Question) -> str:
    """The text the question's vector is made from. With RETRIEVAL_DENSE_QUERY=unnamed, the
    question without the names (full or first, and their "'s") of the scope's speakers: turns'
    vectors are made from what was said, without who said it (retrieval/documents.py:
    vector_text), and a name in the question pulls its vector towards every line that
    addresses that person ("Thanks, Caroline!") rather than towards what was asked about. Who
    is asked about stays the lexical side's: BM25 and its speaker boost see the whole question."""
    return dense_text(text=q.text, speakers=scope_speakers(q.scope) if q.speakers is None else q.speakers)


def dense_text(*, text: str, speakers: tuple[str, ...]) -> str:
    """`dense_query` of `text` in a scope of these `speakers` (for callers that embed the
    question themselves and pass recall its `query_vector`)."""
    return dense_variant(text=text, speakers=speakers, variant=settings.RETRIEVAL_DENSE_QUERY)


def dense_variant(*, text: str, speakers: tuple[str, ...], variant: str) -> str:
    """The question `text` as one of RETRIEVAL_DENSE_QUERY's variants for its vector:
    - "asked": as it is;
    - "unnamed": without the scope's speakers' names (the default, above);
    - "first-person": the speakers' names as the first person they said their lines in
      ("What does Melanie like?" → "What does I like?", "Melanie's kids" → "my kids"): a turn is
      said by its speaker, of themselves, so the question is put in the words the answer uses;
    - "content": unnamed, and without the interrogatives and auxiliaries that make it a question
      ("When did go to the support group?" → "go to the support group"): a turn states, it
      rarely asks, and those words pull the vector towards lines that ask something."""
    text = (text or "").strip()
    if variant == "asked" or not speakers or len(speakers) > MAX_SPEAKERS:
        return text
    pattern = _names_pattern(tuple(sorted(speakers)))
    if variant == "first-person":
        shifted = pattern.sub(lambda m: " my " if m.group(0)[-2:].lower() in ("'s", "’s") else " I ", text)
        return " ".join(shifted.split())
    unnamed = " ".join(pattern.sub(" ", text).split())
    if variant == "content":
        unnamed = " ".join(w for w in _QUESTION_WORDS.sub(" ", unnamed).split())
    return unnamed if any(ch.isalnum() for ch in unnamed) else text


# What makes a sentence a question rather than a statement: interrogatives, the auxiliaries a
# question inverts, and its mark (RETRIEVAL_DENSE_QUERY=content).
_QUESTION_WORDS = re.compile(
    r"(?<![\w'’])(?:what|when|where|which|who|whom|whose|why|how|did|does|do|is|are|was|were|has|have|had)(?![\w'’])|\?",
    re.IGNORECASE,
)


@lru_cache(maxsize=64)
def _names_pattern(speakers: tuple[str, ...]) -> re.Pattern:
    """Speakers' full and first names as written (case kept: "Will" the speaker, not "will"),
    as whole words, with a possessive "'s"."""
    names = {name for speaker in speakers for name in (speaker.strip(), speaker.split()[0] if speaker.split() else "") if name}
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’])(?:{alternatives})(?:['’]s)?(?![\w'’])")


def speaker_entity(scope: Scope, speaker: str) -> Entity | None:
    """The entity "I" means: the speaker's, or, when nobody is named, the scope's main speaker."""
    name = normalize_name(speaker)
    if not name:
        top = (
            Episode.objects.in_scope(scope).exclude(speaker="").values("speaker").annotate(n=Count("id")).order_by("-n").first()
        )
        name = normalize_name(top["speaker"]) if top else ""
    if not name:
        return None
    alias = EntityAlias.objects.in_scope(scope).filter(normalized=name).select_related("entity").first()
    return entity_canonical(alias.entity) if alias else None


def entities_named(scope: Scope, query: str, me: Entity | None) -> list[Entity]:
    """Entities whose alias appears in the query as whole words (1–4 word n-grams), first the
    speaker `me` when the query says "I"/"my"; at most 10."""
    keys = [key for key in (normalize_name(w) for w in words(query)) if key]
    grams = {" ".join(keys[i : i + n]) for n in range(1, 5) for i in range(len(keys) - n + 1)} - FIRST_PERSON
    found: list[Entity] = []
    if grams:
        for alias in EntityAlias.objects.in_scope(scope).filter(normalized__in=grams).select_related("entity"):
            entity = entity_canonical(alias.entity)
            if entity not in found:
                found.append(entity)
    if me is not None and first_person_words(query) and me not in found:
        found.insert(0, me)
    return found[:10]


def _aware(moment: datetime) -> datetime:
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _as_of(value) -> datetime | None:
    """A date means "as the memory stood at the end of that day"."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip()) if "T" in value or " " in value.strip() else date.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(f"as_of {value!r} is not a date: use ISO 8601, like 2024-03-01.") from None
    if isinstance(value, datetime):
        return _aware(value)
    if isinstance(value, date):
        return datetime.combine(value, dtime.max, tzinfo=UTC)
    raise InvalidInput("as_of must be a date.")


def _window(scope: Scope, query: str, *, now: datetime, filters: dict, me: Entity | None) -> TimeWindow | None:
    if filters.get("since") or filters.get("until"):
        start = _as_of(filters.get("since")) if filters.get("since") else None
        end = _as_of(filters.get("until")) if filters.get("until") else None
        if start and filters.get("since") and not isinstance(filters["since"], datetime):
            start = start.replace(hour=0, minute=0, second=0, microsecond=0)
        return TimeWindow(start, end, "filters")
    if settings.RETRIEVAL_TIME_WINDOWS == "off" and not asks_changes(query):
        return None  # the question's time words are left to the lexical side (a turn's document carries its date)
    window = parse_time(query, now=now)
    if window is not None and window.anchor:
        window = resolve_anchor(window, moved_at=_moved_at(scope, me))
    return window


def _moved_at(scope: Scope, me: Entity | None) -> datetime | None:
    """When the current home (of `me`, when known) began, if a previous one is known (a lives_in
    fact that superseded another)."""
    facts = Fact.objects.in_scope(scope).filter(attribute="lives_in", supersedes__isnull=False).exclude(status=FactStatus.RETRACTED)
    if me is not None:
        facts = facts.filter(subject=me)
    fact = facts.order_by("-valid_from", "-id").first()
    return (fact.valid_from or fact.created_at) if fact else None
