"""`memoryweb bench recall`: recall latency on a synthetic scope inside a table ten times larger.

The target scope holds `facts` facts with realistic sentences ("Maria Lopez lives in Lisbon."),
or with `turns` a conversation of that many turns from the Zipf corpus (retrieval/corpus.py),
written through the bulk ingest (COPY, memories/services/bulk_ingest.py) and indexed the normal
way (documents, BM25 statistics, vectors from the embedder in force); its questions are about
the corpus's planted turns, so whether the evidence came back in the top 10 is known. Noise
scopes fill the vector table up to ten times the target's rows with random unit vectors (COPY,
binary), so the HNSW index and the scope filter inside the scan are exercised as in a big
shared install. Then `queries` questions go through `recall` (`recall_evidence` for a
conversation); latency is reported excluding and
including the query's embedding, with the EXPLAIN of the nearest-neighbour query. Not a test:
run it against a throwaway MEMORYWEB_HOME.
"""

import random
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from memoryweb.errors import InvalidInput
from memoryweb.progress import progress_bar
from memoryweb.providers.embedders import get_embedder
from retrieval.bench_ingest import scope_delete_throwaway, synthetic_question
from retrieval.corpus import Corpus, Planted
from memories.models import Entity, EntityAlias, Fact, Scope, Turn
from memories.services.bulk_ingest import ingest_sessions_bulk
from memories.services.vectors import drop_model_index, ensure_model_index
from retrieval.indexing import index_pending, vector_target
from retrieval.matrix import matrix_for
from retrieval.models import Collection, CorpusStat
from retrieval.search import recall, recall_evidence
from retrieval.search.candidates import QueryVectors
from retrieval.search.question import dense_text, kinds_asked, scope_speakers
from retrieval.vector import explain_vector_query, vector_search_exact

FIRST = (
    "Maria Ahmed Chen Olga Tomas Priya Kwame Sofia Lars Aiko Mateo Leila Noah Ingrid Ravi Elena Jonas Fatima Diego Mei "
    "Samuel Nadia Hugo Amara Pavel Lucia Omar Greta Kenji Zara Felix Ines Tariq Hanna Luca Yara Emil Rosa Idris Alma "
    "Anya Bruno Carmen Dmitri Esther Farid Gloria Hamid Irene Jamal Keiko Liam Marta Nikolai Oona Pedro Quentin Rania "
    "Stefan Tamar Ulrich Vera Wanjiru Xavier Yusuf Zofia Abena Bilal Chiara Dario Eshe Fabio Gaia Hiro Ilse Joaquin "
    "Kamala Lorenzo Mirela Nnamdi Orla Pilar Rafael Saoirse Teodor Umar Valentina Wiebke Ximena Yannick Zainab Ayla"
).split()
# Surnames: 30 common ones and 250 made of two syllables, so that (as in a real team's memory)
# a name's words are not each shared by thousands of other people.
LAST = (
    "Lopez Khan Wang Petrova Novak Sharma Mensah Rossi Berg Tanaka Garcia Haddad Kim Larsen Iyer Popescu Weber Diallo "
    "Silva Zhou Okafor Costa Dubois Nilsson Moreau Sato Ali Fischer Nowak Reyes"
).split() + [
    head + tail
    for head in "Al Ber Cas Dal El Fer Gal Har Ib Jor Kal Lin Mar Nor Os Pal Quin Ros Sal Tor Ul Val Win Yar Zel".split()
    for tail in "ton berg sen ova ez ski ani ari ley wood".split()
]
CITIES = "Lisbon Berlin Nairobi Osaka Toronto Lima Oslo Accra Madrid Seoul Denver Porto Prague Dublin Quito Austin Lyon Hanoi Cairo Perth".split()
COMPANIES = "Google Acme Initech Globex Umbrella Stark Wayne Hooli Vandelay Soylent Tyrell Cyberdyne Aperture Wonka Oscorp".split()
ROLES = ["software engineer", "designer", "nurse", "teacher", "data scientist", "chef", "pilot", "lawyer", "architect", "product manager"]
HOBBIES = ["football", "chess", "climbing", "painting", "jazz", "sailing", "baking", "running", "photography", "gardening", "tennis", "poetry"]
PETS = ["a dog", "a cat", "a parrot", "two rabbits", "a tortoise", "goldfish"]
TEMPLATES = [
    ("lives_in", CITIES, "{name} lives in {value}."),
    ("works_at", COMPANIES, "{name} works at {value}."),
    ("role", ROLES, "{name} is a {value}."),
    ("likes", HOBBIES, "{name} likes {value}."),
    ("has_pet", PETS, "{name} has {value}."),
    ("visited", CITIES, "{name} visited {value} last year."),
]
QUESTIONS = [
    "Where does {name} live?", "Who works at {company}?", "What does {name} like?", "Does {name} have a pet?",
    "Who likes {hobby}?", "What is {name}'s job?", "Who has been to {city}?", "people in {city} who enjoy {hobby}",
]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


