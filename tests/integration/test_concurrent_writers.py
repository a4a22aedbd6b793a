"""Writers never wait for one another: two `memoryweb serve` processes without a broker (each with
its background runner, retrieval/background.py) on pytest's test database, written to by many
threads at once. Every write is acknowledged, nothing is lost or done twice, and everything
becomes searchable; a write is answered while another process holds the scope's index lock; and a
server killed (SIGKILL) while it holds a batch of episodes leaves them to the other servers."""

import os
import signal
import string
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

import pytest
from django.db import connection

from memoryweb.client import MemoryWebClient
from memories.models import Episode, EpisodeStatus, Fact, Scope
from retrieval.background import CLAIM_PREFIX
from retrieval.indexing import _LOCK_NAMESPACE, episodes_searchable
from retrieval.models import Collection, SearchDocument
from tests.integration.checks import extracted_and_indexed_once, move
from tests.integration.mcp_world import World, live_server, server_env, world_flush
from tests.integration.workers import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

WRITERS = 8
JOBS = 96
SESSION_TURNS = 3
# Generous bounds for a loaded 2-core machine: a stuck runner fails the test instead of hanging it.
DRAIN_TIMEOUT = 180
SERVER_ENV = {
    "MEMORYWEB_BACKGROUND": "true", "MEMORYWEB_BACKGROUND_SWEEP_SECONDS": "1", "MEMORYWEB_API_RATE": "1000000/m",
}


@dataclass
class Servers:
    urls: list[str]
    token: str
    env: dict
    scopes: dict  # slug -> Scope


@pytest.fixture(scope="module")
def servers(django_db_setup, django_db_blocker, tmp_path_factory):
    """Two servers on free ports, sharing the test database; scopes `moves` (people moving between
    cities, whose extraction can be counted), `notes` (one unique word each, to recall) and `kills`
    (for the killed server), with a write token of their owner."""
    from accounts.permissions import Principal
    from accounts.services import team_create, user_create
    from accounts.tokens import token_issue

    with django_db_blocker.unblock():
        database = connection.settings_dict["NAME"]
        assert database.startswith("test_"), f"refusing to run the servers on database {database!r}"
        owner = user_create(username="writers-owner", password=None)
        team = team_create(actor=None, slug="writers-team", owner=owner)
        scopes = {slug: Scope.objects.create(team=team, slug=slug, name=slug) for slug in ("moves", "notes", "kills")}
        token = token_issue(actor=Principal(user=owner), user=owner, name="writers", scopes=list(scopes.values()),
                            can_write=True).secret
    env = {**server_env(World(database=database)), **SERVER_ENV}
    try:
        with ExitStack() as stack, ThreadPoolExecutor(2) as pool:
            log_dirs = [tmp_path_factory.mktemp(f"writers-web{n}") for n in (1, 2)]
            urls = list(pool.map(lambda log_dir: stack.enter_context(live_server(env, log_dir)), log_dirs))
            yield Servers(urls, token, env, scopes)
    finally:
        with django_db_blocker.unblock():
            world_flush()


def test_writers_of_one_scope_in_threads_and_two_processes_are_all_acknowledged_and_processed_once(servers):
    sent, words = _write_concurrently(servers)
    moves = sent["moves"]
    assert len(moves) == len(set(moves)) == sum(SESSION_TURNS if n % 3 == 1 else 1 for n in range(JOBS) if n % 3 != 2)
    _wait_until_searchable(servers, sent)

    # Nothing processed twice: each claimed once, extracted once, one document (and vector) per target.
    episodes = Episode.objects.filter(public_id__in=[e for ids in sent.values() for e in ids])
    assert Counter(episodes.values_list("status", "attempts")) == {(EpisodeStatus.DONE, 1): len(episodes)}
    extracted_and_indexed_once(servers.scopes["moves"].pk, list(episodes.filter(scope__slug="moves").values_list("pk", flat=True)))
    # Every note is found by recall, through either server, and its episode says so.
    with _clients(servers) as clients:
        for n, episode_id in enumerate(sent["notes"]):
            client = clients[n % 2]
            found = client.recall("notes", f"What about {words[episode_id]}?", k=5)
            assert episode_id in [item.id for item in found.items if item.kind == "episode"], found
            assert (client.episode("notes", episode_id).status, client.episode("notes", episode_id).searchable) == ("done", True)


def test_a_write_is_answered_while_another_process_indexes_its_scope(servers):
    """This process holds the scope's index lock (as an indexer mid-sweep would): a remember into
    that scope is acknowledged at once, not searchable yet; once the lock is released the server's
    runner, which tried again meanwhile, indexes it."""
    scope = servers.scopes["notes"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])
    try:
        with _clients(servers) as clients:
            stored = clients[0].remember("notes", "The quarterly zephyrine report went out on Monday.", speaker="Ada")
            episode_id = stored.episodes[0].episode_id
            assert stored.episodes[0].searchable is False
            assert clients[1].episode("notes", episode_id).searchable is False
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])
    _wait_until_searchable(servers, {"notes": [episode_id]})
    with _clients(servers) as clients:
        assert clients[1].episode("notes", episode_id).searchable is True


