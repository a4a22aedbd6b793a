"""recall and recall_evidence: hybrid search over a scope's facts, episodes and turns.

1. Catch the index up (`index_pending`, one cheap query when nothing is pending).
2. Read the question: its lexemes, a time window ("last 3 months"), history words ("did I
   ever"), entities it names (through their aliases; "I"/"my" is the speaker).
3. Candidate lists, each at most `pool` long (2 % of the scope, clamped 50–500): BM25 per
   collection (facts, free-standing episodes, turns, turn windows ±1 and ±2), nearest vectors
   per collection (a pgvector query each), the active facts of named entities, and — for
   "what changed" questions with a window — the facts that began in it. Outside a transaction
   the vector searches and the entity look-ups run beside BM25, each on its own connection
   (retrieval/concurrent.py).
4. Reciprocal rank fusion; documents map to items (a window stands for its centre turn; in
   `recall` a turn stands for its episode), so lists vote for the same item.
5. The three lanes (similarity = fused score scaled to the best, importance, recency) and the
   scope's weights give the final order. Every item says why it is there.

Facts: active only by default; superseded ones too for history questions or include_history;
`as_of` keeps facts valid on that date and episodes/turns that had happened by then.
"""

import re
import time
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time as dtime
from datetime import UTC

from django.db.models import Count, Q
from django.utils import timezone

from memoryweb.errors import InvalidInput
from memoryweb.providers.embedders import get_embedder
from memories.models import Entity, EntityAlias, Episode, Fact, FactStatus, Scope, Turn
from memories.normalize import normalize_name
from retrieval.concurrent import side_by_side
from retrieval.documents import TURN_COLLECTIONS
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.indexing import MAX_SPEAKERS, index_pending
from retrieval.intents import asks_changes, asks_history, attributes_asked, mentions_first_person
from retrieval.models import Collection, CorpusStat, IndexState
from retrieval.ranking import lane_score, pool_size, recency, rrf
from retrieval.temporal import TimeWindow, parse_time, resolve_anchor
from retrieval.vector import vector_candidates

KINDS = ("fact", "episode", "turn")
_KIND_ORDER = {"fact": 0, "episode": 1, "turn": 2}
_FIRST_PERSON = {"i", "me", "my", "mine", "myself"}
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@dataclass
class RecallItem:
    kind: str
    id: str
    text: str
    score: float
    lanes: dict[str, float]
    status: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    occurred_at: datetime | None = None
    speaker: str = ""
    subject: str = ""
    attribute: str = ""
    value: str = ""
    source: dict[str, str | None] = field(default_factory=dict)
    why: list[str] = field(default_factory=list)
    pk: int = 0

    def as_dict(self) -> dict:
        data = {
            "kind": self.kind, "id": self.id, "text": self.text, "score": round(self.score, 4),
            "lanes": {name: round(value, 4) for name, value in self.lanes.items()},
            "status": self.status,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "occurred_at": self.occurred_at.isoformat() if self.occurred_at else None,
            "speaker": self.speaker, "source": self.source, "why": self.why,
        }
        if self.kind == "fact":
            data.update(subject=self.subject, attribute=self.attribute, value=self.value)
        return data


@dataclass
class RecallResult:
    query: str
    items: list[RecallItem]
    window: TimeWindow | None = None
    as_of: datetime | None = None
    include_history: bool = False
    entities: list[str] = field(default_factory=list)
    lexemes: list[str] = field(default_factory=list)
    pool: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "query": self.query,
            "results": [item.as_dict() for item in self.items],
            "window": self.window.as_dict() if self.window else None,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "include_history": self.include_history,
            "entities": self.entities,
            "lexemes": self.lexemes,
        }


def recall(
    *, scope: Scope, query: str, k: int = 10, filters: dict | None = None, as_of: date | datetime | None = None,
    include_history: bool = False, now: datetime | None = None, speaker: str = "", query_vector: list[float] | None = None,
) -> RecallResult:
    """The k memories (facts and episodes) that best answer `query` in `scope`.

    filters: {"kinds": ["fact", "episode", "turn"], "speaker": NAME, "since": DATE, "until": DATE}.
    `speaker` is who asks ("I"/"my" means them). `query_vector` skips embedding the query (the
    caller embedded it already)."""
    return _search(
        scope=scope, query=query, k=k, filters=filters, as_of=as_of, include_history=include_history, now=now,
        speaker=speaker, query_vector=query_vector, evidence=False,
    )


