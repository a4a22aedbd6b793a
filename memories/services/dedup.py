"""Entity deduplication: which entities of a scope are one identity, and merging them.

Three passes over a scope's canonical entities (`merged_into` unset), comparing only entities of
the same kind, each name an entity goes by counting (its name and its aliases):

1. exact: the same key under `dedup_key`, the normaliser below ("Google", "google inc" and
   "my company Google" are all "google"); score 1.0;
2. containment and trigram: one key's words inside the other's ("Ann" in "Ann Smith"), or a
   pg_trgm `similarity()` of the keys of at least DEDUP_TRIGRAM_SIMILARITY ("jon smith" and
   "john smith"); the score is the similarity;
3. embedding: the cosine of the entity-name vectors stored already (Embedding rows of target type
   "entity", for the embedder in force) of at least DEDUP_EMBEDDING_SIMILARITY.

A pair found by an earlier pass is not proposed again by a later one, and a pair a person
decided already (a dismissed proposal, or a merge of the two that was undone) is never
proposed again. The fuzzy passes score at most FUZZY_SCORE_CAP, so a threshold of 1.0 means
"exact normalised matches only" (`DEDUP_AUTO_MERGE_SIMILARITY`, the nightly run's).

Which entity survives: of two entities, the one more facts (as subject or object) and mentions
point at, then the older, then the one made first (lower id). Within a pass-1 group every
other member is proposed into the group's survivor. When proposals are applied one after the
other, each pair is taken as it stands then (both followed to their canonical entity, the
survivor picked again by the same rule), so chains settle into one entity.

Merging is `entity_merge` (memories/services/merge.py): facts, mentions and aliases move, the
source is kept with `merged_into`, the merge is audited and `entity_merge_undo` reverses it
exactly. Proposing reads (Access.READ); recording, merging, dismissing and undoing write.
Callers refresh the merged facts' search documents afterwards (retrieval's
`fact_documents_refresh`, with `merge_fact_ids(merge)`), as every merge door does.
"""

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, NotFound
from memoryweb.providers.embedders import get_embedder
from memories.extraction.lexicon import SPEAKER_REFERENCES
from memories.models import (
    EmbeddingTarget, Entity, EntityAlias, EntityMerge, Fact, Mention, MergeProposal, ProposalKind, ProposalStatus, Scope,
)
from memories.services.merge import entity_merge, entity_merge_undo
from memories.services.resolve import entity_canonical

logger = logging.getLogger("memoryweb.dedup")

# A fuzzy match is never as sure as an exact one: passes 2 and 3 score at most this.
FUZZY_SCORE_CAP = 0.99

# --- The normaliser -----------------------------------------------------------------------------
# Legal-form suffixes dropped from the end of a name ("Acme Pty Ltd" → "acme"). Only at the end,
# and never the last word left.
COMPANY_SUFFIXES = frozenset({
    "inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc", "llp", "plc",
    "gmbh", "ag", "sa", "sas", "sarl", "bv", "nv", "srl", "spa", "oy", "ab", "kk", "pty", "pte",
})
# "my company Google", "our Google", "the Google": an owner word, optionally a role noun, then the name.
OWNER_WORDS = frozenset({"my", "our", "your", "his", "her", "their", "the"})
ROLE_WORDS = frozenset({
    "company", "employer", "firm", "workplace", "team", "friend", "colleague", "coworker", "boss", "manager",
    "partner", "wife", "husband", "brother", "sister", "mother", "father", "mom", "mum", "dad", "son",
    "daughter", "cousin", "uncle", "aunt", "neighbour", "neighbor", "dog", "cat", "city", "town", "school",
})
_POSSESSIVE = re.compile(r"['’]s\b")
_DROPPED = re.compile(r"['’.]")  # "o'brien" → "obrien", "u.s." → "us", "inc." → "inc"
_PUNCTUATION = re.compile(r"[^\w\s]")
# Keys too vague for containment to mean anything ("my company" inside "my company Google").
_VAGUE = SPEAKER_REFERENCES | OWNER_WORDS | ROLE_WORDS | frozenset({"a", "an", "we", "us", "you", "it", "home", "work", "office"})
_MAX_WORDS = 12


