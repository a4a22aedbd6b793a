"""Erasure of a person (retrieval/erase.py): after erasing Maya, nothing finds her — text, vectors,
entities, aliases, raw turns, term statistics, audit texts — while what others said about
other things stays findable; a dry run writes nothing; only team admins may."""

import io
import json
import re
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import AuditEvent
from accounts.permissions import Principal
from accounts.tokens import token_issue
from memoryweb.errors import Forbidden, InvalidInput, NotFound
from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding, Entity, EntityAlias, Episode, Fact, FactStatus, FactSupport, Session, Turn
from memories.normalize import normalize_name
from memories.services.facts import entity_list, fact_correct, fact_retract
from memories.services.ingest import ingest_session, remember
from retrieval.indexing import index_pending
from retrieval.models import IndexState, SearchDocument, TermStat
from retrieval.services import ErasureReceipt, recall, recall_evidence, subject_erase
from tests.retrieval.test_forget import index_snapshot, rebuild, row_counts, texts

pytestmark = pytest.mark.django_db

MAYA = re.compile(r"\bmaya\b", re.IGNORECASE)
CONVERSATION = [
    ("Maya", "I live in Lisbon."),
    ("Caroline", "I work at Brightwave Robotics."),
    ("Maya", "I moved to Porto last week."),
    ("Melanie", "Caroline, did you see Maya yesterday?"),
    ("Caroline", "I love hiking in the mountains."),
    ("maya", "I just started at Quillfeather Press."),  # the speaker's case differs
    ("Melanie", "I adopted a cat called Biscuit."),
    ("Caroline", "Biscuit is a lovely name for a cat."),
]


def at(month, day=1):
    return datetime(2024, month, day, 12, tzinfo=UTC).isoformat()


@pytest.fixture
def maya(cast, django_capture_on_commit_callbacks):
    """Maya speaks in a session (lives_in Lisbon, then Porto; works_at Quillfeather Press), others
    mention her (a turn, a free-standing episode, a fact pointing at her), she was merged with
    "Maya Chen", who speaks in a second session, and audit events quote her; Caroline and
    Melanie have facts of their own."""
    scope = cast.scope_a
    messages = [{"id": f"t{n}", "speaker": s, "text": t, "occurred_at": at(n + 1)} for n, (s, t) in enumerate(CONVERSATION)]
    with django_capture_on_commit_callbacks(execute=True):
        ingest_session(scope=scope, session_id="s1", messages=messages, actor=cast.p_owner)
        remember(scope=scope, text="I went to the cinema with Maya.", speaker="Melanie", occurred_at=at(10), actor=cast.p_owner)
        remember(scope=scope, text="My friend Maya lives in Porto.", speaker="Caroline", occurred_at=at(10, 2), actor=cast.p_owner)
    cast.maya = Entity.objects.get(scope=scope, name="Maya")
    chen = Entity.objects.create(scope=scope, name="Maya Chen", kind="person", merged_into=cast.maya)
    EntityAlias.objects.create(scope=scope, entity=chen, alias="Maya Chen", normalized=normalize_name("Maya Chen"))
    cast.chen = chen
    with django_capture_on_commit_callbacks(execute=True):
        ingest_session(
            scope=scope, session_id="s2", actor=cast.p_owner,
            messages=[{"id": "c1", "speaker": "MAYA CHEN", "text": "I love sourdough bread.", "occurred_at": at(11)}],
        )
    works = Fact.objects.get(scope=scope, subject=cast.maya, attribute="works_at")
    fact_correct(scope=scope, fact_public_id=works.public_id, value="Quillfeather Books", actor=cast.p_owner)
    pet = Fact.objects.get(scope=scope, attribute="has_pet")
    fact_retract(scope=scope, fact_public_id=pet.public_id, actor=cast.p_owner, reason="Maya took Biscuit home")
    index_pending(scope=scope, full=True)
    return cast


def maya_vector():
    return get_embedder().embed(["Maya"])[0]


