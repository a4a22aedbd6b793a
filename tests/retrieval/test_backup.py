"""Backup and restore (retrieval/backup.py): a restored scope holds the same facts, histories and
recall results; a bad file is refused with its line and leaves nothing; only team admins may."""

import gzip
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import AuditEvent
from accounts.permissions import Principal
from accounts.tokens import token_issue
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding, Entity, EntityAlias, Episode, Fact, FactStatus, FactSupport, Mention, Scope, Session, Turn
from memories.services.facts import fact_correct, fact_retract
from memories.services.ingest import ingest_session, remember
from retrieval.backup import scheduled_backups, scope_backup, scope_restore
from retrieval.indexing import index_pending
from retrieval.models import SearchDocument
from retrieval.services import recall

pytestmark = pytest.mark.django_db

MESSAGES = [
    ("Caroline", "I live in Lisbon these days and I work at Brightwave."),
    ("Melanie", "Do you still like the city? I moved to Porto last spring."),
    ("Caroline", "I moved from Lisbon to Berlin in March. I adopted a ferret called Zanzibar."),
    ("Melanie", "I work at Acme now, as a nurse. I like sailing."),
    ("Caroline", "My favorite food is ramen. I like chess and climbing."),
    ("Melanie", "I visited Nairobi last year, and I like jazz."),
    ("Caroline", "I moved to Oslo. I work at Hooli as a designer."),
    ("Melanie", "My brother Tomas lives in Lima."),
]
QUESTIONS = [
    "Where does Caroline live?", "Where did Caroline live before?", "Where does Caroline work?", "What pet does Caroline have?",
    "Where does Melanie live?", "Where does Melanie work?", "What does Melanie like?", "What does Caroline like?",
    "Who likes sailing?", "Who visited Nairobi?", "Did Caroline ever live in Lisbon?", "What is Caroline's favorite food?",
    "Who is a nurse?", "Who is a designer?", "Where does Tomas live?", "ferret Zanzibar", "Berlin in March", "jazz music",
    "Brightwave", "Who moved to Porto?",
]


def at(day: int) -> str:
    return (datetime(2024, 3, 1, 12, tzinfo=UTC) + timedelta(days=day)).isoformat()


@pytest.fixture
def memory(cast, django_capture_on_commit_callbacks):
    """Alpha: a session, free-standing episodes, supersessions, a correction, a retraction, a merge."""
    scope = cast.scope_a
    messages = [{"id": f"t{n}", "speaker": s, "text": t, "occurred_at": at(n)} for n, (s, t) in enumerate(MESSAGES)]
    with django_capture_on_commit_callbacks(execute=True):
        ingest_session(scope=scope, session_id="s1", messages=messages, actor=cast.p_owner)
        remember(scope=scope, text="I moved to Madrid.", speaker="Caroline", occurred_at=at(20), actor=cast.p_owner)
        remember(scope=scope, text="I live in Madrid.", speaker="Caroline", occurred_at=at(21), actor=cast.p_owner)
    active = Fact.objects.in_scope(scope).filter(status=FactStatus.ACTIVE)
    works = active.filter(attribute="works_at").first()
    fact_correct(scope=scope, fact_public_id=works.public_id, value="Globex", actor=cast.p_owner)
    likes = active.filter(attribute="likes").first()
    fact_retract(scope=scope, fact_public_id=likes.public_id, actor=cast.p_owner, reason="not true")
    loser = Entity.objects.create(scope=scope, name="Caro", kind="person")
    loser.merged_into = Entity.objects.in_scope(scope).get(name="Caroline")
    loser.save()
    index_pending(scope=scope, full=True)
    assert Fact.objects.in_scope(scope).filter(status=FactStatus.SUPERSEDED).exists()  # the test can fail
    assert FactSupport.objects.in_scope(scope).exists()
    return cast


def backup(scope, principal, **kwargs) -> bytes:
    out = io.BytesIO()
    scope_backup(principal=principal, scope=scope, out=out, **kwargs)
    return out.getvalue()


def facts_of(scope) -> list[tuple]:
    """Every fact with its chain, in a form that does not depend on ids."""
    rows = Fact.objects.in_scope(scope).select_related("subject", "supersedes", "source_episode", "object_entity").order_by("id")
    return [
        (f.subject.name, f.attribute, f.value, f.sentence, f.status, f.valid_from, f.valid_to, f.provenance, f.confidence,
         f.importance, f.supersedes.value if f.supersedes else None, f.source_episode.text if f.source_episode else None,
         f.object_entity.name if f.object_entity else None, f.author_id)
        for f in rows
    ]


def recalls(scope) -> list[list[tuple]]:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    return [[(i.kind, i.text, i.status) for i in recall(scope=scope, query=q, now=now).items] for q in QUESTIONS]