def dedup_key(name: str) -> str:
    """The comparison key of pass 1: casefolded; possessive "'s", apostrophes and full stops
    removed; other punctuation a space; a leading owner word and role noun dropped ("my company
    Google" → "google", unless nothing but them is left); trailing legal-form suffixes dropped
    ("Google, Inc." → "google"). Empty for a name of punctuation only."""
    text = _PUNCTUATION.sub(" ", _DROPPED.sub("", _POSSESSIVE.sub("", (name or "").casefold())))
    words = text.split()
    if len(words) >= 2 and words[0] in OWNER_WORDS:
        rest = words[1:]
        if len(rest) >= 2 and rest[0] in ROLE_WORDS:
            rest = rest[1:]
        if len(rest) == 1 and rest[0] in ROLE_WORDS:  # "my company" stays itself
            return " ".join(words)
        words = rest
    while len(words) >= 2 and words[-1] in COMPANY_SUFFIXES:
        words = words[:-1]
        if len(words) >= 2 and words[-1] in ("and", "&"):  # "Johnson & Co"
            words = words[:-1]
    return " ".join(words)[:200]


# --- Proposing ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Proposal:
    """Two entities deduplication takes for one: `source` would merge into `target`."""

    source: Entity
    target: Entity
    kind: str  # ProposalKind
    score: float  # 0..1; 1.0 only for pass 1
    evidence: dict = field(default_factory=dict)  # pass, names matched, keys, the measured value

    def as_dict(self) -> dict:
        return {
            "source": {"id": str(self.source.public_id), "name": self.source.name},
            "target": {"id": str(self.target.public_id), "name": self.target.name},
            "entity_kind": self.source.kind, "pass": self.kind, "score": round(self.score, 4), "evidence": self.evidence,
        }


@dataclass
class _Candidates:
    entities: dict[int, Entity]
    weight: dict[int, int]  # facts (as subject or object) and mentions pointing at the entity
    names: dict[int, dict[str, str]]  # entity pk → {key: a name with that key}

    def survivor(self, a: Entity, b: Entity) -> Entity:
        return survivor(a, b, self.weight)


def survivor(a: Entity, b: Entity, weight: dict[int, int]) -> Entity:
    """Which of two entities stays: more facts and mentions, then the older, then the lower id."""
    return min((a, b), key=lambda e: (-weight.get(e.pk, 0), e.created_at, e.pk))


def dedup_propose(*, principal: Principal | None, scope: Scope, model: str | None = None) -> list[Proposal]:
    """Merge proposals for `scope`, pass by pass (pass 1 first, then by score). Writes nothing.
    `model`: whose entity-name vectors pass 3 compares (default: the embedder in force)."""
    require(principal, scope, Access.READ)
    found = _candidates(scope)
    decided = _decided_pairs(scope)
    proposals: list[Proposal] = []
    seen: set[frozenset[int]] = set()

    def add(a: Entity, b: Entity, kind: str, score: float, evidence: dict) -> None:
        pair = frozenset((a.pk, b.pk))
        if pair in seen or pair in decided:
            return
        seen.add(pair)
        target = found.survivor(a, b)
        source = b if target is a else a
        proposals.append(Proposal(source=source, target=target, kind=kind, score=score, evidence=evidence))

    groups = _exact_groups(found)
    for group in groups:
        members = [found.entities[pk] for pk in group]
        target = members[0]
        for other in members[1:]:
            target = found.survivor(target, other)
        for member in members:
            if member is not target:
                add(member, target, ProposalKind.EXACT, 1.0, _exact_evidence(found, member, target, group))
    # Members of one exact group merge together anyway: no fuzzy proposal between them.
    for group in groups:
        seen.update(frozenset((a, b)) for a in group for b in group if a < b)

    similar = sorted(_similar_pairs(found), key=lambda p: (-p[1], p[0]))
    for (a, b), score, evidence in similar:
        kind = ProposalKind.CONTAINMENT if evidence["containment"] else ProposalKind.TRIGRAM
        add(found.entities[a], found.entities[b], kind, min(score, FUZZY_SCORE_CAP), evidence)

    model = model or get_embedder().name
    for (a, b), cosine in _embedding_pairs(scope, found, model):
        add(found.entities[a], found.entities[b], ProposalKind.EMBEDDING, min(cosine, FUZZY_SCORE_CAP), {
            "pass": 3, "names": [found.entities[a].name, found.entities[b].name], "model": model,
            "cosine": round(cosine, 4), "threshold": settings.DEDUP_EMBEDDING_SIMILARITY,
        })
    return proposals