def searches(scope):
    vector = maya_vector()
    return (
        recall(scope=scope, query="Maya"),
        recall(scope=scope, query="Where does Maya live? Where did Maya work?", include_history=True),
        recall_evidence(scope=scope, query="Maya"),
        recall_evidence(scope=scope, query="Maya", include_history=True),
        recall(scope=scope, query="nothing shared", query_vector=vector, include_history=True),
        recall_evidence(scope=scope, query="nothing shared", query_vector=vector, include_history=True),
        recall_evidence(scope=scope, query="nothing shared", query_vector=vector, filters={"kinds": ["turn"]}),
    )


def audit_texts(scope) -> str:
    return json.dumps([[e.before, e.after] for e in AuditEvent.objects.filter(scope=scope)])


def test_the_scene_is_set(maya):
    """Everything the erasure test asserts absent is present before it, so that test can fail."""
    scope = maya.scope_a
    lives = Fact.objects.filter(scope=scope, subject=maya.maya, attribute="lives_in").order_by("id")
    assert [(f.value, f.status) for f in lives] == [("Lisbon", FactStatus.SUPERSEDED), ("Porto", FactStatus.ACTIVE)]
    assert lives[1].supersedes == lives[0]
    assert Fact.objects.filter(scope=scope, object_entity=maya.maya, attribute="has_friend").exists()
    assert Fact.objects.filter(scope=scope, subject=maya.maya, attribute="likes", value__icontains="sourdough").exists()
    for result in searches(scope):
        assert MAYA.search(texts(result)) or "Quillfeather" in texts(result) or "Porto" in texts(result)
    assert entity_list(scope=scope, query="maya").exists()
    assert TermStat.objects.filter(scope=scope, lexeme="maya").exists()
    assert MAYA.search(audit_texts(scope))
    assert "Maya" in IndexState.objects.get(scope=scope).speakers


def test_after_erasing_maya_nothing_finds_her(maya):
    scope = maya.scope_a
    subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")

    for result in searches(scope):
        assert result.items  # the rest of the scope is still there
        assert not MAYA.search(texts(result)), texts(result)
        assert not any(word in texts(result) for word in ("Quillfeather", "Lisbon", "sourdough", "cinema"))
    assert not entity_list(scope=scope, query="maya").exists()
    assert not Entity.objects.filter(scope=scope, name__iregex=r"\mmaya\M").exists()
    assert not EntityAlias.objects.filter(scope=scope, alias__iregex=r"\mmaya\M").exists()
    assert not Turn.objects.filter(scope=scope, text__iregex=r"\mmaya\M").exists()
    assert not Turn.objects.filter(scope=scope, speaker__iregex=r"\mmaya\M").exists()
    assert not Episode.objects.filter(scope=scope, text__iregex=r"\mmaya\M").exists()
    assert not Episode.objects.filter(scope=scope, speaker__iregex=r"\mmaya\M").exists()
    assert not Fact.objects.filter(scope=scope, sentence__iregex=r"\mmaya\M").exists()
    assert not FactSupport.objects.filter(scope=scope, sentence__iregex=r"\mmaya\M").exists()
    assert not SearchDocument.objects.filter(scope=scope, text__iregex=r"\mmaya\M").exists()
    assert not TermStat.objects.filter(scope=scope, lexeme__in=["maya", "chen", "quillfeath", "sourdough", "lisbon"]).exists()
    assert not MAYA.search(audit_texts(scope))
    assert not any(MAYA.search(s) for s in IndexState.objects.get(scope=scope).speakers)
    assert not Embedding.objects.filter(scope=scope, target_type="entity", target_id__in=[maya.maya.pk, maya.chen.pk]).exists()
    assert not Session.objects.filter(scope=scope, external_id="s2").exists()  # it held only Maya Chen's turn


def test_a_backup_written_after_the_erasure_holds_no_trace(maya, tmp_path):
    import gzip

    from retrieval.backup import scope_backup

    scope = maya.scope_a
    before = tmp_path / "before.jsonl.gz"
    with before.open("wb") as out:
        scope_backup(principal=maya.p_owner, scope=scope, out=out)
    assert MAYA.search(gzip.decompress(before.read_bytes()).decode())  # the backup would hold her
    subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    after = tmp_path / "after.jsonl.gz"
    with after.open("wb") as out:
        scope_backup(principal=maya.p_owner, scope=scope, out=out)
    text = gzip.decompress(after.read_bytes()).decode()
    assert not MAYA.search(text)
    assert not any(word in text for word in ("Quillfeather", "Lisbon", "sourdough"))