def test_a_restored_copy_holds_the_same_facts_histories_and_recall_results(memory):
    data = backup(memory.scope_a, memory.p_owner)
    receipt = scope_restore(principal=memory.p_owner, file=io.BytesIO(data), scope="copy")
    copy = Scope.objects.get(slug="copy")
    assert receipt.created and copy.team == memory.owner.personal_team
    assert facts_of(copy) == facts_of(memory.scope_a)
    active = sorted(Fact.objects.in_scope(copy).filter(status=FactStatus.ACTIVE).values_list("sentence", flat=True))
    assert active == sorted(Fact.objects.in_scope(memory.scope_a).filter(status=FactStatus.ACTIVE).values_list("sentence", flat=True))
    results = recalls(memory.scope_a)
    assert sum(len(r) for r in results) > 100  # the questions find things
    assert recalls(copy) == results
    for model in (Session, Turn, Episode, Entity, EntityAlias, FactSupport, Mention):
        assert model.objects.in_scope(copy).count() == model.objects.in_scope(memory.scope_a).count(), model
    said_again = ("fact__sentence", "episode__text", "sentence", "valid_from")
    assert FactSupport.objects.in_scope(memory.scope_a).filter(valid_from__isnull=False).exists()  # the test can fail
    assert sorted(FactSupport.objects.in_scope(copy).values_list(*said_again)) == sorted(
        FactSupport.objects.in_scope(memory.scope_a).values_list(*said_again))
    assert Entity.objects.in_scope(copy).get(name="Caro").merged_into.name == "Caroline"
    # Beside its source, every row needs a new public id (they are unique in the database).
    assert receipt.renewed_ids > 0
    assert not set(Fact.objects.in_scope(copy).values_list("public_id", flat=True)) & set(
        Fact.objects.in_scope(memory.scope_a).values_list("public_id", flat=True))
    # The copy's audit trail points at the copy's rows.
    corrected = AuditEvent.objects.filter(scope=copy, action="fact.correct").get()
    assert Fact.objects.in_scope(copy).filter(public_id=corrected.target_id).exists()
    assert AuditEvent.objects.filter(scope=copy, action="scope.restore").count() == 1
    assert AuditEvent.objects.filter(scope=memory.scope_a, action="scope.backup").count() == 1
    assert SearchDocument.objects.filter(scope=copy).count() == SearchDocument.objects.filter(scope=memory.scope_a).count()


def test_restoring_after_the_scope_is_gone_keeps_every_public_id(memory):
    data = backup(memory.scope_a, memory.p_owner)
    ids = set(Fact.objects.in_scope(memory.scope_a).values_list("public_id", flat=True))
    before = facts_of(memory.scope_a)
    SearchDocument.objects.filter(scope=memory.scope_a).delete()
    Fact.objects.in_scope(memory.scope_a).update(supersedes=None)
    Fact.objects.in_scope(memory.scope_a).delete()
    memory.scope_a.delete()
    receipt = scope_restore(principal=memory.p_owner, file=io.BytesIO(data), team=memory.team_a)
    scope = Scope.objects.get(slug="alpha")
    assert scope.team == memory.team_a and receipt.renewed_ids == 0
    assert set(Fact.objects.in_scope(scope).values_list("public_id", flat=True)) == ids
    assert facts_of(scope) == before


def test_with_vectors_the_stored_vectors_are_reused(memory, monkeypatch):
    data = backup(memory.scope_a, memory.p_owner, with_vectors=True)
    header = json.loads(gzip.decompress(data).split(b"\n", 1)[0])
    assert header["with_vectors"] and header["counts"]["vector"] > 0
    embedder = get_embedder()
    with_vector = Embedding.objects.filter(scope=memory.scope_a, target_type="entity", model=embedder.name).values("target_id")
    unembedded = Entity.objects.in_scope(memory.scope_a).exclude(pk__in=with_vector).count()  # "Caro", made by hand
    assert unembedded
    calls = []
    real = type(embedder).embed
    monkeypatch.setattr(type(embedder), "embed", lambda self, texts: calls.append(len(texts)) or real(self, texts))
    receipt = scope_restore(principal=memory.p_owner, file=io.BytesIO(data), scope="copy")
    # Only the entity names that had no vector are embedded; every search document's vector is the
    # file's, except the windows', which are composed from their turns' (the file's) again.
    windows = Embedding.objects.filter(scope=memory.scope_a, target_type__in=["doc_turn_w1", "doc_turn_w2"]).count()
    assert sum(calls) == unembedded and receipt.vectors_reused == header["counts"]["vector"] - windows
    copy = Scope.objects.get(slug="copy")
    assert Embedding.objects.filter(scope=copy).count() == Embedding.objects.filter(scope=memory.scope_a).count() + unembedded
    assert recalls(copy) == recalls(memory.scope_a)