MAX_TURNS = 1_000_000  # the corpus spreads them over three years up to yesterday
CORPUS_NAME = "bench recall target: corpus seed "  # + the seed, so `--scope` can ask its questions again


def bench_recall(
    *, facts: int = 10_000, scopes: int = 10, queries: int = 200, stdout=None, principal=None, seed: int = 7,
    keep: bool = False, existing: Scope | None = None, turns: int = 0, references: bool = True,
) -> dict:
    """Build, measure, clean up; returns the figures (milliseconds).

    turns: build a conversation of that many turns instead of facts (sessions of 50 turns, each
    turn indexed with its ±1 and ±2 windows), searched with `recall_evidence` as an agent asking
    about a conversation would. keep: leave the built scopes in place (their slugs are printed)
    so later runs can measure them again with `existing` instead of rebuilding the table. references: compare
    BM25's fast path and recall's top 10 with the exact rankings (minutes at a million turns; false times recall only)."""
    if turns > MAX_TURNS:
        raise InvalidInput(f"bench recall builds at most {MAX_TURNS} turns.")
    out = stdout or sys.stdout
    rng = random.Random(seed)
    embedder = get_embedder()
    if existing is not None:
        return _measure(existing, _asker(existing, rng), queries=queries, embedder=embedder, out=out, references=references)

    from accounts.services import local_admin_ensure, personal_team_ensure

    user = principal.user if principal is not None else local_admin_ensure()[0]
    team = personal_team_ensure(user=user)
    tag = uuid.uuid4().hex[:8]
    target = Scope.objects.create(team=team, slug=f"bench-{tag}", name=f"{CORPUS_NAME}{seed}" if turns else "bench recall target")
    noise = [Scope.objects.create(team=team, slug=f"bench-{tag}-noise-{i}", name="bench noise") for i in range(scopes)]
    try:
        started = time.perf_counter()
        if turns:
            _conversation(target, turns=turns, user=user, seed=seed)
            seconds = time.perf_counter() - started
            out.write(f"target scope: a conversation of {turns} turns, raw ingest {seconds:.1f} s ({turns / seconds:.0f} turns/s)\n")
        else:
            people, made = synthetic_facts(target, facts=facts, rng=rng)
            out.write(f"target scope: {made} facts about {people} people ({time.perf_counter() - started:.1f} s)\n")
        _build(target, noise, rng=rng, embedder=embedder, out=out)
        result = _measure(target, _asker(target, rng), queries=queries, embedder=embedder, out=out, references=references)
        if keep:
            out.write(f"kept: measure again with `memoryweb bench recall --scope {target.slug}`\n")
        return result
    finally:
        if not keep:
            for scope in (target, *noise):
                scope_delete_throwaway(scope=scope)


def _asker(scope: Scope, rng: random.Random) -> Callable[[], str | Planted]:
    corpus = scope_corpus(scope)
    if corpus is not None:
        return lambda: corpus.planted(rng.randrange(corpus.planted_count()))
    ask = question_maker(scope)
    return lambda: ask(rng)


