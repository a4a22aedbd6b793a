"""Reindexing a scope from the `hash` embedder to the `local` one (the bundled MiniLM): filled in
batches beside the old vectors, resumable, switched atomically, the old vectors dropped after."""

import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from accounts.models import AuditEvent
from memoryweb.errors import Conflict, Forbidden, InvalidInput
from memoryweb.providers.embedders import HashEmbedder, LocalEmbedder, embedder_build
from memories.models import Embedding, EmbeddingTarget, Entity
from memories.services.ingest import remember
from memories.services.vectors import ensure_model_index
from retrieval.embedder import scope_model
from retrieval.indexing import index_pending
from retrieval.models import SearchDocument
from retrieval.reindex import missing_vectors, scope_reindex, vectors_drop_old
from retrieval.search import recall
from retrieval.search.question import dense_text

pytestmark = pytest.mark.slow  # the local model: a few seconds to load on two cores

HASH, LOCAL = "hash-384", "all-MiniLM-L6-v2"
NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "where does ankesh live now?"
STATEMENTS = [
    ("I love playing football", datetime(2024, 1, 10, tzinfo=UTC)),
    ("I just started at Google as a software engineer in San Francisco", datetime(2024, 4, 2, tzinfo=UTC)),
    ("I got promoted to senior engineer at Google", datetime(2024, 11, 5, tzinfo=UTC)),
    ("I moved from San Francisco to New York", datetime(2025, 4, 20, tzinfo=UTC)),
    ("My sister Priya lives in Boston", datetime(2025, 5, 1, tzinfo=UTC)),
    ("I adopted a cat called Miso", datetime(2025, 5, 10, tzinfo=UTC)),
]


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module", autouse=True)
def _local_model_index(django_db_setup, django_db_blocker):
    """The local model's HNSW index, made once and committed: the first vector of a model creates
    it, and PostgreSQL refuses CREATE INDEX inside a test's transaction once rows were written."""
    with django_db_blocker.unblock():
        ensure_model_index(embedder_build("local"))


def _fill(scope, principal, capture, statements=STATEMENTS):
    for text, when in statements:
        with capture(execute=True):
            remember(scope=scope, text=text, speaker="ankesh", occurred_at=when, actor=principal)
    index_pending(scope=scope, full=True)


@pytest.fixture
def memory(cast, django_capture_on_commit_callbacks):
    """Scope alpha (about a dozen documents and a few entities) and alpha-two, both on hash."""
    _fill(cast.scope_a, cast.p_owner, django_capture_on_commit_callbacks)
    _fill(cast.scope_a2, cast.p_owner, django_capture_on_commit_callbacks, STATEMENTS[:2])
    assert scope_model(cast.scope_a) == HASH and scope_model(cast.scope_a2) == HASH
    return cast


@pytest.fixture
def embedded(monkeypatch):
    """(model, texts) of every embedder call."""
    calls: list[tuple[str, list[str]]] = []
    for cls in (HashEmbedder, LocalEmbedder):
        def spy(self, texts, _original=cls.embed):
            calls.append((self.name, list(texts)))
            return _original(self, texts)

        monkeypatch.setattr(cls, "embed", spy)
    return calls


def _vectors(scope, model):
    return set(Embedding.objects.filter(scope=scope, model=model).values_list("target_type", "target_id"))


def _expected_targets(scope):
    docs = {(f"doc_{c}", pk) for c, pk in SearchDocument.objects.in_scope(scope).values_list("collection", "id")}
    return docs | {(EmbeddingTarget.ENTITY.value, pk) for pk in Entity.objects.in_scope(scope).values_list("id", flat=True)}


def _ids(result):
    return [(item.kind, item.pk) for item in result.items]


def _models_embedding(calls, question):
    """The models that embedded the question (as its vector is made: without the speaker's name)."""
    unnamed = dense_text(text=question, speakers=("ankesh",)).lower()
    return {name for name, texts in calls if any(unnamed in t.lower() for t in texts)}


