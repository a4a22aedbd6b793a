"""The memory commands' shared half — `store`, `facts`, `recall`, `query`, `forget`: their
arguments, their output, and the remote runner.

Both paths build the client's typed results (`memoryweb.client`) and print them with the same
functions here, so a command prints the same text and the same `--json` whether it ran on the
local database (the management commands) or through a server:
- with `--url`/`--token` (or `MEMORYWEB_URL`/`MEMORYWEB_TOKEN`), on that server;
- else, when a local `memoryweb serve` advertises itself (`memoryweb.local_server`) for this
  database, user and scope, on it, falling back to the local path if it does not answer.

`memoryweb.cli.main` calls `run` before Django is set up: the remote path loads neither Django's
models nor the embedding model, which is the point (a local recall spends seconds loading them).
"""

import argparse
import json
import os
import sys
import uuid

import httpx

from memoryweb import local_server
from memoryweb.client import (
    Answer, Episode, Fact, ForgetReceipt, MemoryWebClient, MemoryWebError, RecallResult, Unauthorized, Unreachable,
)

WRITES = {"store", "forget"}  # the others read (memoryweb.cli.REMOTE_COMMANDS lists all five)
# Through a server the request runs there (extraction too, without a broker): allow it time, but
# find out at once when nothing listens.
TIMEOUT = httpx.Timeout(300.0, connect=2.0)
# The episode's source `store` records: the local command's (memories/management/commands/store.py),
# or the remote CLI's, so an operator can tell what came in over the network from another machine.
LOCAL_SOURCE, REMOTE_SOURCE = "cli", "cli-remote"


# Arguments ------------------------------------------------------------------------------------


def add_arguments(name: str, parser) -> None:
    """The command's own arguments, for the management command and the remote runner alike."""
    if name == "store":
        parser.add_argument("text", help="what was said or should be remembered")
    elif name == "recall":
        parser.add_argument("query")
    elif name == "query":
        parser.add_argument("question")
    elif name == "forget":
        parser.add_argument("episode_id", metavar="EPISODE_ID", help="the episode's id (a UUID, as store and recall print it)")
    parser.add_argument("--scope", required=True, help="scope slug")
    if name == "store":
        parser.add_argument("--speaker", default="", help="who said it; 'I' in the text means this person (default: you)")
        parser.add_argument("--at", dest="occurred_at", default=None, metavar="ISO-DATE", help="when it happened (default: now)")
    elif name == "facts":
        parser.add_argument("--entity", default=None, help="only this entity (name or id)")
        parser.add_argument("--attribute", default=None, help="only this attribute (lives_in, role, …)")
        parser.add_argument("--history", action="store_true", help="whole chains: superseded and retracted facts too")
    elif name in ("recall", "query"):
        parser.add_argument("--k", type=int, default=10, help=f"how {'many results' if name == 'recall' else 'much evidence'} (default 10)")
        if name == "recall":
            parser.add_argument("--as-of", dest="as_of", help="as the memory stood on this date (YYYY-MM-DD)")
            parser.add_argument("--history", action="store_true", help="include superseded facts")
        parser.add_argument("--speaker", default="", help="who asks: 'I' and 'my' mean this person")
    parser.add_argument("--url", default=None, help="run on this memoryweb server (or MEMORYWEB_URL), with --token")
    parser.add_argument("--token", default=None, help="API token for --url (or MEMORYWEB_TOKEN)")


def episode_id_arg(raw: str) -> str:
    """The episode id as given, checked to be a UUID (ValueError saying what to give instead)."""
    try:
        return str(uuid.UUID(raw.strip()))
    except ValueError:
        raise ValueError(f"{raw!r} is not an episode id: give the UUID that store or recall printed.") from None


# Output: (the --json data, the text) ----------------------------------------------------------


def _day(moment) -> str:
    return moment.date().isoformat() if moment else ""


def store_output(episode: Episode, scope: str, was: dict[str, str]) -> tuple[dict, str]:
    """`was`: the value each superseding fact replaced, by the new fact's id."""
    data = {"episode": {k: v for k, v in episode.as_dict().items() if k != "facts"}, "facts": [f.as_dict() for f in episode.facts]}
    lines = [f"Stored episode {episode.id} ({episode.status})."]
    if episode.status == "failed":
        lines.append(f"Extraction failed: {episode.error}")
        lines.append(f"Retry with: memoryweb retry {episode.id} --scope {scope}")
    for fact in episode.facts:
        note = f" (was: {was[fact.id]})" if fact.id in was else ""
        state = "" if fact.status == "active" else f" [{fact.status}]"
        lines.append(f"  {fact.subject} · {fact.attribute} · {fact.value}{note}{state}")
    if episode.status == "done" and not episode.facts:
        lines.append("  (no new facts)")
    return data, "\n".join(lines)


def facts_output(scope: str, facts: list[Fact], *, history: bool) -> tuple[dict, str]:
    lines = []
    for fact in facts:
        if history:
            interval = f"{_day(fact.valid_from) or '?'} → {_day(fact.valid_to) or 'now'}"
            lines.append(f"{fact.subject:<16} {fact.attribute:<20} {fact.value:<28} {interval:<26} {fact.status}")
        else:
            lines.append(f"{fact.subject:<16} {fact.attribute:<20} {fact.value:<28} since {_day(fact.valid_from) or '?'}")
    return {"scope": scope, "facts": [f.as_dict() for f in facts]}, "\n".join(lines) or "(no facts)"