def _candidates(scope: Scope) -> _Candidates:
    entities = {e.pk: e for e in Entity.objects.in_scope(scope).filter(merged_into__isnull=True).order_by("pk")}
    weight: dict[int, int] = defaultdict(int)
    counts = [
        Fact.objects.in_scope(scope).values_list("subject").annotate(n=Count("id")),
        Fact.objects.in_scope(scope).filter(object_entity__isnull=False).values_list("object_entity").annotate(n=Count("id")),
        Mention.objects.in_scope(scope).values_list("entity").annotate(n=Count("id")),
    ]
    for rows in counts:
        for pk, n in rows.order_by():
            weight[pk] += n
    names: dict[int, dict[str, str]] = {pk: {} for pk in entities}
    spellings = [(e.pk, e.name) for e in entities.values()]
    spellings += list(EntityAlias.objects.in_scope(scope).filter(entity__in=list(entities)).order_by("id").values_list("entity", "alias"))
    for pk, name in spellings:
        key = dedup_key(name)
        if key and key not in SPEAKER_REFERENCES:
            names[pk].setdefault(key, name)
    return _Candidates(entities=entities, weight=weight, names=names)


def _decided_pairs(scope: Scope) -> set[frozenset[int]]:
    """Pairs a person decided: dismissed (or undone) proposals, and merges of the two undone since."""
    closed = MergeProposal.objects.in_scope(scope).filter(status=ProposalStatus.DISMISSED).values_list("source", "target")
    undone = EntityMerge.objects.in_scope(scope).filter(undone_at__isnull=False).values_list("source", "target")
    return {frozenset(pair) for pair in [*closed, *undone]}


def _exact_groups(found: _Candidates) -> list[list[int]]:
    """Entities of one kind sharing a key, joined through any shared key, each group in pk order."""
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for pk, keys in found.names.items():
        for key in keys:
            holders[(found.entities[pk].kind, key)].append(pk)
    parent = {pk: pk for pk in found.entities}

    def root(pk: int) -> int:
        while parent[pk] != pk:
            parent[pk] = parent[parent[pk]]
            pk = parent[pk]
        return pk

    for pks in holders.values():
        for pk in pks[1:]:
            parent[root(pk)] = root(pks[0])
    groups: dict[int, list[int]] = defaultdict(list)
    for pk in found.entities:
        groups[root(pk)].append(pk)
    return [sorted(group) for group in groups.values() if len(group) > 1]


def _exact_evidence(found: _Candidates, member: Entity, target: Entity, group: list[int]) -> dict:
    """The key `member` shares with `target` (or, joined through a third, with another member) and the two names."""
    for others in ([target.pk], [pk for pk in group if pk not in (member.pk, target.pk)]):
        for key in sorted(found.names[member.pk]):
            holder = next((pk for pk in others if key in found.names[pk]), None)
            if holder is not None:
                return {"pass": 1, "key": key, "names": [found.names[member.pk][key], found.names[holder][key]]}
    raise AssertionError("a member of an exact group shares a key with another")


def _similar_pairs(found: _Candidates) -> list[tuple[tuple[int, int], float, dict]]:
    """Pass 2: containment on word boundaries (in Python, from each key's runs of words) and
    pg_trgm similarity (in SQL, on a temporary table of the keys with a trigram index), the
    best-scoring names of each pair kept. Each pair is (lower pk, higher pk)."""
    rows = [(pk, found.entities[pk].kind, key, name) for pk, keys in found.names.items() for key, name in keys.items()]
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for pk, kind, key, _ in rows:
        holders[(kind, key)].append(pk)
    contained: set[tuple[int, str, int, str]] = set()  # (pk of the longer key, it, pk of the shorter, it)
    for pk, kind, key, _ in rows:
        words = key.split(" ")[:_MAX_WORDS]
        runs = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)} - {key}
        for run in runs:
            if len(run) < 3 or run in _VAGUE:
                continue
            contained.update((pk, key, other, run) for other in holders.get((kind, run), []) if other != pk)
    scores = _similarities([(long, short) for _, long, _, short in contained])
    best: dict[tuple[int, int], tuple[float, dict]] = {}

    def keep(a: int, key_a: str, b: int, key_b: str, score: float, containment: bool) -> None:
        if a > b:
            a, key_a, b, key_b = b, key_b, a, key_a
        evidence = {
            "pass": 2, "containment": containment, "similarity": round(score, 4), "keys": [key_a, key_b],
            "names": [found.names[a][key_a], found.names[b][key_b]], "threshold": settings.DEDUP_TRIGRAM_SIMILARITY,
        }
        held = best.get((a, b))
        # Containment outranks a bare trigram match; then the higher similarity.
        if held is None or (containment, score) > (held[1]["containment"], held[0]):
            best[(a, b)] = (score, evidence)

    for long_pk, long_key, short_pk, short_key in contained:
        keep(long_pk, long_key, short_pk, short_key, scores[(long_key, short_key)], True)
    for a, key_a, b, key_b, score in _trigram_matches(rows):
        keep(a, key_a, b, key_b, score, False)
    return [(pair, score, evidence) for pair, (score, evidence) in best.items()]


