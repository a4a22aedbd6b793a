"""BM25 in PostgreSQL, indexing, isolation between scopes, as_of, history, and the lanes at work."""

from datetime import UTC, datetime

import pytest

from memories.models import Entity, EntityAlias, Episode, Fact, Scope, Session, Turn
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.indexing import index_pending
from retrieval.models import Collection, CorpusStat, SearchDocument, TermStat
from retrieval.services import recall, recall_evidence

pytestmark = pytest.mark.django_db
NOW = datetime(2025, 6, 1, tzinfo=UTC)


def at(year, month, day=1):
    return datetime(year, month, day, 12, tzinfo=UTC)


def note(scope, text, when=None, importance=None, speaker="ankesh"):
    return Episode.objects.create(scope=scope, text=text, speaker=speaker, occurred_at=when or at(2025, 1, 1), importance=importance)


def fact(scope, subject, attribute, value, sentence, valid_from, valid_to=None, status="active", importance=0.5, supersedes=None):
    return Fact.objects.create(
        scope=scope, subject=subject, attribute=attribute, value=value, value_normalized=value.lower(), sentence=sentence,
        valid_from=valid_from, valid_to=valid_to, status=status, importance=importance, supersedes=supersedes,
    )


def person(scope, name):
    entity = Entity.objects.create(scope=scope, name=name, kind="person")
    EntityAlias.objects.create(scope=scope, entity=entity, alias=name, normalized=name.lower())
    return entity


def test_query_lexemes_are_stemmed_without_stop_or_question_words():
    assert query_lexemes("What kind of paintings would Caroline likely make?") == ["paint", "carolin", "make"]


def test_bm25_ranks_the_rarer_term_higher(cast):
    scope = cast.scope_a
    for text in ["the cat sat", "the cat ran", "the cat slept", "the dog sat"]:
        note(scope, text)
    index_pending(scope=scope)
    hits = bm25_candidates(scope=scope, lexemes=query_lexemes("cat dog"), collections=[Collection.EPISODE], limit=10)
    ranked = [SearchDocument.objects.get(collection="episode", target_id=h.target_id).text for h in hits["episode"]]
    assert ranked[0].endswith("the dog sat")  # 'dog' is in 1 of 4 documents, 'cat' in 3
    assert len(ranked) == 4  # an OR: every document with either term


def test_bm25_normalises_length(cast):
    scope = cast.scope_a
    short = note(scope, "football")
    long = note(scope, "football and then a long list of other things such as tennis golf rowing swimming cycling running")
    note(scope, "nothing relevant here")
    index_pending(scope=scope)
    hits = bm25_candidates(scope=scope, lexemes=["footbal"], collections=[Collection.EPISODE], limit=10)["episode"]
    assert [h.target_id for h in hits] == [short.pk, long.pk]
    assert hits[0].score > hits[1].score


def test_term_statistics_are_kept_incrementally_and_indexing_is_idempotent(cast):
    scope = cast.scope_a
    note(scope, "I love football")
    index_pending(scope=scope)
    assert index_pending(scope=scope) == 0  # nothing pending: nothing written
    note(scope, "football again, football forever")
    index_pending(scope=scope)
    assert TermStat.objects.get(scope=scope, collection="episode", lexeme="footbal").df == 2
    corpus = CorpusStat.objects.get(scope=scope, collection="episode")
    assert corpus.doc_count == 2
    assert index_pending(scope=scope, full=True) == 0  # the full sweep finds nothing missing either
    assert TermStat.objects.get(scope=scope, collection="episode", lexeme="footbal").df == 2


def test_a_growing_session_rewrites_the_windows_around_its_end(cast):
    scope = cast.scope_a
    session = Session.objects.create(scope=scope, external_id="s1")
    Turn.objects.create(scope=scope, session=session, external_id="t1", position=0, speaker="a", text="hello there", occurred_at=at(2025, 1, 1))
    index_pending(scope=scope)
    window = SearchDocument.objects.get(collection=Collection.TURN_W1)
    assert "zebra" not in window.text
    Turn.objects.create(scope=scope, session=session, external_id="t2", position=1, speaker="b", text="zebra crossing", occurred_at=at(2025, 1, 1))
    index_pending(scope=scope)
    window.refresh_from_db()
    assert "b: zebra crossing" in window.text
    assert TermStat.objects.get(scope=scope, collection=Collection.TURN_W1, lexeme="zebra").df == 2
    assert CorpusStat.objects.get(scope=scope, collection=Collection.TURN_W1).doc_count == 2