def test_a_non_empty_scope_is_refused_without_merge_and_merge_adds_only_what_is_missing(memory):
    data = backup(memory.scope_a, memory.p_owner)
    with pytest.raises(Conflict, match="holds memory already"):
        scope_restore(principal=memory.p_owner, file=io.BytesIO(data), scope=memory.scope_a)
    before = facts_of(memory.scope_a)
    receipt = scope_restore(principal=memory.p_owner, file=io.BytesIO(data), scope=memory.scope_a, merge=True)
    assert sum(receipt.written.values()) == 0 and receipt.skipped["fact"] == Fact.objects.in_scope(memory.scope_a).count()
    assert facts_of(memory.scope_a) == before
    # A lost episode and its facts come back; the rest stay as they are.
    episode = Episode.objects.in_scope(memory.scope_a).filter(turn__isnull=True).order_by("id").first()
    lost = list(Fact.objects.in_scope(memory.scope_a).filter(source_episode=episode).values_list("public_id", flat=True))
    assert lost
    Fact.objects.filter(supersedes__public_id__in=lost).update(supersedes=None)
    Fact.objects.filter(public_id__in=lost).delete()
    episode.delete()
    receipt = scope_restore(principal=memory.p_owner, file=io.BytesIO(data), scope="alpha", merge=True)
    assert receipt.written["episode"] == 1 and receipt.written["fact"] == len(lost)
    assert set(lost) <= set(Fact.objects.in_scope(memory.scope_a).values_list("public_id", flat=True))


def _lines(data: bytes) -> list[bytes]:
    return gzip.decompress(data).splitlines(keepends=True)


