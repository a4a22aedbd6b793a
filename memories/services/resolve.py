"""Entity resolution: which canonical entity of a scope does a name mean?

In order, first hit wins:
1. exact alias, case-insensitive ("google" → Google);
2. containment on word boundaries: an alias inside the name ("my company Google" → Google,
   the longest such alias), or the name inside an alias ("Google" → "Google Cloud", the
   closest such alias);
3. trigram similarity (pg_trgm) of the alias keys, at least TRIGRAM_THRESHOLD;
4. cosine similarity of entity-name embeddings, at least EMBEDDING_THRESHOLD;
5. otherwise a new entity.
Any name that resolved is recorded as a new alias of its entity, so the next lookup is exact.
Merged entities are followed to the canonical one. "I", "me", "my" mean the speaker.

Runs inside the caller's transaction; the embedding of the name (slow) is computed by the
caller beforehand and passed in.
"""

import re
from dataclasses import dataclass, field

from django.contrib.postgres.search import TrigramSimilarity
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.functions import Length
from pgvector.django import CosineDistance

from memories.extraction.lexicon import SPEAKER_REFERENCES, TEAM_WORDS
from memories.models import Embedding, EmbeddingTarget, Entity, EntityAlias, EntityKind, Scope
from memories.normalize import normalize_name

# pg_trgm similarity 0.5 joins "Gogle"/"Google" and "Jon Smith"/"John Smith" but keeps
# "San Francisco"/"San Diego" and "New York"/"New Jersey" apart.
TRIGRAM_THRESHOLD = 0.5
# Cosine similarity of name embeddings above which two names are taken as one entity (DESIGN.md).
EMBEDDING_THRESHOLD = 0.88

# Words that never identify an entity on their own, so containment must not match them.
_GENERIC = SPEAKER_REFERENCES | frozenset({
    "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "they", "them", "their", "it", "its",
    "a", "an", "the", "this", "that", "my company", "the company", "work", "home", "the office",
})
_MAX_CONTAINMENT_WORDS = 12
_WORD = re.compile(r"\w+")


@dataclass
class Resolution:
    entity: Entity
    method: str  # alias | containment | trigram | embedding | created
    created: bool = False


@dataclass
class Resolver:
    """Resolves names within one scope and remembers its answers for the operation's duration."""

    scope: Scope
    speaker: str = ""
    vectors: object | None = None  # memories.services.vectors.Vectors with the names embedded
    created: list[Entity] = field(default_factory=list)
    _cache: dict[str, Resolution] = field(default_factory=dict)

    def means_speaker(self, name: str) -> bool:
        key = normalize_name(name)
        return key in SPEAKER_REFERENCES or (bool(self.speaker) and key == normalize_name(self.speaker))

    def find(self, name: str) -> Entity | None:
        """The existing entity `name` means, writing nothing (not even an alias)."""
        if normalize_name(name) in SPEAKER_REFERENCES and self.speaker:
            name = self.speaker
        found = entity_find(scope=self.scope, name=name, vector=self._vector(name), model=self._model())
        return found[0] if found else None

    def team_entity(self, team: str) -> Entity:
        """The entity of the scope's team (an organization named as the team), created on demand,
        with "we", "us", "our", "our team" and "the team" among its aliases so that questions
        saying "we" find it."""
        entity = self.resolve(team, kind=EntityKind.ORGANIZATION).entity
        for word in sorted(TEAM_WORDS):
            _alias_record(scope=self.scope, entity=entity, name=word)
        return entity

    def resolve(self, name: str, *, kind: str = EntityKind.OTHER, create: bool = True) -> Resolution | None:
        name = " ".join(name.split())[:200]
        key = normalize_name(name) or name.casefold()
        if key in SPEAKER_REFERENCES and self.speaker and normalize_name(self.speaker) not in SPEAKER_REFERENCES:
            return self.resolve(self.speaker, kind=EntityKind.PERSON, create=create)
        if self.speaker and key == normalize_name(self.speaker):
            kind = EntityKind.PERSON
        if key in self._cache:
            return self._cache[key]
        found = entity_find(scope=self.scope, name=name, kind=kind, vector=self._vector(name), model=self._model())
        if found is not None:
            entity, method = found
            entity = _alias_record(scope=self.scope, entity=entity, name=name)
            if entity.kind == EntityKind.OTHER and kind != EntityKind.OTHER:
                Entity.objects.filter(pk=entity.pk).update(kind=kind)
                entity.kind = kind
            resolution = Resolution(entity=entity, method=method)
        elif not create:
            return None
        else:
            resolution = self._create(name=name, kind=kind)
        self._cache[key] = resolution
        return resolution

    def _create(self, *, name: str, kind: str) -> Resolution:
        entity = Entity.objects.create(scope=self.scope, name=name, kind=kind)
        owner = _alias_record(scope=self.scope, entity=entity, name=name)
        if owner.pk != entity.pk:
            # Another transaction recorded this name first (we waited for it on the unique
            # alias index): use its entity and drop ours, which nothing references yet.
            entity.delete()
            return Resolution(entity=owner, method="alias")
        self.created.append(entity)
        return Resolution(entity=entity, method="created", created=True)

    def _vector(self, name: str):
        return self.vectors.get(name) if self.vectors is not None else None

    def _model(self) -> str | None:
        return self.vectors.name if self.vectors is not None else None


