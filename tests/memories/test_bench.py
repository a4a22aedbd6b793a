"""`memoryweb bench ingest` runs end to end and leaves nothing behind (the figures are not tested)."""

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from retrieval.bench_ingest import synthetic_sessions
from memories.models import Embedding, Entity, Episode, Fact, Scope, Turn
from retrieval.models import Posting, SearchDocument


def test_bench_ingest_reports_both_figures_and_deletes_its_scope(cast, capsys):
    scopes = set(Scope.objects.values_list("slug", flat=True))
    call_command("bench", "ingest", "--turns", "60", "--episodes", "30", "--session-size", "20", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 60 and result["sessions"] == 3 and result["episodes"] == 30
    assert result["turns_per_second"] > 0 and result["episodes_per_second"] > 0
    assert result["facts"] > 0 and result["failed"] == 0 and result["embedder"] == "hash-384"
    assert set(Scope.objects.values_list("slug", flat=True)) == scopes
    assert not (Turn.objects.exists() or Episode.objects.exists() or Fact.objects.exists() or Entity.objects.exists()
                or Embedding.objects.exists())


def test_bench_ingest_takes_locomos_real_sessions_capped_at_the_turns_asked(cast, capsys):
    from tests.locomo_slices import DEV

    dataset = str(DEV)
    call_command("bench", "ingest", "--dataset", dataset, "--turns", "25", "--episodes", "3", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 25 and result["source"] == dataset and result["sessions"] >= 1
    # Real turns are each their own text: about one model pass per turn (synthetic templates repeat).
    assert result["model_passes_per_turn"] >= 0.9
    assert not Turn.objects.exists()


def test_bench_ingest_refuses_a_missing_or_broken_dataset_and_leaves_no_scope(cast, tmp_path):
    scopes = set(Scope.objects.values_list("slug", flat=True))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for dataset, said in ((tmp_path / "none.json", "No dataset at"), (broken, "is not JSON")):
        with pytest.raises(CommandError, match=said):
            call_command("bench", "ingest", "--dataset", str(dataset), "--turns", "5", "--episodes", "1", "--as", "owner")
    assert set(Scope.objects.values_list("slug", flat=True)) == scopes and not Turn.objects.exists()


def test_bench_ingest_prints_a_readable_summary(cast):
    out = io.StringIO()
    call_command("bench", "ingest", "--turns", "10", "--episodes", "5", "--as", "owner", stdout=out)
    assert "turns/s" in out.getvalue() and "episodes/s" in out.getvalue()


def test_synthetic_sessions_are_deterministic_and_sized():
    sessions = synthetic_sessions(turns=25, session_size=10)
    assert [len(m) for _, m in sessions] == [10, 10, 5]
    assert sessions == synthetic_sessions(turns=25, session_size=10)


@pytest.mark.django_db(transaction=True)  # it creates the model's HNSW index, which a test transaction forbids
def test_bench_recall_measures_a_synthetic_scope_and_cleans_up(cast, capsys):
    scopes = set(Scope.objects.values_list("slug", flat=True))
    call_command("bench", "recall", "--facts", "120", "--scopes", "2", "--queries", "5", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["facts"] == 120 and result["noise_scopes"] == 2 and result["queries"] == 5
    assert result["p95_ms_excluding_embedding"] >= result["p50_ms_excluding_embedding"] > 0
    assert "retrieval_embedding" in result["explain"]
    assert set(Scope.objects.values_list("slug", flat=True)) == scopes


def test_bench_refuses_nonsense_sizes(cast):
    with pytest.raises(CommandError, match="--facts must be at least 1"):
        call_command("bench", "recall", "--facts", "0", "--as", "owner")
    with pytest.raises(CommandError, match="--turns must be at least 1"):
        call_command("bench", "ingest", "--turns", "0", "--as", "owner")


@pytest.mark.django_db(transaction=True)
def test_bench_recall_can_keep_its_scopes_and_measure_them_again(cast, capsys):
    before = set(Scope.objects.values_list("slug", flat=True))
    call_command("bench", "recall", "--facts", "60", "--scopes", "1", "--queries", "3", "--keep", "--json", "--as", "owner")
    first = json.loads(capsys.readouterr().out)
    kept = set(Scope.objects.values_list("slug", flat=True)) - before
    target = min(kept, key=len)
    assert len(kept) == 2 and f"{target}-noise-0" in kept
    names = list(Entity.objects.filter(scope__slug=target).values_list("name", flat=True))
    assert len(names) == len(set(names)) == 12 and not any(c.isdigit() for name in names for c in name)
    call_command("bench", "recall", "--scope", target, "--queries", "4", "--json", "--as", "owner")
    again = json.loads(capsys.readouterr().out)
    assert again["facts"] == first["facts"] == 60 and again["noise_scopes"] == 1 and again["queries"] == 4
    assert again["vector_rows"] == first["vector_rows"]
    assert first["bm25"]["questions"] == 3 and first["exact"]["questions"] == 3
    call_command("bench", "recall", "--scope", target, "--queries", "2", "--latency-only", "--json", "--as", "owner")
    quick = json.loads(capsys.readouterr().out)  # recall timed, the exact rankings it is compared with left out
    assert quick["queries"] == 2 and quick["p50_ms_excluding_embedding"] > 0 and quick["bm25"] is None and quick["exact"] is None
    with pytest.raises(CommandError, match="No scope named"):
        call_command("bench", "recall", "--scope", target, "--as", "outsider")  # another team's scope is not there
    with pytest.raises(CommandError, match="holds neither people nor turns"):
        call_command("bench", "recall", "--scope", "alpha", "--as", "owner")


@pytest.mark.django_db(transaction=True)
def test_bench_recall_measures_a_conversation_with_evidence_and_cleans_up(cast, capsys):
    scopes = set(Scope.objects.values_list("slug", flat=True))
    call_command("bench", "recall", "--turns", "120", "--scopes", "1", "--queries", "4", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 120 and result["facts"] == 0 and result["search"] == "recall_evidence"
    assert result["vector_rows"] >= 10 * 3 * 120 - 10  # each turn and its two windows, and nine times that in noise
    assert "vector" in result["p50_ms_by_stage"] and "doc_turn" in result["explain"]
    # The corpus plants 3 turns in 120 (retrieval/corpus.py); every question is about one of them.
    assert 0 <= result["evidence_at_10"] <= 1 and result["disk"]["bytes_per_turn"] > 0
    assert result["bm25"]["questions"] == 4 and result["bm25"]["recall_at_10"] == 1.0
    # A scope this small is searched exactly with lists shorter than every cap: the exact pipeline is recall itself.
    assert result["exact"]["questions"] == 4 and result["exact"]["recall_at_10"] == 1.0 and result["exact"]["identical"] == 4
    assert result["exact"]["same_lists_recall_at_10"] == 1.0 and result["exact"]["same_lists_identical"] == 4
    assert set(result["disk"]["mb_by_table"]) >= {"memories_turn", "retrieval_posting", "retrieval_embedding"}
    assert set(Scope.objects.values_list("slug", flat=True)) == scopes
    assert not (Turn.objects.exists() or Episode.objects.exists() or Embedding.objects.exists())
    assert not (SearchDocument.objects.exists() or Posting.objects.exists())


@pytest.mark.django_db(transaction=True)
def test_bench_recall_compares_a_large_scope_with_its_exact_search_not_a_reordered_one(cast, capsys, monkeypatch, settings):
    from retrieval.search import pipeline

    # Searched as a large scope is (not exactly): recall does not put the head in the learned order,
    # and neither does the exact pipeline it is compared against, or the figure would measure the order.
    settings.RETRIEVAL_EXACT_BELOW = 1
    reordered = []
    head_reranked = pipeline.head_reranked
    monkeypatch.setattr(pipeline, "head_reranked", lambda *a, **k: reordered.append(1) or head_reranked(*a, **k))
    call_command("bench", "recall", "--turns", "120", "--scopes", "0", "--queries", "3", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["exact"]["questions"] == 3 and not reordered
    assert 0 <= result["exact"]["same_lists_recall_at_10"] <= 1  # the graphs alone, beside the lists' length


def test_bench_recall_refuses_negative_turns(cast):
    with pytest.raises(CommandError, match="--turns must be 0 or more"):
        call_command("bench", "recall", "--turns", "-1", "--as", "owner")


def test_bench_recall_refuses_more_turns_than_it_can_date(cast):
    with pytest.raises(CommandError, match="at most 1000000 turns"):
        call_command("bench", "recall", "--turns", "1000001", "--as", "owner")


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.django_db(transaction=True)  # the server is another process: it must see committed rows
def test_bench_api_drives_a_live_server_and_cleans_up(cast, capsys):
    from accounts.models import ApiToken

    scopes = set(Scope.objects.values_list("slug", flat=True))
    call_command("bench", "api", "--facts", "50", "--clients", "1,2", "--seconds", "1", "--queries", "5", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert result["facts"] == 50 and result["in_process"]["queries"] == 5 and result["embedder"] == "hash-384"
    # Timed before and after the server; the targets use the mean.
    runs = result["in_process"]["before"], result["in_process"]["after"]
    assert result["in_process"]["p50_ms"] == pytest.approx(sum(r["p50_ms"] for r in runs) / 2, abs=0.01)
    assert [(p["operation"], p["clients"]) for p in result["http"]] == [
        ("recall", 1), ("recall", 2), ("remember", 1), ("remember", 2), ("recall_quiet", 4), ("writes", 1), ("writes", 2)]
    assert all(p["requests"] > 0 and not p["errors"] for p in result["http"]), result["http"]
    # The write-heavy mix: readers beside the writers, and every probe's write found searchable.
    for mixed in result["http"][-2:]:
        assert mixed["readers"] == 4 and mixed["recall_p95_ms"] > 0 and mixed["recall_quiet_p95_ms"] > 0, mixed
        assert mixed["searchable"]["probes"] > 0 and mixed["searchable"]["never"] == 0 and mixed["drain_seconds"] is not None, mixed
    # What HTTP adds at one client: in-process and HTTP recalls timed in alternating blocks.
    paired = result["paired"]
    assert paired["blocks"] >= 2 and paired["in_process_recalls"] > 0 and paired["http_recalls"] > 0
    assert result["added_ms_at_one_client"] == pytest.approx(paired["http_p50_ms"] - paired["in_process_p50_ms"], abs=0.01)
    assert {"added_ms_at_one_client", "added_ms_unpaired", "cpu_bound_requests_per_second", "share_of_cpu_bound", "http_cpu_ms_per_recall",
            "cores_busy_at_most_clients", "share_of_cpu_bound_on_idle_cores"} <= set(result)
    assert all(p["client_cpu_ms_per_request"] > 0 and p["cores_busy"] > 0 for p in result["http"]), result["http"]
    # One native thread, as a server process has; a PyTorch this process loaded earlier (another
    # test exported the ONNX graph with it) keeps its count, and the bench says which.
    import sys

    threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else 1
    assert result["workers"] == settings.MEMORYWEB_WORKERS and result["native_threads"] == threads
    assert set(Scope.objects.values_list("slug", flat=True)) == scopes
    assert ApiToken.objects.get(name__startswith="bench api").revoked_at is not None


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.django_db(transaction=True)
def test_bench_api_sends_only_the_operations_asked_for_with_the_workers_asked_for(cast, capsys):
    call_command("bench", "api", "--facts", "20", "--clients", "1", "--seconds", "1", "--queries", "2", "--workers", "1",
                 "--operations", "recall", "--json", "--as", "owner")
    result = json.loads(capsys.readouterr().out)
    assert [(p["operation"], p["clients"]) for p in result["http"]] == [("recall", 1)] and result["workers"] == 1


def test_bench_api_refuses_nonsense_options(cast):
    with pytest.raises(CommandError, match="--clients must be numbers from 1"):
        call_command("bench", "api", "--clients", "0", "--as", "owner")
    with pytest.raises(CommandError, match="--seconds must be more than 0"):
        call_command("bench", "api", "--seconds", "0", "--as", "owner")
    with pytest.raises(CommandError, match="No scope named"):
        call_command("bench", "api", "--scope", "bravo", "--as", "owner")
    with pytest.raises(CommandError, match="--operations must name some of recall, remember, writes"):
        call_command("bench", "api", "--operations", "recall,delete", "--as", "owner")
    with pytest.raises(CommandError, match="--workers must be at least 1"):
        call_command("bench", "api", "--workers", "0", "--as", "owner")


def test_bench_api_connection_keeps_alive_and_reopens_after_a_failure():
    """The bench's client: one connection for many requests, the status returned, a failure
    named (not raised) and the next request on a new connection."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from retrieval.bench_api import _Connection

    peers = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            peers.append((self.client_address, self.headers["Authorization"], self.headers["Content-Type"]))
            status = 200 if body.get("ok") else 422
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    http = _Connection(url, {"Authorization": "Bearer x"})
    try:
        assert [http.post("/a", {"ok": True}), http.post("/a", {"ok": False})] == [200, 422]
        assert len({address for address, _, _ in peers}) == 1  # one keep-alive connection
        assert peers[0][1:] == ("Bearer x", "application/json")
        server.shutdown()
        server.server_close()
        http.http.sock.close()  # the server is gone: the next request fails and says why
        assert http.post("/a", {"ok": True}) in ("OSError", "BrokenPipeError", "ConnectionRefusedError", "RemoteDisconnected")
        assert http.http is None
    finally:
        http.close()


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.django_db(transaction=True)
def test_bench_api_forgets_what_its_clients_remembered_in_a_kept_scope(cast, capsys):
    """So the next run on the kept scope recalls over the same memories."""
    call_command("bench", "api", "--facts", "20", "--clients", "1", "--seconds", "1", "--queries", "2", "--workers", "1",
                 "--operations", "remember", "--keep", "--json", "--as", "owner")
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["http"][0]["requests"] > 0 and not result["http"][0]["errors"]
    assert f"forgot the {result['http'][0]['requests']} texts the clients remembered" in captured.err
    scope = Scope.objects.get(slug=result["scope"])
    assert not Episode.objects.in_scope(scope).filter(speaker="bench").exists()
    assert Fact.objects.in_scope(scope).count() == 20


def test_bench_writes_each_line_as_it_is_printed_to_a_file(cast, monkeypatch, tmp_path):
    # `bench recall --turns 1000000 > bench.log` runs for hours: its lines must reach the file as
    # they are printed, not when a block-sized buffer fills.
    import sys

    log = io.TextIOWrapper(open(tmp_path / "bench.log", "wb"), encoding="utf-8")  # a file: block-buffered
    assert not log.line_buffering
    monkeypatch.setattr(sys, "stdout", log)
    with pytest.raises(CommandError):
        call_command("bench", "recall", "--facts", "0", "--as", "owner")
    assert log.line_buffering
    log.close()


def test_bench_api_says_when_a_kept_scope_waits_for_extraction(cast):
    """A `bench recall --keep` conversation is ingested without extraction: a server started on it
    works through that backlog during every phase, so the benchmark says so before it starts."""
    from datetime import UTC, datetime

    from retrieval.bench_api import _backlog_warn

    out = io.StringIO()
    _backlog_warn(cast.scope_a, out)
    assert out.getvalue() == ""
    Episode.objects.create(scope=cast.scope_a, text="Ten turns of history", speaker="ada", occurred_at=datetime(2025, 1, 1, tzinfo=UTC))
    _backlog_warn(cast.scope_a, out)
    assert out.getvalue().startswith(f"note: 1 episodes of {cast.scope_a.slug} wait for extraction")