def test_other_peoples_facts_and_episodes_stay_and_are_still_found(maya):
    scope = maya.scope_a
    subject_erase(principal=maya.p_owner, scope=scope, subject="maya")  # any case

    works = Fact.objects.get(scope=scope, attribute="works_at", subject__name="Caroline")
    assert works.status == FactStatus.ACTIVE and works.value == "Brightwave Robotics"
    assert Fact.objects.get(scope=scope, attribute="has_pet").status == FactStatus.RETRACTED  # it named no one; its audit did
    assert Fact.objects.filter(scope=scope, subject__name="Caroline", attribute="likes").exists()
    assert "Brightwave" in texts(recall(scope=scope, query="Where does Caroline work?"))
    assert "hiking" in texts(recall_evidence(scope=scope, query="Who loves hiking in the mountains?"))
    kept = [
        "I work at Brightwave Robotics.", "I love hiking in the mountains.", "I adopted a cat called Biscuit.",
        "Biscuit is a lovely name for a cat.",
    ]
    assert list(Turn.objects.filter(scope=scope).order_by("position").values_list("text", flat=True)) == kept
    assert list(Turn.objects.filter(scope=scope).order_by("position").values_list("position", flat=True)) == [0, 1, 2, 3]
    assert Episode.objects.filter(scope=scope).count() == len(kept)
    assert Entity.objects.filter(scope=scope, name__in=["Caroline", "Melanie", "Brightwave Robotics", "Biscuit"]).count() == 4
    assert not Entity.objects.filter(scope=scope, name__in=["Lisbon", "Porto", "Quillfeather Press"]).exists()  # only Maya named them