def item_line(rank: int, item) -> str:
    if item.kind == "fact":
        interval = f"{_day(item.valid_from) or '?'} → {_day(item.valid_to) or 'now'}"
        head = f"fact, {item.status}, {interval}"
    else:
        where = item.source.get("session") and f"{item.source['session']}/{item.source.get('turn')}"
        head = ", ".join(x for x in (item.kind, _day(item.occurred_at), item.speaker, where) if x)
    lanes = " ".join(f"{name[:3]} {value:.2f}" for name, value in item.lanes.items())
    why = "; ".join(item.why[:4])
    return f"{rank:>2}. [{head}] {item.text}\n    score {item.score:.3f} ({lanes}) — {why}"


def items_text(items) -> str:
    return "\n".join(item_line(rank, item) for rank, item in enumerate(items, start=1)) or "(nothing found)"


def recall_output(result: RecallResult) -> tuple[dict, str]:
    data = result.as_dict()
    window = data["window"]
    header = f"time window: {window['phrase']} ({window['start']} → {window['end']})\n" if window else ""
    return data, header + items_text(result.items)


def answer_output(reply: Answer) -> tuple[dict, str]:
    return reply.as_dict(), f"{reply.text}\n\nEvidence:\n{items_text(reply.evidence)}"


def forget_output(receipt: ForgetReceipt) -> tuple[dict, str]:
    counts = ", ".join(f"{kind} {n}" for kind, n in receipt.counts.items() if n)
    return receipt.as_dict(), f"Forgot episode {receipt.episode_id} in {receipt.scope}: {counts}."


def json_text(data: dict) -> str:
    return json.dumps(data, default=str, indent=2)


# Remote ---------------------------------------------------------------------------------------


def remote_output(name: str, options: dict, mw: MemoryWebClient, *, source: str = REMOTE_SOURCE) -> tuple[dict, str]:
    """Run the command through `mw` and render it as the local command does; `source` is what
    `store` records as the episode's source."""
    scope = options["scope"]
    if name == "store":
        stored = mw.remember(scope, options["text"], speaker=options["speaker"], occurred_at=options["occurred_at"], source=source)
        episode = mw.episode(scope, stored.episodes[0].episode_id)
        was = {f.id: _replaced_value(mw, scope, f) for f in episode.facts if f.supersedes}
        return store_output(episode, scope, was)
    if name == "facts":
        facts = mw.facts(scope, entity=options["entity"], attribute=options["attribute"], history=options["history"])
        return facts_output(scope, facts, history=options["history"])
    if name == "recall":
        return recall_output(mw.recall(
            scope, options["query"], k=options["k"], as_of=options["as_of"], include_history=options["history"],
            speaker=options["speaker"],
        ))
    if name == "query":
        return answer_output(mw.answer(scope, options["question"], k=options["k"], speaker=options["speaker"]))
    return forget_output(mw.forget(scope, episode_id_arg(options["episode_id"])))


def _replaced_value(mw: MemoryWebClient, scope: str, fact: Fact) -> str:
    chain = mw.fact(scope, fact.id).chain
    return next((f.value for f in chain if f.id == fact.supersedes), "?")


class _ParseError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # leave the complaint to Django's own parser, with its usual wording
        raise _ParseError(message)


def run(name: str, args: list[str]) -> int | None:
    """Run memory command `name` through a server when one is meant (--url/--token, the
    environment) or a local one is advertised; the exit code, or None to run it locally."""
    if "-h" in args or "--help" in args:
        return None
    parser = _Parser(prog=f"memoryweb {name}", add_help=False)
    parser.add_argument("--as", dest="as_user", default=None)
    parser.add_argument("--json", action="store_true")
    add_arguments(name, parser)
    try:
        parsed, unknown = parser.parse_known_args(args)
    except _ParseError:
        return None
    if unknown:  # Django's own options (--settings, --traceback …): the local path knows them
        return None
    return dispatch(name, vars(parsed))


def dispatch(name: str, options: dict) -> int | None:
    """`run` for parsed options (the management commands call it when given --url or --token)."""
    url = options["url"] or os.environ.get("MEMORYWEB_URL", "").strip()
    token = options["token"] or os.environ.get("MEMORYWEB_TOKEN", "").strip()
    access = local_server.WRITE if name in WRITES else local_server.READ
    if url or token:
        if options["as_user"]:
            return _fail("--as names a local user; through a server the token decides who acts.", code=2)
        local = local_server.read_raw() or {}
        url = url or local.get("url", "")
        if not (url and token):
            return _fail("Give a server and a token: --url and --token (or MEMORYWEB_URL and MEMORYWEB_TOKEN).", code=2)
        return _run_on(name, options, url, token, fallback=False)
    found = local_server.local_access(user=options["as_user"], scope=options["scope"], access=access)
    if found is None:
        return None
    return _run_on(name, options, *found, fallback=True)


def _run_on(name: str, options: dict, url: str, token: str, *, fallback: bool) -> int | None:
    # The local server is tried once: if it does not answer, the local path does the work.
    with MemoryWebClient(url, token, timeout=TIMEOUT, retries=0 if fallback else 3) as mw:
        try:
            # Through this machine's own server it is still the local CLI; through any other, the remote one.
            data, text = remote_output(name, options, mw, source=LOCAL_SOURCE if fallback else REMOTE_SOURCE)
        except Unreachable as exc:
            if fallback and not exc.sent:
                return None
            return _fail(exc.message)
        except Unauthorized as exc:
            if fallback:  # a stale file: its server is gone and another answers on the port
                return None
            return _fail(exc.message)
        except (MemoryWebError, ValueError) as exc:
            return _fail(getattr(exc, "message", str(exc)))
    sys.stdout.write((json_text(data) if options["json"] else text) + "\n")
    return 0


def _fail(message: str, *, code: int = 1) -> int:
    # The same line Django prints for a CommandError.
    sys.stderr.write(f"CommandError: {message}\n")
    return code