def test_a_scope_never_sees_another_scopes_rows_even_nearer_ones(cast):
    # Identical text in the other scope: it would be the nearest neighbour and the best BM25 hit.
    note(cast.scope_b, "My cat Whiskers loves tuna", when=at(2025, 5, 1))
    note(cast.scope_b, "Whiskers the cat sleeps all day", when=at(2025, 5, 1))
    mine = note(cast.scope_a, "I went hiking in the Alps", when=at(2025, 5, 1))
    result = recall(scope=cast.scope_a, query="My cat Whiskers loves tuna", now=NOW)
    assert [i.pk for i in result.items] == [mine.pk]
    evidence = recall_evidence(scope=cast.scope_a, query="Whiskers tuna", now=NOW)
    assert all(i.pk == mine.pk for i in evidence.items)


def test_active_facts_by_default_superseded_for_history_questions(cast):
    scope = cast.scope_a
    ankesh = person(scope, "ankesh")
    old = fact(scope, ankesh, "lives_in", "San Francisco", "ankesh lives in San Francisco.", at(2024, 4, 2), at(2025, 4, 20), "superseded")
    new = fact(scope, ankesh, "lives_in", "New York", "ankesh lives in New York.", at(2025, 4, 20), supersedes=old)
    plain = recall(scope=scope, query="lives in San Francisco", now=NOW)
    assert old.pk not in [i.pk for i in plain.items if i.kind == "fact"]
    assert plain.items[0].pk == new.pk
    wide = recall(scope=scope, query="lives in San Francisco", include_history=True, now=NOW)
    assert wide.items[0].pk == old.pk and wide.items[0].status == "superseded"
    asked = recall(scope=scope, query="Did ankesh ever live in San Francisco?", now=NOW)
    assert old.pk in [i.pk for i in asked.items if i.kind == "fact"]


def test_as_of_answers_as_the_memory_stood_then(cast):
    scope = cast.scope_a
    ankesh = person(scope, "ankesh")
    old = fact(scope, ankesh, "lives_in", "San Francisco", "ankesh lives in San Francisco.", at(2024, 4, 2), at(2025, 4, 20), "superseded")
    new = fact(scope, ankesh, "lives_in", "New York", "ankesh lives in New York.", at(2025, 4, 20), supersedes=old)
    early = note(scope, "ankesh lives happily by the bay", when=at(2024, 6, 1))
    late = note(scope, "ankesh lives near Central Park now", when=at(2025, 5, 1))
    then = recall(scope=scope, query="where does ankesh live", as_of="2024-12-31", now=NOW)
    pks = {(i.kind, i.pk) for i in then.items}
    assert ("fact", old.pk) in pks and ("fact", new.pk) not in pks
    assert ("episode", early.pk) in pks and ("episode", late.pk) not in pks
    today = recall(scope=scope, query="where does ankesh live", now=NOW)
    assert ("fact", new.pk) in {(i.kind, i.pk) for i in today.items}


def test_importance_and_recency_lanes_order_equally_similar_memories(cast):
    scope = cast.scope_a
    old_important = note(scope, "the launch code is blue", when=at(2015, 1, 1), importance=0.9)
    old_trivial = note(scope, "the launch code was blue", when=at(2015, 1, 1), importance=0.2)
    result = recall(scope=scope, query="launch code blue", now=NOW)
    by_pk = {i.pk: i for i in result.items}
    assert by_pk[old_important.pk].lanes["recency"] == 1.0  # importance ≥ 0.75: no decay
    assert by_pk[old_trivial.pk].lanes["recency"] == pytest.approx(0.5 ** ((NOW - at(2015, 1, 1)).days / 365), rel=1e-3)
    assert result.items[0].pk == old_important.pk
    item = result.items[0]
    w = scope.weights
    assert item.score == pytest.approx(
        w["similarity"] * item.lanes["similarity"] + w["importance"] * item.lanes["importance"] + w["recency"] * item.lanes["recency"]
    )


def test_scope_weights_change_the_order(cast):
    scope = cast.scope_a
    recent = note(scope, "meeting notes about the budget", when=at(2025, 5, 30), importance=0.1)
    important = note(scope, "meeting notes about the budget review", when=at(2020, 1, 1), importance=0.7)
    scope.settings = {"weights": {"similarity": 0.0, "importance": 0.0, "recency": 1.0}}
    scope.save()
    assert recall(scope=scope, query="budget meeting notes", now=NOW).items[0].pk == recent.pk
    scope.settings = {"weights": {"similarity": 0.0, "importance": 1.0, "recency": 0.0}}
    scope.save()
    assert recall(scope=scope, query="budget meeting notes", now=NOW).items[0].pk == important.pk