def scope_corpus(scope: Scope) -> Corpus | None:
    """The corpus a `bench recall --turns` built `scope` from (its seed is in the scope's name)."""
    if not scope.name.startswith(CORPUS_NAME) or not scope.name[len(CORPUS_NAME):].isdigit():
        return None
    corpus = Corpus(turns=Turn.objects.filter(scope=scope).count(), seed=int(scope.name[len(CORPUS_NAME):]))
    return corpus if corpus.planted_count() else None


def question_maker(scope: Scope) -> Callable[[random.Random], str]:
    """Questions that fit what a bench put in `scope`, a conversation or facts about people,
    drawn with the caller's random generator (one per thread)."""
    corpus = scope_corpus(scope)
    if corpus is not None:
        return lambda rng: corpus.planted(rng.randrange(corpus.planted_count())).question
    if Turn.objects.filter(scope=scope).exists():
        return synthetic_question
    people = list(Entity.objects.filter(scope=scope, kind="person").order_by("pk"))
    if not people:
        raise InvalidInput(f"Scope {scope.slug!r} holds neither people nor turns: it was not built by a bench with --keep.")
    return lambda rng: _question(rng, people)


def synthetic_facts(scope: Scope, *, facts: int, rng: random.Random) -> tuple[int, int]:
    """`facts` facts ("Maria Lopez lives in Lisbon.") about facts/5 people, bulk-created in
    `scope` (not indexed yet); returns (people, facts made)."""
    people = _people(scope, max(facts // 5, 1), rng)
    return len(people), _facts(scope, people, facts, rng)


def _conversation(scope: Scope, *, turns: int, user, seed: int) -> None:
    """`turns` raw turns of the seeded corpus through the bulk ingest (COPY), up to yesterday."""
    from accounts.permissions import Principal

    corpus = Corpus(turns=turns, seed=seed, end=timezone.now() - timedelta(days=1))
    sessions = enumerate((({"session_id": sid, "messages": messages}) for sid, messages in corpus.sessions()), start=1)
    ingest_sessions_bulk(scope=scope, sessions=sessions, actor=Principal(user=user), source="bench", enqueue=False)


def _build(target: Scope, noise: list[Scope], *, rng: random.Random, embedder, out) -> None:
    """Noise vectors to nine times the target's, one HNSW build over all, then the target indexed."""
    started = time.perf_counter()
    # Bulk load without the HNSW index, then build it once over all rows: inserting a
    # million vectors into a live HNSW graph one by one takes far longer.
    drop_model_index(embedder)
    target_rows = Fact.objects.filter(scope=target).count() + 3 * Turn.objects.filter(scope=target).count()
    noise_rows = _noise(noise, rows=9 * target_rows, dim=embedder.dim, model=embedder.name, rng=rng)
    out.write(f"noise: {noise_rows} random vectors in {len(noise)} scopes ({time.perf_counter() - started:.1f} s)\n")

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
    ensure_model_index(embedder)  # one build over all rows, faster than growing it row by row
    with progress_bar(label="index", unit="turns") as progress:
        index_pending(scope=target, embedder=embedder, progress=progress)
    with connection.cursor() as cursor:
        for table in ("retrieval_embedding", "retrieval_searchdocument", "retrieval_termstat", "retrieval_posting"):
            cursor.execute(f"ANALYZE {table}")
        cursor.execute("SELECT count(*) FROM retrieval_embedding")
        table_rows = cursor.fetchone()[0]
    out.write(f"indexed the target with {embedder.name}; vector table: {table_rows} rows ({time.perf_counter() - started:.1f} s)\n")


def _measure(target: Scope, ask: Callable[[], str], *, queries: int, embedder, out, references: bool = True) -> dict:
    made = Fact.objects.filter(scope=target).count()
    turns = Turn.objects.filter(scope=target).count()
    # A conversation is searched as evidence (turns stay turns), facts with recall.
    search = recall_evidence if turns else recall
    noise_scopes = Scope.objects.filter(team=target.team, slug__startswith=f"{target.slug}-noise-").count()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM retrieval_embedding")
        table_rows = cursor.fetchone()[0]
    asked = [ask() for _ in range(queries)]
    texts = [a.question if isinstance(a, Planted) else a for a in asked]
    excluding, including, embedding, stages, found, tops = [], [], [], {}, [], []
    # The conversation held in memory (retrieval/matrix.py) built before timing, as a serving process holds it after
    # its first recall of the scope (built in the background meanwhile).
    held_at = time.perf_counter()
    held = matrix_for(scope=target, embedder=embedder, background=False) if not vector_search_exact(scope=target, embedder=embedder) else None
    if held is not None:
        out.write(f"turn matrix held in memory: {held.nbytes / 2**20:.0f} MB, built in {time.perf_counter() - held_at:.1f} s\n")
    search(scope=target, query=texts[0])  # warm the caches and the model
    speakers = scope_speakers(target)
    for text, question in zip(texts, asked):
        t0 = time.perf_counter()
        # As recall embeds it: as asked for the facts, without the speakers' names for the rest.
        vector = QueryVectors.embed(embedder, asked=text, unnamed=dense_text(text=text, speakers=speakers), kinds=kinds_asked({}))
        t1 = time.perf_counter()
        got = search(scope=target, query=text, query_vector=vector)
        t2 = time.perf_counter()
        for stage, seconds in got.timings.items():
            stages.setdefault(stage, []).append(seconds * 1000)
        embedding.append((t1 - t0) * 1000)
        excluding.append((t2 - t1) * 1000)
        including.append((t2 - t0) * 1000)
        tops.append([(item.kind, item.id) for item in got.items[:10]])
        if isinstance(question, Planted):  # its evidence turn among the ten returned?
            found.append(any(item.source.get("session") == question.session_id and item.source.get("turn") == question.turn_id
                             for item in got.items[:10]))
    collections = [Collection.TURN] if turns else [Collection.FACT]
    explain = explain_vector_query(
        scope=target, query_vector=embedder.embed([texts[0]])[0], embedder=embedder, collections=collections, limit=50
    )
    explain = re.sub(r"'\[[^\]]*\]'", "'[query vector]'", explain)
    result = {
        "facts": made, "turns": turns, "search": search.__name__, "noise_scopes": noise_scopes, "vector_rows": table_rows,
        "queries": queries, "embedder": embedder.name,
        "p50_ms_excluding_embedding": round(statistics.median(excluding), 2),
        "p95_ms_excluding_embedding": round(_percentile(excluding, 0.95), 2),
        "p50_ms_including_embedding": round(statistics.median(including), 2),
        "p95_ms_including_embedding": round(_percentile(including, 0.95), 2),
        "p50_ms_embedding": round(statistics.median(embedding), 2),
        "p50_ms_by_stage": {stage: round(statistics.median(v), 2) for stage, v in stages.items()},
        "p95_ms_by_stage": {stage: round(_percentile(v, 0.95), 2) for stage, v in stages.items()},
        "explain": explain,
        "evidence_at_10": round(sum(found) / len(found), 3) if found else None,
        "disk": disk_per_turn(target) if turns else None,
        "bm25": bm25_fast_against_exact(target, texts[:BM25_SAMPLE]) if references else None,
        "exact": recall_against_exact(target, search, texts[:EXACT_SAMPLE], tops[:EXACT_SAMPLE], embedder=embedder, speakers=speakers)
        if references else None,
    }
    what = f"a {turns}-turn conversation" if turns else f"{made} facts"
    out.write(f"{search.__name__} over {what} in a {table_rows}-row vector table, {queries} queries:\n")
    out.write(f"  excluding embedding: p50 {result['p50_ms_excluding_embedding']} ms, p95 {result['p95_ms_excluding_embedding']} ms\n")
    out.write(f"  including embedding: p50 {result['p50_ms_including_embedding']} ms, p95 {result['p95_ms_including_embedding']} ms\n")
    out.write(f"  p50 by stage (ms): {result['p50_ms_by_stage']}\n")
    out.write(f"  p95 by stage (ms): {result['p95_ms_by_stage']}\n")
    if references:
        bm25, exact = result["bm25"], result["exact"]
        out.write(f"  BM25 fast top-k against the exhaustive ranking on {bm25['questions']} questions: recall@10 {bm25['recall_at_10']},"
                  f" p50 {bm25['p50_ms_fast']} ms against {bm25['p50_ms_exact']} (p95 {bm25['p95_ms_fast']} / {bm25['p95_ms_exact']}),"
                  f" {bm25['packed']} read from packs, {bm25['two_passes']} by MaxScore with a second pass\n")
        out.write(f"  recall's top 10 against the exact pipeline's (vectors scanned exactly, every list {exact['pool']} long) on"
                  f" {exact['questions']} questions: recall@10 {exact['recall_at_10']}, {exact['identical']} identical; with the"
                  f" fast path's list lengths {exact['same_lists_recall_at_10']}, {exact['same_lists_identical']} identical\n")
    if found:
        out.write(f"  the planted evidence turn in the top 10: {result['evidence_at_10']:.3f} of {len(found)} questions\n")
    if turns:
        disk = result["disk"]
        out.write(f"  disk: {disk['bytes_per_turn']} bytes per turn ({disk['total_mb']} MB for the scope's rows, by table {disk['mb_by_table']})\n")
    out.write("EXPLAIN of the nearest-neighbour query:\n" + explain + "\n")
    return result


BM25_SAMPLE = 50
EXACT_SAMPLE = 30


def recall_against_exact(scope: Scope, search: Callable, texts: list[str], tops: list[list], *, embedder, speakers) -> dict:
    """Recall's top 10 (`tops`, as measured) against the exact pipeline's on `texts`: the same
    search with every vector list scanned exactly instead of through a graph, and every list (vector
    and BM25) as long as the pool, so what the fast path's approximations cost shows as one figure
    (the speakers' own lists and the learned order of the head, which only a small scope's exact path
    adds, stay as the fast path has them). Beside it, `same_lists_recall_at_10`: against the vectors
    scanned exactly with the lists as long as the fast path's (`RETRIEVAL_VECTOR_POOL_MAX`,
    `RETRIEVAL_BM25_POOL_MAX`), which is what the graphs alone cost; the rest is the lists' length."""
    from retrieval.ranking import pool_size

    sizes = dict(CorpusStat.objects.filter(scope=scope, doc_count__gt=0).values_list("collection", "doc_count"))
    pool = pool_size(sum(n for c, n in sizes.items() if c not in (Collection.TURN_W1, Collection.TURN_W2)))
    exactly = {"RETRIEVAL_EXACT_BELOW": 2**62}
    if not vector_search_exact(scope=scope, embedder=embedder):
        # What only a scope searched exactly gets stays off: the speakers' own lists, and the learned
        # order of the head (retrieval/rerank.py), which would make the reference a reordering the fast
        # path never makes rather than its exact form.
        exactly["RETRIEVAL_SPEAKER_LISTS"] = "off"
        exactly["RETRIEVAL_RERANK"] = False
    figures = {}
    for name, lists in (("", {"RETRIEVAL_VECTOR_POOL_MAX": pool, "RETRIEVAL_BM25_POOL_MAX": pool}), ("same_lists_", {})):
        kept = wanted = identical = 0
        with override_settings(**exactly, **lists):
            for text, top in zip(texts, tops):
                vector = QueryVectors.embed(embedder, asked=text, unnamed=dense_text(text=text, speakers=speakers), kinds=kinds_asked({}))
                reference = [(item.kind, item.id) for item in search(scope=scope, query=text, query_vector=vector).items[:10]]
                kept += len(set(reference) & set(top))
                wanted += len(reference)
                identical += reference == top
        figures |= {f"{name}recall_at_10": round(kept / wanted, 4) if wanted else None, f"{name}identical": identical}
    return {"questions": len(texts), "pool": pool, **figures}


def bm25_fast_against_exact(scope: Scope, texts: list[str]) -> dict:
    """`bm25_top` against `bm25_exact` on `texts`, with recall's pool and the scope's collections,
    no filters: how many of the exhaustive top 10 per collection the fast path returned, and the
    time of each."""
    from retrieval.bm25_topk import bm25_exact, bm25_top
    from retrieval.fulltext import query_lexemes
    from retrieval.ranking import pool_size

    sizes = dict(CorpusStat.objects.filter(scope=scope, doc_count__gt=0).values_list("collection", "doc_count"))
    collections = list(sizes)
    pool = pool_size(sum(n for c, n in sizes.items() if c not in (Collection.TURN_W1, Collection.TURN_W2)))  # as recall sizes it
    kept = wanted = two = packed = 0
    fast_ms, exact_ms = [], []
    for text in texts:
        lexemes = query_lexemes(text)
        passes = []
        t0 = time.perf_counter()
        fast = bm25_top(scope=scope, lexemes=lexemes, collections=collections, limit=pool, passes=passes)
        t1 = time.perf_counter()
        exact = bm25_exact(scope=scope, lexemes=lexemes, collections=collections, limit=pool)
        t2 = time.perf_counter()
        fast_ms.append((t1 - t0) * 1000)
        exact_ms.append((t2 - t1) * 1000)
        # MaxScore's path records its passes (lists of lexemes), the packed path what it read (a dict).
        two += len(passes) > 1 and not isinstance(passes[0], dict)
        packed += bool(passes) and isinstance(passes[0], dict) and passes[0]["packed"] > 0
        for collection, hits in exact.items():
            top = {h.target_id for h in hits[:10]}
            kept += len(top & {h.target_id for h in fast.get(collection, [])[:10]})
            wanted += len(top)
    return {
        "questions": len(texts), "recall_at_10": round(kept / wanted, 4) if wanted else None, "two_passes": two, "packed": packed,
        "p50_ms_fast": round(statistics.median(fast_ms), 2) if texts else None, "p50_ms_exact": round(statistics.median(exact_ms), 2) if texts else None,
        "p95_ms_fast": round(_percentile(fast_ms, 0.95), 2) if texts else None, "p95_ms_exact": round(_percentile(exact_ms, 0.95), 2) if texts else None,
    }


# The tables a conversation's turns fill: raw rows, then the search index.
SCOPE_TABLES = (
    "memories_session", "memories_turn", "memories_episode", "retrieval_searchdocument", "retrieval_posting", "retrieval_termstat",
    "retrieval_postingpack", "retrieval_embedding",
)


def disk_per_turn(scope: Scope) -> dict:
    """Bytes on disk per turn of `scope`: each table's pg_total_relation_size (heap, TOAST and
    indexes) times the scope's share of its rows (other scopes, the noise vectors above all,
    share the tables), summed and divided by the scope's turns."""
    turns = Turn.objects.filter(scope=scope).count()
    by_table = {}
    with connection.cursor() as cursor:
        for table in SCOPE_TABLES:
            cursor.execute(f"SELECT pg_total_relation_size(%s), (SELECT count(*) FROM {table}), (SELECT count(*) FROM {table} WHERE scope_id = %s)",
                           [table, scope.pk])
            size, rows, mine = cursor.fetchone()
            by_table[table] = size * mine / rows if rows else 0
    total = sum(by_table.values())
    return {
        "bytes_per_turn": round(total / turns) if turns else 0, "total_mb": round(total / 2**20, 1),
        "mb_by_table": {table: round(size / 2**20, 1) for table, size in by_table.items()},
    }


def _people(scope: Scope, count: int, rng: random.Random) -> list[Entity]:
    """`count` distinct names without digits (a number in a question can read as a year):
    first name and surname; a middle name, then a second surname, only once the shorter
    forms run out."""
    first, middle, last, second = len(FIRST), len(FIRST), len(LAST), len(LAST)
    spaces = [first * last, first * middle * last, first * middle * last * second]
    if count > sum(spaces):
        raise InvalidInput(f"bench recall can name at most {sum(spaces)} people ({5 * sum(spaces)} facts).")
    names, left = [], count
    for parts, size in enumerate(spaces, start=2):
        for number in rng.sample(range(size), min(left, size)):
            number, surname = divmod(number, last)
            number, given = divmod(number, first)
            number, middle_name = divmod(number, middle)
            words = [FIRST[given]] + ([FIRST[middle_name]] if parts >= 3 else []) + [LAST[surname]]
            if parts == 4:
                words.append(LAST[number])
            names.append(" ".join(words))
        left -= min(left, size)
        if not left:
            break
    entities = Entity.objects.bulk_create([Entity(scope=scope, name=name, kind="person") for name in names], batch_size=5000)
    EntityAlias.objects.bulk_create(
        [EntityAlias(scope=scope, entity=e, alias=e.name, normalized=e.name.casefold()) for e in entities], batch_size=5000
    )
    return entities


def _facts(scope: Scope, people: list[Entity], count: int, rng: random.Random) -> int:
    rows, keys = [], set()
    from datetime import UTC, datetime, timedelta

    base = datetime(2020, 1, 1, tzinfo=UTC)
    attempts = 0
    while len(rows) < count and attempts < count * 20:
        attempts += 1
        person = rng.choice(people)
        attribute, values, template = rng.choice(TEMPLATES)
        value = rng.choice(values)
        if (person.pk, attribute, value) in keys or (attribute in ("lives_in", "works_at", "role") and (person.pk, attribute) in keys):
            continue
        keys.add((person.pk, attribute, value))
        keys.add((person.pk, attribute))
        rows.append(Fact(
            scope=scope, subject=person, attribute=attribute, value=value, value_normalized=value.lower(),
            sentence=template.format(name=person.name, value=value), valid_from=base + timedelta(days=rng.randrange(0, 2000)),
            importance=round(rng.uniform(0.2, 0.9), 2),
        ))
    Fact.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


def _noise(scopes: list[Scope], *, rows: int, dim: int, model: str, rng: random.Random) -> int:
    """Random unit vectors through binary COPY; target ids far above real ones (never joined)."""
    import numpy as np
    from pgvector.psycopg import register_vector

    if not scopes or rows <= 0:
        return 0
    generator = np.random.default_rng(rng.randrange(1 << 30))
    raw = connection.connection if connection.connection else (connection.ensure_connection() or connection.connection)
    register_vector(raw)
    offset = 10**15 + rng.randrange(10**12)
    per_scope = rows // len(scopes)
    written = 0
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.cursor.copy(
            "COPY retrieval_embedding (scope_id, target_type, target_id, model, vec, created_at) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["bigint", "varchar", "bigint", "varchar", "vector", "timestamptz"])
            from django.utils import timezone

            now = timezone.now()
            for scope in scopes:
                for start in range(0, per_scope, 10_000):
                    block = generator.standard_normal((min(10_000, per_scope - start), dim)).astype(np.float32)
                    block /= np.linalg.norm(block, axis=1, keepdims=True)
                    for vec in block:
                        copy.write_row((scope.pk, vector_target(Collection.FACT), offset + written, model, vec, now))
                        written += 1
    return written


def _question(rng: random.Random, people: list[Entity]) -> str:
    return rng.choice(QUESTIONS).format(
        name=rng.choice(people).name, company=rng.choice(COMPANIES), hobby=rng.choice(HOBBIES), city=rng.choice(CITIES)
    )
