"""What the language model is asked: the extraction prompt (with the attribute vocabulary and the
Extraction schema) and the reconcile prompt (one new fact against similar active ones).

The system prompts carry the JSON schema of their reply; the client validates the reply against
the same pydantic schema and re-asks when it does not fit (`memoryweb.providers.llm`).
"""

import functools
import json
from datetime import UTC, datetime

from memoryweb.providers.llm import schema_for_prompt
from memories.extraction.schemas import ExtractedFact, Extraction, ReconcileDecision
from memories.extraction.vocabulary import ATTRIBUTES

_VOCABULARY = "\n".join(f"  - {name}: {meaning}" for name, meaning in ATTRIBUTES.items())

EXTRACTION_SYSTEM = f"""You turn one message into long-term memories for a memory store that a team shares.
Reply with ONE JSON object and nothing else, matching this JSON schema:
{{schema}}

What to extract
- facts: durable states or events about people that the message states (or plainly implies).
  Nothing from questions, greetings, small talk, plans, wishes or hypotheticals ("I might move",
  "I'd love to live in Paris"). One fact per state: a job statement gives separate facts for the
  organization (works_at), the title (role) and the city (lives_in).
- subject: who the fact is about. For the first person (I, me, my) use the speaker's name
  exactly as given; never "I", "me" or "user". For "we", "us", "our": the team's name when the
  prompt names a team (the team's tools, decisions, owners), else the speaker's name. For a named
  third person, their name.
- Team knowledge is first-class: the tool or vendor for a function is <function>_tool
  ("Our payment provider is Adyen" -> payment_tool = Adyen; "We use Linear for tickets" ->
  ticket_tool = Linear; billing means payment); "We switched X from A to B" -> X's tool, value B,
  previous_value A; "Dana owns the billing service" -> Dana owns = billing service; "Maya reports
  to Tomasz" -> Maya reports_to = Tomasz (manager, boss, lead: reports_to); "Priya leads the
  platform team" -> leads; "We decided to keep Postgres" -> decision = keep Postgres; "The staging
  password rotates every Friday" -> staging_password_schedule = every Friday; "The launch is on
  12 May" -> launch_date = 12 May <year>.
- Corrections ("Correction: I moved to Munich, not Berlin", "Actually, it's Porto, not Lisbon",
  "No, my manager is Marco, not Priya"): the right value, with corrects = the wrong value. When
  the text does not say which attribute ("it's Porto, not Lisbon"), attribute corrected_value.
- attribute: snake_case. Use this vocabulary whenever it fits:
{_VOCABULARY}
  For "my X is Y" use X in snake_case ("my favorite color is blue" -> favorite_color = blue).
- value: short and canonical, no article: "New York", "Google", "senior engineer", "football".
  loves / enjoys / is into -> likes; hates / can't stand / doesn't like -> dislikes;
  "playing football" -> football.
- "moved from X to Y": ONE lives_in fact, value Y, previous_value X.
- "got promoted to T (at O)": role T (and works_at O when the organization is named).
- "no longer", "not ... anymore", "left", "quit": the fact that ended, with negated true
  ("I left Google" -> works_at Google, negated).
- object_entity: the named thing the value refers to (Google, New York, a pet's name) with
  object_kind person | organization | place | thing | other; null for plain values (football, blue).
- sentence: one short third-person sentence stating only this fact with the subject's name,
  e.g. "ankesh lives in New York."
- valid_from: the ISO 8601 date the fact became true when the message says ("in March 2024",
  "last week", "since 2019"), resolved against the time the message was said; else null.
- confidence 0..1; importance 0..1 per fact and for the whole message (importance): life events
  (moving, jobs, family, health) 0.75 or more, preferences about 0.5, small talk 0.2 or less.
- entities: every subject and object_entity, with kind and role (actor for a subject, location
  for a place, object otherwise).
- occurred_at: when the described event happened, if the message says so; else null.
- If nothing is worth remembering, reply {{"entities": [], "facts": [], "importance": 0.1}}.

Example. Speaker: ankesh. Said at: 2024-05-10. Message: "I moved from Paris to Berlin last month."
{{"entities": [{{"name": "ankesh", "kind": "person", "role": "actor"}},
              {{"name": "Berlin", "kind": "place", "role": "location"}},
              {{"name": "Paris", "kind": "place", "role": "location"}}],
 "facts": [{{"subject": "ankesh", "attribute": "lives_in", "value": "Berlin", "object_entity": "Berlin",
            "object_kind": "place", "sentence": "ankesh lives in Berlin.", "valid_from": "2024-04-10",
            "previous_value": "Paris", "negated": false, "confidence": 0.95, "importance": 0.85}}],
 "importance": 0.85, "occurred_at": "2024-04-10"}}"""

DECIDE_SYSTEM = """You keep a memory of facts consistent. You get one NEW fact and the ACTIVE facts already
stored about the same subject that look related. Decide what to do with the new fact:
- ADD: it is new information and the existing facts stay true (another hobby, another pet, a
  second language).
- UPDATE: it replaces one existing fact, which stops being true (a new city for lives_in, a new
  employer for works_at, a new job title for role). target_fact_id = the replaced fact's id.
- DELETE: the new fact says an existing fact is no longer true ("no longer works at Google").
  target_fact_id = that fact's id.
- NOOP: it is already known (same meaning, maybe other words). target_fact_id = the fact that
  already says it.
target_fact_id must be one of the ids listed, or null for ADD.
Reply with ONE JSON object and nothing else, matching this JSON schema:
{schema}"""


def extraction_prompt(*, text: str, speaker: str, occurred_at: datetime, team: str | None = None) -> str:
    said = occurred_at.isoformat() if occurred_at.tzinfo else occurred_at.replace(tzinfo=UTC).isoformat()
    team_line = f"Team (whom we / us / our mean): {team}\n" if team else ""
    return f"Speaker: {speaker or 'user'}\n{team_line}Said at: {said} ({occurred_at:%A})\nMessage:\n<<<\n{text}\n>>>"


def decide_prompt(*, fact: ExtractedFact, candidates: list[dict]) -> str:
    lines = [
        f"New fact: {fact.sentence}",
        f"  subject={fact.subject!r} attribute={fact.attribute!r} value={fact.value!r}"
        + (f" previous_value={fact.previous_value!r}" if fact.previous_value else "")
        + (" negated=true" if fact.negated else ""),
        "Active facts:",
    ]
    for c in candidates:
        lines.append(f"- id={c['id']} attribute={c.get('attribute')!r} value={c.get('value')!r}: {c.get('sentence', '')}")
    return "\n".join(lines)


@functools.cache
def extraction_system() -> str:
    return EXTRACTION_SYSTEM.replace("{schema}", json.dumps(schema_for_prompt(Extraction)))


@functools.cache
def decide_system() -> str:
    return DECIDE_SYSTEM.replace("{schema}", json.dumps(schema_for_prompt(ReconcileDecision)))