def _refused(principal, data: bytes, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        scope_restore(principal=principal, file=io.BytesIO(data), scope="copy")
    assert not Scope.objects.filter(slug="copy").exists()


def test_a_truncated_or_corrupted_file_is_refused_with_its_line_and_nothing_is_written(memory):
    data = backup(memory.scope_a, memory.p_owner)
    rows = Fact.objects.count()
    _refused(memory.p_owner, data[: len(data) // 2], r"ends early, after line \d+: it is truncated")
    lines = _lines(data)
    # Cut at a line boundary and compressed again: the header's counts catch it.
    _refused(memory.p_owner, gzip.compress(b"".join(lines[: len(lines) // 2])), "header promises")
    corrupted = list(lines)
    corrupted[40] = corrupted[40][:-10] + b"\n"
    _refused(memory.p_owner, gzip.compress(b"".join(corrupted)), "^Line 41: not valid JSON")
    fact_line = next(n for n, line in enumerate(lines) if b'"kind":"fact"' in line)
    record = json.loads(lines[fact_line])
    record["subject"] = "00000000-0000-0000-0000-000000000000"
    broken = lines[:fact_line] + [json.dumps(record).encode() + b"\n"] + lines[fact_line + 1:]
    _refused(memory.p_owner, gzip.compress(b"".join(broken)), f"^Line {fact_line + 1}: 'subject' refers to entity .* not in the file")
    header = json.loads(lines[0])
    _refused(memory.p_owner, gzip.compress(json.dumps({**header, "version": 99}).encode() + b"\n" + b"".join(lines[1:])),
             "^Line 1: backup format version 99 is not known")
    _refused(memory.p_owner, b"not gzip at all", "^Line 1: not a gzip'd memoryweb backup")
    # An existing empty target stays empty.
    with pytest.raises(InvalidInput):
        scope_restore(principal=memory.p_owner, file=io.BytesIO(gzip.compress(b"".join(corrupted))), scope=memory.scope_a2)
    assert not Fact.objects.in_scope(memory.scope_a2).exists() and not Episode.objects.in_scope(memory.scope_a2).exists()
    assert Fact.objects.count() == rows


def test_only_team_admins_back_up_and_restore(memory):
    data = backup(memory.scope_a, memory.p_owner)
    with pytest.raises(Forbidden, match="Only admins of team 'team-a'"):
        backup(memory.scope_a, memory.p_editor)
    with pytest.raises(Forbidden):
        backup(memory.scope_a, memory.p_viewer)
    with pytest.raises(NotFound):
        backup(memory.scope_a, memory.p_outsider)
    token = token_issue(actor=memory.p_owner, user=memory.owner, name="t", scopes=[memory.scope_a], can_write=True).token
    with pytest.raises(Forbidden):
        backup(memory.scope_a, Principal.for_token(token))
    with pytest.raises(Forbidden):
        scope_restore(principal=memory.p_editor, file=io.BytesIO(data), scope=memory.scope_a2)
    with pytest.raises(NotFound):
        scope_restore(principal=memory.p_outsider, file=io.BytesIO(data), scope="alpha-two")
    with pytest.raises(Forbidden):  # a new scope in a team the editor does not administer
        scope_restore(principal=memory.p_editor, file=io.BytesIO(data), scope="new", team=memory.team_a)
    assert not Scope.objects.filter(slug="new").exists() and not Fact.objects.in_scope(memory.scope_a2).exists()


def test_the_cli_backs_up_and_restores(memory, tmp_path, capsys):
    path = tmp_path / "alpha.jsonl.gz"
    call_command("backup", "--scope", "alpha", "--out", str(path), "--as", "owner", "--json")
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["scope"] == "alpha" and receipt["counts"]["fact"] == Fact.objects.in_scope(memory.scope_a).count()
    call_command("restore", str(path), "--scope", "copy", "--as", "owner")
    assert "Restored" in capsys.readouterr().out
    assert facts_of(Scope.objects.get(slug="copy")) == facts_of(memory.scope_a)
    with pytest.raises(CommandError, match="holds memory already"):
        call_command("restore", str(path), "--scope", "copy", "--as", "owner")
    call_command("restore", str(path), "--scope", "copy", "--merge", "--as", "owner", "--json")
    # The copy's rows took new public ids beside their source; a merge still knows them.
    assert sum(json.loads(capsys.readouterr().out)["written"].values()) == 0
    with pytest.raises(CommandError, match="Only admins"):
        call_command("backup", "--scope", "alpha", "--out", str(tmp_path / "x.gz"), "--as", "editor")


def test_scheduled_backups_keep_the_newest_per_scope(memory, tmp_path):
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for hour in range(4):
        report = scheduled_backups(keep=2, root=tmp_path, now=start + timedelta(hours=hour))
        assert not report["failed"]
    kept = sorted(p.name for p in (tmp_path / "alpha").iterdir())
    assert kept == ["20250101T020000Z.jsonl.gz", "20250101T030000Z.jsonl.gz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alpha", "alpha-two", "bravo"]
    assert len(report["removed"]) == 3  # one per scope on the last run
    header = json.loads(gzip.decompress((tmp_path / "alpha" / kept[-1]).read_bytes()).split(b"\n", 1)[0])
    assert header["counts"]["fact"] == Fact.objects.in_scope(memory.scope_a).count()


def test_the_beat_task_writes_under_memoryweb_home(memory, tmp_path, settings):
    from retrieval.tasks import backup_scopes

    settings.MEMORYWEB_HOME = tmp_path
    report = backup_scopes.apply().get()
    assert [p.parent.name for p in map(Path, report["written"])] == ["alpha", "alpha-two", "bravo"]
    assert all(Path(p).parent.parent == tmp_path / "backups" for p in report["written"])


def test_the_api_exports_and_imports_for_team_admins(memory, tokens_for_backup):
    owner = Client()
    owner.force_login(memory.owner)
    response = owner.get("/api/v1/scopes/alpha/export")
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    data = b"".join(response.streaming_content)
    assert json.loads(gzip.decompress(data).split(b"\n", 1)[0])["scope"]["slug"] == "alpha"
    upload = SimpleUploadedFile("alpha.jsonl.gz", data, content_type="application/gzip")
    response = owner.post("/api/v1/scopes/copy/import", {"file": upload})
    assert response.status_code == 201, response.json()
    assert response.json()["written"]["fact"] == Fact.objects.in_scope(memory.scope_a).count()
    assert facts_of(Scope.objects.get(slug="copy")) == facts_of(memory.scope_a)
    response = owner.post("/api/v1/scopes/copy/import", data, content_type="application/gzip")
    assert response.status_code == 409
    response = owner.post("/api/v1/scopes/copy/import?merge=true", data, content_type="application/gzip")
    assert response.status_code == 201 and response.json()["rows"] == 0
    broken = gzip.compress(gzip.decompress(data)[:-20])
    response = owner.post("/api/v1/scopes/copy-two/import", broken, content_type="application/gzip")
    assert response.status_code == 422 and "Line " in response.json()["message"]
    assert not Scope.objects.filter(slug="copy-two").exists()
    # A token never administers: export and import are refused to it even on its own scope.
    response = Client().get("/api/v1/scopes/alpha/export", headers={"Authorization": f"Bearer {tokens_for_backup}"})
    assert response.status_code == 403


@pytest.fixture
def tokens_for_backup(cast):
    return token_issue(actor=cast.p_owner, user=cast.owner, name="rw", scopes=[cast.scope_a], can_write=True).secret
