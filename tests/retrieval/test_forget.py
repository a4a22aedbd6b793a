"""Forgetting an episode (retrieval/forget.py): nothing it alone said stays findable, what others
said too stays, the search index ends as a fresh build would make it, and only writers may."""

import io
import threading
import json
from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import AuditEvent
from memoryweb.errors import Forbidden, NotFound
from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding, Entity, EntityAlias, Episode, Fact, FactStatus, FactSupport, Mention, Turn
from memories.services.facts import fact_correct, fact_retract
from memories.services.ingest import ingest_session, remember
from retrieval.documents import turn_document
from retrieval.indexing import index_pending
from retrieval.models import CorpusStat, IndexState, Posting, SearchDocument, TermStat
from retrieval.services import ForgetReceipt, episode_forget, recall, recall_evidence

pytestmark = pytest.mark.django_db

FORGOTTEN = "I moved to Quokkaville. I adopted a ferret called Zanzibar."
MESSAGES = [
    {"id": "t1", "speaker": "Melanie", "text": "How was your week, Caroline?"},
    {"id": "t2", "speaker": "Caroline", "text": "I live in Lisbon these days."},
    {"id": "t3", "speaker": "Melanie", "text": "Do you still like the city?"},
    {"id": "t4", "speaker": "Caroline", "text": FORGOTTEN},
    {"id": "t5", "speaker": "Melanie", "text": "That sounds lovely, ferrets are playful."},
    {"id": "t6", "speaker": "Caroline", "text": "Next week I visit my parents."},
    {"id": "t7", "speaker": "Melanie", "text": "Have a good trip!"},
]
WORDS = ("Quokkaville", "Zanzibar")


def at(month, day=1):
    return datetime(2024, month, day, 12, tzinfo=UTC).isoformat()


@pytest.fixture
def talk(cast, django_capture_on_commit_callbacks):
    """A conversation whose fourth turn says two things nobody else says; indexed and extracted."""
    messages = [{**m, "occurred_at": at(5, 1 + n)} for n, m in enumerate(MESSAGES)]
    with django_capture_on_commit_callbacks(execute=True):
        ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=cast.p_owner)
    index_pending(scope=cast.scope_a, full=True)
    cast.episode = Episode.objects.get(scope=cast.scope_a, turn__external_id="t4")
    return cast


def row_counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def texts(result) -> str:
    return "\n".join(item.text for item in result.items)


def index_snapshot(scope):
    return (
        sorted(TermStat.objects.filter(scope=scope).values_list("collection", "lexeme", "df")),
        sorted(CorpusStat.objects.filter(scope=scope).values_list("collection", "doc_count", "total_length")),
        sorted(SearchDocument.objects.filter(scope=scope).values_list("collection", "target_id", "text", "length")),
        sorted(Posting.objects.filter(scope=scope).values_list("collection", "lexeme", "document__target_id", "tf", "length")),
    )


def rebuild(scope):
    SearchDocument.objects.filter(scope=scope).delete()  # postings and nothing else cascade
    TermStat.objects.filter(scope=scope).delete()
    CorpusStat.objects.filter(scope=scope).delete()
    IndexState.objects.filter(scope=scope).delete()
    Embedding.objects.filter(scope=scope, target_type__startswith="doc_").delete()
    index_pending(scope=scope, full=True)


def test_the_forgotten_words_are_found_before_and_not_after(talk):
    scope = talk.scope_a
    query = "Quokkaville ferret Zanzibar"
    vector = get_embedder().embed([turn_document(speaker="Caroline", text=FORGOTTEN, occurred_at=talk.episode.occurred_at)])[0]
    assert "Zanzibar" in texts(recall(scope=scope, query=query))  # the test can fail
    assert "Zanzibar" in texts(recall_evidence(scope=scope, query="nothing shared", query_vector=vector, filters={"kinds": ["turn"]}))
    assert Entity.objects.filter(scope=scope, name__in=WORDS).count() == 2

    episode_forget(principal=talk.p_editor, scope=scope, episode_public_id=talk.episode.public_id)

    for result in (
        recall(scope=scope, query=query),
        recall_evidence(scope=scope, query=query),
        recall(scope=scope, query=query, include_history=True),
        recall_evidence(scope=scope, query="nothing shared", query_vector=vector),
        recall(scope=scope, query="nothing shared", query_vector=vector, include_history=True),
    ):
        assert result.items  # the rest of the conversation is still there
        assert not any(word in texts(result) for word in WORDS)
    for word in WORDS:
        assert not SearchDocument.objects.filter(scope=scope, text__icontains=word).exists()
        assert not Fact.objects.filter(scope=scope, sentence__icontains=word).exists()
        assert not Entity.objects.filter(scope=scope, name__icontains=word).exists()
        assert not EntityAlias.objects.filter(scope=scope, alias__icontains=word).exists()
        assert not Turn.objects.filter(scope=scope, text__icontains=word).exists()
    assert not TermStat.objects.filter(scope=scope, lexeme__in=["quokkavill", "zanzibar", "ferret"]).exclude(
        lexeme="ferret", collection__in=["turn", "turn_w1", "turn_w2"]  # t5 says "ferrets"
    ).exists()
    assert "Caroline" in IndexState.objects.get(scope=scope).speakers