def test_an_interrupted_reindex_resumes_and_recall_switches_only_when_complete(memory, embedded):
    scope = memory.scope_a
    targets = _expected_targets(scope)
    assert len(targets) >= 12 and _vectors(scope, HASH) == targets
    before = recall(scope=scope, query=QUESTION, now=NOW)
    assert before.items and "New York" in before.items[0].text

    seen = []

    def stop_after_two_batches(done, total):
        seen.append((done, total))
        if len(seen) == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        scope_reindex(principal=memory.p_owner, scope=scope, model="local", batch_size=3, progress=stop_after_two_batches)
    assert seen == [(3, len(targets)), (6, len(targets))]
    assert len(_vectors(scope, LOCAL)) == 6  # the two committed batches stay
    assert missing_vectors(scope=scope, model=LOCAL) == len(targets) - 6

    # Half done: recall still embeds the question with hash and ranks as before.
    embedded.clear()
    halfway = recall(scope=scope, query=QUESTION, now=NOW)
    assert _models_embedding(embedded, QUESTION) == {HASH}
    assert _ids(halfway) == _ids(before)
    assert scope_model(scope) == HASH

    # Resumed: only what is still missing is embedded.
    embedded.clear()
    report = scope_reindex(principal=memory.p_owner, scope=scope, model="local", batch_size=3)
    local_texts = [t for name, texts in embedded if name == LOCAL for t in texts]
    assert report.switched and report.from_model == HASH and report.model == LOCAL
    assert report.missing_at_start == report.embedded == len(targets) - 6
    assert len(local_texts) <= report.embedded  # identical texts of one batch are embedded once
    assert _vectors(scope, LOCAL) == targets and _vectors(scope, HASH) == targets  # side by side
    assert scope_model(scope) == LOCAL
    assert AuditEvent.objects.filter(scope=scope, action="scope.reindex", after={"model": LOCAL}).count() == 1

    embedded.clear()
    after = recall(scope=scope, query=QUESTION, now=NOW)
    # The first recall after the switch may start on the model this process last read for the
    # scope (retrieval/search/pipeline.py: _embedding_start); reading the index state it finds
    # the switch and embeds again: the search uses local's vector.
    assert [name for name, _ in embedded][-1] == LOCAL and _models_embedding(embedded, QUESTION) <= {HASH, LOCAL}
    assert "New York" in after.items[0].text
    embedded.clear()
    recall(scope=scope, query=QUESTION, now=NOW)
    assert _models_embedding(embedded, QUESTION) == {LOCAL}  # from then on, local alone

    # A second run finds it on the model already and embeds nothing.
    embedded.clear()
    again = scope_reindex(principal=memory.p_owner, scope=scope, model="local")
    assert again.switched and again.embedded == 0 and not [c for c in embedded if c[0] == LOCAL]


def test_indexing_during_a_reindex_keeps_the_old_model_until_the_switch(memory, django_capture_on_commit_callbacks):
    scope = memory.scope_a

    def stop(done, total):
        raise Interrupted

    with pytest.raises(Interrupted):
        scope_reindex(principal=memory.p_owner, scope=scope, model="local", batch_size=3, progress=stop)
    _fill(scope, memory.p_owner, django_capture_on_commit_callbacks, [("I started learning the cello", datetime(2025, 5, 20, tzinfo=UTC))])
    cello = SearchDocument.objects.in_scope(scope).get(text__contains="cello", collection="episode")
    assert Embedding.objects.filter(target_type="doc_episode", target_id=cello.pk, model=HASH).exists()  # the scope's model
    assert not Embedding.objects.filter(target_type="doc_episode", target_id=cello.pk, model=LOCAL).exists()
    scope_reindex(principal=memory.p_owner, scope=scope, model="local")
    assert _vectors(scope, LOCAL) == _expected_targets(scope)  # the newcomer was filled before the switch
    _fill(scope, memory.p_owner, django_capture_on_commit_callbacks, [("I sold my old bike", datetime(2025, 5, 25, tzinfo=UTC))])
    bike = SearchDocument.objects.in_scope(scope).get(text__contains="bike", collection="episode")
    assert Embedding.objects.filter(target_type="doc_episode", target_id=bike.pk, model=LOCAL).exists()  # now the new model's
    assert not Embedding.objects.filter(target_type="doc_episode", target_id=bike.pk, model=HASH).exists()