def test_a_server_killed_holding_a_batch_leaves_it_to_the_others(servers, tmp_path):
    """A third server sleeps after each claim (the test hook MEMORYWEB_TEST_EXTRACT_DELAY): its
    runner claims the episodes written to it, and it is killed (SIGKILL, its whole process group)
    holding them. The other servers' runners see that its liveness lock is gone and take the claims
    over; everything is extracted once and indexed once."""
    scope = servers.scopes["kills"]
    doomed_env = {**servers.env, "MEMORYWEB_TEST_EXTRACT_DELAY": "600"}
    with live_server(doomed_env, tmp_path) as url:
        client = MemoryWebClient(url, servers.token, timeout=60)
        try:
            sent = [client.remember("kills", **_as_remember(move(1000 + n))).episodes[0].episode_id for n in range(3)]
            turns = [move(1003 + n) for n in range(SESSION_TURNS)]
            sent += [e.episode_id for e in client.ingest_session("kills", "doomed-conversation", turns).episodes]
        finally:
            client.close()
        held = wait_for(lambda: list(Episode.objects.filter(public_id__in=sent, status=EpisodeStatus.PROCESSING,
                                                             claim_id__startswith=CLAIM_PREFIX)), timeout=60)
        doomed_claim = held[0].claim_id
        pid = _server_pid(tmp_path)
        os.killpg(os.getpgid(pid), signal.SIGKILL)

    _wait_until_searchable(servers, {"kills": sent})
    attempts = dict(Episode.objects.filter(public_id__in=sent).values_list("pk", "attempts"))
    # Those the dead runner held were claimed again (attempts 2), by a live runner; none a third time.
    assert {pk: attempts[pk] for pk in (e.pk for e in held)} == {e.pk: 2 for e in held}
    assert set(attempts.values()) <= {1, 2}
    assert not Episode.objects.filter(public_id__in=sent, claim_id=doomed_claim).exists()
    extracted_and_indexed_once(scope.pk, list(attempts))


def _write_concurrently(servers: Servers) -> tuple[dict[str, list[str]], dict[str, str]]:
    """JOBS writes from WRITERS threads, each job through one of the two servers in turn: a
    remembered move, a conversation of SESSION_TURNS moves, or a note with a word of its own.
    The episode ids acknowledged, by scope, and each note's word by its episode id."""
    def job(n: int, clients) -> tuple[str, list[str], str]:
        client = clients[n % 2]
        if n % 3 == 0:
            return "moves", [e.episode_id for e in client.remember("moves", **_as_remember(move(n * SESSION_TURNS))).episodes], ""
        if n % 3 == 1:
            turns = [move(n * SESSION_TURNS + t) for t in range(SESSION_TURNS)]
            return "moves", [e.episode_id for e in client.ingest_session("moves", f"conversation-{n}", turns).episodes], ""
        stored = client.remember("notes", f"Ticket {_letters(n)} was closed by the on-call engineer.")
        return "notes", [stored.episodes[0].episode_id], _letters(n)

    sent: dict[str, list[str]] = {"moves": [], "notes": []}
    words: dict[str, str] = {}
    with _clients(servers) as clients, ThreadPoolExecutor(WRITERS) as pool:
        for slug, ids, word in pool.map(lambda n: job(n, clients), range(JOBS)):
            sent[slug] += ids
            if word:
                words[ids[0]] = word
    return sent, words


def _letters(n: int) -> str:
    """A word of letters only, one per n, that no stemmer confuses with another."""
    word = ""
    for _ in range(3):
        n, digit = divmod(n, 26)
        word += string.ascii_lowercase[digit]
    return f"zorb{word}"


def _as_remember(m: dict) -> dict:
    return {"text": m["text"], "speaker": m["speaker"], "occurred_at": m["occurred_at"]}


def _wait_until_searchable(servers: Servers, sent: dict[str, list[str]]) -> None:
    def done() -> bool:
        for slug, ids in sent.items():
            scope = servers.scopes[slug]
            if Episode.objects.filter(public_id__in=ids, status=EpisodeStatus.DONE).count() != len(ids):
                return False
            if len(episodes_searchable(scope=scope, episode_ids=ids)) != len(ids):
                return False
            # An episode is searchable from the sweep after its ingest; its facts from the sweep
            # after its extraction, which can come a moment after it is done.
            indexed = SearchDocument.objects.in_scope(scope).filter(collection=Collection.FACT).values("target_id")
            if Fact.objects.in_scope(scope).exclude(pk__in=indexed).exists():
                return False
        return True

    try:
        wait_for(done, timeout=DRAIN_TIMEOUT, interval=0.5)
    except TimeoutError:
        states = {slug: dict(Counter(Episode.objects.filter(public_id__in=ids).values_list("status", flat=True)))
                  for slug, ids in sent.items()}
        docs = Counter(SearchDocument.objects.filter(collection__in=[Collection.EPISODE, Collection.TURN])
                       .values_list("scope__slug", flat=True))
        pytest.fail(f"not all searchable within {DRAIN_TIMEOUT} s: episodes {states}, documents {dict(docs)}")


class _clients:
    """One SDK client per server, closed after the block."""

    def __init__(self, servers: Servers):
        self.clients = [MemoryWebClient(url, servers.token, timeout=60) for url in servers.urls]

    def __enter__(self):
        return self.clients

    def __exit__(self, *exc):
        for client in self.clients:
            client.close()


def _server_pid(log_dir) -> int:
    """The pid of the server whose log is in `log_dir` (uvicorn logs it as it starts)."""
    for line in (log_dir / "serve.log").read_text().splitlines():
        if "Started server process [" in line:
            return int(line.split("[", 1)[1].split("]", 1)[0])
    raise AssertionError("the server logged no pid")