def _similarities(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    if not pairs:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a, b, similarity(a, b) FROM unnest(%s::text[], %s::text[]) AS t(a, b)",
            [[a for a, _ in pairs], [b for _, b in pairs]],
        )
        return {(a, b): score for a, b, score in cursor.fetchall()}


def _trigram_matches(rows: list[tuple[int, str, str, str]]) -> list[tuple[int, str, int, str, float]]:
    """Pairs of keys (different entities, one kind) with similarity() ≥ DEDUP_TRIGRAM_SIMILARITY.

    The keys go to a temporary table with a GIN trigram index, so the `%` operator (under
    pg_trgm.similarity_threshold, set to the setting for this transaction and put back after)
    finds each key's neighbours without comparing every pair."""
    if len(rows) < 2:
        return []
    threshold = settings.DEDUP_TRIGRAM_SIMILARITY
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('pg_trgm.similarity_threshold')")
        previous = cursor.fetchone()[0]
        cursor.execute("DROP TABLE IF EXISTS pg_temp.memoryweb_dedup_keys")
        cursor.execute(
            "CREATE TEMPORARY TABLE memoryweb_dedup_keys (entity_id bigint, kind text, key text) ON COMMIT DROP"
        )
        cursor.execute(
            "INSERT INTO memoryweb_dedup_keys SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[])",
            [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
        )
        cursor.execute("CREATE INDEX ON memoryweb_dedup_keys USING gin (key gin_trgm_ops)")
        cursor.execute("ANALYZE memoryweb_dedup_keys")
        cursor.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", [str(threshold)])
        cursor.execute(
            "SELECT a.entity_id, a.key, b.entity_id, b.key, similarity(a.key, b.key) FROM memoryweb_dedup_keys a"
            " JOIN memoryweb_dedup_keys b ON b.key %% a.key AND b.kind = a.kind AND b.entity_id > a.entity_id"
            " WHERE a.key <> b.key AND similarity(a.key, b.key) >= %s",
            [threshold],
        )
        matches = cursor.fetchall()
        cursor.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", [previous])
        cursor.execute("DROP TABLE memoryweb_dedup_keys")
    return matches


def _embedding_pairs(scope: Scope, found: _Candidates, model: str) -> list[tuple[tuple[int, int], float]]:
    """Pass 3: pairs of canonical entities of one kind whose name vectors (of `model`) have a
    cosine ≥ DEDUP_EMBEDDING_SIMILARITY. Compares every pair of the scope's entity vectors
    (exact, O(n²) in SQL; see docs/ARCHITECTURE.md for its cost), best first."""
    if len(found.entities) < 2:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.target_id, b.target_id, 1 - (a.vec <=> b.vec) AS cosine"
            " FROM retrieval_embedding a JOIN retrieval_embedding b ON b.scope_id = a.scope_id AND b.model = a.model"
            "  AND b.target_type = a.target_type AND b.target_id > a.target_id"
            " JOIN memories_entity ea ON ea.id = a.target_id JOIN memories_entity eb ON eb.id = b.target_id AND eb.kind = ea.kind"
            " WHERE a.scope_id = %s AND a.model = %s AND a.target_type = %s"
            "  AND ea.merged_into_id IS NULL AND eb.merged_into_id IS NULL AND (a.vec <=> b.vec) <= %s"
            " ORDER BY cosine DESC, a.target_id, b.target_id",
            [scope.pk, model, EmbeddingTarget.ENTITY, 1 - settings.DEDUP_EMBEDDING_SIMILARITY],
        )
        rows = cursor.fetchall()
    return [((a, b), float(cosine)) for a, b, cosine in rows if a in found.entities and b in found.entities]