def test_drop_old_is_refused_before_the_switch_and_removes_exactly_the_old_vectors_after(memory):
    scope, other = memory.scope_a, memory.scope_a2
    other_before = set(Embedding.objects.filter(scope=other).values_list("id", "model"))

    def stop(done, total):
        raise Interrupted

    with pytest.raises(Interrupted):
        scope_reindex(principal=memory.p_owner, scope=scope, model="local", batch_size=4, progress=stop)
    rows_before = Embedding.objects.filter(scope=scope).count()
    with pytest.raises(Conflict, match="not on all-MiniLM-L6-v2 yet"):
        vectors_drop_old(principal=memory.p_owner, scope=scope, model="local")
    assert Embedding.objects.filter(scope=scope).count() == rows_before

    scope_reindex(principal=memory.p_owner, scope=scope, model="local")
    local_rows = set(Embedding.objects.filter(scope=scope, model=LOCAL).values_list("id", flat=True))
    hash_count = Embedding.objects.filter(scope=scope, model=HASH).count()
    assert vectors_drop_old(principal=memory.p_owner, scope=scope, model="local") == hash_count
    assert set(Embedding.objects.filter(scope=scope).values_list("id", flat=True)) == local_rows  # exactly the new ones stay
    assert set(Embedding.objects.filter(scope=other).values_list("id", "model")) == other_before  # another scope untouched
    assert "New York" in recall(scope=scope, query=QUESTION, now=NOW).items[0].text


def test_the_command_reindexes_only_the_scope_given_and_drops_its_old_vectors(memory, capsys):
    scope, other = memory.scope_a, memory.scope_a2
    other_before = set(Embedding.objects.filter(scope=other).values_list("id", "model", "target_id"))
    call_command("reindex", "--as", "owner", "--scope", "alpha", "--model", "local", "--drop-old", "--batch-size", "5", "--json")
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert captured.err == ""  # no progress bar off a terminal
    assert data["model"] == LOCAL and [s["scope"] for s in data["scopes"]] == ["alpha"]
    assert data["scopes"][0]["switched"] and data["scopes"][0]["dropped"] > 0
    assert set(Embedding.objects.filter(scope=scope).values_list("model", flat=True)) == {LOCAL}
    assert scope_model(other) == HASH
    assert set(Embedding.objects.filter(scope=other).values_list("id", "model", "target_id")) == other_before


def test_config_warns_while_vectors_and_the_configured_model_disagree(memory, settings, capsys, embedded):
    settings.EMBEDDER = "local"
    recall(scope=memory.scope_a, query=QUESTION, now=NOW)
    assert _models_embedding(embedded, QUESTION) == {HASH}  # a new EMBEDDER moves no scope by itself

    def config():
        capsys.readouterr()
        call_command("config", "--quick", "--json")
        return json.loads(capsys.readouterr().out)["warnings"]

    warnings = config()
    assert len(warnings) == 1 and "2 scopes (alpha, alpha-two)" in warnings[0]
    assert "hash-384" in warnings[0] and "`memoryweb reindex --model local`" in warnings[0]
    call_command("reindex", "--as", "owner", "--scope", "alpha", "--model", "local", "--json")
    warnings = config()
    assert len(warnings) == 1 and "scope alpha-two" in warnings[0] and "--scope alpha-two" in warnings[0]
    call_command("reindex", "--as", "owner", "--model", "local", "--json")  # every scope the CLI user may write
    assert config() == []
    embedded.clear()
    recall(scope=memory.scope_a2, query=QUESTION, now=NOW)
    assert _models_embedding(embedded, QUESTION) == {LOCAL}


def test_unknown_models_and_outsiders_are_refused_with_nothing_written(memory):
    scope = memory.scope_a
    rows = Embedding.objects.count()
    with pytest.raises(CommandError, match="Unknown embedding model 'minilm': the known ones are hash, local, ollama, openai"):
        call_command("reindex", "--as", "owner", "--scope", "alpha", "--model", "minilm", stdout=io.StringIO())
    with pytest.raises(InvalidInput, match="known ones"):
        scope_reindex(principal=memory.p_owner, scope=scope, model="bert")
    with pytest.raises(Forbidden):
        scope_reindex(principal=memory.p_viewer, scope=scope, model="local")
    from memoryweb.errors import NotFound

    with pytest.raises(NotFound):
        scope_reindex(principal=memory.p_outsider, scope=scope, model="local")
    assert Embedding.objects.count() == rows and scope_model(scope) == HASH