def test_another_scope_is_untouched(maya, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        remember(scope=maya.scope_a2, text="I live in Lisbon.", speaker="Maya", actor=maya.p_owner)
    index_pending(scope=maya.scope_a2, full=True)
    before = index_snapshot(maya.scope_a2), Entity.objects.filter(scope=maya.scope_a2).count()
    subject_erase(principal=maya.p_owner, scope=maya.scope_a, subject="Maya")
    assert (index_snapshot(maya.scope_a2), Entity.objects.filter(scope=maya.scope_a2).count()) == before
    assert Entity.objects.filter(scope=maya.scope_a2, name="Maya").exists()


def test_the_index_equals_a_fresh_build_after_erasure(maya):
    scope = maya.scope_a
    receipt = subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    assert receipt.counts["windows_rebuilt"] > 0
    erased = index_snapshot(scope)
    rebuild(scope)
    assert erased == index_snapshot(scope)


def test_the_kept_turns_windows_are_rebuilt_with_new_vectors(maya):
    scope = maya.scope_a
    subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    for doc in SearchDocument.objects.filter(scope=scope, collection__in=["turn_w1", "turn_w2"]):
        assert Embedding.objects.filter(target_type=f"doc_{doc.collection}", target_id=doc.pk).count() == 1
    window = SearchDocument.objects.get(scope=scope, collection="turn_w1", target_id=Turn.objects.get(scope=scope, position=1).pk)
    assert "Brightwave" in window.text and "Biscuit" in window.text  # the neighbours closed over the gap


def test_a_dry_run_counts_and_changes_nothing(maya):
    scope = maya.scope_a
    before = row_counts(), index_snapshot(scope), audit_texts(scope)
    dry = subject_erase(principal=maya.p_owner, scope=scope, subject="Maya", dry_run=True)
    assert (row_counts(), index_snapshot(scope), audit_texts(scope)) == before
    assert dry.dry_run and dry.counts["episodes"] > 0
    real = subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    assert real.counts == dry.counts  # the counts a dry run gives are the real ones


def test_the_receipt_and_the_audit_event_hold_counts_not_the_name(maya):
    scope = maya.scope_a
    receipt = subject_erase(principal=maya.p_owner, scope=scope, subject="Maya")
    assert isinstance(receipt, ErasureReceipt) and receipt.subject == "[erased]" and receipt.erased_by == "owner"
    counts = receipt.counts
    assert counts["people"] == 2 and counts["episodes"] == 7 and counts["turns"] == 5 and counts["sessions"] == 1
    assert counts["facts_erased"] >= 5 and counts["entities"] >= 5 and counts["aliases"] >= 5
    assert counts["documents"] > 0 and counts["postings"] > 0 and counts["vectors"] > 0 and counts["audit_events_scrubbed"] >= 2
    with pytest.raises(AttributeError):
        receipt.scope = "other"  # frozen

    event = AuditEvent.objects.get(action="subject.erase")
    assert event.actor_user == maya.owner and event.scope == scope and event.target_id == str(receipt.erasure_id)
    assert event.after == json.loads(json.dumps(receipt.as_dict()))
    assert not MAYA.search(json.dumps([event.target_id, event.before, event.after]))
    retract = AuditEvent.objects.get(action="fact.retract")
    assert retract.after["status"] == "retracted" and retract.after["reason"] == "[forgotten]"  # the event stays, its text goes


def test_erasing_by_the_id_of_a_merged_entity_erases_the_whole_person(maya):
    scope = maya.scope_a
    receipt = subject_erase(principal=maya.p_owner, scope=scope, subject=str(maya.chen.public_id))
    assert receipt.counts["people"] == 2
    assert not Entity.objects.filter(pk__in=[maya.maya.pk, maya.chen.pk]).exists()
    assert not Turn.objects.filter(scope=scope, speaker__iexact="maya").exists()


@pytest.mark.parametrize("who, error", [("p_editor", Forbidden), ("p_viewer", Forbidden), ("p_outsider", NotFound)])
def test_only_team_admins_may_erase_and_refusals_change_nothing(maya, who, error):
    before = row_counts()
    with pytest.raises(error):
        subject_erase(principal=getattr(maya, who), scope=maya.scope_a, subject="Maya")
    assert row_counts() == before


def test_an_api_token_may_not_erase_even_an_admins(maya):
    token = token_issue(actor=maya.p_owner, user=maya.owner, name="agent", scopes=[maya.scope_a], can_write=True).token
    before = row_counts()
    with pytest.raises(Forbidden, match="API tokens"):
        subject_erase(principal=Principal.for_token(token), scope=maya.scope_a, subject="Maya")
    assert row_counts() == before


@pytest.mark.parametrize("subject, error", [
    ("Zebediah", NotFound), ("Maya Smith", NotFound), ("00000000-0000-4000-8000-000000000000", NotFound), ("  ", InvalidInput),
])
def test_an_unknown_or_inexact_subject_erases_nothing(maya, subject, error):
    """"Maya Smith" resolves to Maya by containment, which is right for linking and wrong for deleting."""
    before = row_counts()
    with pytest.raises(error):
        subject_erase(principal=maya.p_owner, scope=maya.scope_a, subject=subject)
    assert row_counts() == before


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_cli_dry_run_prints_json_and_writes_nothing(maya, capsys):
    before = row_counts()
    call_command("erase", "--scope", "alpha", "--subject", "Maya", "--dry-run", "--json", "--as", "owner")
    data = json.loads(capsys.readouterr().out)
    assert data["dry_run"] is True and data["subject"] == "[erased]" and data["counts"]["episodes"] == 7
    assert row_counts() == before


def test_the_cli_erases_and_prints_the_receipt(maya):
    with pytest.raises(CommandError, match="Only admins of team 'team-a'"):
        run("erase", "--scope", "alpha", "--subject", "Maya", "--as", "editor")
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        run("erase", "--scope", "alpha", "--subject", "Maya", "--as", "outsider")
    out = run("erase", "--scope", "alpha", "--subject", "Maya", "--as", "owner")
    assert out.startswith("Erased 'Maya' from alpha") and "episodes 7" in out
    with pytest.raises(CommandError, match="No entity named 'Maya'"):
        run("erase", "--scope", "alpha", "--subject", "Maya", "--as", "owner")