def recall_evidence(
    *, scope: Scope, query: str, k: int = 10, filters: dict | None = None, as_of: date | datetime | None = None,
    include_history: bool = False, now: datetime | None = None, speaker: str = "", query_vector: list[float] | None = None,
) -> RecallResult:
    """Like `recall`, but raw turns stay turns (with their session and turn ids): facts and
    episodes fused with the conversation's own words, the evidence an answer can quote."""
    return _search(
        scope=scope, query=query, k=k, filters=filters, as_of=as_of, include_history=include_history, now=now,
        speaker=speaker, query_vector=query_vector, evidence=True,
    )


@dataclass
class _Query:
    scope: Scope
    text: str
    now: datetime
    window: TimeWindow | None
    as_of: datetime | None
    history: bool
    changes: bool
    kinds: tuple[str, ...]
    speaker_filter: str


def _search(
    *, scope: Scope, query: str, k: int, filters: dict | None, as_of, include_history: bool, now: datetime | None,
    speaker: str, query_vector: list[float] | None, evidence: bool,
) -> RecallResult:
    started = time.perf_counter()
    query = (query or "").strip()
    if not query:
        raise InvalidInput("The query is empty.")
    if not isinstance(k, int) or k < 1 or k > 200:
        raise InvalidInput("k must be a whole number from 1 to 200.")
    filters = dict(filters or {})
    unknown = set(filters) - {"kinds", "speaker", "since", "until"}
    if unknown:
        raise InvalidInput(f"Unknown filter(s): {', '.join(sorted(unknown))}; use kinds, speaker, since, until.")
    kinds = tuple(filters.get("kinds") or KINDS)
    if not set(kinds) <= set(KINDS):
        raise InvalidInput(f"kinds must be among {', '.join(KINDS)}.")
    now = _aware(now) if now else timezone.now()
    as_of_moment = _as_of(as_of)

    index_pending(scope=scope)
    indexed = time.perf_counter()

    embedder = get_embedder()
    # "I" needs the speaker's entity; found only when the query says "I" or "before I moved".
    speaker_entity = _speaker_entity(scope, speaker) if mentions_first_person(query) else None
    window = _window(scope, query, now=now, filters=filters, speaker_entity=speaker_entity)
    history = include_history or asks_history(query) or as_of_moment is not None
    q = _Query(
        scope=scope, text=query, now=now, window=window, as_of=as_of_moment, history=history,
        changes=window is not None and asks_changes(query), kinds=kinds, speaker_filter=filters.get("speaker") or "",
    )
    collections = _collections(kinds)
    sizes = dict(CorpusStat.objects.filter(scope=scope, collection__in=collections).values_list("collection", "doc_count"))
    pool = pool_size(sum(n for c, n in sizes.items() if c not in (Collection.TURN_W1, Collection.TURN_W2)))
    collections = [c for c in collections if sizes.get(c)]

    lexemes = query_lexemes(query)
    timings = {"index": indexed - started}
    if query_vector is None and collections:
        t0 = time.perf_counter()
        query_vector = embedder.embed([query])[0]
        timings["embed"] = time.perf_counter() - t0
    out, entity_names = _rank(q, lexemes=lexemes, query_vector=query_vector, collections=collections, pool=pool, k=k,
                              evidence=evidence, speaker_entity=speaker_entity, timings=timings)
    if window is not None and len(out) < k:
        # The window holds fewer than k results: the rest come from outside it, after them and
        # marked, rather than leave the caller with nothing (a question's "last year" may mean
        # the year before the conversation, not before now).
        wider = replace(q, window=None, changes=False)
        more, _ = _rank(wider, lexemes=lexemes, query_vector=query_vector, collections=collections, pool=pool, k=k,
                        evidence=evidence, speaker_entity=speaker_entity, timings={})
        seen = {(i.kind, i.pk) for i in out}
        floor = min((i.score for i in out), default=0.0)
        for item in more:
            if (item.kind, item.pk) in seen:
                continue
            item.why.append(f"outside the time window ({window.phrase})")
            item.score = min(item.score, floor)
            out.append(item)
            if len(out) >= k:
                break
    finished = time.perf_counter()
    timings["total"] = finished - started
    timings["total_without_embedding"] = timings["total"] - timings.get("embed", 0.0)
    return RecallResult(
        query=query, items=out[:k], window=window, as_of=as_of_moment, include_history=history, entities=entity_names,
        lexemes=lexemes, pool=pool, timings=timings,
    )