def test_time_window_filters_and_is_reported(cast, settings):
    settings.RETRIEVAL_TIME_WINDOWS = "all"  # notes narrowed by when they were said (the default narrows facts only)
    scope = cast.scope_a
    inside = note(scope, "dinner with Sam at the harbour", when=at(2025, 3, 10))
    outside = note(scope, "dinner with Sam at the station", when=at(2024, 3, 10))
    result = recall(scope=scope, query="dinner with Sam in March 2025", now=NOW, k=1)
    assert result.window.phrase == "March 2025"
    assert [i.pk for i in result.items] == [inside.pk]
    both = recall(scope=scope, query="dinner with Sam in March 2025", now=NOW, k=2)
    assert [i.pk for i in both.items] == [inside.pk, outside.pk]
    assert any("outside the time window" in w for w in both.items[1].why)


def test_entities_named_in_the_query_pull_in_their_active_facts(cast):
    scope = cast.scope_a
    maria = person(scope, "Maria")
    EntityAlias.objects.create(scope=scope, entity=maria, alias="my sister", normalized="my sister")
    f = fact(scope, maria, "has_pet", "a parrot", "Maria has a parrot.", at(2024, 1, 1))
    result = recall(scope=scope, query="What should I get my sister for her birthday?", now=NOW)
    assert result.entities == ["Maria"]
    assert f.pk in [i.pk for i in result.items if i.kind == "fact"]


def test_evidence_keeps_turns_with_their_session_and_turn_ids(cast):
    scope = cast.scope_a
    session = Session.objects.create(scope=scope, external_id="session_1")
    turn = Turn.objects.create(scope=scope, session=session, external_id="D1:3", position=0, speaker="Caroline",
                               text="I went to the LGBTQ support group yesterday", occurred_at=at(2023, 5, 8))
    Episode.objects.create(scope=scope, session=session, turn=turn, text=turn.text, speaker="Caroline", occurred_at=turn.occurred_at)
    evidence = recall_evidence(scope=scope, query="When did Caroline go to the support group?", now=NOW)
    assert evidence.items[0].kind == "turn" and evidence.items[0].source["session"] == "session_1"
    assert evidence.items[0].source["turn"] == "D1:3" and evidence.items[0].source["episode"]
    memories = recall(scope=scope, query="When did Caroline go to the support group?", now=NOW)
    assert memories.items[0].kind == "episode" and memories.items[0].source["turn"] == "D1:3"


def test_bad_input_is_refused(cast):
    from memoryweb.errors import InvalidInput

    with pytest.raises(InvalidInput):
        recall(scope=cast.scope_a, query="  ", now=NOW)
    with pytest.raises(InvalidInput):
        recall(scope=cast.scope_a, query="x", filters={"colour": "red"}, now=NOW)
    with pytest.raises(InvalidInput):
        recall(scope=cast.scope_a, query="x", as_of="not a date", now=NOW)


def test_the_index_task_catches_up_rows_committed_out_of_id_order(cast):
    from retrieval.models import IndexState
    from retrieval.tasks import index_scope

    scope = cast.scope_a
    late = note(scope, "a note whose transaction committed late")
    index_pending(scope=scope)
    SearchDocument.objects.filter(collection="episode", target_id=late.pk).delete()  # as if it had been missed
    assert index_pending(scope=scope) == 0  # the cheap check only looks past the watermark
    assert IndexState.objects.get(scope=scope).episode_mark == late.pk
    assert index_scope.delay(scope.pk).get() == 1  # the task's full sweep finds it
    assert recall(scope=scope, query="committed late", now=NOW).items[0].pk == late.pk


def test_a_question_naming_one_speaker_is_recognised_unless_the_scope_has_too_many(cast):
    from retrieval.indexing import MAX_SPEAKERS
    from retrieval.models import IndexState
    from retrieval.search.question import named_speaker

    scope = cast.scope_a
    note(scope, "I painted a sunset", speaker="Caroline Smith")
    note(scope, "I painted a lake", speaker="Melanie")
    index_pending(scope=scope)
    assert named_speaker(scope, "What did Caroline paint?") == "Caroline Smith"
    assert named_speaker(scope, "What did caroline smith paint?") == "Caroline Smith"
    assert named_speaker(scope, "What did Caroline and Melanie paint?") == ""  # two named: no boost
    assert named_speaker(scope, "What did Carol paint?") == ""
    IndexState.objects.filter(scope=scope).update(speakers=[f"Speaker {i}" for i in range(MAX_SPEAKERS)] + ["Caroline Smith"])
    assert named_speaker(scope, "What did Caroline paint?") == ""  # more than MAX_SPEAKERS: none is told apart