def test_the_neighbours_windows_are_rebuilt_without_the_turn(talk):
    scope = talk.scope_a
    t3, t5 = (Turn.objects.get(scope=scope, external_id=t) for t in ("t3", "t5"))
    window = SearchDocument.objects.get(scope=scope, collection="turn_w1", target_id=t5.pk)
    assert "Zanzibar" in window.text
    receipt = episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    for turn in (t3, t5):
        for collection in ("turn_w1", "turn_w2"):
            doc = SearchDocument.objects.get(scope=scope, collection=collection, target_id=turn.pk)
            assert "Zanzibar" not in doc.text and "Quokkaville" not in doc.text
            # A new vector, made from the new text.
            assert Embedding.objects.filter(target_type=f"doc_{collection}", target_id=doc.pk).count() == 1
    # The window now reaches one turn further on each side: the conversation closed over the gap.
    assert "Do you still like the city?" in SearchDocument.objects.get(scope=scope, collection="turn_w1", target_id=t5.pk).text
    assert "I live in Lisbon" in SearchDocument.objects.get(scope=scope, collection="turn_w2", target_id=t5.pk).text
    assert list(Turn.objects.filter(scope=scope).order_by("position").values_list("position", flat=True)) == list(range(6))
    assert receipt.counts["windows_rebuilt"] >= 4


def test_term_statistics_equal_a_fresh_build_of_the_index(talk):
    scope = talk.scope_a
    remember(scope=scope, text="Quokkaville has a fine harbour", speaker="Melanie", actor=talk.p_owner)  # a word that stays
    index_pending(scope=scope, full=True)
    episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    forgotten = index_snapshot(scope)
    rebuild(scope)
    assert forgotten == index_snapshot(scope)


def test_a_new_turn_after_forgetting_gives_the_windows_a_fresh_build_would(talk, django_capture_on_commit_callbacks):
    scope = talk.scope_a
    episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_session(scope=scope, session_id="s1", messages=[{"id": "t8", "speaker": "Caroline", "text": "Thanks!"}], actor=talk.p_owner)
    index_pending(scope=scope, full=True)
    incremental = index_snapshot(scope)
    rebuild(scope)
    assert incremental == index_snapshot(scope)


def test_the_fact_it_superseded_is_active_again(talk):
    scope = talk.scope_a
    lisbon = Fact.objects.get(scope=scope, value="Lisbon")
    assert lisbon.status == FactStatus.SUPERSEDED and lisbon.valid_to is not None
    receipt = episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    lisbon.refresh_from_db()
    assert lisbon.status == FactStatus.ACTIVE and lisbon.valid_to is None
    assert receipt.counts["facts_reactivated"] == 1 and receipt.counts["facts_erased"] == 2


def test_a_persons_correction_stays_and_takes_over_the_chain(talk):
    scope = talk.scope_a
    quokkaville = Fact.objects.get(scope=scope, value="Quokkaville")
    corrected = fact_correct(scope=scope, fact_public_id=quokkaville.public_id, value="Coimbra", actor=talk.p_owner)
    receipt = episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    corrected.refresh_from_db()
    lisbon = Fact.objects.get(scope=scope, value="Lisbon")
    assert corrected.status == FactStatus.ACTIVE and corrected.source_episode is None and corrected.supersedes == lisbon
    assert lisbon.status == FactStatus.SUPERSEDED and lisbon.valid_to == corrected.valid_from
    assert receipt.counts["facts_detached"] == 1 and receipt.counts["facts_relinked"] == 1 and "facts_reactivated" not in receipt.counts
    event = AuditEvent.objects.get(action="fact.correct")
    assert "Quokkaville" not in json.dumps([event.before, event.after]) and event.before["status"] == "active"