def entity_canonical(entity: Entity) -> Entity:
    """Follow `merged_into` to the entity that stands for this one now."""
    seen = {entity.pk}
    while entity.merged_into_id is not None and entity.merged_into_id not in seen:
        seen.add(entity.merged_into_id)
        entity = Entity.objects.get(pk=entity.merged_into_id)
    return entity


def entity_find(
    *, scope: Scope, name: str, kind: str = EntityKind.OTHER, vector: list[float] | None = None, model: str | None = None,
) -> tuple[Entity, str] | None:
    """The existing entity `name` refers to and how it was found, or None. Writes nothing."""
    key = normalize_name(name) or name.casefold()
    aliases = EntityAlias.objects.in_scope(scope).select_related("entity")

    exact = aliases.filter(normalized=key).first()
    if exact is not None:
        return entity_canonical(exact.entity), "alias"
    named = Entity.objects.in_scope(scope).filter(name__iexact=name.strip()).order_by("id").first()
    if named is not None:  # made without an alias (admin, import)
        return entity_canonical(named), "alias"

    contained = _containment(aliases, key)
    if contained is not None:
        return entity_canonical(contained.entity), "containment"

    similar = (
        aliases.filter(normalized__trigram_similar=key)  # the % operator: served by the GIN trigram index
        .annotate(similarity=TrigramSimilarity("normalized", key))
        .filter(similarity__gte=TRIGRAM_THRESHOLD)
        .order_by("-similarity", "id")[:5]
    )
    for alias in similar:
        entity = entity_canonical(alias.entity)
        if _kinds_compatible(entity.kind, kind):
            return entity, "trigram"

    if vector is not None and model:
        nearest = (
            Embedding.objects.filter(scope=scope, model=model, target_type=EmbeddingTarget.ENTITY)
            .annotate(distance=CosineDistance("vec", vector))
            .filter(distance__lte=1 - EMBEDDING_THRESHOLD)
            .order_by("distance")
            .values_list("target_id", flat=True)[:5]
        )
        for target_id in nearest:
            entity = Entity.objects.in_scope(scope).filter(pk=target_id).first()
            if entity is not None:
                entity = entity_canonical(entity)
                if _kinds_compatible(entity.kind, kind):
                    return entity, "embedding"
    return None


def _containment(aliases, key: str) -> EntityAlias | None:
    # An alias inside the name: every run of whole words of the name is a candidate key.
    spellings = {tuple(key.split(" ")), tuple(_WORD.findall(key))}
    runs = set()
    for words in spellings:
        words = words[:_MAX_CONTAINMENT_WORDS]
        for start in range(len(words)):
            for end in range(start + 1, len(words) + 1):
                runs.add(" ".join(words[start:end]))
    runs -= _GENERIC | {key}
    inside = aliases.filter(normalized__in=runs).order_by(Length("normalized").desc(), "id").first() if runs else None
    if inside is not None:
        return inside
    # The name inside an alias, on word boundaries; the closest (shortest) alias wins.
    if key in _GENERIC or len(key) < 3:
        return None
    around = Q(normalized__startswith=f"{key} ") | Q(normalized__endswith=f" {key}") | Q(normalized__contains=f" {key} ")
    return aliases.filter(around).order_by(Length("normalized"), "id").first()


def team_name(scope: Scope) -> str | None:
    """Whom "we" means in `scope`: its team's name, for a shared team; None in a personal scope
    (there "we" is the speaker, as before)."""
    team = scope.team
    return None if team.personal_for_id is not None else (team.name or team.slug)


def _kinds_compatible(existing: str, wanted: str) -> bool:
    # A fuzzy match must not make a person of a place: only when either kind is unknown, or both agree.
    return EntityKind.OTHER in (existing, wanted) or existing == wanted


def _alias_record(*, scope: Scope, entity: Entity, name: str) -> Entity:
    """Record `name` as an alias of `entity`, unless it names an entity already; returns the
    entity the alias belongs to."""
    key = normalize_name(name) or name.casefold()
    existing = EntityAlias.objects.in_scope(scope).filter(normalized=key).select_related("entity").first()
    if existing is not None:
        return entity_canonical(existing.entity)
    try:
        with transaction.atomic():
            EntityAlias.objects.create(scope=scope, entity=entity, alias=name[:200], normalized=key[:200])
    except IntegrityError:
        existing = EntityAlias.objects.in_scope(scope).select_related("entity").get(normalized=key)
        return entity_canonical(existing.entity)
    return entity