def test_bm25_boosts_the_named_speakers_documents_and_follows_a_speaker_change(cast):
    scope = cast.scope_a
    mel = note(scope, "I painted a lake at sunrise", speaker="Melanie")
    car = note(scope, "I painted a lake at sunrise", speaker="Caroline")
    index_pending(scope=scope)
    lexemes = query_lexemes("painted a lake")
    for speaker, first in [("Melanie", mel), ("Caroline", car)]:
        hits = bm25_candidates(scope=scope, lexemes=lexemes, collections=[Collection.EPISODE], limit=10, speaker=speaker)["episode"]
        assert hits[0].target_id == first.pk and hits[0].score == pytest.approx(1.5 * hits[1].score)
    # A document rewritten with another speaker: its postings follow.
    from memoryweb.providers.embedders import get_embedder
    from retrieval.documents import turn_document
    from retrieval.indexing import DocSpec, sync_documents

    text = turn_document(speaker="Caroline", text=mel.text, occurred_at=mel.occurred_at)
    sync_documents(scope=scope, specs=[DocSpec(Collection.EPISODE, mel.pk, text, mel.occurred_at, "Caroline")], embedder=get_embedder())
    hits = bm25_candidates(scope=scope, lexemes=lexemes, collections=[Collection.EPISODE], limit=10, speaker="Melanie")["episode"]
    assert hits[0].score == hits[1].score  # nobody's documents are Melanie's any more


def test_bm25_fills_the_pool_with_eligible_documents_when_the_best_matches_are_filtered_out(cast):
    scope = cast.scope_a
    ankesh = person(scope, "Ankesh")
    # The superseded facts match the question best (the word twice); the active ones once.
    old = [fact(scope, ankesh, "plays", f"cello {i}", f"Ankesh plays the cello, cello number {i}", at(2020, 1, i + 1),
                valid_to=at(2021, 1, 1), status="superseded") for i in range(6)]
    current = [fact(scope, ankesh, "likes", f"music {i}", f"Ankesh likes cello music {i}", at(2022, 1, i + 1)) for i in range(3)]
    index_pending(scope=scope)
    from retrieval.search.eligibility import document_filter
    from retrieval.search.question import Question

    q = Question(scope=scope, text="cello", now=NOW, window=None, as_of=None, history=False, changes=False, kinds=("fact",))
    doc_filter, params = document_filter(q)
    hits = bm25_candidates(scope=scope, lexemes=["cello"], collections=[Collection.FACT], limit=3, doc_filter=doc_filter,
                           params=params)["fact"]
    assert sorted(h.target_id for h in hits) == sorted(f.pk for f in current)
    unfiltered = bm25_candidates(scope=scope, lexemes=["cello"], collections=[Collection.FACT], limit=3)["fact"]
    assert {h.target_id for h in unfiltered} <= {f.pk for f in old}


@pytest.mark.parametrize("exact_below", [5000, 0], ids=["exact", "hnsw"])
def test_vector_search_finds_the_nearest_documents_of_the_scope_by_either_path(cast, settings, exact_below):
    from memoryweb.providers.embedders import get_embedder
    from retrieval.vector import vector_candidates

    settings.RETRIEVAL_EXACT_BELOW = exact_below
    texts = ["I adopted a ferret", "My ferret Zanzibar sleeps a lot", "We sailed to Crete", "The bakery sells rye bread"]
    for scope in (cast.scope_a, cast.scope_b):  # the same documents in two scopes
        for text in texts:
            note(scope, text)
        index_pending(scope=scope)
    embedder = get_embedder()
    query = embedder.embed(["a pet ferret"])[0]
    found = {
        scope.pk: vector_candidates(scope=scope, query_vector=query, embedder=embedder, collections=[Collection.EPISODE], limit=3)["episode"]
        for scope in (cast.scope_a, cast.scope_b)
    }
    ranked = {pk: [SearchDocument.objects.get(collection="episode", target_id=h.target_id, scope_id=pk).text for h in hits] for pk, hits in found.items()}
    # The two ferret notes first in each scope. The third place is one of the two unrelated notes,
    # nearly as far as each other: an approximate scan (iterative, relaxed order) may return either.
    assert ranked[cast.scope_a.pk][:2] == ranked[cast.scope_b.pk][:2]
    assert {t.split(": ", 1)[-1] for t in ranked[cast.scope_a.pk][:2]} == {texts[0], texts[1]}
    for pk in (cast.scope_a.pk, cast.scope_b.pk):
        assert ranked[pk][2].split(": ", 1)[-1] in texts[2:]
    similarities = [h.similarity for h in found[cast.scope_a.pk]]
    assert similarities == sorted(similarities, reverse=True) and len(similarities) == 3
    # Each scope's hits are its own documents.
    mine = set(Episode.objects.filter(scope=cast.scope_a).values_list("pk", flat=True))
    assert {h.target_id for h in found[cast.scope_a.pk]} <= mine