def test_a_later_fact_closes_the_chain_over_the_forgotten_one(cast, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    episodes = []
    for text, month in (("I live in Lisbon", 1), ("I moved to Quokkaville", 5), ("I moved to Porto", 9)):
        with django_capture_on_commit_callbacks(execute=True):
            episodes.append(remember(scope=scope, text=text, speaker="Caroline", occurred_at=at(month), actor=cast.p_owner).episodes[0])
    episode_forget(principal=cast.p_owner, scope=scope, episode_public_id=episodes[1].episode_id)
    lisbon, porto = Fact.objects.get(scope=scope, value="Lisbon"), Fact.objects.get(scope=scope, value="Porto")
    assert porto.status == FactStatus.ACTIVE and porto.supersedes == lisbon
    assert lisbon.status == FactStatus.SUPERSEDED and lisbon.valid_to == porto.valid_from
    assert not Fact.objects.filter(scope=scope, value="Quokkaville").exists()


def test_a_fact_another_episode_also_said_stays_with_that_episode_as_its_source(cast, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    stored = []
    for text, month in (("I just started at Brightwave Robotics as a welder", 3), ("I work at Brightwave Robotics.", 6)):
        with django_capture_on_commit_callbacks(execute=True):
            stored.append(remember(scope=scope, text=text, speaker="Caroline", occurred_at=at(month), actor=cast.p_owner).episodes[0])
    first, second = (Episode.objects.get(public_id=s.episode_id) for s in stored)
    works = Fact.objects.get(scope=scope, attribute="works_at")
    assert works.source_episode == first
    assert FactSupport.objects.filter(fact=works, episode=second).exists()  # the NOOP was recorded

    receipt = episode_forget(principal=cast.p_owner, scope=scope, episode_public_id=first.public_id)
    works.refresh_from_db()
    assert works.status == FactStatus.ACTIVE and works.source_episode == second
    assert not FactSupport.objects.filter(fact=works).exists()  # the support became the source
    assert not Fact.objects.filter(scope=scope, attribute="role").exists()  # "welder" only the first said
    assert Entity.objects.filter(scope=scope, name="Brightwave Robotics").exists()  # still mentioned and the object of a fact
    assert receipt.counts["facts_kept"] == 1 and receipt.counts["facts_erased"] == 1
    assert "Brightwave" in texts(recall(scope=scope, query="Where does Caroline work?"))
    assert "welder" not in texts(recall(scope=scope, query="welder", include_history=True))


def test_a_kept_fact_takes_the_other_episodes_wording(cast, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    with django_capture_on_commit_callbacks(execute=True):
        first = remember(scope=scope, text="I work at Brightwave Robotics.", speaker="Caroline", occurred_at=at(3), actor=cast.p_owner)
        second = remember(scope=scope, text="I work at Brightwave Robotics!", speaker="Caroline", occurred_at=at(4), actor=cast.p_owner)
    index_pending(scope=scope, full=True)
    works = Fact.objects.get(scope=scope, attribute="works_at")
    FactSupport.objects.filter(fact=works).update(sentence="Caroline builds robots at Brightwave Robotics.")  # its own words
    fact_retract(scope=scope, fact_public_id=works.public_id, actor=cast.p_owner, reason="testing")
    episode_forget(principal=cast.p_owner, scope=scope, episode_public_id=first.episodes[0].episode_id)
    works.refresh_from_db()
    assert works.sentence == "Caroline builds robots at Brightwave Robotics." and works.source_episode.public_id == second.episodes[0].episode_id
    doc = SearchDocument.objects.get(scope=scope, collection="fact", target_id=works.pk)
    assert doc.text == works.sentence and Embedding.objects.filter(target_type="doc_fact", target_id=doc.pk).exists()
    event = AuditEvent.objects.get(action="fact.retract")
    assert "Caroline works at Brightwave Robotics." not in json.dumps([event.before, event.after])
    assert event.before["status"] == "active" and event.after["reason"] == "testing"  # only the forgotten wording went


def test_the_receipt_and_the_audit_event(talk):
    scope = talk.scope_a
    has_pet = Fact.objects.get(scope=scope, attribute="has_pet")
    fact_retract(scope=scope, fact_public_id=has_pet.public_id, actor=talk.p_owner, reason="Zanzibar ran away")
    receipt = episode_forget(principal=talk.p_editor, scope=scope, episode_public_id=str(talk.episode.public_id))
    assert isinstance(receipt, ForgetReceipt)
    assert receipt.episode_id == talk.episode.public_id and receipt.scope == "alpha" and receipt.forgotten_by == "editor"
    counts = receipt.counts
    assert counts["episodes"] == 1 and counts["turns"] == 1 and counts["facts_erased"] == 2
    assert counts["documents"] == 3 + 2  # the turn and its two windows, two facts
    assert counts["entities"] == 2 and counts["aliases"] >= 2 and counts["mentions"] >= 3
    assert counts["postings"] > 0 and counts["vectors"] >= 5 and counts["audit_events_scrubbed"] == 1
    with pytest.raises(AttributeError):
        receipt.scope = "other"  # frozen

    event = AuditEvent.objects.get(action="episode.forget")
    assert event.target_id == str(talk.episode.public_id) and event.actor_user == talk.editor and event.scope == scope
    assert event.after == json.loads(json.dumps(receipt.as_dict()))
    everything = json.dumps([[e.before, e.after] for e in AuditEvent.objects.all()])
    assert not any(word in everything for word in WORDS)
    retract = AuditEvent.objects.get(action="fact.retract")
    assert retract.after["status"] == "retracted" and retract.after["reason"] == "[forgotten]"  # the event stays


def test_an_outsider_gets_not_found_and_nothing_changes(talk):
    before = row_counts()
    with pytest.raises(NotFound):
        episode_forget(principal=talk.p_outsider, scope=talk.scope_a, episode_public_id=talk.episode.public_id)
    assert row_counts() == before


def test_a_viewer_gets_forbidden_and_nothing_changes(talk):
    before = row_counts()
    with pytest.raises(Forbidden):
        episode_forget(principal=talk.p_viewer, scope=talk.scope_a, episode_public_id=talk.episode.public_id)
    assert row_counts() == before


def test_an_episode_of_another_scope_is_not_found(talk):
    other = remember(scope=talk.scope_a2, text="Elsewhere entirely", actor=talk.p_owner).episodes[0]
    before = row_counts()
    with pytest.raises(NotFound) as missing_here:
        episode_forget(principal=talk.p_owner, scope=talk.scope_a, episode_public_id=other.episode_id)
    with pytest.raises(NotFound) as missing_anywhere:
        episode_forget(principal=talk.p_owner, scope=talk.scope_a, episode_public_id="00000000-0000-4000-8000-000000000000")
    assert str(missing_here.value).replace(str(other.episode_id), "X") == str(missing_anywhere.value).replace(
        "00000000-0000-4000-8000-000000000000", "X"
    )
    with pytest.raises(NotFound):
        episode_forget(principal=talk.p_owner, scope=talk.scope_a, episode_public_id="not-a-uuid")
    assert row_counts() == before


def test_forgetting_a_free_standing_episode(cast, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    with django_capture_on_commit_callbacks(execute=True):
        kept = remember(scope=scope, text="I love playing football", speaker="Caroline", actor=cast.p_owner)
        gone = remember(scope=scope, text="My sister Ottilie lives in Quokkaville", speaker="Caroline", actor=cast.p_owner)
    index_pending(scope=scope, full=True)
    receipt = episode_forget(principal=cast.p_owner, scope=scope, episode_public_id=gone.episodes[0].episode_id)
    assert receipt.counts["documents"] == 1 + 2 and "turns" not in receipt.counts
    assert not Entity.objects.filter(scope=scope, name__in=["Ottilie", "Quokkaville"]).exists()
    assert Entity.objects.filter(scope=scope, name="Caroline").exists()  # the speaker still speaks elsewhere
    assert Mention.objects.filter(episode__public_id=kept.episodes[0].episode_id).exists()
    assert not any(word in texts(recall(scope=scope, query="Ottilie Quokkaville sister")) for word in ("Ottilie", "Quokkaville"))
    forgotten = index_snapshot(scope)
    rebuild(scope)
    assert forgotten == index_snapshot(scope)


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_cli_forgets_and_prints_the_receipt_as_json(talk, capsys):
    call_command("forget", str(talk.episode.public_id), "--scope", "alpha", "--json", "--as", "editor")
    data = json.loads(capsys.readouterr().out)
    assert data["episode_id"] == str(talk.episode.public_id) and data["forgotten_by"] == "editor"
    assert data["counts"]["episodes"] == 1 and data["counts"]["facts_erased"] == 2
    assert not Episode.objects.filter(public_id=talk.episode.public_id).exists()


def test_the_cli_text_output_and_its_errors(talk):
    with pytest.raises(CommandError, match="'nope' is not an episode id"):
        run("forget", "nope", "--scope", "alpha", "--as", "owner")
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        run("forget", str(talk.episode.public_id), "--scope", "alpha", "--as", "outsider")
    with pytest.raises(CommandError, match="may not write"):
        run("forget", str(talk.episode.public_id), "--scope", "alpha", "--as", "viewer")
    out = run("forget", str(talk.episode.public_id), "--scope", "alpha", "--as", "owner")
    assert out.startswith(f"Forgot episode {talk.episode.public_id} in alpha:") and "facts_erased 2" in out
    with pytest.raises(CommandError, match="No episode"):
        run("forget", str(talk.episode.public_id), "--scope", "alpha", "--as", "owner")


def test_an_indexer_waits_for_forgetting_and_then_has_nothing_to_put_back(talk, monkeypatch):
    """While forgetting runs, the scope's indexing lock is held (an indexer in another process
    would wait); after it, a full index run finds nothing to add."""
    from django.db import connections

    from retrieval import forget, indexing

    scope = talk.scope_a
    seen = {}

    def other_connection_tries_the_lock(**kwargs):
        def attempt():
            try:
                with connections["default"].cursor() as cursor:
                    cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [indexing._LOCK_NAMESPACE, scope.pk])
                    seen["got"] = cursor.fetchone()[0]
                    if seen["got"]:
                        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [indexing._LOCK_NAMESPACE, scope.pk])
            finally:
                connections["default"].close()

        thread = threading.Thread(target=attempt)
        thread.start()
        thread.join(timeout=30)
        return refresh(**kwargs)

    refresh = forget.speakers_refresh
    monkeypatch.setattr(forget, "speakers_refresh", other_connection_tries_the_lock)
    episode_forget(principal=talk.p_owner, scope=scope, episode_public_id=talk.episode.public_id)
    assert seen == {"got": False}
    after = index_snapshot(scope)
    assert index_pending(scope=scope, full=True) == 0
    assert index_snapshot(scope) == after


def test_an_ancestor_comes_back_when_the_forgotten_episode_had_moved_away_and_back(cast, django_capture_on_commit_callbacks):
    """One episode said both steps of a chain (Lisbon → Quokkaville → Lisbon again): forgetting it
    makes the first Lisbon current again, while the erased Lisbon still exists in the transaction
    (found by `bench api` forgetting what its clients remembered: it was an IntegrityError)."""
    scope = cast.scope_a
    stored = []
    for text, month in (("I live in Lisbon", 1), ("I moved to Quokkaville", 5), ("I moved to Porto", 9)):
        with django_capture_on_commit_callbacks(execute=True):
            stored.append(remember(scope=scope, text=text, speaker="Caroline", occurred_at=at(month), actor=cast.p_owner).episodes[0])
    first, both = (Episode.objects.get(public_id=s.episode_id) for s in stored[:2])
    lisbon, quokkaville, back = (Fact.objects.get(scope=scope, value=v) for v in ("Lisbon", "Quokkaville", "Porto"))
    Fact.objects.filter(pk=back.pk).update(value="Lisbon", value_normalized=lisbon.value_normalized, source_episode=both)
    assert back.supersedes_id == quokkaville.pk and lisbon.status == FactStatus.SUPERSEDED

    receipt = episode_forget(principal=cast.p_owner, scope=scope, episode_public_id=both.public_id)

    lisbon.refresh_from_db()
    assert lisbon.status == FactStatus.ACTIVE and lisbon.valid_to is None and lisbon.source_episode == first
    assert list(Fact.objects.filter(scope=scope).values_list("value", "status")) == [("Lisbon", FactStatus.ACTIVE)]
    assert receipt.counts["facts_erased"] == 2 and receipt.counts["facts_reactivated"] == 1