# --- Recording, merging, dismissing ---------------------------------------------------------------

@dataclass(frozen=True)
class Applied:
    """A proposal as it was applied: the merge it made, or why it made none."""

    proposal: MergeProposal
    merge: EntityMerge | None
    skipped: str = ""  # why no merge: the two are one entity already, or entity_merge refused

    def as_dict(self) -> dict:
        p = self.proposal
        return {
            "proposal": str(p.public_id), "source": p.source.name, "target": p.target.name, "pass": p.kind,
            "score": round(p.score, 4), "merge": str(self.merge.public_id) if self.merge else None,
            "merged": f"{self.merge.source.name} into {self.merge.target.name}" if self.merge else None,
            "skipped": self.skipped or None,
        }


def dedup_record(*, principal: Principal | None, scope: Scope, proposals: Iterable[Proposal]) -> list[MergeProposal]:
    """Store proposals as open MergeProposals: a pair open already is updated in place (its
    direction, pass, score and evidence as computed now), never doubled."""
    require(principal, scope, Access.WRITE)
    rows = []
    for proposal in proposals:
        pair = Q(source=proposal.source, target=proposal.target) | Q(source=proposal.target, target=proposal.source)
        values = {"source": proposal.source, "target": proposal.target, "kind": proposal.kind,
                  "score": proposal.score, "evidence": proposal.evidence}
        with transaction.atomic():
            row = MergeProposal.objects.in_scope(scope).select_for_update().filter(pair, status=ProposalStatus.PROPOSED).first()
            if row is None:
                try:
                    with transaction.atomic():  # another run recorded the pair meanwhile: update that one
                        row = MergeProposal.objects.create(scope=scope, **values)
                except IntegrityError:
                    row = MergeProposal.objects.in_scope(scope).select_for_update().get(pair, status=ProposalStatus.PROPOSED)
            for name, value in values.items():
                setattr(row, name, value)
            row.save(update_fields=list(values))
        rows.append(row)
    return rows


def dedup_apply(
    *, principal: Principal | None, scope: Scope, proposals: Iterable[Proposal],
    progress: Callable[[int, int], None] | None = None,
) -> list[Applied]:
    """Merge each proposal in turn, taking the pair as it stands then: both followed to their
    canonical entity and the survivor picked again (an earlier merge may have joined them, or
    made one of them heavier). Each is recorded as a MergeProposal, merged and linked to its
    EntityMerge. A merge `entity_merge` refuses is skipped with its reason; the rest go on."""
    require(principal, scope, Access.WRITE)
    rows = dedup_record(principal=principal, scope=scope, proposals=proposals)
    applied = []
    for done, row in enumerate(rows, 1):
        applied.append(_apply(principal=principal, scope=scope, row=row))
        if progress:
            progress(done, len(rows))
    return applied


def _apply(*, principal: Principal | None, scope: Scope, row: MergeProposal) -> Applied:
    a, b = (entity_canonical(Entity.objects.get(pk=e.pk)) for e in (row.source, row.target))
    if a.pk == b.pk:
        _close(row, ProposalStatus.MERGED, principal=principal)
        return Applied(proposal=row, merge=None, skipped=f"{row.source.name} and {row.target.name} are one entity already")
    if a.kind != b.kind:
        return Applied(proposal=row, merge=None, skipped=f"{a.name} is a {a.kind}, {b.name} a {b.kind}")
    target = survivor(a, b, _weights(scope, [a, b]))
    source = b if target is a else a
    try:
        merge = entity_merge(principal=principal, scope=scope, source=source, target=target)
    except (Conflict, NotFound) as exc:
        return Applied(proposal=row, merge=None, skipped=exc.message)
    _close(row, ProposalStatus.MERGED, principal=principal, merge=merge)
    return Applied(proposal=row, merge=merge)


def _weights(scope: Scope, entities: list[Entity]) -> dict[int, int]:
    return {
        e.pk: Fact.objects.in_scope(scope).filter(Q(subject=e) | Q(object_entity=e)).count()
        + Mention.objects.in_scope(scope).filter(entity=e).count()
        for e in entities
    }