def _rank(
    q: _Query, *, lexemes: list[str], query_vector, collections: list[str], pool: int, k: int, evidence: bool,
    speaker_entity: Entity | None, timings: dict,
) -> tuple[list[RecallItem], list[str]]:
    """Candidate lists → fused → eligible rows → lane scores, best first."""
    scope = q.scope
    t0 = time.perf_counter()
    doc_filter, params = _doc_filter(q)
    embedder = get_embedder()
    lap: dict[str, float] = {}

    def lexical():
        started = time.perf_counter()
        hits = bm25_candidates(
            scope=scope, lexemes=lexemes, collections=collections, limit=pool, doc_filter=doc_filter, params=params,
            speaker=_named_speaker(scope, q.text),
        )
        lap["bm25"] = time.perf_counter() - started
        return hits

    def semantic(collection: str):
        def search():
            started = time.perf_counter()
            hits = vector_candidates(scope=scope, query_vector=query_vector, embedder=embedder, collections=[collection], limit=pool)
            lap[f"vector {collection}"] = time.perf_counter() - started
            return hits
        return search

    def structured():
        """Facts of the entities the question names, and for "what changed" the facts that began
        in the window: lists that need no search."""
        started = time.perf_counter()
        entities, facts, changed = [], [], []
        if "fact" in q.kinds:
            entities = _entities_named(scope, q.text, speaker_entity)
            facts = _entity_facts(q, entities, attributes_asked(q.text)) if entities else []
            changed = _changed_facts(q) if q.changes else []
        lap["entities"] = time.perf_counter() - started
        return entities, facts, changed

    if collections:
        # One nearest-neighbour search per collection, each on its own connection.
        bm25, (entities, entity_facts, changed), *per_collection = side_by_side(
            lexical, structured, *(semantic(collection) for collection in collections)
        )
        vectors = {collection: hits for found in per_collection for collection, hits in found.items()}
    else:
        bm25, vectors, (entities, entity_facts, changed) = {}, {}, structured()
    t2 = time.perf_counter()
    # These overlap; "candidates" is what the caller waited for all of them ("vector": the slowest).
    vector_laps = [seconds for name, seconds in lap.items() if name.startswith("vector ")]
    timings.update(bm25=lap.get("bm25", 0.0), vector=max(vector_laps, default=0.0), entities=lap["entities"], candidates=t2 - t0)

    # Documents → items. A window stands for its centre turn; in recall a turn stands for its episode.
    turn_ids = {h.target_id for c in TURN_COLLECTIONS for h in bm25.get(c, []) + vectors.get(c, [])}
    episode_of_turn = {} if evidence else dict(
        Episode.objects.in_scope(scope).filter(turn_id__in=turn_ids).values_list("turn_id", "pk")
    )

    def key(collection: str, target_id: int) -> tuple[str, int]:
        if collection == Collection.FACT:
            return ("fact", target_id)
        if collection == Collection.EPISODE:
            return ("episode", target_id)
        if target_id in episode_of_turn:
            return ("episode", episode_of_turn[target_id])
        return ("turn", target_id)

    lists: list[list[tuple[str, int]]] = []
    why: dict[tuple[str, int], list[str]] = {}

    def add_list(name: str, keys: list[tuple[str, int]], notes: list[str] | None = None) -> None:
        ranked = list(dict.fromkeys(keys))
        lists.append(ranked)
        for rank, item in enumerate(ranked, start=1):
            if rank <= 50:
                why.setdefault(item, []).append(f"{name} #{rank}" + (f" ({notes[rank - 1]})" if notes else ""))

    for collection, hits in sorted(bm25.items()):
        add_list(f"bm25 {collection}", [key(collection, h.target_id) for h in hits], [f"{h.score:.2f}" for h in hits])
    for collection, hits in sorted(vectors.items()):
        add_list(f"vector {collection}", [key(collection, h.target_id) for h in hits], [f"cos {h.similarity:.2f}" for h in hits])

    entity_names = [e.name for e in entities]
    if entities:
        add_list("entity facts", [("fact", f.pk) for f in entity_facts], [f.subject.name for f in entity_facts])
    if q.changes and "fact" in q.kinds:
        add_list("changed in window", [("fact", f.pk) for f in changed])

    fused = rrf(lists)
    ranked_keys = sorted(fused, key=lambda item: -fused[item])[:pool]
    # Only the head of the fused list is loaded and scored on the lanes (importance and recency
    # reorder it, they do not pull items from far below); more is loaded when filters thin it out.
    head = max(3 * k, 30)
    items: dict = {}
    for start in range(0, len(ranked_keys), head):
        items.update(_hydrate(q, ranked_keys[start : start + head], evidence=evidence))
        if len(items) >= head:
            break
    best = max((fused[key_] for key_ in items), default=1.0) or 1.0
    weights = scope.weights
    out: list[RecallItem] = []
    for key_, item in items.items():
        importance = item.lanes.pop("_importance", None)
        moment = item.occurred_at if item.kind != "fact" else (item.valid_from or item.occurred_at)
        lanes = {
            "similarity": fused[key_] / best,
            "importance": 0.5 if importance is None else importance,
            "recency": recency(moment, now=q.now, importance=importance),
        }
        item.lanes = lanes
        item.score = lane_score(similarity=lanes["similarity"], importance=importance, recency_value=lanes["recency"], weights=weights)
        item.why = why.get(key_, []) + item.why
        out.append(item)
    out.sort(key=lambda i: (-i.score, _KIND_ORDER[i.kind], -fused[(i.kind, i.pk)]))
    timings["rest"] = time.perf_counter() - t2
    return out, entity_names