def _close(row: MergeProposal, status: str, *, principal: Principal | None, merge: EntityMerge | None = None) -> None:
    row.status, row.merge = status, merge or row.merge
    row.decided_at, row.decided_by = timezone.now(), principal.label if principal else "system"
    row.save(update_fields=["status", "merge", "decided_at", "decided_by"])


def proposal_merge(*, principal: Principal | None, proposal: MergeProposal) -> Applied:
    """Merge one open proposal (the admin's "Merge" action)."""
    scope = proposal.scope
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        row = _open(scope, proposal)
        return _apply(principal=principal, scope=scope, row=row)


def proposal_dismiss(*, principal: Principal | None, proposal: MergeProposal) -> MergeProposal:
    """Close one open proposal without merging; the pair is not proposed again. Audited."""
    scope = proposal.scope
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        row = _open(scope, proposal)
        _close(row, ProposalStatus.DISMISSED, principal=principal)
        audit_record(
            principal=principal, action="entity.merge_dismiss", target_type="merge_proposal", target_id=row.public_id,
            scope=scope, before={"status": ProposalStatus.PROPOSED},
            after={"status": ProposalStatus.DISMISSED, "source": str(row.source.public_id), "target": str(row.target.public_id)},
        )
    return row


def _open(scope: Scope, proposal: MergeProposal) -> MergeProposal:
    row = (
        MergeProposal.objects.in_scope(scope).select_for_update().select_related("source", "target")
        .filter(pk=proposal.pk).first()
    )
    if row is None:
        raise NotFound(f"No merge proposal {proposal.public_id} in scope {scope.slug!r}.")
    if row.status != ProposalStatus.PROPOSED:
        raise Conflict(f"Proposal {row.source.name} → {row.target.name} is {row.status} already.")
    return row


def dedup_undo(*, principal: Principal | None, scope: Scope, merge_id) -> EntityMerge:
    """Undo a merge exactly (`entity_merge_undo`); a proposal that led to it becomes dismissed,
    so the nightly run does not merge the pair again."""
    with transaction.atomic():
        merge = entity_merge_undo(principal=principal, scope=scope, merge_id=merge_id)
        for row in MergeProposal.objects.in_scope(scope).filter(merge=merge, status=ProposalStatus.MERGED):
            _close(row, ProposalStatus.DISMISSED, principal=principal)
    return merge


def merge_scope_find(*, scopes, merge_id) -> Scope:
    """The scope, of `scopes`, that holds merge `merge_id` (for `dedup undo` without --scope)."""
    try:
        public_id = UUID(str(merge_id))
    except ValueError:
        raise NotFound(f"No merge {merge_id!r}.") from None
    merge = EntityMerge.objects.filter(scope__in=scopes, public_id=public_id).select_related("scope").first()
    if merge is None:
        raise NotFound(f"No merge {merge_id}.")
    return merge.scope


# --- The nightly run --------------------------------------------------------------------------------

def dedup_nightly(*, auto_merge_similarity: float | None = None) -> dict:
    """For every scope: record the proposals and, when DEDUP_AUTO_MERGE is on, merge those
    scoring at least `auto_merge_similarity` (default DEDUP_AUTO_MERGE_SIMILARITY: 1.0, exact
    normalised matches only). Runs as the system; a scope that fails is logged and the others
    go on. Returns counts and, per scope, the merges made (for the caller to refresh the merged
    facts' search documents)."""
    threshold = settings.DEDUP_AUTO_MERGE_SIMILARITY if auto_merge_similarity is None else auto_merge_similarity
    model = get_embedder().name
    result = {"scopes": 0, "proposed": 0, "merged": 0, "failed": [], "merges": []}
    for scope in Scope.objects.order_by("id"):
        try:
            proposals = dedup_propose(principal=None, scope=scope, model=model)
            sure, unsure = [], []
            for proposal in proposals:
                (sure if settings.DEDUP_AUTO_MERGE and proposal.score >= threshold else unsure).append(proposal)
            dedup_record(principal=None, scope=scope, proposals=unsure)
            applied = dedup_apply(principal=None, scope=scope, proposals=sure)
        except Exception:
            logger.exception("Deduplication of scope %s failed", scope.slug)
            result["failed"].append(scope.slug)
            continue
        merges = [a.merge for a in applied if a.merge is not None]
        result["scopes"] += 1
        result["proposed"] += len(proposals)
        result["merged"] += len(merges)
        result["merges"] += [(scope.pk, m.pk) for m in merges]
    return result