def _named_speaker(scope: Scope, query: str) -> str:
    """The one known speaker the question names (by full or first name), else ""."""
    state = IndexState.objects.filter(scope=scope).values_list("speakers", flat=True).first() or []
    if len(state) > MAX_SPEAKERS:
        return ""
    words = {w.casefold() for w in _WORDS.findall(query)}
    text = " ".join(_WORDS.findall(query)).casefold()
    named = [
        speaker for speaker in state
        if speaker.casefold() in text and (len(speaker.split()) > 1 or speaker.casefold() in words)
        or speaker.split()[0].casefold() in words
    ]
    return named[0] if len(named) == 1 else ""


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


def _collections(kinds: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    if "fact" in kinds:
        out.append(Collection.FACT)
    if "episode" in kinds:
        out.append(Collection.EPISODE)
    if "turn" in kinds or "episode" in kinds:
        # Episodes of conversations are found through their turns (and windows).
        out.extend(TURN_COLLECTIONS)
    return out


def _window(scope: Scope, query: str, *, now: datetime, filters: dict, speaker_entity: Entity | None) -> TimeWindow | None:
    if filters.get("since") or filters.get("until"):
        start = _as_of(filters.get("since")) if filters.get("since") else None
        end = _as_of(filters.get("until")) if filters.get("until") else None
        if start and filters.get("since") and not isinstance(filters["since"], datetime):
            start = start.replace(hour=0, minute=0, second=0, microsecond=0)
        return TimeWindow(start, end, "filters")
    window = parse_time(query, now=now)
    if window is not None and window.anchor:
        window = resolve_anchor(window, moved_at=_moved_at(scope, speaker_entity))
    return window


def _moved_at(scope: Scope, speaker_entity: Entity | None) -> datetime | None:
    """When the current home began, if a previous one is known (a lives_in fact that superseded another)."""
    facts = Fact.objects.in_scope(scope).filter(attribute="lives_in", supersedes__isnull=False).exclude(status=FactStatus.RETRACTED)
    if speaker_entity is not None:
        facts = facts.filter(subject=speaker_entity)
    fact = facts.order_by("-valid_from", "-id").first()
    return (fact.valid_from or fact.created_at) if fact else None


def _doc_filter(q: _Query) -> tuple[str, list]:
    """The SQL condition a document must meet (fact status and validity, time window, as_of)."""
    params: list = []

    def p(value) -> str:
        params.append(value)
        return f"%(p{len(params) - 1})s"

    if q.as_of is not None:
        at = p(q.as_of)
        fact_cond = f"f.status <> 'retracted' AND (f.valid_from IS NULL OR f.valid_from <= {at}) AND (f.valid_to IS NULL OR f.valid_to > {at})"
    elif q.history or q.changes:
        fact_cond = "f.status IN ('active', 'superseded')"
    else:
        fact_cond = "f.status = 'active'"
    doc_cond = "TRUE"
    if q.window is not None:
        start = p(q.window.start) if q.window.start is not None else "'-infinity'::timestamptz"
        end = p(q.window.end) if q.window.end is not None else "'infinity'::timestamptz"
        if q.changes:
            # "What changed": facts that began or ended inside the window.
            fact_cond += (
                f" AND (coalesce(f.valid_from, f.created_at) >= {start} AND coalesce(f.valid_from, f.created_at) < {end}"
                f" OR f.valid_to >= {start} AND f.valid_to < {end})"
            )
        else:
            # Facts that held at some time inside the window.
            fact_cond += f" AND (f.valid_to IS NULL OR f.valid_to > {start}) AND coalesce(f.valid_from, f.created_at) < {end}"
        doc_cond += f" AND d.occurred_at >= {start} AND d.occurred_at < {end}"
    if q.as_of is not None:
        doc_cond += f" AND d.occurred_at <= {p(q.as_of)}"
    sql = (
        " AND CASE WHEN d.collection = 'fact' THEN EXISTS (SELECT 1 FROM memories_fact f"
        f" WHERE f.id = d.target_id AND f.scope_id = d.scope_id AND {fact_cond}) ELSE {doc_cond} END"
    )
    return sql, params


def _speaker_entity(scope: Scope, speaker: str) -> Entity | None:
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
    return _canonical(alias.entity) if alias else None


def _canonical(entity: Entity) -> Entity:
    seen = set()
    while entity.merged_into_id and entity.pk not in seen:
        seen.add(entity.pk)
        entity = entity.merged_into
    return entity


def _entities_named(scope: Scope, query: str, speaker_entity: Entity | None) -> list[Entity]:
    """Entities whose alias appears in the query as whole words (1–4 word n-grams), plus the
    speaker for "I"/"my"."""
    words = [normalize_name(w) for w in _WORDS.findall(query)]
    words = [w for w in words if w]
    grams = {" ".join(words[i : i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}
    grams -= _FIRST_PERSON
    found: list[Entity] = []
    if grams:
        aliases = EntityAlias.objects.in_scope(scope).filter(normalized__in=grams).select_related("entity")
        for alias in aliases:
            entity = _canonical(alias.entity)
            if entity not in found:
                found.append(entity)
    if speaker_entity is not None and _FIRST_PERSON & set(words) and speaker_entity not in found:
        found.insert(0, speaker_entity)
    return found[:10]


def _entity_facts(q: _Query, entities: list[Entity], attributes: tuple[str, ...]) -> list[Fact]:
    """The facts of the named entities that hold (or held, for history questions), the asked
    attribute first, then the newest."""
    facts = Fact.objects.in_scope(q.scope).filter(Q(subject__in=entities) | Q(object_entity__in=entities)).select_related("subject")
    facts = facts.filter(**_fact_status_filter(q))
    rows = list(facts.order_by("-valid_from", "-id")[:200])
    rows = [f for f in rows if _fact_in_window(q, f)]
    rows.sort(key=lambda f: (f.attribute not in attributes, f.status != FactStatus.ACTIVE))
    return rows


def _fact_status_filter(q: _Query) -> dict:
    if q.as_of is not None:
        return {"status__in": [FactStatus.ACTIVE, FactStatus.SUPERSEDED]}
    if q.history or q.changes:
        return {"status__in": [FactStatus.ACTIVE, FactStatus.SUPERSEDED]}
    return {"status": FactStatus.ACTIVE}


def _fact_in_window(q: _Query, fact: Fact) -> bool:
    if fact.status == FactStatus.RETRACTED:
        return False
    if q.as_of is not None:
        if fact.valid_from is not None and fact.valid_from > q.as_of:
            return False
        if fact.valid_to is not None and fact.valid_to <= q.as_of:
            return False
    elif not q.history and not q.changes and fact.status != FactStatus.ACTIVE:
        return False
    if q.window is not None:
        began = fact.valid_from or fact.created_at
        if q.changes:
            return q.window.contains(began) or q.window.contains(fact.valid_to)
        return q.window.overlaps(began, fact.valid_to)
    return True


def _changed_facts(q: _Query) -> list[Fact]:
    """Facts that began inside the window, the ones that replaced an older value first."""
    facts = Fact.objects.in_scope(q.scope).exclude(status=FactStatus.RETRACTED)
    if q.window.start is not None:
        facts = facts.filter(valid_from__gte=q.window.start)
    if q.window.end is not None:
        facts = facts.filter(valid_from__lt=q.window.end)
    rows = list(facts.order_by("-valid_from", "-id")[:200])
    rows.sort(key=lambda f: f.supersedes_id is None)
    return rows


def _hydrate(q: _Query, keys: list[tuple[str, int]], *, evidence: bool) -> dict[tuple[str, int], RecallItem]:
    """Load the rows behind the keys, drop the ineligible ones, keep the fused order."""
    ids = {kind: [pk for kind_, pk in keys if kind_ == kind] for kind in KINDS}
    loaded: dict[tuple[str, int], RecallItem] = {}
    if ids["fact"]:
        facts = [f for f in Fact.objects.in_scope(q.scope).filter(pk__in=ids["fact"]).select_related("subject") if _fact_in_window(q, f)]
        # Their source episodes in a second, small query: one five-table join costs more to plan.
        source_ids = {f.source_episode_id for f in facts if f.source_episode_id}
        sources = (
            {e.pk: e for e in Episode.objects.in_scope(q.scope).filter(pk__in=source_ids).select_related("turn", "session")}
            if source_ids else {}
        )
        for f in facts:
            episode = sources.get(f.source_episode_id)
            item = RecallItem(
                kind="fact", id=str(f.public_id), text=f.sentence, score=0.0, lanes={"_importance": f.importance},
                status=f.status, valid_from=f.valid_from, valid_to=f.valid_to, occurred_at=f.valid_from or f.created_at,
                subject=f.subject.name, attribute=f.attribute, value=f.value, pk=f.pk,
                source=_source(episode=episode, session=episode.session if episode else None, turn=episode.turn if episode else None),
            )
            if f.status == FactStatus.SUPERSEDED:
                item.why.append(f"superseded: held from {_day(f.valid_from)} to {_day(f.valid_to)}")
            loaded[("fact", f.pk)] = item
    if ids["episode"]:
        for e in Episode.objects.in_scope(q.scope).filter(pk__in=ids["episode"]).select_related("turn", "session"):
            if not _moment_ok(q, e.occurred_at) or (q.speaker_filter and normalize_name(e.speaker) != normalize_name(q.speaker_filter)):
                continue
            loaded[("episode", e.pk)] = RecallItem(
                kind="episode", id=str(e.public_id), text=e.text, score=0.0, lanes={"_importance": e.importance},
                occurred_at=e.occurred_at, speaker=e.speaker, pk=e.pk, source=_source(episode=e, session=e.session, turn=e.turn),
            )
    if ids["turn"]:
        turns = Turn.objects.in_scope(q.scope).filter(pk__in=ids["turn"]).select_related("session")
        importance = dict(Episode.objects.in_scope(q.scope).filter(turn_id__in=ids["turn"]).values_list("turn_id", "importance"))
        episodes = dict(Episode.objects.in_scope(q.scope).filter(turn_id__in=ids["turn"]).values_list("turn_id", "public_id"))
        for t in turns:
            if not _moment_ok(q, t.occurred_at) or (q.speaker_filter and normalize_name(t.speaker) != normalize_name(q.speaker_filter)):
                continue
            source = {
                "episode": str(episodes[t.pk]) if t.pk in episodes else None, "session": t.session.external_id, "turn": t.external_id,
            }
            loaded[("turn", t.pk)] = RecallItem(
                kind="turn", id=str(t.public_id), text=t.text, score=0.0, lanes={"_importance": importance.get(t.pk)},
                occurred_at=t.occurred_at, speaker=t.speaker, pk=t.pk, source=source,
            )
    return {key: loaded[key] for key in keys if key in loaded}


def _moment_ok(q: _Query, moment: datetime) -> bool:
    if q.as_of is not None and moment > q.as_of:
        return False
    return q.window is None or q.window.contains(moment)


def _source(*, episode, session, turn) -> dict[str, str | None]:
    return {
        "episode": str(episode.public_id) if episode else None,
        "session": session.external_id if session else None,
        "turn": turn.external_id if turn else None,
    }


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "?"
